"""The README's promises: its test command is the one CI runs, its main job runs."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [line for block in blocks[:2] for line in block.splitlines() if line and not line.startswith("#")]


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


def _concordia() -> list[str]:
    """The installed `concordia` console script (next to this interpreter), else the module it runs."""
    script = Path(sys.executable).with_name("concordia")
    return [str(script)] if script.exists() else [sys.executable, "-m", "concordia_env.cli"]


def _assert_final_scores(out: str) -> None:
    """Four rows of per-god VP whose totals add up, and a winner."""
    assert "Final scores" in out and "Winner (after tie-break): player" in out
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


def test_readme_observation_table_matches_the_code():
    from concordia_env.encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| ([\d×]+) \| (\d+)–(\d+) \|", text, flags=re.M)
    assert [r[0] for r in rows] == [name for name, _, _ in OBSERVATION_FIELDS]
    for name, shape, start, stop in rows:
        _, want_shape, _ = next(f for f in OBSERVATION_FIELDS if f[0] == name)
        assert tuple(int(x) for x in shape.split("×")) == want_shape, name
        assert OBSERVATION_LAYOUT[name] == slice(int(start), int(stop) + 1), name


def test_readme_strength_figures_match_the_committed_tournament_results():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    files = sorted((ROOT / "agents" / "results").glob("*.json"))
    assert len(files) >= 2
    for path in files:
        res = json.loads(path.read_text(encoding="utf-8"))
        first, *others = list(dict.fromkeys(res["agents"]))
        a = res["per_agent"][first]
        lo, hi = a["win_rate_ci95"]
        other_vp = res["per_agent"][others[0]]["mean_vp"]
        claim = (f"**{a['wins']} of {a['games']}** ({100 * a['win_rate']:.1f}%, 95% CI {100 * lo:.1f}–{100 * hi:.1f}%), "
                 f"mean {a['mean_vp']:.1f} VP against {other_vp:.1f}")
        assert claim in text, claim
        command = (f"concordia tournament --map {res['map']} --players {res['players']} --agents {','.join(res['agents'])} "
                   f"--games {res['games']} --seed {res['seed']} --workers 2 --out agents/results/{path.name}")
        assert command in text, command
        assert res["truncated"] == 0
