"""Every pool of game workers stops alike (concordia_env.arena.pools), in real processes sent real
signals: the first Ctrl-C or SIGTERM lets the work in flight finish and keeps it, prints one line
and exits 130 with the command to resume; a second one ends the workers and exits 130 at once.

The commands run through a small script that adds a ``slow`` agent (random play that sleeps
``SLOW_DELAY`` seconds when a game starts in a worker) and, for expert iteration, slows each self-play game the
same way, so that games last as long as a test needs without using the CPU. Runs are tiny; every
wait is bounded and no duration is asserted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from processes import children, kill_left_running, running, wait_for  # tests/processes.py

import concordia_env

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc: Linux")

#: the folder the package is imported from: the subprocesses run the same code
PACKAGE_ROOT = Path(concordia_env.__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""\
    import importlib, multiprocessing, os, sys, time
    import concordia_env.agents.base as base
    from concordia_env.agents.random_agent import RandomAgent

    DELAY = float(os.environ.get("SLOW_DELAY", "0"))

    class SlowAgent(RandomAgent):
        def reset(self, seed=None):
            if multiprocessing.parent_process() is not None:  # in a worker: agents built to check specs are quick
                time.sleep(DELAY)
            super().reset(seed)

    base.AGENTS["slow"] = SlowAgent
    module = sys.argv[1]
    if module == "expert_iteration":
        import concordia_env.training.expert_iteration as X
        selfplay_task = X._selfplay_task

        def slow_selfplay_task(task):
            time.sleep(DELAY)
            return selfplay_task(task)

        X._selfplay_task = slow_selfplay_task
    name = {"concordia": "concordia_env.cli", "value_data": "concordia_env.training.value.data",
            "evaluation": "concordia_env.arena.evaluation", "strength": "concordia_env.arena.strength.cli",
            "expert_iteration": "concordia_env.training.expert_iteration"}[module]
    sys.exit(importlib.import_module(name).main(sys.argv[2:]))
    """)

STARTED: list[subprocess.Popen] = []
WAIT = 120  # seconds: the most any command may take


@pytest.fixture(autouse=True)
def no_stray_processes():
    """Kill whatever a failed test left running (its workers die with it)."""
    yield
    kill_left_running(STARTED)


def strength_config(tmp_path: Path) -> Path:
    path = tmp_path / "strength.json"
    path.write_text(json.dumps({
        "format": "concordia-env/strength-config", "version": 1,
        "agents": [{"name": "slow", "spec": "slow"}, {"name": "random", "spec": "random"}],
        "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 4, "seed": 0,
                      "agents": ["slow", "random"]}],
    }))
    return path


def command(module: str, tmp_path: Path) -> list[str]:
    """A tiny run of ``module`` with 2 workers and more games than workers."""
    out = str(tmp_path / "out")
    if module == "concordia":
        return ["tournament", "--map", "italia", "--players", "2", "--agents", "slow,random", "--games", "8",
                "--workers", "2", "--out", str(tmp_path / "out" / "results.json"), "--records",
                str(tmp_path / "records"), "--no-progress"]
    if module == "value_data":
        return ["--map", "italia", "--games", "6", "--shard-size", "1", "--agents", "slow", "--players", "2",
                "--every", "10", "--max-turns", "40", "--workers", "2", "--out", out, "--no-progress"]
    if module == "evaluation":
        return ["--map", "italia", "--lineup", "slow,random", "--deals", "4", "--max-turns", "40", "--workers", "2",
                "--no-progress"]
    if module == "strength":
        return ["--config", str(strength_config(tmp_path)), "--out", out, "--workers", "2", "--deals-chunk", "1",
                "--no-progress"]
    assert module == "expert_iteration"
    return ["--map", "italia", "--players", "2", "--games", "6", "--simulations", "4", "--workers", "2",
            "--hidden", "16", "--batch", "64", "--gate-deals", "1", "--eval-deals", "1", "--gate-simulations", "4",
            "--max-turns", "40", "--shard-size", "1", "--no-progress", "--generations", "1", "--out", out]


