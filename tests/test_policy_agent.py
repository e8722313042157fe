"""concordia_env.agents.policy: loading stable-baselines3 models, legal play in every seat, seeding, specs, errors;
the ``ppo`` agent's file handling (numpy pairs, no torch).

Models are tiny untrained-or-barely-trained networks made here (no released file is
needed): what is tested is the plumbing, not the play strength. Tests that need a
stable-baselines3 model skip without the "train" extra; the rest run on numpy alone.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import concordia_env as ce
from concordia_env import encoding
from concordia_env.agents import make_agent
from concordia_env.agents import policy as P
from concordia_env.agents.numpy_policy import NumpyPolicy
from concordia_env.agents.policy import PolicyAgent, ReleasedPolicyAgent, released_policy
from concordia_env.agents.random_agent import RandomAgent
from concordia_env.scenario import play_random
from concordia_env.training.selfplay import observation_space

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]
REPO = Path(__file__).resolve().parents[1]
MAX_DECISIONS = 20_000  # random games take ~600-1,500 decisions; this only guards against a hang


class SeatEnv(gym.Env):
    """Seat 0 of a core game, the other seats playing uniformly at random; +1/-1/(n-1) at the end.

    The observation is the project's vector (``dict_obs``: the env's dict with the mask)."""

    def __init__(self, map_name: str = "italia", num_players: int = 2, dict_obs: bool = False,
                 max_steps: int = 200) -> None:
        box = spaces.Box(0, np.inf, (encoding.OBSERVATION_SIZE,), np.float32)
        self.observation_space = spaces.Dict({
            "observation": box, "action_mask": spaces.Box(0, 1, (ce.NUM_ACTIONS,), np.int8)}) if dict_obs else box
        self.action_space = spaces.Discrete(ce.NUM_ACTIONS)
        self.map_name, self.num_players, self.dict_obs, self.max_steps = map_name, num_players, dict_obs, max_steps

    def _advance(self) -> None:
        st = self.state
        while not st.is_terminal() and st.current_player != 0:
            legal = st.legal_actions()
            st.apply(legal[int(self.np_random.integers(len(legal)))])

    def _obs(self):
        vec = encoding.observation(self.state, 0)
        return {"observation": vec, "action_mask": self.state.legal_action_mask()} if self.dict_obs else vec

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        self.state = ce.new_game(self.map_name, self.num_players, seed=int(self.np_random.integers(2**31)))
        self.steps = 0
        self._advance()
        return self._obs(), {}

    def step(self, action):
        self.state.apply(int(action))
        self._advance()
        self.steps += 1
        done = self.state.is_terminal()
        reward = self.state.returns()[0] if done else 0.0
        return self._obs(), reward, done, (not done and self.steps >= self.max_steps), {}

    def action_masks(self) -> np.ndarray:
        return self.state.legal_action_mask().astype(bool)


class TinyEnv(gym.Env):
    """Any spaces, one-step episodes: for models whose spaces must NOT match the game's."""

    def __init__(self, observation_space, n_actions: int = ce.NUM_ACTIONS) -> None:
        self.observation_space = observation_space
        self.action_space = spaces.Discrete(n_actions)

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action):
        return self.observation_space.sample(), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, bool)


def _maskable(env, learn: int = 0):
    pytest.importorskip("sb3_contrib")  # the "train" extra: torch, stable-baselines3, sb3-contrib
    from sb3_contrib import MaskablePPO

    kind = "MultiInputPolicy" if isinstance(env.observation_space, spaces.Dict) else "MlpPolicy"
    model = MaskablePPO(kind, env, n_steps=64, batch_size=32, policy_kwargs=dict(net_arch=[32]), seed=0)
    if learn:
        model.learn(learn)
    return model


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    """Saved model files, made once per test process: name -> path."""
    pytest.importorskip("sb3_contrib")
    from stable_baselines3 import A2C, DQN, PPO

    d = tmp_path_factory.mktemp("models")
    out: dict[str, Path] = {}

    def save(name, model):
        out[name] = d / f"{name}.zip"
        model.save(out[name])

    save("maskable", _maskable(SeatEnv(), learn=128))  # a real (tiny) training run through the game
    save("maskable_dict", _maskable(SeatEnv(dict_obs=True)))
    small = dict(policy_kwargs=dict(net_arch=[32]), seed=0)
    save("ppo", PPO("MlpPolicy", SeatEnv(), n_steps=64, batch_size=32, **small))
    save("a2c", A2C("MlpPolicy", SeatEnv(), n_steps=8, **small))
    save("dqn", DQN("MlpPolicy", SeatEnv(), buffer_size=64, learning_starts=0, **small))
    from sb3_contrib import TRPO

    save("trpo", TRPO("MlpPolicy", SeatEnv(), n_steps=64, batch_size=32, **small))
    return out


