"""The README's promises: its test command is the one CI runs, its main job runs.

The figures and commands of docs/*.md (observation table, strength figures, training) are checked in
tests/test_docs.py."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands(blocks: slice = slice(0, 2)) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line for block in found[blocks] for line in block.splitlines() if line and not line.startswith("#")]


def test_ci_runs_the_readme_test_command():
    install, tests = _readme_commands()[:2]
    assert install.endswith("concordia demo")
    pytest_part = tests.split("&&")[-1].strip()
    assert pytest_part.startswith("python -m pytest")
    ci_lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert pytest_part in ci_lines
    assert any(ln.startswith("python -m pip install") and "torch==2.13.0" in ln for ln in ci_lines)
    torch_line = next(i for i, ln in enumerate(ci_lines) if "torch==2.13.0" in ln)
    extras_line = next(i for i, ln in enumerate(ci_lines) if ".[train,dev]" in ln)
    assert torch_line < extras_line


def test_readme_install_command_installs_without_extras():
    install = _readme_commands()[0]
    assert install == "python3 -m venv .venv && . .venv/bin/activate && pip install . && concordia demo"


def test_readme_gives_the_cpu_torch_index_for_other_machines():
    """CI's torch==2.13.0 comes from a local wheel; elsewhere the same command takes torch from PyTorch's CPU index."""
    ci_command = _readme_commands()[1]
    (other,) = _readme_commands(slice(2, 3))
    cpu = "pip install torch --index-url https://download.pytorch.org/whl/cpu"
    assert other == ci_command.replace("pip install torch==2.13.0", cpu)


def _concordia() -> list[str]:
    """The installed `concordia` console script (next to this interpreter), else the module it runs."""
    script = Path(sys.executable).with_name("concordia")
    return [str(script)] if script.exists() else [sys.executable, "-m", "concordia_env.cli"]


def _assert_final_scores(out: str) -> None:
    """Four rows of per-god VP whose totals add up, and a winner."""
    # "Winner: player 1 (...) with N VP", or "Winner after tie-break: ..." when the most VP are tied
    assert "Final scores" in out and re.search(r"^Winner( after tie-break)?: player \d", out, re.M), out[-500:]
    rows = [ln.split() for ln in out.splitlines() if re.match(r"^\s+\d+(\s+\d+){8}$", ln)]
    assert len(rows) == 4
    for row in rows:
        assert sum(int(v) for v in row[1:8]) == int(row[8])


def test_main_job_plays_a_full_game_between_baseline_agents():
    out = subprocess.run(_concordia() + ["demo"], capture_output=True, text=True, check=True, timeout=300).stdout
    for seat, agent in enumerate(("heuristic", "mcts", "random", "random")):
        assert re.search(rf"player {seat}: {agent}", out), agent
    _assert_final_scores(out)


def test_core_random_game_still_prints():
    out = subprocess.run([sys.executable, "-m", "concordia_env", "--seed", "0"],
                         capture_output=True, text=True, check=True, timeout=300).stdout
    assert "Turn   0, player" in out
    _assert_final_scores(out)


def test_main_job_rejects_bad_player_count():
    res = subprocess.run([sys.executable, "-m", "concordia_env", "--map", "italia", "--players", "5"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode != 0
    assert "allowed" in res.stderr
