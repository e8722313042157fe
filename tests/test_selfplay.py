"""concordia_env.training.selfplay: the single-learner training env, its opponent pool and the numpy copy of a policy."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from concordia_env.encoding import OBSERVATION_SIZE, observation
from concordia_env.engine import NUM_ACTIONS
from concordia_env.rewards import VP_SCALE, seat_rewards
from concordia_env.state import IllegalActionError
from concordia_env.training.selfplay import (
    FrozenPolicy,
    OpponentPool,
    SingleLearnerEnv,
    observation_scaling,
    parse_weights,
    scale_observation,
)
from concordia_env.validation import check_invariants

COUNTS = {"imperium": (3, 4, 5), "italia": (2, 3, 4)}


def random_layers(rng: np.random.Generator, sizes=(OBSERVATION_SIZE, 16, NUM_ACTIONS)):
    return [(rng.normal(size=(b, a)).astype(np.float32) * 0.1, rng.normal(size=b).astype(np.float32))
            for a, b in zip(sizes, sizes[1:])]


def play_episode(env: SingleLearnerEnv, seed: int, policy_seed: int = 0):
    """Random legal learner moves to the end; checks every step's contract on the way."""
    rng = np.random.default_rng(policy_seed)
    obs, info = env.reset(seed=seed)
    rewards, observations = [], [obs]
    while True:
        st = env.state
        assert st.current_player == env.seat, "step() returned while another seat was deciding"
        np.testing.assert_array_equal(obs, observation(st, env.seat))
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, st.legal_action_mask().astype(bool))
        obs, r, terminated, truncated, step_info = env.step(int(rng.choice(np.flatnonzero(mask))))
        rewards.append(r)
        observations.append(obs)
        if terminated or truncated:
            return info, rewards, observations, terminated, truncated, step_info


@pytest.mark.parametrize("map_name", ["imperium", "italia"])
def test_learner_gets_its_own_terminal_reward_from_any_seat(map_name):
    env = SingleLearnerEnv(map_name, opponents="random=1", reward="rank", shaping=1.0)
    seen = set()
    for seed in range(12):
        info, rewards, _, terminated, truncated, end = play_episode(env, seed)
        st = env.state
        assert terminated and not truncated and st.is_terminal()
        check_invariants(st)
        seen.add((st.num_players, env.seat))
        terminal = seat_rewards(st, "rank")[env.seat]
        vp = np.asarray(st.scores(), float)
        lead = (vp[env.seat] - np.delete(vp, env.seat).mean()) / VP_SCALE
        # shaping telescopes: all rewards = the seat's terminal reward + the final VP lead
        assert sum(rewards) == pytest.approx(terminal + lead)
        assert end["rank"] == st.ranking().index(env.seat) + 1
        assert end["is_success"] == (st.winner() == env.seat)
        assert end["vp"] == vp[env.seat] and end["seat"] == env.seat == info["seat"]
        assert end["num_players"] == st.num_players == info["num_players"]
        assert not env.action_masks().any()
    assert {n for n, _ in seen} == set(COUNTS[map_name])
    assert len({s for _, s in seen}) >= 3  # the seat is drawn too


def test_without_shaping_only_the_last_step_pays():
    env = SingleLearnerEnv("italia", num_players=2, opponents="random", reward="win", shaping=0.0)
    _, rewards, _, _, _, _ = play_episode(env, 3)
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == seat_rewards(env.state, "win")[env.seat] != 0


def test_same_seed_same_episode():
    a = SingleLearnerEnv("imperium", opponents="random=1,heuristic=1")
    b = SingleLearnerEnv("imperium", opponents="random=1,heuristic=1")
    for seed in (0, 5):
        ra, rb = play_episode(a, seed), play_episode(b, seed)
        # (infos hold the action_mask array: gymnasium's comparison of nested data)
        assert data_equivalence(ra[0], rb[0]) and ra[1] == rb[1] and data_equivalence(ra[5], rb[5])
        for x, y in zip(ra[2], rb[2]):
            np.testing.assert_array_equal(x, y)
        assert a.state == b.state
    c = play_episode(a, 1)
    assert c[1] != ra[1] or a.state != b.state