def play(map_name: str, n: int, seat_agents: dict[int, object], seed: int) -> int:
    """A full game on the core state; seats not in ``seat_agents`` play at random. Asserts every
    action is legal; returns the number of decisions taken by ``seat_agents``."""
    state = ce.new_game(map_name, n, seed=seed)
    rnd = RandomAgent(seed=seed)
    taken = 0
    for _ in range(MAX_DECISIONS):
        if state.is_terminal():
            return taken
        seat = state.current_player
        mask = state.legal_action_mask()
        obs = encoding.observation(state, seat)
        agent = seat_agents.get(seat, rnd)
        a = agent.act(obs, mask, state)
        assert isinstance(a, int) and 0 <= a < ce.NUM_ACTIONS and mask[a] == 1, (agent, a)
        taken += agent is not rnd
        state.apply(a)
    raise AssertionError(f"{map_name} {n}p game did not end in {MAX_DECISIONS} decisions")


# ------------------------------------------------------------ full games, every seat
@pytest.mark.parametrize("map_name,n", COMBOS)
def test_policy_plays_every_seat_legally_to_the_end(models, map_name, n):
    # one full game per seat; the Box and the Dict model and both play modes take turns
    kinds = ["maskable", "maskable_dict"]
    for seat in range(n):
        agent = PolicyAgent(models[kinds[seat % 2]], seed=seat, deterministic=seat % 3 != 2)
        assert play(map_name, n, {seat: agent}, seed=100 + seat) > 0


def test_policy_in_every_seat_at_once(models):
    agents = {s: PolicyAgent(models["maskable"], seed=s, deterministic=False) for s in range(3)}
    assert play("imperium", 3, agents, seed=5) > 0


# ------------------------------------------------------------ loading and validation
def test_missing_file(tmp_path):
    missing = tmp_path / "nope.zip"
    with pytest.raises(FileNotFoundError, match="nope.zip"):
        PolicyAgent(missing)
    with pytest.raises(FileNotFoundError, match="nope"):
        PolicyAgent(tmp_path / "nope")


def test_not_a_model_file(tmp_path):
    bad = tmp_path / "bad.zip"
    bad.write_text("not a zip")
    with pytest.raises(ValueError, match="bad.zip"):
        PolicyAgent(bad)
    with pytest.raises(ValueError, match="not a file"):
        PolicyAgent(tmp_path)


def test_zip_suffix_may_be_left_off(models):
    agent = PolicyAgent(str(models["maskable"])[:-len(".zip")])
    assert agent.path == models["maskable"].resolve()


def test_wrong_observation_shape_is_refused(tmp_path):
    path = tmp_path / "small.zip"
    _maskable(TinyEnv(spaces.Box(0, 1, (10,), np.float32))).save(path)
    with pytest.raises(ValueError, match=rf"shape \(10,\), expected \({encoding.OBSERVATION_SIZE},\)"):
        PolicyAgent(path)


def test_wrong_dict_observation_is_refused(tmp_path):
    path = tmp_path / "dict.zip"
    space = spaces.Dict({"observation": spaces.Box(0, 1, (7,), np.float32),
                         "action_mask": spaces.Box(0, 1, (ce.NUM_ACTIONS,), np.int8)})
    _maskable(TinyEnv(space)).save(path)
    with pytest.raises(ValueError, match=rf"'observation' is a Box of shape \(7,\), expected .*\({encoding.OBSERVATION_SIZE},\)"):
        PolicyAgent(path)


def test_wrong_action_space_is_refused(tmp_path):
    path = tmp_path / "actions.zip"
    _maskable(TinyEnv(spaces.Box(0, np.inf, (encoding.OBSERVATION_SIZE,), np.float32), n_actions=5)).save(path)
    with pytest.raises(ValueError, match=rf"Discrete\(5\), expected Discrete\({ce.NUM_ACTIONS}\)"):
        PolicyAgent(path)


