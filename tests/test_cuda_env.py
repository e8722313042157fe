"""The GPU env (:mod:`concordia_env.cuda`) against the CPU batched env, under numba's CUDA simulator.

The simulator must be switched on (``NUMBA_ENABLE_CUDASIM=1``) before anything in a process
imports ``numba.cuda``, so the checks that create the GPU env run in one subprocess (this file
run as a script, :func:`run_checks`), once per test session; each test reads its check's result.
With ``CONCORDIA_TEST_CUDA_DEVICE=1`` that subprocess runs on the real GPU instead.

Under the simulator the per-game kernels run as their CPU compile (see
:func:`concordia_env.cuda.backend.on_host`); the rules' GPU compile is checked by
:mod:`concordia_env.cuda.compile_check` (:func:`test_kernels_compile_to_ptx`, which needs
NVIDIA's NVVM library and is skipped without it). The setup kernel and the device-side rewards
are also checked in this process, as CPU kernels, against the host's own functions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
ON_DEVICE = os.environ.get("CONCORDIA_TEST_CUDA_DEVICE") == "1"


def _env(simulator: bool) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return env


# ------------------------------------------------------------------ in this process (CPU kernels)


@pytest.mark.parametrize("map_name", ["imperium", "italia"])
def test_device_setup_deals_the_games_the_golden_playthroughs_pin(map_name):
    """The setup the device runs (one kernel, shared with ``initial_state``) gives, from each golden
    game's seed, the exact initial state whose digest that golden file holds."""
    from pathlib import Path

    from concordia_env.game import get_game, setup_table, template_state
    from concordia_env.rules.setup import setup_state
    from concordia_env.tools.golden import read_golden, state_digest

    game = get_game(map_name)
    files = sorted((Path(__file__).parent / "golden").glob(f"{map_name}_*.jsonl.gz"))
    assert files
    for path in files:
        header = read_golden(path)[0]
        n, inter = header["players"], header["intermediate_scoring"]
        table, template = setup_table(game, n), template_state(game, n, inter)
        s = np.empty_like(template)
        setup_state(s, template, table, np.int64(header["seed"]))
        assert state_digest(s) == header["initial_state"], path.name


@pytest.mark.parametrize("mode", ["win", "rank", "vp"])
def test_device_rewards_equal_seat_rewards(mode):
    from concordia_env import engine as E
    from concordia_env.cuda.games import seat_rewards_into
    from concordia_env.rewards import REWARD_MODES, seat_rewards
    from concordia_env.state import new_game

    for k, (map_name, n) in enumerate([("imperium", 3), ("imperium", 5), ("italia", 2), ("italia", 4)] * 3):
        st = new_game(map_name, n, seed=100 + k)
        E.random_playout(st.s, st.game.tables, st._mask, k, 1_000_000)
        assert st.is_terminal()
        out = np.full(n, np.nan, np.float32)
        seat_rewards_into(st.s, st.game.tables, REWARD_MODES.index(mode), out)
        assert np.array_equal(out, seat_rewards(st, mode).astype(np.float32))


def test_ppo_advantages_follow_each_seat():
    """GAE per (game, seat): a decision's successor is the same seat's next decision, or the game's end."""
    torch = pytest.importorskip("torch")
    from concordia_env.training.ppo.cuda import seat_advantages

    v = torch.tensor([[0.1], [0.2], [0.3], [0.4], [0.5]])
    seats = torch.tensor([[0], [1], [0], [1], [0]])
    rewards = torch.zeros(5, 1, 2)
    rewards[3, 0] = torch.tensor([1.0, -1.0])  # the game ends on step 3; step 4 starts the next one
    dones = torch.tensor([[False], [False], [False], [True], [False]])
    adv, valid = seat_advantages(torch, v, seats, rewards, dones, gamma=1.0, lam=1.0)
    assert valid[:, 0].tolist() == [True, True, True, True, False]
    assert torch.allclose(adv[:, 0], torch.tensor([1 - 0.1, -1 - 0.2, 1 - 0.3, -1 - 0.4, 0.0]))
    adv, valid = seat_advantages(torch, v[:3], seats[:3], torch.zeros(3, 1, 2), dones[:3] & False, 1.0, 0.5)
    assert valid[:, 0].tolist() == [True, False, False]
    assert torch.allclose(adv[:, 0], torch.tensor([0.3 - 0.1, 0.0, 0.0]))  # bootstraps on its next value