def test_fixed_count_seat_and_opponent_kind():
    env = SingleLearnerEnv("italia", num_players=3, learner_seat=2, opponents="heuristic=1")
    for seed in range(3):
        _, info = env.reset(seed=seed)
        mask = info.pop("action_mask")
        assert info == {"num_players": 3, "seat": 2, "opponent": "heuristic"}
        assert mask.dtype == np.int8 and np.array_equal(mask, env.action_masks())
        st = env.state
        assert st.current_player == 2  # the seats before it in turn order have played their card
        assert st.field("turn") == (2 - int(st.field("start_player"))) % 3


def test_observations_lie_in_the_observation_space():
    # (gymnasium's check_env steps with unmasked random actions, which a masked env must refuse)
    env = SingleLearnerEnv("italia", opponents="random")
    _, _, observations, *_ = play_episode(env, 4)
    assert all(env.observation_space.contains(o) for o in observations)
    assert env.action_space.n == NUM_ACTIONS


def test_truncation_pays_no_terminal_reward():
    env = SingleLearnerEnv("imperium", num_players=3, opponents="random", max_turns=30, shaping=0.0)
    _, rewards, _, terminated, truncated, end = play_episode(env, 0)
    assert truncated and not terminated and not env.state.is_terminal()
    assert env.state.field("turn") == 30
    assert sum(rewards) == 0 and end["is_success"] is False