def test_size_is_read_at_load_time(models, monkeypatch):
    # the observation may grow: a model of the old size must then be refused, not crash later
    monkeypatch.setattr(encoding, "OBSERVATION_SIZE", encoding.OBSERVATION_SIZE + 3)
    with pytest.raises(ValueError, match="expected"):
        PolicyAgent(models["maskable"])


@pytest.mark.parametrize("name,algo,maskable", [
    ("maskable", "MaskablePPO", True), ("maskable_dict", "MaskablePPO", True),
    ("ppo", "PPO", False), ("a2c", "A2C", False), ("trpo", "TRPO", False), ("dqn", "DQN", False)])
def test_algorithm_is_detected(models, name, algo, maskable):
    assert P.ALGORITHMS[P.detect_algorithm(models[name])][1] == algo
    agent = PolicyAgent(models[name])
    assert agent.policy.algorithm == algo and agent.policy.maskable is maskable


def test_custom_policy_class_falls_back_to_maskable_ppo(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    class CustomPolicy(MaskableActorCriticPolicy):  # a module the detection does not know
        pass

    path = tmp_path / "custom.zip"
    MaskablePPO(CustomPolicy, SeatEnv(), n_steps=64, batch_size=32, policy_kwargs=dict(net_arch=[8])).save(path)
    assert P.detect_algorithm(path) is None
    agent = PolicyAgent(path)
    assert agent.policy.algorithm == "MaskablePPO" and agent.policy.maskable
    assert play("italia", 2, {0: agent}, seed=1) > 0


def test_recurrent_policies_are_refused(tmp_path):
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import RecurrentPPO

    path = tmp_path / "lstm.zip"
    RecurrentPPO("MlpLstmPolicy", SeatEnv(), n_steps=64, batch_size=32,
                 policy_kwargs=dict(net_arch=[8], lstm_hidden_size=8)).save(path)
    with pytest.raises(ValueError, match="recurrent"):
        PolicyAgent(path)


def test_algo_override_and_unknown_algo(models):
    assert PolicyAgent(models["ppo"], algo="PPO").policy.algorithm == "PPO"
    with pytest.raises(ValueError, match="unknown algo"):
        PolicyAgent(models["ppo"], algo="SAC")


def test_models_are_loaded_once_per_process(models):
    a, b = PolicyAgent(models["maskable"], seed=1), PolicyAgent(models["maskable"], seed=2)
    assert a.model is b.model


def test_observation_of_another_size_is_refused_at_act(models):
    agent = PolicyAgent(models["maskable"])
    mask = np.ones(ce.NUM_ACTIONS, np.int8)
    with pytest.raises(ValueError, match="observation has shape"):
        agent.act(np.zeros(encoding.OBSERVATION_SIZE - 1, np.float32), mask)
    with pytest.raises(ValueError, match="no action"):
        agent.act(np.zeros(encoding.OBSERVATION_SIZE, np.float32), np.zeros(ce.NUM_ACTIONS, np.int8))


# ------------------------------------------------------------ non-maskable models stay legal
@pytest.mark.parametrize("name", ["ppo", "a2c", "dqn"])
def test_non_maskable_models_play_only_legal_actions(models, name):
    agent = PolicyAgent(models[name], seed=0)

    class Spy:
        """The agent, counting how often the bare model would have played an illegal action."""
        unmasked_illegal = 0

        def act(self, observation, action_mask, state=None):
            raw, _ = agent.model.predict(observation, deterministic=True)
            Spy.unmasked_illegal += int(action_mask[int(raw)] == 0)
            return agent.act(observation, action_mask, state)

    assert play("italia", 3, {0: Spy()}, seed=3) > 0
    # the test bites: left to itself, the model proposes illegal actions
    assert Spy.unmasked_illegal > 0
    stochastic = PolicyAgent(models[name], seed=0, deterministic=False)
    assert play("imperium", 4, {2: stochastic}, seed=4) > 0


def test_non_maskable_pick_is_the_most_probable_legal_action(models):
    agent = PolicyAgent(models["ppo"])
    state = play_random(ce.new_game("imperium", 4, seed=9), 40, seed=9)
    obs, mask = encoding.observation(state, state.current_player), state.legal_action_mask()
    legal = np.flatnonzero(mask)
    scores = agent.policy.scores(obs)
    assert agent.act(obs, mask) == legal[np.argmax(scores[legal])]


def test_maskable_deterministic_pick_is_the_masked_argmax(models):
    agent = PolicyAgent(models["maskable"])
    for k in range(5):
        state = play_random(ce.new_game("italia", 3, seed=k), 30 + 7 * k, seed=k)
        obs, mask = encoding.observation(state, state.current_player), state.legal_action_mask()
        legal = np.flatnonzero(mask)
        assert agent.act(obs, mask) == legal[np.argmax(agent.policy.scores(obs)[legal])]


# ------------------------------------------------------------ seeding
def _decisions(agent, n_states: int = 60) -> list[int]:
    out = []
    for k in range(n_states):
        state = play_random(ce.new_game("imperium", 4, seed=k), 3 * k, seed=k)
        if state.is_terminal():
            continue
        out.append(agent.act(encoding.observation(state, state.current_player), state.legal_action_mask()))
    return out


@pytest.mark.parametrize("name", ["maskable", "ppo"])
def test_sampling_is_reproducible_from_the_seed(models, name):
    a = PolicyAgent(models[name], seed=7, deterministic=False)
    first = _decisions(a)
    assert _decisions(PolicyAgent(models[name], seed=7, deterministic=False)) == first
    a.reset(7)
    assert _decisions(a) == first
    assert _decisions(PolicyAgent(models[name], seed=8, deterministic=False)) != first
    # deterministic play ignores the seed
    assert _decisions(PolicyAgent(models[name], seed=1)) == _decisions(PolicyAgent(models[name], seed=2))


# ------------------------------------------------------------ specs and the released policy
def test_make_agent_policy_spec(models):
    agent = make_agent(f"policy:path={models['maskable']}", seed=3)
    assert isinstance(agent, PolicyAgent) and agent.deterministic
    assert agent.name == f"policy:path={models['maskable']}"
    assert play("italia", 2, {1: agent}, seed=11) > 0
    sampled = make_agent(f"policy:path={models['maskable']}:deterministic=0", seed=3)
    assert sampled.deterministic is False
    with pytest.raises(ValueError, match="deterministic"):
        make_agent(f"policy:path={models['maskable']}:deterministic=maybe")
    with pytest.raises(FileNotFoundError):
        make_agent("policy:path=/no/such/model.zip")


def numpy_pair(directory: Path, stem: str, map_name: str | None, seed: int = 0) -> Path:
    """A random numpy policy saved as ``directory/stem.npz`` + ``.json``; returns the ``.npz``."""
    rng = np.random.default_rng(seed)
    sizes = (encoding.OBSERVATION_SIZE, 16, ce.NUM_ACTIONS)
    layers = [(rng.normal(size=(b, a)).astype(np.float32) * 0.1, rng.normal(size=b).astype(np.float32))
              for a, b in zip(sizes, sizes[1:])]
    policy = NumpyPolicy.from_bounds(layers, "Tanh", observation_space("italia").high, name=stem, map_name=map_name)
    return policy.save(directory / stem)[0]


def test_released_policy_missing_file_fails_at_first_act(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "POLICY_DIR", tmp_path)
    agent = make_agent("ppo", seed=0)  # building it needs no file
    assert isinstance(agent, ReleasedPolicyAgent)
    state = ce.new_game("italia", 3, seed=0)
    with pytest.raises(FileNotFoundError) as info:
        agent.act(encoding.observation(state, state.current_player), state.legal_action_mask())
    message = str(info.value)
    assert f"no released policy for map 'italia' at {tmp_path / 'ppo_italia.npz'}" in message
    assert "python -m concordia_env.training.ppo --map italia ... --release ppo_italia.zip" in message
    assert f"python -m concordia_env.training.export_policy MODEL.zip {tmp_path / 'ppo_italia'}" in message
    # a .npz without its header: the loader names the missing .json
    numpy_pair(tmp_path, "ppo_italia", "italia").with_suffix(".json").unlink()
    with pytest.raises(FileNotFoundError, match=rf"header not found: {tmp_path / 'ppo_italia.json'}"):
        agent.act(encoding.observation(state, state.current_player), state.legal_action_mask())


def test_released_policy_reads_the_map_from_the_observation(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "POLICY_DIR", tmp_path)
    numpy_pair(tmp_path, "ppo_italia", "italia")
    agent = released_policy(seed=0)
    assert play("italia", 4, {1: agent}, seed=12) > 0
    assert released_policy(seed=1).policy_for("italia") is agent.policy_for("italia")  # cached
    state = ce.new_game("imperium", 3, seed=0)
    obs, mask = encoding.observation(state, state.current_player), state.legal_action_mask()
    assert P.observed_map(obs) == "imperium"
    with pytest.raises(FileNotFoundError, match="map 'imperium'"):
        agent.act(obs, mask)
    # map_name pins one map's policy whatever the game
    pinned = make_agent("ppo:map_name=italia:deterministic=false", seed=2)
    assert pinned.map_name == "italia" and pinned.deterministic is False
    assert play("imperium", 3, {0: pinned}, seed=13) > 0
    with pytest.raises(ValueError, match="unknown map"):
        released_policy(map_name="gallia")


def test_released_policy_must_be_the_map_it_claims(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "POLICY_DIR", tmp_path)
    numpy_pair(tmp_path, "ppo_imperium", "italia")
    state = ce.new_game("imperium", 3, seed=0)
    with pytest.raises(ValueError, match=r"ppo_imperium.json: the released policy for 'imperium' says it was "
                                         r"trained on 'italia'"):
        make_agent("ppo").act(encoding.observation(state, state.current_player), state.legal_action_mask())


def test_ppo_play_is_the_masked_argmax_or_a_seeded_masked_softmax_draw(tmp_path, monkeypatch):
    monkeypatch.setattr(P, "POLICY_DIR", tmp_path)
    policy = NumpyPolicy.load(numpy_pair(tmp_path, "ppo_italia", "italia"))
    for k in range(5):
        state = play_random(ce.new_game("italia", 3, seed=k), 30 + 7 * k, seed=k)
        obs, mask = encoding.observation(state, state.current_player), state.legal_action_mask()
        legal = np.flatnonzero(mask)
        assert make_agent("ppo").act(obs, mask) == legal[np.argmax(policy.logits(obs)[legal])]
        draws = [make_agent("ppo:deterministic=0", seed=s).act(obs, mask) for s in range(20)]
        expected = [P.sample_softmax(legal, policy.logits(obs)[legal].astype(np.float64), np.random.default_rng(s))
                    for s in range(20)]
        assert draws == expected and set(draws) <= set(legal.tolist())


def test_policy_agent_plays_a_numpy_pair(tmp_path):
    path = numpy_pair(tmp_path, "mine", None)
    agent = make_agent(f"policy:path={path}", seed=1)
    assert agent.policy.algorithm == "numpy" and isinstance(agent.model, NumpyPolicy)
    assert agent.path == path.resolve()
    assert play("imperium", 4, {2: agent}, seed=14) > 0
    with pytest.raises(ValueError, match="observation has shape"):
        agent.act(np.zeros(5, np.float32), np.ones(ce.NUM_ACTIONS, np.int8))
    with pytest.raises(ValueError, match="algo="):
        PolicyAgent(path, algo="PPO")


def test_released_policy_path():
    assert P.released_policy_path("imperium") == P.POLICY_DIR / "ppo_imperium.npz"
    assert P.POLICY_DIR == REPO / "concordia_env" / "agents" / "policies"


def test_importing_agents_and_playing_ppo_does_not_import_torch():
    code = ("import sys, numpy as np, concordia_env as ce, concordia_env.agents as agents; "
            "from concordia_env import encoding; agents.make_agent('random'); import concordia_env.agents.policy; "
            "st = ce.new_game('italia', 2, seed=0); "
            "agents.make_agent('ppo').act(encoding.observation(st, st.current_player), st.legal_action_mask()); "
            "bad = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)


def test_missing_torch_names_the_extra_to_install(models, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    monkeypatch.setattr(P, "_CACHE", {})
    expected = ("pip install torch --index-url https://download.pytorch.org/whl/cpu, then "
                'pip install ".[train]" in the concordia-env source folder')
    assert P.TRAIN_EXTRA_INSTALL == expected
    with pytest.raises(ImportError, match="install the train extra") as info:
        P._torch()
    assert expected in str(info.value)
    from concordia_env.cli import main

    assert main(["tournament", "--map", "italia", "--players", "2", "--agents",
                 f"policy:path={models['maskable']},random", "--games", "2", "--no-progress"]) == 1
    assert "install the train extra" in capsys.readouterr().err


# ------------------------------------------------------------ what is (not) read from a zip
def rewrite_data(src: Path, dst: Path, edit) -> Path:
    """A copy of the zip ``src`` at ``dst`` whose ``data`` JSON went through ``edit(record) -> record``."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "data":
                data = json.dumps(edit(json.loads(data))).encode()
            zout.writestr(item, data)
    return dst


@pytest.mark.parametrize("value", [[1, 2], "text", 3, None])
def test_data_that_is_json_but_not_an_object_is_refused(tmp_path, value):
    path = tmp_path / "odd.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("data", json.dumps(value))
    with pytest.raises(ValueError, match=rf"{path}.*not an object"):
        PolicyAgent(path)
    with pytest.raises(ValueError, match="not an object"):
        P.detect_algorithm(path)


@pytest.mark.parametrize("name", ["maskable", "maskable_dict", "dqn"])
def test_spaces_come_from_the_package_not_the_pickle(models, tmp_path, name):
    # the saved spaces' pickles are replaced by bytes that cannot be unpickled: loading still works
    garbage = base64.b64encode(b"\x80\x05not a pickle").decode()

    def spoil(record):
        for key in ("observation_space", "action_space"):
            record[key][":serialized:"] = garbage
        return record

    path = rewrite_data(models[name], tmp_path / f"{name}.zip", spoil)
    agent = PolicyAgent(path)
    space = agent.model.observation_space
    box = space["observation"] if name == "maskable_dict" else space
    np.testing.assert_array_equal(box.high, observation_space("imperium").high)  # the rule bounds, not the saved inf
    assert agent.model.action_space.n == ce.NUM_ACTIONS
    if name == "maskable_dict":
        assert set(space.spaces) == {"observation", "action_mask"} and space["action_mask"].dtype == np.int8
    assert play("italia", 2, {0: agent}, seed=15) > 0


def test_unreadable_space_records_are_refused(models, tmp_path):
    def drop(record):
        del record["observation_space"]
        return record

    with pytest.raises(ValueError, match="records no observation or action space"):
        PolicyAgent(rewrite_data(models["maskable"], tmp_path / "a.zip", drop))

    def multi(record):
        record["action_space"][":type:"] = "<class 'gymnasium.spaces.multi_discrete.MultiDiscrete'>"
        return record

    with pytest.raises(ValueError, match=rf"action space is a MultiDiscrete, expected Discrete\({ce.NUM_ACTIONS}\)"):
        PolicyAgent(rewrite_data(models["maskable"], tmp_path / "b.zip", multi))


def test_trust_warning_is_in_the_docs():
    from concordia_env.agents import base

    assert "runs code from the file" in P.__doc__ and "trust" in P.PolicyAgent.__doc__
    assert "runs code from the file" in base.__doc__


def test_a_numpy_pair_refuses_a_game_of_another_map_or_player_count(tmp_path):
    path = numpy_pair(tmp_path, "it", "italia")
    agent = PolicyAgent(path)
    state = ce.new_game("imperium", 3, seed=0)
    obs, mask = encoding.observation(state, state.current_player), state.legal_action_mask()
    with pytest.raises(ValueError, match=rf"{path}: trained for the italia map, but this game is on imperium"):
        agent.act(obs, mask, state)
    rng = np.random.default_rng(0)
    sizes = (encoding.OBSERVATION_SIZE, 16, ce.NUM_ACTIONS)
    layers = [(rng.normal(size=(b, a)).astype(np.float32) * 0.1, np.zeros(b, np.float32)) for a, b in zip(sizes, sizes[1:])]
    two = NumpyPolicy.from_bounds(layers, "Tanh", observation_space("italia").high, map_name="italia",
                                  players=[2]).save(tmp_path / "two")[0]
    three = ce.new_game("italia", 3, seed=0)
    with pytest.raises(ValueError, match=rf"{two}: trained for 2 players, but this game has 3"):
        PolicyAgent(two).act(encoding.observation(three, three.current_player), three.legal_action_mask(), three)
    assert play("italia", 2, {0: PolicyAgent(two)}, seed=3) > 0
