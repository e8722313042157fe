"""The released policies (concordia_env/agents/policies/ppo_{map}.npz + .json): present, small, playable
with numpy alone (torch blocked), the very moves of the torch originals in releases/ppo_{map}.zip,
legal in every player count; and the torch originals still load as policy files."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from concordia_env import encoding
from concordia_env.agents import make_agent
from concordia_env.agents.numpy_policy import NumpyPolicy
from concordia_env.agents.policy import POLICY_DIR, PolicyAgent, released_policy_path
from concordia_env.arena.records import play_game
from concordia_env.arena.tournament import run_tournament
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.engine import NUM_ACTIONS
from concordia_env.state import new_game

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "releases"
#: float32 weights of the 2378-128-128-402 actor, deflated, are about 1.39 MB (float16 would halve that)
MAX_BYTES = 1_500_000
#: decisions (two or more legal actions) compared with the torch original, per map
MIN_DECISIONS = 300


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_released_file_is_small_and_loads(map_name):
    path = released_policy_path(map_name)
    assert path == ROOT / "concordia_env" / "agents" / "policies" / f"ppo_{map_name}.npz" and path.parent == POLICY_DIR
    assert path.is_file() and path.with_suffix(".json").is_file(), path
    assert path.stat().st_size < MAX_BYTES
    policy = NumpyPolicy.load(path)
    assert policy.layer_sizes == [encoding.OBSERVATION_SIZE, 128, 128, NUM_ACTIONS] and policy.activation == "Tanh"
    assert policy.map_name == map_name and policy.metadata["algorithm"] == "MaskablePPO"
    # exported from the torch original kept in releases
    source = policy.metadata["source"]
    assert source["file"] == f"ppo_{map_name}.zip"
    assert source["sha256"] == hashlib.sha256((RELEASE / source["file"]).read_bytes()).hexdigest()
    header = json.loads(path.with_suffix(".json").read_text())
    assert header["dtype"] == "float32" and header["npz_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()


def ppo_decisions(map_name: str, minimum: int):
    """Yield (observation, mask, ppo's action) for every decision with two or more legal actions
    that ``ppo`` takes in whole games against the heuristic (every player count of the map, first
    and last seat, so the positions are ppo's own trajectories) until ``minimum`` were yielded."""
    ppo = make_agent("ppo")
    heuristic = make_agent("heuristic")
    seed = 0
    while minimum > 0:
        for n in load_map(map_name).players:
            for seat in (0, n - 1):
                seed += 1
                state = new_game(map_name, n, seed=seed)
                heuristic.reset(seed)
                while not state.is_terminal():
                    p = state.current_player
                    obs, mask = encoding.observation(state, p), state.legal_action_mask()
                    if p == seat:
                        action = ppo.act(obs, mask, state)
                        if np.count_nonzero(mask) > 1:
                            yield obs, mask, action
                            minimum -= 1
                    else:
                        action = heuristic.act(obs, mask, state)
                    state.apply(action)


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_numpy_ppo_plays_the_moves_of_the_torch_original(map_name):
    pytest.importorskip("sb3_contrib")  # the "train" extra: the torch side of the comparison
    torch_agent = PolicyAgent(RELEASE / f"ppo_{map_name}.zip")  # deterministic: MaskablePPO.predict
    compared = differing = 0
    for obs, mask, action in ppo_decisions(map_name, MIN_DECISIONS):
        compared += 1
        differing += torch_agent.act(obs, mask) != action
    assert compared >= MIN_DECISIONS and differing == 0, f"{differing} of {compared} moves differ"


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_torch_originals_still_load_as_policy_files(map_name):
    # saved when the features extractor lived at agents.nets: policy_kwargs are rebuilt from the JSON
    pytest.importorskip("sb3_contrib")
    agent = PolicyAgent(RELEASE / f"ppo_{map_name}.zip")
    assert agent.policy.algorithm == "MaskablePPO" and agent.policy.maskable
    assert type(agent.model.policy.features_extractor).__name__ == "ObservationScaler"
    assert agent.model.observation_space.shape == (encoding.OBSERVATION_SIZE,)


def test_ppo_plays_full_games_without_torch():
    code = """
import sys
for name in ("torch", "stable_baselines3", "sb3_contrib"):
    sys.modules[name] = None  # any import of them now raises ImportError
from concordia_env.agents import make_agent
from concordia_env.arena.records import play_game
from concordia_env.data import MAP_NAMES, load_map
games = 0
for map_name in MAP_NAMES:
    for n in load_map(map_name).players:
        agents = [make_agent("ppo" if seat == n - 1 else "random", seed=seat) for seat in range(n)]
        agents[0] = make_agent("ppo:deterministic=false", seed=n)
        record = play_game(map_name, n, seed=n, agents=agents)
        assert record["result"]["truncated"] is False and len(record["result"]["scores"]) == n
        games += 1
loaded = [m for m in ("torch", "stable_baselines3", "sb3_contrib") if sys.modules.get(m) is not None]
assert not loaded, loaded
print("games", games)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["games", "6"]


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_ppo_spec_plays_every_player_count(map_name):
    for n in load_map(map_name).players:
        result = run_tournament(map_name, n, ["ppo"] + ["random"] * (n - 1), games=n, seed=7, progress=False)
        assert result["truncated"] == 0
        assert result["per_agent"]["ppo"]["games"] == n


def test_ppo_reads_the_map_and_is_deterministic():
    a, b = make_agent("ppo", seed=1), make_agent("ppo", seed=2)
    for map_name in MAP_NAMES:
        n = min(load_map(map_name).players)
        r1 = play_game(map_name, n, seed=3, agents=[a] + [make_agent("heuristic") for _ in range(n - 1)])
        r2 = play_game(map_name, n, seed=3, agents=[b] + [make_agent("heuristic") for _ in range(n - 1)])
        assert r1["actions"] == r2["actions"]  # deterministic play does not depend on the agent seed


def test_concordia_tournament_takes_the_ppo_spec(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "concordia_env.cli", "tournament", "--map", "italia", "--players", "2",
                           "--agents", "ppo,random", "--games", "2", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["per_agent"]["ppo"]["games"] == 2