def test_step_after_the_end_and_illegal_actions_raise():
    env = SingleLearnerEnv("italia", num_players=2, opponents="random")
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    before = env.state.clone()
    with pytest.raises(IllegalActionError, match=f"illegal action {illegal}"):
        env.step(illegal)
    assert env.state == before
    play_episode(env, 1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("kwargs, match", [
    ({"map_name": "rome"}, "unknown map"),
    ({"map_name": "imperium", "num_players": 2}, "played by"),
    ({"map_name": "italia", "num_players": [2, 5]}, "played by"),
    ({"map_name": "italia", "num_players": []}, "played by"),
    ({"map_name": "italia", "num_players": [2, 3], "learner_seat": 2}, "does not exist"),
    ({"learner_seat": -1}, "does not exist"),
    ({"shaping": -1.0}, "shaping"),
    ({"shaping": float("nan")}, "shaping"),
    ({"reward": "money"}, "reward"),
    ({"opponents": "wizard=1"}, "unknown opponent kind"),
    ({"max_turns": -5}, "max_turns"),
    ({"render_mode": "human"}, "render_mode"),
])
def test_bad_arguments_are_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SingleLearnerEnv(**kwargs)


@pytest.mark.parametrize("text, match", [
    ("random=x", "not a number"), ("random=-1", ">= 0"), ("random=0", "no opponent"),
    ("monkey", "unknown opponent kind"), ("random=inf", "finite"),
])
def test_bad_weights(text, match):
    with pytest.raises(ValueError, match=match):
        parse_weights(text)


def test_weights_are_normalised():
    assert parse_weights("random=1,self=3") == {"random": 0.25, "heuristic": 0.0, "self": 0.75}
    assert parse_weights("heuristic") == {"random": 0.0, "heuristic": 1.0, "self": 0.0}
    assert parse_weights({"random": 2}) == {"random": 1.0, "heuristic": 0.0, "self": 0.0}


def test_self_opponents_fall_back_to_random_until_a_snapshot_exists():
    env = SingleLearnerEnv("italia", opponents="self=1")
    assert env.reset(seed=0)[1]["opponent"] == "random"
    rng = np.random.default_rng(0)
    high = env.observation_space.high
    env.add_snapshot(FrozenPolicy.from_bounds(random_layers(rng), "Tanh", high, name="a"))
    env.add_snapshot(FrozenPolicy.from_bounds(random_layers(rng), "Tanh", high, name="b"))
    assert env.num_snapshots() == 2
    _, info = env.reset(seed=1)
    assert info["opponent"] == "self"
    names = {a.name for a in env._opponents if a is not None}
    assert names <= {"a", "b"}
    *_, end = play_episode(env, 2)
    assert end["opponent"] == "self"


def test_pool_keeps_the_newest_snapshots():
    pool = OpponentPool("self=1", max_snapshots=2)
    rng = np.random.default_rng(0)
    for name in "abc":
        pool.add(FrozenPolicy.from_bounds(random_layers(rng), "ReLU", np.ones(OBSERVATION_SIZE), name=name))
    assert [s.name for s in pool.snapshots] == ["b", "c"]
    drawn = [pool.draw_snapshot(rng).name for _ in range(200)]
    assert 0.6 < drawn.count("c") / 200 < 0.9  # newest with 1/2, plus half of the uniform draws
    with pytest.raises(ValueError, match="max_snapshots"):
        OpponentPool("self=1", max_snapshots=0)


def test_frozen_policy_picks_legal_moves_and_pickles():
    env = SingleLearnerEnv("imperium", num_players=4, opponents="random")
    obs, _ = env.reset(seed=0)
    policy = FrozenPolicy.from_bounds(random_layers(np.random.default_rng(1)), "Tanh", env.observation_space.high)
    mask = env.action_masks()
    rng = np.random.default_rng(0)
    picks = {policy.choose(obs, mask, rng) for _ in range(50)}
    assert picks <= set(np.flatnonzero(mask)) and len(picks) > 1
    best = policy.choose(obs, mask, rng, deterministic=True)
    legal = np.flatnonzero(mask)
    assert best == legal[np.argmax(policy.logits(obs)[legal])]
    copy = pickle.loads(pickle.dumps(policy))
    np.testing.assert_array_equal(copy.logits(obs), policy.logits(obs))
    with pytest.raises(ValueError, match="activation"):
        FrozenPolicy.from_bounds(random_layers(rng), "Swish", env.observation_space.high)
    with pytest.raises(ValueError, match="inputs"):
        FrozenPolicy.from_bounds(random_layers(rng, (10, 4, NUM_ACTIONS)), "Tanh", env.observation_space.high)


def test_observation_scaling_bounds_the_network_input():
    env = SingleLearnerEnv("imperium", opponents="random")
    scale, unbounded = observation_scaling(env.observation_space.high)
    assert unbounded.any() and not unbounded.all()
    _, rewards, observations, *_ = play_episode(env, 0)
    x = scale_observation(np.stack(observations), scale, unbounded)
    assert (x >= 0).all() and (x[:, ~unbounded] <= 1).all()
    assert x[:, unbounded].max() < 8  # log1p of coins, VP and card plays
    assert x.dtype == np.float32


def test_frozen_policy_matches_the_torch_policy():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    from concordia_env.training.nets import ObservationScaler

    env = SingleLearnerEnv("italia", opponents="random")
    for activation in (torch.nn.Tanh, torch.nn.ReLU):
        model = MaskablePPO("MlpPolicy", env, seed=0, n_steps=64, batch_size=64, device="cpu", policy_kwargs={
            "features_extractor_class": ObservationScaler, "net_arch": [32, 16], "activation_fn": activation})
        frozen = FrozenPolicy.from_policy(model.policy)
        _, _, observations, *_ = play_episode(env, 0)
        batch = np.stack(observations[::10])
        with torch.no_grad():
            logits = model.policy.get_distribution(model.policy.obs_to_tensor(batch)[0]).distribution.logits
        mine = frozen.logits(batch).astype(np.float64)
        mine -= np.log(np.exp(mine - mine.max(1, keepdims=True)).sum(1, keepdims=True)) + mine.max(1, keepdims=True)
        np.testing.assert_allclose(mine, logits.numpy(), rtol=1e-4, atol=1e-4)  # torch's are log-probs
    default = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, device="cpu")
    with pytest.raises(ValueError, match="ObservationScaler"):
        FrozenPolicy.from_policy(default.policy)


def test_frozen_policy_is_the_numpy_policy_the_ppo_agent_loads(tmp_path):
    # one class, one forward pass: a snapshot saved as a numpy pair plays exactly as it did in training
    from concordia_env.agents.numpy_policy import NumpyPolicy

    assert FrozenPolicy is NumpyPolicy
    env = SingleLearnerEnv("imperium", num_players=3, opponents="random")
    obs, _ = env.reset(seed=4)
    policy = FrozenPolicy.from_bounds(random_layers(np.random.default_rng(2)), "ReLU", env.observation_space.high,
                                      name="step_0")
    policy.save(tmp_path / "step_0")
    loaded = NumpyPolicy.load(tmp_path / "step_0.npz")
    np.testing.assert_array_equal(loaded.logits(obs), policy.logits(obs))
    assert loaded.name == "step_0" and loaded.activation == "ReLU"
