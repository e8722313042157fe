"""The batched env: same games as the AEC env, auto-reset, rewards, masks, errors."""

from __future__ import annotations

import numpy as np
import pytest

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.encoding import OBSERVATION_SIZE
from concordia_env.state import IllegalActionError
from concordia_env.vector import ConcordiaVecEnv


def random_actions(masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row."""
    keys = rng.random(masks.shape) * (masks != 0)
    return keys.argmax(axis=1)


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 4), ("imperium", 5)])
def test_vector_env_agrees_with_aec_env_game_for_game(map_name, n):
    """Each batch game, replayed alone in the AEC env from its documented seed with the
    same actions, gives the same observations, masks, deciders, rewards and outcome."""
    num_envs, seed = 3, 40
    vec = ConcordiaVecEnv(num_envs, map_name, n, seed=seed)
    rng = np.random.default_rng(0)
    obs, masks = vec.reset()
    trajectories = [[] for _ in range(num_envs)]  # (obs, mask, seat, action)
    finished = {}
    while len(finished) < num_envs:
        actions = random_actions(masks, rng)
        for i in range(num_envs):
            if i not in finished:
                trajectories[i].append((obs[i].copy(), masks[i].copy(), int(vec.current_players[i]),
                                        int(actions[i])))
        obs, masks, rewards, dones, infos = vec.step(actions)
        for i in np.flatnonzero(dones):
            if i not in finished:
                finished[i] = (rewards[i].copy(), infos[i])
    for i in range(num_envs):
        env = ce.env(map_name=map_name, num_players=n)
        env.reset(seed=vec.game_seed(i, 0))
        assert finished[i][1]["seed"] == vec.game_seed(i, 0) == seed + i
        steps = iter(trajectories[i])
        final = {}
        for agent in env.agent_iter():
            o, r, term, trunc, info = env.last()
            if term or trunc:
                final[agent] = (r, info)
                env.step(None)
                continue
            v_obs, v_mask, v_seat, action = next(steps)
            assert agent == f"player_{v_seat}"
            np.testing.assert_array_equal(o["observation"], v_obs)
            np.testing.assert_array_equal(o["action_mask"], v_mask)
            env.step(action)
        assert next(steps, None) is None
        v_rewards, v_info = finished[i]
        assert [final[f"player_{p}"][0] for p in range(n)] == pytest.approx(v_rewards.tolist())
        assert [final[f"player_{p}"][1]["vp"] for p in range(n)] == v_info["vp"]
        assert final["player_0"][1]["winner"] == f"player_{v_info['winner']}"
        assert v_info["terminated"] and not v_info["truncated"]


def test_auto_reset_starts_the_next_episode_from_its_seed():
    vec = ConcordiaVecEnv(2, "italia", 2, seed=7)
    rng = np.random.default_rng(1)
    obs, masks = vec.reset()
    ends = 0
    while ends < 3:
        obs, masks, rewards, dones, infos = vec.step(random_actions(masks, rng))
        for i in np.flatnonzero(dones):
            ends += 1
            assert abs(rewards[i].sum()) < 1e-9 and rewards[i].max() == 1.0
            assert infos[i]["seed"] == vec.game_seed(int(i), int(vec.episodes[i]) - 1)
            fresh = ce.new_game("italia", 2, seed=vec.game_seed(int(i), int(vec.episodes[i])))
            assert vec.state(int(i)) == fresh  # the row already holds the next game
            assert vec.current_players[i] == fresh.current_player
            np.testing.assert_array_equal(masks[i], fresh.legal_action_mask())
        for i in np.flatnonzero(~dones):
            assert not rewards[i].any() and infos[i] == {}
    assert vec.game_seed(1, 2) == 7 + 1 + 2 * 2


def test_shapes_dtypes_and_action_masks():
    vec = ConcordiaVecEnv(5, "imperium", 3, seed=0)
    obs, masks = vec.reset()
    assert obs.shape == (5, OBSERVATION_SIZE) and obs.dtype == np.float32
    assert masks.shape == (5, E.NUM_ACTIONS) and masks.dtype == np.int8
    am = vec.action_masks()
    assert am.dtype == np.bool_ and (am == (masks != 0)).all()
    obs2, masks2, rewards, dones, infos = vec.step(random_actions(masks, np.random.default_rng(0)))
    assert rewards.shape == (5, 3) and dones.shape == (5,) and dones.dtype == np.bool_ and len(infos) == 5


def test_same_seed_same_batch():
    a, b = ConcordiaVecEnv(4, "imperium", 5, seed=3), ConcordiaVecEnv(4, "imperium", 5, seed=3)
    ra, rb = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(200):
        oa, ma, *_ = a.step(random_actions(a.masks, ra))
        ob, mb, *_ = b.step(random_actions(b.masks, rb))
        np.testing.assert_array_equal(oa, ob)
        np.testing.assert_array_equal(ma, mb)
    a.reset(seed=99)
    assert a.state(2) == ce.new_game("imperium", 5, seed=101)


def test_truncation_in_vector_env():
    vec = ConcordiaVecEnv(2, "italia", 3, seed=0, max_turns=4)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(200):
        _, _, rewards, dones, infos = vec.step(random_actions(vec.masks, rng))
        for i in np.flatnonzero(dones):
            seen += 1
            assert infos[i]["truncated"] and not infos[i]["terminated"] and infos[i]["turns"] == 4
            assert not rewards[i].any()
    assert seen >= 2


def test_illegal_and_malformed_actions_leave_the_batch_unchanged():
    vec = ConcordiaVecEnv(3, "imperium", 4, seed=0)
    before = vec.states.copy()
    actions = random_actions(vec.masks, np.random.default_rng(0))
    bad = actions.copy()
    bad[1] = int(np.flatnonzero(vec.masks[1] == 0)[0])
    with pytest.raises(IllegalActionError, match="game 1"):
        vec.step(bad)
    bad[1] = E.NUM_ACTIONS + 5
    with pytest.raises(IllegalActionError, match="game 1"):
        vec.step(bad)
    with pytest.raises(ValueError, match="3 integers"):
        vec.step(actions[:2])
    with pytest.raises(ValueError, match="3 integers"):
        vec.step(actions.astype(float))
    assert (vec.states == before).all()
    with pytest.raises(ValueError, match="num_envs"):
        ConcordiaVecEnv(0)
    with pytest.raises(ValueError, match="reward"):
        ConcordiaVecEnv(1, reward="points")
    with pytest.raises(ValueError):
        ConcordiaVecEnv(1, "italia", 5)
