"""Tournaments under faults: Ctrl-C once and twice, a killed parent, a file size limit, bad output
paths, resuming (equal to an uninterrupted run), records folders of other runs, damaged records.

The fault tests run ``concordia tournament`` in real subprocesses through a small script that
adds a ``slow`` agent (random play, sleeping before chosen games), so games last as long as a
test needs without using the CPU. Every wait is bounded."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from processes import children, kill_left_running, running, wait_for  # tests/processes.py

import concordia_env.agents.base
import concordia_env.arena.tournament as tournament_module
from concordia_env.agents.random_agent import RandomAgent
from concordia_env.arena.records import agent_seed, load_record, play_game, save_record
from concordia_env.arena.results import RECORDS_MANIFEST
from concordia_env.arena.tournament import (
    TournamentInterrupted,
    format_table,
    prepare_tournament,
    run_tournament,
)
from concordia_env.cli import main

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, prctl and /proc: Linux")

#: the ``concordia`` command with a ``slow`` agent: random play that sleeps SLOW_DELAY seconds before
#: every game from SLOW_FROM (setup seeds from --seed 0) on
SCRIPT = textwrap.dedent("""\
    import os, sys, time
    import concordia_env.agents.base as base
    from concordia_env.agents.random_agent import RandomAgent
    from concordia_env.arena.records import agent_seed

    DELAY = float(os.environ.get("SLOW_DELAY", "0"))
    SLOW_SEEDS = {agent_seed(g, k) for g in range(int(os.environ.get("SLOW_FROM", "0")), 1000) for k in range(5)}

    class SlowAgent(RandomAgent):
        def reset(self, seed=None):
            if seed in SLOW_SEEDS:
                time.sleep(DELAY)
            super().reset(seed)

    base.AGENTS["slow"] = SlowAgent
    from concordia_env.cli import main
    sys.exit(main(sys.argv[1:]))
    """)

GAMES = 12
STARTED: list[subprocess.Popen] = []
WAIT = 60  # seconds: the most any subprocess may take


class SlowAgent(RandomAgent):
    """The script's agent, without sleeping (same games): for the uninterrupted runs in this process."""


@pytest.fixture(autouse=True)
def fresh_agent_pool(monkeypatch):
    """Agents are cached by spec in the process: each test builds its own ``slow`` agents."""
    monkeypatch.setattr(tournament_module, "_AGENT_POOL", {})


@pytest.fixture
def with_slow_agent(monkeypatch):
    monkeypatch.setitem(concordia_env.agents.base.AGENTS, "slow", SlowAgent)


@pytest.fixture
def script(tmp_path) -> Path:
    path = tmp_path / "slow_concordia.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture(autouse=True)
def no_stray_processes():
    """Kill whatever a failed test left running (its workers die with it)."""
    yield
    kill_left_running(STARTED)


def tournament_argv(tmp_path: Path, workers: int = 2, games: int = GAMES, records: bool = True,
                    save_every: int = 2) -> list[str]:
    argv = ["tournament", "--map", "italia", "--players", "2", "--agents", "slow,random", "--games", str(games),
            "--workers", str(workers), "--out", str(tmp_path / "out" / "results.json"), "--save-every",
            str(save_every), "--no-progress"]
    return argv + (["--records", str(tmp_path / "records")] if records else [])