def start(tmp_path: Path, module: str, delay: float) -> subprocess.Popen:
    """``module``'s command (:func:`command`) in a subprocess through :data:`SCRIPT`."""
    script = tmp_path / "slow_run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "SLOW_DELAY": str(delay),
           "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}

    def preexec() -> None:
        # Ctrl-C and SIGTERM as from a terminal, even when the tests run with them ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, str(script), module, *command(module, tmp_path)], cwd=tmp_path,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)
    STARTED.append(proc)
    return proc


def finish(proc: subprocess.Popen, timeout: float = WAIT) -> tuple[int, str, str]:
    """Exit status, stdout and stderr; kills the process (and fails) past ``timeout``."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"no exit within {timeout} s (hung); stderr: {err[-2000:]}")
    return proc.returncode, out, err


def wait_for_workers(proc: subprocess.Popen, n: int = 2) -> list[int]:
    """The command's worker processes, once ``n`` are running (their first games under way)."""
    wait_for(lambda: proc.poll() is not None or len(children(proc.pid)) >= n, timeout=WAIT, what=f"{n} workers")
    if proc.poll() is not None:
        pytest.fail(f"exited with {proc.returncode} before its workers started: {proc.communicate()[1][-2000:]}")
    time.sleep(0.5)  # inside their first games
    return children(proc.pid)


MODULES = ["value_data", "evaluation", "strength", "expert_iteration", "concordia"]


@pytest.mark.parametrize("module", MODULES)
def test_a_second_ctrl_c_ends_the_workers_and_exits_130(tmp_path, module):
    proc = start(tmp_path, module, delay=300)  # every game would take 5 minutes
    workers = wait_for_workers(proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    code, _, err = finish(proc, timeout=60)
    assert code == 130 and "Traceback" not in err, err
    assert "in flight" in err and "again" in err, err
    wait_for(lambda: not any(running(pid) for pid in workers), timeout=30, what="end of the workers")


#: per command: the signal sent once, and what its last line of stderr says
FIRST_STOP = {
    "value_data": (signal.SIGTERM, "resume with: python -m concordia_env.training.value.data --map italia"),
    "evaluation": (signal.SIGINT, "run it again with: python -m concordia_env.arena.evaluation --map italia"),
    "strength": (signal.SIGTERM, "go on with: python -m concordia_env.arena.strength --config"),
    "expert_iteration": (signal.SIGINT, "--resume"),
    "concordia": (signal.SIGTERM, "resume with: concordia tournament"),
}


@pytest.mark.parametrize("module", MODULES)
def test_a_first_ctrl_c_or_sigterm_finishes_the_work_in_flight_and_exits_130(tmp_path, module):
    sent, resume = FIRST_STOP[module]
    proc = start(tmp_path, module, delay=2.0)
    wait_for_workers(proc)
    proc.send_signal(sent)
    code, _, err = finish(proc)
    assert code == 130 and "Traceback" not in err, err
    name = "Ctrl-C" if sent == signal.SIGINT else "SIGTERM"
    assert f"{name}: no new " in err and "in flight" in err, err
    last = err.strip().splitlines()[-1]
    assert resume in last, last
    if module == "value_data":  # the shards in flight were finished and written
        assert len(list((tmp_path / "out").glob("shard_*.npz"))) >= 1
    if module == "strength":
        assert len(list((tmp_path / "out" / "lines").rglob("deals_*.json"))) >= 1
    if module == "concordia":
        assert len(list((tmp_path / "records").glob("game_*.json"))) >= 1


# ---------------------------------------------------------------- Ray
class FakeRay:
    """The few ``ray`` calls :class:`RayGamePool` makes, recorded; tasks finish when the test says."""

    def __init__(self) -> None:
        self.initialized = True
        self.cancelled: list[tuple[object, bool]] = []
        self.shutdowns = 0

    def is_initialized(self) -> bool:
        return self.initialized

    def cancel(self, ref: object, force: bool = False) -> None:
        self.cancelled.append((ref, force))

    def shutdown(self) -> None:
        self.shutdowns += 1
        self.initialized = False

    def remote(self, num_cpus: int):
        class Ref:
            def __init__(self) -> None:
                from concurrent.futures import Future

                self._future: Future = Future()

            def future(self):
                return self._future

        class Remote:
            def remote(self, *args):
                return Ref()

        return lambda fn: Remote()


def test_aborting_a_ray_pool_cancels_its_tasks_and_shuts_down_the_ray_the_command_started(monkeypatch):
    from concordia_env.arena.pools import close_pool
    from concordia_env.integrations import ray_backend

    fake = FakeRay()
    monkeypatch.setattr(ray_backend, "require_ray", lambda: fake)
    monkeypatch.setattr(ray_backend, "connect", lambda address=None, num_cpus=None: False)  # connected already
    monkeypatch.setattr(ray_backend, "_STARTED_HERE", True)  # by the command, before the pool (cli.py does)
    pool = ray_backend.RayGamePool()
    done, running = pool.submit(print, 1), pool.submit(print, 2)
    done.set_result(None)
    close_pool(pool, failed=True)  # a second Ctrl-C
    assert [force for _, force in fake.cancelled] == [True] and fake.cancelled[0][0].future() is running
    assert fake.shutdowns == 1 and not ray_backend._STARTED_HERE


def descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        kids = children(todo.pop())
        found.update(kids)
        todo.extend(kids)
    return found


def test_a_second_ctrl_c_on_the_ray_backend_exits_130_and_leaves_no_ray_processes(tmp_path):
    if os.environ.get("CONCORDIA_REQUIRE_RAY") != "1":  # .ci/run's rllib venv runs it with Ray installed
        pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]'); .ci/run runs this with it")
    # real agents (Ray's workers do not run the test script): searches long enough to be in flight
    argv = ["tournament", "--map", "italia", "--players", "2", "--agents", "mcts:iterations=200000,random",
            "--games", "4", "--workers", "2", "--backend", "ray", "--out", str(tmp_path / "results.json"),
            "--no-progress"]
    script = tmp_path / "slow_run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGE_ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(script), "concordia", *argv], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    STARTED.append(proc)
    # a game task under way: a Ray worker named for the tournament's task function (Ray's own helpers,
    # "ray::IDLE", "ray::DashboardAgent", "ray::RuntimeEnv...", start before any game)
    wait_for(lambda: proc.poll() is not None or any("ray::_play" in _cmdline(pid) for pid in descendants(proc.pid)),
             timeout=WAIT, what="Ray task", poll=0.2)
    assert proc.poll() is None, proc.communicate()[1]
    helpers = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    code, _, err = finish(proc, timeout=60)
    assert code == 130 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1].startswith("aborted; "), err
    wait_for(lambda: not any(running(pid) for pid in helpers), timeout=30, what="end of the Ray processes", poll=0.2)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# ---------------------------------------------------------------- the mechanism, in this process
