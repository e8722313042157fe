"""Compiled kernels recompile when any source they are built from changes.

numba's on-disk cache only watches a function's own file, while a cached kernel
carries compiled copies of the kernels it calls and the constants it reads;
``jit.ensure_fresh`` ties every file's cached code to one stamp of all those
sources, found from the decorators and the imports (no list kept by hand)."""

import zlib
from pathlib import Path

from concordia_env._internal import jit  # (the module itself: tests patch its attributes)
from concordia_env._internal.jit import PACKAGE_DIR


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE_DIR).as_posix()


def test_the_stamp_covers_every_kernel_module_the_rules_and_what_they_import():
    import concordia_env.agents.mcts  # noqa: F401  (defines kernels in its own files)
    import concordia_env.turns  # noqa: F401
    import concordia_env.validation  # noqa: F401

    covered = {_name(p) for p in jit.kernel_sources()}
    defining = {k.dispatcher.py_func.__code__.co_filename for k in jit.REGISTRY}
    assert {_name(Path(f)) for f in defining} <= covered  # every registered kernel's file
    assert {_name(p) for p in (PACKAGE_DIR / "rules").glob("*.py")} <= covered  # layout.py: no kernels
    assert {"rewards.py", "agents/heuristic.py", "turns.py", "invariants/tables.py"} <= covered  # imported
    assert not {"cli.py", "arena/tournament.py", "server/app.py"} & covered
    stamp = 0
    for path in sorted(jit.kernel_sources(), key=_name):
        stamp = zlib.crc32(path.read_bytes(), zlib.crc32(_name(path).encode(), stamp))
    assert jit.sources_stamp() == stamp
    cache = jit.cache_decision().path
    if cache is not None:  # this process checked every file whose kernels it defined
        for f in defining:
            assert jit.stamp_marker(Path(f), cache).read_text().strip() == str(stamp), f


def test_stale_cached_code_is_deleted_before_use_and_fresh_code_kept(tmp_path, monkeypatch):
    source = PACKAGE_DIR / "agents" / "heuristic.py"
    folder = jit.cached_code_folder(source, tmp_path)
    folder.mkdir(parents=True)
    code = [folder / "heuristic.choose-214.py311.nbi", folder / "heuristic.choose-214.py311.1.nbc"]
    other = folder / "mcts.evaluate-123.py311.nbi"  # same folder, another source file
    for f in (*code, other):
        f.write_bytes(b"compiled")
    jit.stamp_marker(source, tmp_path).write_text("12345\n")  # built for other sources
    monkeypatch.setattr(jit, "_CHECKED", set())
    jit.ensure_fresh(source, tmp_path)
    assert not any(f.exists() for f in code) and other.exists()
    assert jit.stamp_marker(source, tmp_path).read_text().strip() == str(jit.sources_stamp())
    for f in code:
        f.write_bytes(b"compiled again")
    monkeypatch.setattr(jit, "_CHECKED", set())
    jit.ensure_fresh(source, tmp_path)  # fresh now: kept
    assert all(f.exists() for f in code)
    jit.ensure_fresh(source, None)  # no disk cache: nothing to do


# ------------------------------------------------------------------ where compiled code is cached
import io  # noqa: E402  (the section's own imports)
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

import numba  # noqa: E402
import pytest  # noqa: E402

from concordia_env import __version__  # noqa: E402
from concordia_env.cli import kernel_groups  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def run_python(code_or_args, cache_dir, **extra_env):
    """Run Python in a subprocess with its kernel cache in ``cache_dir`` (numba's own setting unset)."""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", jit.CACHE_ENV)}
    env.update({jit.CACHE_ENV: str(cache_dir)}, **extra_env)
    args = ["-c", code_or_args] if isinstance(code_or_args, str) else list(code_or_args)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=600)