def default_sigint() -> None:
    """In the child before it runs Python: Ctrl-C as in a terminal, even when the tests themselves
    run with SIGINT ignored (started in the background), which Python would otherwise keep."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(script: Path, argv: list[str], delay: float = 0.0, slow_from: int = 0,
          file_size_limit: int | None = None) -> subprocess.Popen:
    """``concordia ARGV`` with the ``slow`` agent in a subprocess (see :data:`SCRIPT`)."""
    env = {**os.environ, "SLOW_DELAY": str(delay), "SLOW_FROM": str(slow_from)}

    def preexec() -> None:
        default_sigint()
        if file_size_limit is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    proc = subprocess.Popen([sys.executable, str(script), *argv], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    STARTED.append(proc)
    return proc


def finish(proc: subprocess.Popen, timeout: float = WAIT) -> tuple[int, str, str, float]:
    """Exit code, stdout, stderr and seconds taken; kills the process (and fails) past ``timeout``."""
    t0 = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"the command did not end within {timeout} s")
    return proc.returncode, out, err, time.monotonic() - t0


def uninterrupted(tmp_path: Path, games: int = GAMES) -> dict:
    """The reference result: the same tournament in this process, in one go."""
    result = run_tournament("italia", 2, ["slow", "random"], games, progress=False,
                            record_dir=tmp_path / "reference_records")
    return result


def without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "seconds"}


def results(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "out" / "results.json").read_text())


def temp_files(*folders: Path) -> list[Path]:
    return [p for folder in folders if folder.is_dir() for p in folder.iterdir() if p.name.endswith(".tmp")]


# ---------------------------------------------------------------- Ctrl-C, kill, resume
@linux_only
@pytest.mark.parametrize("workers", [1, 2])
def test_first_ctrl_c_keeps_the_games_in_flight_and_resume_equals_an_uninterrupted_run(
        tmp_path, script, with_slow_agent, capfd, workers):
    argv = tournament_argv(tmp_path, workers)
    # games 0-3 are quick (the first save comes after game 2); from game 4 on each takes 1 s
    proc = start(script, argv, delay=1.0, slow_from=4)
    wait_for(lambda: (tmp_path / "out" / "results.json").exists() or proc.poll() is not None, what="first save", timeout=WAIT)
    proc.send_signal(signal.SIGINT)
    code, out, err, _ = finish(proc)
    assert code == 130, err
    assert "Traceback" not in err
    assert "in flight" in err and "Ctrl-C again" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted after ") and last.endswith("--resume"), last
    partial = results(tmp_path)
    assert partial["complete"] is False and 2 <= partial["games_done"] < GAMES
    assert len(partial["per_game"]) == partial["games_done"]
    assert f"{partial['games_done']} of {GAMES} games (unfinished)" in out
    records = sorted((tmp_path / "records").glob("game_*.json"))
    assert len(records) == partial["games_done"]  # the games in flight were finished and kept
    assert not temp_files(tmp_path / "out", tmp_path / "records")

    assert main(argv + ["--resume"]) == 0  # resuming needs no signals: in this process
    assert f"Resuming after {partial['games_done']} of {GAMES} games" in capfd.readouterr().err
    resumed = results(tmp_path)
    reference = uninterrupted(tmp_path)
    assert resumed["complete"] is True and resumed["games_done"] == GAMES
    assert without_timing(resumed) == json.loads(json.dumps(without_timing(reference)))
    for g in range(GAMES):
        name = f"game_{g:05d}.json"
        assert (tmp_path / "records" / name).read_text() == (tmp_path / "reference_records" / name).read_text()


@linux_only
def test_second_ctrl_c_aborts_at_once_and_resume_uses_the_records(tmp_path, script, with_slow_agent, capfd):
    argv = tournament_argv(tmp_path, workers=2, save_every=3)
    # games 0-3 are quick; games 4 and 5 would take 5 minutes each
    proc = start(script, argv, delay=300, slow_from=4)
    records = tmp_path / "records"
    wait_for(lambda: (records / "game_00003.json").exists() or proc.poll() is not None, what="record of game 3", timeout=WAIT)
    workers = children(proc.pid)
    assert len(workers) == 2
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    # finish's bound only guards against a hang: waiting for a game in flight would take 300 s
    code, _, err, _seconds = finish(proc, timeout=30)
    assert code == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("aborted; resume with: ")
    wait_for(lambda: not any(running(pid) for pid in workers), timeout=10, what="end of the workers")
    assert results(tmp_path)["games_done"] == 3  # the last save; game 3 is in its record
    assert not temp_files(tmp_path / "out", records)

    assert main(argv + ["--resume"]) == 0
    assert f"Resuming after 4 of {GAMES} games" in capfd.readouterr().err
    assert without_timing(results(tmp_path)) == json.loads(json.dumps(without_timing(uninterrupted(tmp_path))))


@linux_only
def test_killed_parent_leaves_no_workers(tmp_path, script):
    proc = start(script, tournament_argv(tmp_path, workers=2), delay=300)
    wait_for(lambda: len(children(proc.pid)) >= 2 or proc.poll() is not None, what="workers", timeout=WAIT)
    workers = children(proc.pid)
    assert len(workers) == 2
    time.sleep(0.2)  # inside their first game
    proc.kill()
    proc.wait(timeout=10)
    wait_for(lambda: not any(running(pid) for pid in workers), timeout=10, what="end of the orphaned workers")
    finish(proc, timeout=10)  # the workers held the output pipes open


@linux_only
def test_file_size_limit_keeps_the_previous_results(tmp_path, script, with_slow_agent, capsys):
    for records in (True, False):  # a record write fails first; without records, the results write
        argv = tournament_argv(tmp_path, workers=1, games=6, records=records)
        assert main(argv) == 0
        before = (tmp_path / "out" / "results.json").read_bytes()
        assert len(before) > 1500
        code, _, err, _ = finish(start(script, argv, file_size_limit=1500))
        assert code == 1
        assert err.count("\n") == 1 and err.startswith("error: ") and "File too large" in err, err
        assert ("game_00000.json" if records else "results.json") in err
        assert (tmp_path / "out" / "results.json").read_bytes() == before
        assert not temp_files(tmp_path / "out", tmp_path / "records")


def test_in_process_interrupt_saves_and_resume_equals_an_uninterrupted_run(tmp_path, monkeypatch, capfd):
    """Ctrl-C inside a game of a 1-worker run: the game is finished, saved, and the run stops."""
    stop_seeds = {agent_seed(5, k) for k in range(2)}

    class Interrupting(RandomAgent):
        def reset(self, seed=None):
            if seed in stop_seeds:
                os.kill(os.getpid(), signal.SIGINT)
            super().reset(seed)

    monkeypatch.setitem(concordia_env.agents.base.AGENTS, "slow", Interrupting)
    out = tmp_path / "results.json"
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # even if the tests run with it ignored
    try:
        with pytest.raises(TournamentInterrupted) as exc:
            run_tournament("italia", 2, ["slow", "random"], 10, progress=False, out=out, save_every=4)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, before)
    assert not exc.value.aborted and exc.value.saved
    partial = exc.value.result
    assert partial["games_done"] == 6 and not partial["complete"]  # game 5 was finished
    assert json.loads(out.read_text()) == json.loads(json.dumps(partial))
    assert "finishing the 1 game in flight" in capfd.readouterr().err
    assert "6 of 10 games (unfinished)" in format_table(partial)

    monkeypatch.setitem(concordia_env.agents.base.AGENTS, "slow", SlowAgent)
    monkeypatch.setattr(tournament_module, "_AGENT_POOL", {})  # no more interruptions
    resumed = run_tournament("italia", 2, ["slow", "random"], 10, progress=False, out=out, resume=True)
    reference = run_tournament("italia", 2, ["slow", "random"], 10, progress=False)
    assert without_timing(resumed) == without_timing(reference)
    assert json.loads(out.read_text())["complete"] is True
    # resuming a finished tournament plays nothing and gives the same result
    again = run_tournament("italia", 2, ["slow", "random"], 10, progress=False, out=out, resume=True, workers=2)
    assert without_timing(again) == without_timing(reference)


def test_partial_results_are_saved_every_n_games(tmp_path, monkeypatch):
    saves = []
    real = tournament_module.write_results

    def spy(result, path):
        saves.append((result["complete"], result["games_done"], len(result["per_game"])))
        real(result, path)

    monkeypatch.setattr(tournament_module, "write_results", spy)
    run_tournament("italia", 2, ["random", "random"], 10, progress=False, out=tmp_path / "r.json", save_every=3)
    assert saves == [(False, 3, 3), (False, 6, 6), (False, 9, 9), (True, 10, 10)]
    saves.clear()
    run_tournament("italia", 2, ["random", "random"], 4, progress=False, out=tmp_path / "r.json", save_every=0)
    assert saves == [(True, 4, 4)]


# ---------------------------------------------------------------- checks before the first game
def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of ``concordia ARGV`` run in this process."""
    capsys.readouterr()  # what earlier commands wrote
    code = main(argv)
    return code, capsys.readouterr().err