def test_sigterm_stops_the_work_after_the_task_in_flight_and_the_handlers_come_back(capfd):
    from concordia_env.arena.pools import PoolWork, stop_signals

    def task(i: int) -> int:
        if i == 2:
            os.kill(os.getpid(), signal.SIGTERM)  # arrives while task 2 runs
        return i * i

    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with stop_signals("game") as interrupts:
            with stop_signals("shard") as inner:  # nested: one Ctrl-C stops the whole command
                assert inner is interrupts
            work = PoolWork(task, list(range(6)), None, 1, interrupts)
            assert list(work) == [(0, 0), (1, 1), (2, 4)] and work.cut_short
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back
    finally:
        signal.signal(signal.SIGTERM, before)
    assert "SIGTERM: no new games; finishing the 1 game in flight" in capfd.readouterr().err


def test_a_stop_after_the_last_task_cuts_nothing_short():
    from concordia_env.arena.pools import Interrupts, PoolWork

    interrupts = Interrupts()
    work = PoolWork(lambda i: i, [0, 1], None, 1, interrupts)
    assert list(work) == [(0, 0), (1, 1)]
    interrupts.stop = True
    assert not work.cut_short


def test_sigterm_as_ctrl_c_raises_keyboard_interrupt_in_the_block_only():
    from concordia_env.arena.pools import sigterm_as_ctrl_c

    before = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(KeyboardInterrupt), sigterm_as_ctrl_c():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs at the next bytecode; never reached
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with sigterm_as_ctrl_c():  # an ignored SIGTERM stays ignored
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)