def compiled_files(directory: Path) -> set[tuple[str, float]]:
    return {(str(p), p.stat().st_mtime) for p in directory.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_concordia_cache_dir_wins_over_numbas_and_is_used_as_is(tmp_path):
    d = jit.decide_cache({jit.CACHE_ENV: str(tmp_path / "ours"), "NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    assert d.path == tmp_path / "ours" and d.source == jit.CACHE_ENV and d.warning is None
    assert d.path.is_dir()


def test_numba_cache_dir_is_respected(tmp_path):
    d = jit.decide_cache({"NUMBA_CACHE_DIR": str(tmp_path / "numba")})
    assert d.path == tmp_path / "numba" and d.source == "NUMBA_CACHE_DIR"


def test_the_default_is_a_versioned_folder_of_the_user_cache_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # where platformdirs puts user caches on Linux
    d = jit.decide_cache({jit.CACHE_ENV: ""})  # empty counts as unset
    tag = jit.version_tag()
    assert d.path == tmp_path / "concordia-env" / tag
    assert __version__ in tag and numba.__version__ in tag and sys.implementation.cache_tag in tag
    assert jit.PACKAGE_DIR not in d.path.parents


def test_an_unwritable_directory_means_no_disk_cache_and_one_warning_line(tmp_path):
    (tmp_path / "file").write_text("in the way")  # a real failure, even for root (permission bits are not)
    d = jit.decide_cache({jit.CACHE_ENV: str(tmp_path / "file" / "cache")})
    assert d.path is None and "NotADirectoryError" in d.problem
    assert len(d.warning.splitlines()) == 1
    assert str(tmp_path / "file" / "cache") in d.warning and "will not be cached" in d.warning


def test_never_inside_the_package_directory():
    d = jit.decide_cache({jit.CACHE_ENV: str(jit.PACKAGE_DIR / "kernel-cache")})
    assert d.path is None and "inside the package directory" in d.warning
    assert not (jit.PACKAGE_DIR / "kernel-cache").exists()
    assert jit.cache_decision().path is None or jit.PACKAGE_DIR not in jit.cache_decision().path.parents


def test_every_kernel_is_defined_through_the_project_decorator():
    for path in jit.PACKAGE_DIR.rglob("*.py"):
        if path.name != "jit.py":
            assert "njit" not in path.read_text(encoding="utf-8"), f"{path}: define kernels with jit.kernel"


def test_without_a_writable_cache_the_game_still_plays_and_says_so_once(tmp_path):
    (tmp_path / "file").write_text("in the way")
    before = compiled_files(jit.PACKAGE_DIR)
    proc = run_python("import random, concordia_env\n"
                      "s, rng = concordia_env.new_game('italia', 2, seed=0), random.Random(0)\n"
                      "while not s.is_terminal(): s.apply(rng.choice(s.legal_actions()))\n"
                      "print(s.winner())", tmp_path / "file" / "cache", **{jit.NOTICE_ENV: "always"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ("0", "1")
    lines = proc.stderr.splitlines()
    # the warning, then the compile notice saying it will come again
    assert len(lines) == 2 and "will not be cached" in lines[0], proc.stderr
    assert lines[1].startswith(f"{jit.NOTICE} (on every run: it cannot be cached, about "), proc.stderr
    assert compiled_files(jit.PACKAGE_DIR) == before, "numba wrote next to the sources"


#: the README's library snippet, shortened: the env, a reset and a random game's steps
LIBRARY_USE = """
import numpy as np, concordia_env
env = concordia_env.env(map_name="italia", num_players=2)
env.reset(seed=0)
rng = np.random.default_rng(0)
for name in env.agent_iter(max_iter=200):
    obs, reward, terminated, truncated, info = env.last()
    env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
print("played")
"""


def test_library_use_on_a_cold_cache_says_once_that_it_compiles_and_a_warm_one_prints_nothing(tmp_path):
    # stderr is a pipe here: "always" stands for the terminal or notebook where "auto" speaks
    cold = run_python(LIBRARY_USE, tmp_path / "cache", **{jit.NOTICE_ENV: "always"})
    assert cold.returncode == 0 and cold.stdout == "played\n", cold.stderr
    (line,) = cold.stderr.splitlines()  # once, however many kernels compile
    low, high = jit.LIBRARY_COMPILE_SECONDS
    assert line == f"{jit.NOTICE} (first use only, about {low}-{high} s on a 2-core machine)...", line
    warm = run_python(LIBRARY_USE, tmp_path / "cache", **{jit.NOTICE_ENV: "always"})
    assert warm.returncode == 0 and warm.stdout == "played\n" and warm.stderr == "", warm.stderr


def test_the_library_notice_speaks_on_a_terminal_or_in_a_notebook_not_into_a_pipe(tmp_path, monkeypatch):
    # a cold cache into a pipe (a test's captured output, a job's log): the program's output as written
    cold = run_python(LIBRARY_USE, tmp_path / "cache", **{jit.NOTICE_ENV: "auto"})
    assert cold.returncode == 0 and cold.stdout == "played\n" and cold.stderr == "", cold.stderr

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv(jit.NOTICE_ENV, raising=False)
    assert jit._library_notice_wanted(Terminal()) and not jit._library_notice_wanted(io.StringIO())
    monkeypatch.setitem(sys.modules, "ipykernel", object())  # a Jupyter kernel: its stderr is no terminal
    assert jit._library_notice_wanted(io.StringIO())
    monkeypatch.setenv(jit.NOTICE_ENV, "never")
    assert not jit._library_notice_wanted(Terminal())


def test_compile_notices_give_a_range_not_a_promise():
    assert jit.estimate_text(24) == "about 24-96 s on a 2-core machine"
    assert jit.estimate_text(0.2) == "about 1-2 s on a 2-core machine"
    assert jit.estimate_text(10, 40) == "about 10-40 s on a 2-core machine"


def test_a_cold_start_says_it_compiles_a_warm_one_prints_nothing_and_help_compiles_nothing(tmp_path):
    cold = run_python(["-m", "concordia_env", "--quiet"], tmp_path / "cache")
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.startswith("compiling the rules engine (first run only, about "), cold.stderr
    assert "Final scores" in cold.stdout
    warm = run_python(["-m", "concordia_env", "--quiet"], tmp_path / "cache")
    assert warm.returncode == 0 and warm.stderr == "" and warm.stdout == cold.stdout
    helped = run_python(["-m", "concordia_env.cli", "--help"], tmp_path / "help")
    assert helped.returncode == 0 and helped.stderr == ""
    assert not compiled_files(tmp_path / "help"), "concordia --help compiled kernels"


def test_commands_compile_only_the_kernels_their_agents_use():
    assert kernel_groups(["random", "random"]) == ["engine", "encoding"]
    assert kernel_groups(["heuristic", "mcts:iterations=5", "ppo"]) == ["engine", "encoding", "heuristic", "mcts"]
    assert "rollout" in kernel_groups(["mcts:rollout=random"])
    assert jit.resolve_groups(["mcts"]) == ["engine", "heuristic", "mcts"]
    with pytest.raises(ValueError, match="unknown kernel group"):
        jit.resolve_groups(["nope"])


def test_every_kernel_compiles_once_for_all_its_callers(tmp_path):
    """Every call site passes a kernel the same types (the entry points' signatures given to
    jit.kernel among them): compiling from scratch and playing with every agent, random MCTS
    rollouts included, compiles no kernel twice (int32 against int64, or a constant argument,
    each cost another compile of the kernel and of everything it calls)."""
    script = """
import io
from concordia_env._internal import jit
groups = ["encoding", "mcts", "rollout"]
jit.compile_kernels(groups, progress=False)
import concordia_env
from concordia_env import cli
from concordia_env.agents.mcts import MCTSAgent
from concordia_env.arena.records import play_game
cli.main(["demo", "--seed", "1", "--players", "3", "--max-turns", "40"], out=io.StringIO())
play_game("italia", 2, 0, [MCTSAgent(iterations=20, rollout="random"), MCTSAgent(iterations=10)], max_turns=5)
concordia_env.new_game("imperium", 4, seed=0).scores()
wanted = set(jit.resolve_groups(groups))
for k in jit.REGISTRY:
    if len(k.dispatcher.signatures) > 1 or (k.group in wanted and not k.dispatcher.signatures):
        print(k.group, k.name, k.dispatcher.signatures)
"""
    proc = run_python(script, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout == "", "kernels compiled more than once (or never):\n" + proc.stdout


def test_a_change_to_one_rules_module_reaches_the_cached_entry_points(tmp_path):
    """numba would load ``random_playout`` (in rules/kernel.py, unchanged) from its cache with
    the old copy of ``end_turn`` (in rules/turn.py, changed) compiled in; the stamp covers
    every kernel source, so the entry points recompile instead."""
    import shutil

    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "concordia_env", pkg / "concordia_env",
                    ignore=shutil.ignore_patterns("__pycache__", "policies"))
    script = """
import numpy as np
import concordia_env
print(concordia_env.__file__)
from concordia_env import engine as E
from concordia_env.state import new_game
st = new_game("italia", 2, seed=0)
mask = np.zeros(E.NUM_ACTIONS, np.int8)
E.random_playout(st.s, st.game.tables, mask, 0, 60)
print(int(st.s[E.O_TURN]))
"""
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", jit.CACHE_ENV)}
    env.update({jit.CACHE_ENV: str(tmp_path / "cache"), "PYTHONPATH": str(pkg)})

    def run():  # from the copy's folder: the working tree's package must not shadow the copy
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                              cwd=pkg, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout.startswith(str(pkg)), proc.stdout
        return proc

    first = run()
    turn = pkg / "concordia_env" / "rules" / "turn.py"
    turn.write_text(turn.read_text().replace("s[O_TURN] += 1", "s[O_TURN] += 1000"))
    second = run()
    before, after = int(first.stdout.split()[-1]), int(second.stdout.split()[-1])
    assert 0 < before < 1000 <= after