BASE = ["tournament", "--map", "italia", "--players", "2", "--agents", "random,random", "--games", "4",
        "--no-progress"]


@pytest.mark.parametrize("make,extra,message", [
    (lambda t: (t / "dir").mkdir(), ["--out", "{t}/dir"], "is a folder"),
    (lambda t: (t / "file").write_text("x"), ["--out", "{t}/file/results.json"], "cannot create folder"),
    (lambda t: (t / "file").write_text("x"), ["--records", "{t}/file"], "is a file, not a folder"),
    (lambda t: (t / "file").write_text("x"), ["--records", "{t}/file/records"], "cannot create folder"),
    (lambda t: None, ["--out", "/proc/concordia/results.json"], "cannot create folder"),
    (lambda t: None, ["--out", "{t}/r.json", "--save-every", "-1"], "save_every must be a non-negative int"),
    (lambda t: None, ["--out", "{t}/r.json", "--resume", "--overwrite"], "give one of them"),
    (lambda t: None, ["--out", "{t}/r.json", "--resume"], "nothing to resume"),
    (lambda t: None, ["--resume"], "needs the results file"),
])
def test_bad_output_paths_fail_before_the_first_game(tmp_path, capsys, make, extra, message):
    make(tmp_path)
    code, err = run_cli(BASE + [a.replace("{t}", str(tmp_path)) for a in extra], capsys)
    assert code == 2
    assert err.count("\n") == 1 and message in err and "Traceback" not in err, err
    assert not list(tmp_path.rglob("game_*.json"))