def test_missing_numba_cuda_is_a_clear_error(monkeypatch):
    import importlib.util

    from concordia_env.cuda import CudaUnavailableError, require_cuda

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba_cuda" else real(name, *a))
    with pytest.raises(CudaUnavailableError, match=r'numba-cuda, which is not installed: pip install "\.\[cuda\]" in the concordia-env source folder'):
        require_cuda()


def test_importing_the_package_imports_neither_numba_cuda_nor_torch():
    code = ("import sys, concordia_env.cuda as c; "
            "assert 'numba.cuda' not in sys.modules and 'torch' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env=_env(simulator=False), timeout=120)


def test_no_device_is_a_clear_error():
    pytest.importorskip("numba_cuda")
    code = ("from concordia_env.cuda import ConcordiaCudaVecEnv, CudaUnavailableError\n"
            "try:\n    ConcordiaCudaVecEnv(2, 'italia', 2)\nexcept CudaUnavailableError as e:\n    print('ERROR', e)\n"
            "else:\n    print('DEVICE')\n")
    out = subprocess.run([sys.executable, "-c", code], env=_env(simulator=False), timeout=300,
                         capture_output=True, text=True).stdout
    if "DEVICE" in out:
        pytest.skip("a CUDA device is present")
    assert "ERROR no usable CUDA device" in out and "NUMBA_ENABLE_CUDASIM=1" in out, out


def test_kernels_compile_to_ptx():
    """The rules compile for a GPU (sm_90), with no local memory; needs NVVM (skipped without it)."""
    pytest.importorskip("numba_cuda")
    proc = subprocess.run([sys.executable, "-m", "concordia_env.cuda.compile_check"], env=_env(simulator=False),
                          timeout=600, capture_output=True, text=True)
    if proc.returncode != 0 and ("nvvm" in proc.stderr.lower() or "nvrtc" in proc.stderr.lower()):
        pytest.skip("NVIDIA's NVVM library is not installed (pip install nvidia-nvvm nvidia-cuda-nvrtc)")
    assert proc.returncode == 0, proc.stderr[-3000:]
    from concordia_env.cuda.compile_check import SIGNATURES

    lines = proc.stdout.splitlines()
    assert len(lines) == len(SIGNATURES) and all("local memory     0 B" in line for line in lines), proc.stdout


# ------------------------------------------------------------------ in the simulator (one subprocess)


@pytest.fixture(scope="module")
def sim_results() -> dict[str, str]:
    pytest.importorskip("numba_cuda")
    proc = subprocess.run([sys.executable, __file__], env=_env(simulator=not ON_DEVICE), timeout=600,
                          capture_output=True, text=True)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(lines[-1])


@pytest.mark.parametrize("name", ["same_as_cpu_imperium", "same_as_cpu_italia", "games_end_and_reset",
                                  "bad_actions", "illegal_action", "get_and_set_state", "playouts",
                                  "bad_arguments"])
def test_in_simulator(sim_results, name):
    assert sim_results.get(name) == "ok", f"{name}: {sim_results.get(name, 'not run')}"


@pytest.mark.parametrize("command", [["concordia_env.tools.bench", "cuda", "--simulator", "--num-envs", "2", "--seconds", "0"],
                                     ["concordia_env.training.ppo.cuda", "--simulator", "--map", "italia", "--players", "2"]],
                         ids=["bench", "ppo"])
def test_commands_run_in_simulator(command):
    pytest.importorskip("numba_cuda")
    if command[0].endswith("ppo.cuda"):
        pytest.importorskip("torch")
    proc = subprocess.run([sys.executable, "-m", *command], env=_env(simulator=False), timeout=600,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert ("steps/s" in proc.stdout) and ("ratio" in proc.stdout or "update    2" in proc.stdout), proc.stdout


# ------------------------------------------------------------------ the checks themselves


def _random_actions(rng, masks):
    return (rng.random(masks.shape) * masks).argmax(axis=1)


def _lockstep(n, map_name, players, steps, seed=7, **kw):
    """Step the CPU and the GPU env with the same random legal actions; assert equal results."""
    from concordia_env.cuda import ConcordiaCudaVecEnv
    from concordia_env.vector import ConcordiaVecEnv

    cpu = ConcordiaVecEnv(n, map_name, players, seed=seed, **kw)
    gpu = ConcordiaCudaVecEnv(n, map_name, players, seed=seed, output="numpy", **kw)
    assert np.array_equal(cpu.obs, gpu.obs) and np.array_equal(cpu.masks, gpu.masks)
    assert np.array_equal(cpu.current_players, gpu.current_players)
    rng = np.random.default_rng(abs(seed))
    ended = np.zeros(n, np.int64)
    for k in range(steps):
        actions = _random_actions(rng, cpu.masks)
        o1, m1, r1, d1, i1 = cpu.step(actions)
        o2, m2, r2, d2, i2 = gpu.step(actions)
        where = f"step {k}"
        assert np.array_equal(o1, o2), where
        assert np.array_equal(m1, m2), where
        assert r2.dtype == np.float32 and np.array_equal(r1.astype(np.float32), r2), where
        assert np.array_equal(d1, d2), where
        assert i1 == i2, where
        assert np.array_equal(cpu.current_players, gpu.current_players), where
        ended += d1
    assert np.array_equal(cpu.episodes, gpu.episodes)
    assert [gpu.game_seed(i, int(e)) for i, e in enumerate(gpu.episodes)] == \
        [cpu.game_seed(i, int(e)) for i, e in enumerate(cpu.episodes)]
    for i in range(n):
        assert gpu.get_state(i) == cpu.state(i)
    return ended, gpu


def check_same_as_cpu_imperium():
    ended, _ = _lockstep(3, "imperium", 4, 60, max_turns=6, reward="rank")
    assert ended.min() >= 1  # every game was truncated and reset at least once


def check_same_as_cpu_italia():
    ended, _ = _lockstep(2, "italia", 3, 60, seed=-3, max_turns=5, reward="vp", intermediate_scoring=True)
    assert ended.min() >= 1


def check_games_end_and_reset():
    """Whole games to their end (rewards paid, infos filled), then the reset to the next seed."""
    from concordia_env.cuda import ConcordiaCudaVecEnv
    from concordia_env.vector import ConcordiaVecEnv

    cpu = ConcordiaVecEnv(2, "italia", 2, seed=11, max_turns=None)
    gpu = ConcordiaCudaVecEnv(2, "italia", 2, seed=11, max_turns=None, output="numpy")
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(3000):
        actions = _random_actions(rng, cpu.masks)
        _, m1, r1, d1, i1 = cpu.step(actions)
        o2, m2, r2, d2, i2 = gpu.step(actions)
        assert np.array_equal(m1, m2) and np.array_equal(r1.astype(np.float32), r2) and i1 == i2
        for i in np.flatnonzero(d2):
            assert i2[i]["terminated"] and abs(r2[i].sum()) < 1e-6 and r2[i].max() == 1.0
            assert gpu.final_state(i).is_terminal()
            finished += 1
        if finished >= 2:
            break
    assert finished >= 2, finished
    assert np.array_equal(cpu.obs, o2)


def check_bad_actions():
    from concordia_env.cuda import ConcordiaCudaVecEnv

    gpu = ConcordiaCudaVecEnv(2, "italia", 2, seed=1, output="numpy")
    before = [gpu.get_state(i) for i in range(2)]
    legal = _random_actions(np.random.default_rng(0), gpu.masks)
    for bad, match in [(legal[:1], "must be 2 integers"), (legal.astype(np.float64), "dtype float64"),
                       (np.stack([legal, legal]), r"shape \(2, 2\)"), ([True, False], "dtype bool")]:
        try:
            gpu.step(bad)
        except ValueError as err:
            assert match in str(err) or __import__("re").search(match, str(err)), (match, str(err))
        else:
            raise AssertionError(f"no error for {bad!r}")
    assert [gpu.get_state(i) for i in range(2)] == before


def check_illegal_action():
    from concordia_env.cuda import ConcordiaCudaVecEnv
    from concordia_env.state import IllegalActionError

    gpu = ConcordiaCudaVecEnv(3, "imperium", 3, seed=4, output="numpy")
    before = [gpu.get_state(i) for i in range(3)]
    actions = _random_actions(np.random.default_rng(0), gpu.masks)
    for bad_action in (int(np.flatnonzero(gpu.masks[1] == 0)[0]), 402, -1):
        acts = actions.copy()
        acts[1] = bad_action
        seat = int(gpu.current_players[1])
        try:
            gpu.step(acts)
        except IllegalActionError as err:
            assert str(err).startswith("game 1: ") and err.player == seat and err.action == bad_action, str(err)
        else:
            raise AssertionError(f"no error for action {bad_action}")
        assert [gpu.get_state(i) for i in range(3)] == before  # no game moved
    gpu.step(actions)  # the env still works


def check_get_and_set_state():
    from concordia_env.cuda import ConcordiaCudaVecEnv
    from concordia_env.encoding import observation
    from concordia_env.state import new_game

    gpu = ConcordiaCudaVecEnv(2, "imperium", 4, seed=0, output="numpy")
    st = new_game("imperium", 4, seed=12345)
    rng = np.random.default_rng(1)
    for _ in range(15):
        legal = st.legal_actions()
        st.apply(legal[rng.integers(len(legal))])
    gpu.set_state(1, st)
    assert gpu.get_state(1) == st and gpu.get_state(0) == new_game("imperium", 4, seed=0)
    assert np.array_equal(gpu.masks[1], st.legal_action_mask().astype(np.int8))
    assert np.array_equal(gpu.obs[1], observation(st, st.current_player)) and gpu.current_players[1] == st.current_player
    a = st.legal_actions()[0]
    acts = np.array([gpu.get_state(0).legal_actions()[0], a])
    gpu.step(acts)
    st.apply(a)
    assert gpu.get_state(1) == st
    for bad, match in [(new_game("italia", 4, seed=0), "4-player italia"), (new_game("imperium", 3, seed=0), "3-player")]:
        try:
            gpu.set_state(0, bad)
        except ValueError as err:
            assert match in str(err), str(err)
        else:
            raise AssertionError("set_state took a game of another kind")
    try:
        gpu.get_state(2)
    except IndexError as err:
        assert "0..1" in str(err)
    else:
        raise AssertionError("no IndexError")


def check_playouts():
    from concordia_env.cuda import ConcordiaCudaVecEnv

    gpu = ConcordiaCudaVecEnv(2, "italia", 2, seed=3, output="numpy")
    before = [gpu.get_state(i) for i in range(2)]
    counts = gpu.random_playouts(seed=9)
    assert counts.shape == (2,) and (counts > 50).all(), counts
    assert all(gpu.playout_state(i).is_terminal() for i in range(2))
    assert [gpu.get_state(i) for i in range(2)] == before
    again = gpu.random_playouts(seed=9)
    assert np.array_equal(counts, again)  # reproducible


def check_bad_arguments():
    from concordia_env.cuda import ConcordiaCudaVecEnv

    for kwargs, match in [(dict(num_envs=0), "num_envs"), (dict(num_envs=2, map_name="roma"), "unknown map"),
                          (dict(num_envs=2, num_players=6), "cannot be played by 6"),
                          (dict(num_envs=2, reward="gold"), "reward must be"),
                          *([(dict(num_envs=2, output="torch"), "simulator")] if not ON_DEVICE else []),
                          (dict(num_envs=2, output="jax"), "output must be"),
                          (dict(num_envs=2, threads_per_block=0), "threads_per_block")]:
        try:
            ConcordiaCudaVecEnv(**kwargs)
        except ValueError as err:
            assert match in str(err), (match, str(err))
        else:
            raise AssertionError(f"no error for {kwargs}")


def run_checks(checks: dict[str, Callable[[], None]]) -> dict[str, str]:
    """Run every check; its result is "ok" or the failure's traceback."""
    results = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = "ok"
        except Exception:  # noqa: BLE001 - reported to the test that reads it
            results[name] = traceback.format_exc()
    return results


if __name__ == "__main__":
    if not ON_DEVICE:
        assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", "run by the tests with the simulator on"
    checks = {name[len("check_"):]: fn for name, fn in list(globals().items()) if name.startswith("check_")}
    print(json.dumps(run_checks(checks)))