def test_missing_out_folders_are_created(tmp_path, capsys):
    out = tmp_path / "a" / "b" / "results.json"
    assert main(BASE + ["--out", str(out)]) == 0
    assert json.loads(out.read_text())["complete"] is True


@pytest.mark.parametrize("change", [
    ["--games", "6"], ["--seed", "1"], ["--agents", "random,heuristic"], ["--max-turns", "500"],
    ["--intermediate-scoring"], ["--players", "3", "--agents", "random,random,random", "--games", "6"],
])
def test_resume_refuses_other_settings(tmp_path, capsys, change):
    out = tmp_path / "results.json"
    assert main(BASE + ["--out", str(out)]) == 0
    before = out.read_bytes()
    code, err = run_cli(BASE + ["--out", str(out), "--resume"] + change, capsys)
    assert code == 2 and err.count("\n") == 1 and "another tournament's" in err, err
    assert out.read_bytes() == before


def test_resume_refuses_a_damaged_results_file(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(BASE + ["--out", str(out)]) == 0
    data = json.loads(out.read_text())
    for entry, field, value, message in ((1, "seed", 7, "its 'seed' is 7, expected 1"),
                                         (2, "ranking", [0, 0], "not those of a game"),
                                         (3, "winner", "heuristic", "its 'winner' is 'heuristic'")):
        damaged = json.loads(json.dumps(data))
        damaged["per_game"][entry][field] = value
        out.write_text(json.dumps(damaged))
        code, err = run_cli(BASE + ["--out", str(out), "--resume"], capsys)
        assert code == 2 and f"per_game entry {entry} is damaged" in err and message in err, err
        assert err.count("\n") == 1
    out.write_bytes(b"\xff\xfe not json")
    code, err = run_cli(BASE + ["--out", str(out), "--resume"], capsys)
    assert code == 2 and "not UTF-8" in err and str(out) in err, err


def test_unfinished_results_are_not_replaced_without_resume_or_overwrite(tmp_path, capsys):
    out = tmp_path / "results.json"
    assert main(BASE + ["--out", str(out)]) == 0
    data = json.loads(out.read_text())
    data.update(complete=False, games_done=2, per_game=data["per_game"][:2])
    out.write_text(json.dumps(data))
    code, err = run_cli(BASE + ["--out", str(out)], capsys)
    assert code == 2 and "unfinished tournament (2 of 4 games)" in err, err
    assert main(BASE + ["--out", str(out), "--overwrite"]) == 0
    assert json.loads(out.read_text())["complete"] is True


def test_records_folder_of_another_run_is_refused_unless_overwrite(tmp_path, capsys):
    records = tmp_path / "records"
    assert main(BASE + ["--records", str(records), "--seed", "1"]) == 0
    manifest = json.loads((records / RECORDS_MANIFEST).read_text())
    assert manifest["seed"] == 1 and manifest["agents"] == ["random", "random"]
    (records / "notes.txt").write_text("mine")
    # the same tournament again, or resumed: its folder is reused
    assert main(BASE + ["--records", str(records), "--seed", "1"]) == 0
    assert main(BASE + ["--records", str(records), "--seed", "1", "--resume"]) == 0
    # another tournament: refused, nothing touched
    before = {p.name: p.read_bytes() for p in records.iterdir()}
    code, err = run_cli(BASE + ["--records", str(records), "--seed", "2"], capsys)
    assert code == 2 and "another tournament's records (seed 1 there, 2 here)" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in records.iterdir()} == before
    # --overwrite replaces the records, and leaves other files alone
    assert main(BASE + ["--records", str(records), "--seed", "2", "--games", "2", "--overwrite"]) == 0
    assert sorted(p.name for p in records.iterdir()) == ["game_00000.json", "game_00001.json", "notes.txt",
                                                         RECORDS_MANIFEST]
    assert load_record(records / "game_00000.json")["seed"] == 2


def test_records_without_a_manifest_are_refused(tmp_path, capsys):
    records = tmp_path / "records"
    records.mkdir()
    save_record(play_game("italia", 2, 0, [RandomAgent(), RandomAgent()]), records / "game_00000.json")
    code, err = run_cli(BASE + ["--records", str(records)], capsys)
    assert code == 2 and f"without a {RECORDS_MANIFEST}" in err, err
    # a folder with other files only is fine
    other = tmp_path / "other"
    other.mkdir()
    (other / "readme.txt").write_text("x")
    assert main(BASE + ["--records", str(other)]) == 0


def test_stale_temp_files_are_cleared_and_prepare_has_no_side_effects_on_failure(tmp_path):
    out = tmp_path / "results.json"
    (tmp_path / ".results.json.abc123.tmp").write_text("left by a killed run")
    records = tmp_path / "records"
    records.mkdir()
    (records / ".game_00003.json.xyz.tmp").write_text("partial")
    prepare_tournament("italia", 2, ["random", "random"], 4, out=out, record_dir=records)
    assert not temp_files(tmp_path, records)
    with pytest.raises(ValueError, match="nothing to resume"):
        prepare_tournament("italia", 2, ["random", "random"], 4, out=tmp_path / "new.json", resume=True)
    assert not (tmp_path / "new.json").exists()


# ---------------------------------------------------------------- damaged record files
@pytest.fixture(scope="module")
def good_record() -> dict:
    return play_game("italia", 2, 3, [RandomAgent(), RandomAgent()])


def _with_version(version: str):
    def write(path: Path, record: dict) -> None:
        text = json.dumps(record).replace('"version": 1', f'"version": {version}', 1)
        path.write_text(text)
    return write


@pytest.mark.parametrize("write,message", [
    (_with_version("true"), "version True"),
    (_with_version("1.0"), "version 1.0"),
    (_with_version('"1"'), "version '1'"),
    (lambda p, r: p.write_text("[" * 100_000 + "]" * 100_000), "nested too deeply"),
    (lambda p, r: p.write_bytes(json.dumps(r).encode().replace(b'"italia"', b'"it\xe0lia"')), "not UTF-8"),
    (lambda p, r: p.write_text(json.dumps(r).replace('"seed": 3', '"seed": ' + "9" * 5000)), "digits"),
    (lambda p, r: p.write_text(json.dumps({**r, "agents": [[[[["x"]]]]] * 2})), "'agents' must be a list"),
])
def test_damaged_records_are_value_errors_naming_the_file(tmp_path, capsys, good_record, write, message):
    path = tmp_path / "game.json"
    write(path, good_record)
    with pytest.raises(ValueError, match=message) as exc:
        load_record(path)
    assert str(path) in str(exc.value)
    assert main(["replay", str(path), "--no-pause"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(path) in err and "Traceback" not in err
    assert len(err) < 500
