"""The gymnasium vector form of the single-learner env (concordia_env.integrations.gym_vector) and the PettingZoo
parallel form (concordia_env.parallel): make_vec, spaces, SAME_STEP autoreset with final_obs and
final_info, masks, seeds, the same games as the batched env, bad input; parallel_api_test."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.vector.utils import batch_space
from pettingzoo.test import parallel_api_test, parallel_seed_test

import concordia_env
from concordia_env import engine as E
from concordia_env.encoding import OBSERVATION_SIZE, observation
from concordia_env.integrations.gym_vector import SingleLearnerVectorEnv
from concordia_env.parallel import ConcordiaParallelEnv
from concordia_env.rewards import VP_SCALE, seat_rewards
from concordia_env.state import GameState, IllegalActionError, new_game
from concordia_env.training.selfplay import FrozenPolicy, SingleLearnerEnv
from concordia_env.vector import ConcordiaVecEnv

IDS = [("concordia/Concordia-v0", "imperium"), ("concordia/Imperium-v0", "imperium"), ("concordia/Italia-v0", "italia")]


def legal_random(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``mask``."""
    return (rng.random(mask.shape) * (mask != 0)).argmax(axis=1)


def states(env: SingleLearnerVectorEnv) -> list[GameState]:
    return [env.state(i) for i in range(env.num_envs)]


def lead(st: GameState, seat: int) -> float:
    """SingleLearnerEnv's shaping potential, from the core's scores."""
    vp = np.asarray(st.scores(), dtype=np.float64)
    return float(vp[seat] - np.delete(vp, seat).mean()) / VP_SCALE


# ------------------------------------------------------------------ making it
@pytest.mark.parametrize("env_id, map_name", IDS)
def test_make_vec_builds_the_vector_env_by_default_and_by_name(env_id, map_name):
    for mode in ("vector_entry_point", None):
        envs = gymnasium.make_vec(env_id, num_envs=3, vectorization_mode=mode, num_players=3)
        assert type(envs) is SingleLearnerVectorEnv and envs.num_envs == 3
        assert envs.map_name == map_name and envs.settings.player_counts == (3,)
        assert envs.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
        assert envs.spec is not None and envs.spec.kwargs["vectorization_mode"] == "vector_entry_point"
    sync = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="sync", num_players=3)
    assert isinstance(sync, SyncVectorEnv) and isinstance(sync.envs[0].unwrapped, SingleLearnerEnv)


def test_a_per_map_id_refuses_the_other_map_in_make_vec_too():
    with pytest.raises(ValueError, match="map_name='imperium' contradicts this id, which plays 'italia'"):
        gymnasium.make_vec("concordia/Italia-v0", num_envs=2, map_name="imperium")


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="num_envs must be a positive int"):
        SingleLearnerVectorEnv(0)
    with pytest.raises(ValueError, match="num_players"):  # SingleLearnerEnv's own check
        SingleLearnerVectorEnv(2, "italia", num_players=5)
    with pytest.raises(ValueError, match=r"max_turns must be None or at least the largest player count \(4\)"):
        SingleLearnerVectorEnv(2, "italia", num_players=[2, 4], max_turns=3)
    env = SingleLearnerVectorEnv(2, "italia", num_players=2)
    with pytest.raises(RuntimeError, match=r"reset\(\) must be called before step\(\)"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        env.reset(seed=-1)
    with pytest.raises(ValueError, match="seed must be an int"):
        env.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(seed=0, options={"reset_mask": np.ones(2, bool)})


# ------------------------------------------------------------------ the vector env contract
def test_spaces_batch_shapes_and_dtypes():
    env = SingleLearnerVectorEnv(3, "italia", num_players=[2, 3], observation_bounds="finite")
    single = SingleLearnerEnv("italia", observation_bounds="finite")
    assert env.single_observation_space == single.observation_space
    assert env.single_action_space == single.action_space == gymnasium.spaces.Discrete(E.NUM_ACTIONS)
    assert env.observation_space == batch_space(single.observation_space, 3)
    assert env.action_space == gymnasium.spaces.MultiDiscrete([E.NUM_ACTIONS] * 3)
    obs, infos = env.reset(seed=0)
    assert obs.shape == (3, OBSERVATION_SIZE) and obs.dtype == np.float32 and obs in env.observation_space
    assert set(infos) == {"num_players", "seat", "opponent", "seed", "action_mask",
                          "_num_players", "_seat", "_opponent", "_seed", "_action_mask"}
    assert infos["action_mask"].shape == (3, E.NUM_ACTIONS) and infos["action_mask"].dtype == np.int8
    assert list(infos["seed"]) == [0, 1, 2] and infos["_seed"].all()
    rng = np.random.default_rng(0)
    obs, rewards, terminated, truncated, infos = env.step(legal_random(rng, infos["action_mask"]))
    assert obs.shape == (3, OBSERVATION_SIZE) and obs.dtype == np.float32 and obs in env.observation_space
    assert rewards.shape == (3,) and rewards.dtype == np.float64
    assert terminated.dtype == truncated.dtype == np.bool_ and terminated.shape == truncated.shape == (3,)
    assert env.action_space.sample().shape == (3,)


def run(env: SingleLearnerVectorEnv, seed: int, steps: int, check: Any = None) -> list[tuple]:
    """``steps`` masked random steps after ``reset(seed)``; returns every call's outputs."""
    rng = np.random.default_rng(seed + 100)
    obs, infos = env.reset(seed=seed)
    out: list[tuple] = [(obs, infos)]
    for _ in range(steps):
        before = infos
        result = env.step(legal_random(rng, infos["action_mask"]))
        if check is not None:
            check(env, before, *result)
        out.append(result)
        infos = result[4]
    return out


def check_same_step(env: SingleLearnerVectorEnv, before: dict, obs: np.ndarray, rewards: np.ndarray,
                    terminated: np.ndarray, truncated: np.ndarray, infos: dict) -> None:
    """gymnasium 1.x SAME_STEP semantics of one step."""
    done = terminated | truncated
    mask = infos["action_mask"]
    assert (mask.sum(axis=1) > 0).all() and np.array_equal(mask.astype(bool), env.action_masks())
    for i in range(env.num_envs):  # the mask is that of the observation returned: the learner decides
        st = env.state(i)
        assert st.current_player == env.seats[i] and np.array_equal(st.legal_action_mask(), mask[i])
        np.testing.assert_array_equal(obs[i], observation(st, int(env.seats[i])))
    if not done.any():
        assert not {"final_obs", "final_info", "seat", "seed"} & set(infos)
        return
    assert np.array_equal(infos["_final_obs"], done) and np.array_equal(infos["_final_info"], done)
    final = infos["final_info"]
    for i in range(env.num_envs):
        if not done[i]:
            assert infos["final_obs"][i] is None
            continue
        assert infos["final_obs"][i] in env.single_observation_space
        assert final["_seat"][i] and not final["action_mask"][i].any()
        assert final["seed"][i] == env.game_seed(i, int(env.episodes[i]) - 1)
        assert infos["_seed"][i] and infos["seed"][i] == env.game_seed(i, int(env.episodes[i]))
        assert infos["seat"][i] == env.seats[i] and env.state(i).field("turn") < env.players[i]
        assert terminated[i] != truncated[i] and final["is_success"][i] == (final["rank"][i] == 1 and terminated[i])
    assert np.array_equal(infos["_seat"], done)  # the new episodes' start infos, at those rows only


@pytest.mark.parametrize("max_turns", [None, 30])
def test_same_step_autoreset_gives_final_obs_exactly_where_episodes_ended(max_turns):
    env = SingleLearnerVectorEnv(3, "italia", num_players=2, max_turns=max_turns, observation_bounds="finite")
    out = run(env, 4, 400 if max_turns is None else 60, check_same_step)
    ended = sum(r[2] for r in out[1:]) + sum(r[3] for r in out[1:])
    assert (ended >= 1).all()
    flags = np.array([r[3] if max_turns else r[2] for r in out[1:]])
    assert flags.sum() == ended.sum()  # all truncated at 30 card plays, all terminated without a limit


def replay(st: GameState, seat: int, moves: list[int], k: int, learner_first: bool) -> int:
    """Apply ``moves[k:]`` to ``st`` as one step of the env does: the learner's move (if
    ``learner_first``), then the others' until the learner decides or the game ends; the next ``k``."""
    if learner_first:
        st.apply(moves[k])
        k += 1
    while not st.is_terminal() and st.current_player != seat:
        st.apply(moves[k])
        k += 1
    return k


def test_rows_play_the_batched_envs_games_move_for_move(monkeypatch):
    """Every move the env applies (the learner's and the opponents'), replayed from the batched
    env's games, gives back every observation, reward, end and outcome of the run."""
    env = SingleLearnerVectorEnv(3, "italia", num_players=2, reward="win", shaping=0.5)
    vec = ConcordiaVecEnv(3, "italia", 2, seed=11)
    moves: dict[tuple[int, int], list[int]] = {}
    advance = env._advance

    def record(rows: np.ndarray, actions: np.ndarray) -> None:
        for r, a in zip(rows, actions):
            moves.setdefault((int(r), int(env.episodes[r])), []).append(int(a))
        advance(rows, actions)

    monkeypatch.setattr(env, "_advance", record)
    out = run(env, 11, 700)
    obs, infos = out[0]
    seats = [int(s) for s in infos["seat"]]
    games = [vec.state(i) for i in range(3)]  # episode 0 of row i is the batched env's game i
    done = [replay(games[i], seats[i], moves.get((i, 0), []), 0, False) for i in range(3)]
    episode = [0, 0, 0]
    phi = [0.0, 0.0, 0.0]  # the shaping potential: 0 at the start of an episode, as SingleLearnerEnv's
    for i in range(3):
        np.testing.assert_array_equal(obs[i], observation(games[i], seats[i]))
    for obs, rewards, terminated, truncated, infos in out[1:]:
        for i in range(3):
            st, seat = games[i], seats[i]
            done[i] = replay(st, seat, moves[(i, episode[i])], done[i], True)
            shaped = 0.5 * (lead(st, seat) - phi[i])
            phi[i] = lead(st, seat)
            assert terminated[i] == st.is_terminal() and not truncated[i]
            if not terminated[i]:
                assert rewards[i] == pytest.approx(shaped, abs=1e-12)
                np.testing.assert_array_equal(obs[i], observation(st, seat))
                continue
            assert rewards[i] == pytest.approx(shaped + seat_rewards(st, "win")[seat], abs=1e-12)
            assert done[i] == len(moves[(i, episode[i])])  # nothing else was played in that game
            np.testing.assert_array_equal(infos["final_obs"][i], observation(st, seat))
            final = infos["final_info"]
            assert final["vp"][i] == st.scores()[seat] and final["rank"][i] == st.ranking().index(seat) + 1
            assert final["turns"][i] == st.field("turn") and final["seed"][i] == vec.game_seed(i, episode[i])
            episode[i] += 1
            seats[i], phi[i] = int(infos["seat"][i]), 0.0
            games[i] = new_game("italia", 2, seed=vec.game_seed(i, episode[i]))
            done[i] = replay(games[i], seats[i], moves.get((i, episode[i]), []), 0, False)
            np.testing.assert_array_equal(obs[i], observation(games[i], seats[i]))
    assert min(episode) >= 1  # every row finished a game on the way


def test_same_seed_same_run_and_reset_without_a_seed_continues_the_generator():
    def make() -> SingleLearnerVectorEnv:
        return SingleLearnerVectorEnv(3, "italia", num_players=[2, 3], opponents="random=1,heuristic=1")

    a, b = make(), make()
    ra, rb = run(a, 7, 120), run(b, 7, 120)
    assert data_equivalence(ra, rb)
    assert states(a) == states(b)
    assert set(ra[0][1]["opponent"]) == {"random", "heuristic"}  # both kinds were played
    oa, ia = a.reset()
    ob, ib = b.reset()
    assert data_equivalence((oa, ia), (ob, ib)) and ia["seed"][0] == a.seed != 7
    rc = run(make(), 8, 5)
    assert not data_equivalence(ra[:6], rc)


def test_the_first_decision_is_the_batched_envs_when_the_learner_starts():
    env = SingleLearnerVectorEnv(6, "imperium", num_players=4, learner_seat=0)
    vec = ConcordiaVecEnv(6, "imperium", 4, seed=3)
    obs, infos = env.reset(seed=3)
    for i in range(6):
        start = int(vec.state(i).field("start_player"))
        if start == 0:  # nobody moved before the learner: the very same position and view
            assert env.state(i) == vec.state(i)
            np.testing.assert_array_equal(obs[i], vec.obs[i])
            np.testing.assert_array_equal(infos["action_mask"][i], vec.masks[i])
        else:  # the seats before it played their card: one each
            assert env.state(i).field("turn") == (4 - start) % 4
    starts = {int(vec.state(i).field("start_player")) for i in range(6)}
    assert 0 in starts and len(starts) > 1  # both cases were checked


# ------------------------------------------------------------------ bad input
def test_bad_actions_give_one_error_and_change_nothing():
    env = SingleLearnerVectorEnv(3, "italia", num_players=2)
    twin = SingleLearnerVectorEnv(3, "italia", num_players=2)
    _, infos = env.reset(seed=5)
    twin.reset(seed=5)
    mask = infos["action_mask"]
    good = legal_random(np.random.default_rng(0), mask)
    illegal = int(np.flatnonzero(mask[1] == 0)[0])
    wrong = [(good[:2], ValueError, r"actions must be 3 integers, shape \(3,\), one per game; got shape \(2,\)"),
             (good.reshape(3, 1), ValueError, r"got shape \(3, 1\)"),
             (good.astype(np.float32), ValueError, "dtype float32"),
             (np.where(np.arange(3) == 1, illegal, good), IllegalActionError, f"game 1: .*{illegal}"),
             (np.where(np.arange(3) == 2, E.NUM_ACTIONS, good), IllegalActionError, "game 2: "),
             (np.where(np.arange(3) == 0, -1, good), IllegalActionError, "game 0: ")]
    for actions, error, message in wrong:
        with pytest.raises(error, match=message):
            env.step(actions)
        assert states(env) == states(twin)
    assert data_equivalence(env.step(good), twin.step(good))  # the next legal step: as if nothing happened


def test_illegal_action_terminate_ends_only_that_rows_episode():
    env = SingleLearnerVectorEnv(3, "italia", num_players=2, illegal_action="terminate", illegal_penalty=-3.0)
    _, infos = env.reset(seed=1)
    kept = env.state(1)
    actions = legal_random(np.random.default_rng(0), infos["action_mask"])
    bad = int(np.flatnonzero(infos["action_mask"][1] == 0)[0])
    actions[1] = bad
    _, rewards, terminated, truncated, infos = env.step(actions)
    assert list(terminated) == [False, True, False] and not truncated.any() and rewards[1] == -3.0
    final = infos["final_info"]
    assert final["illegal_action"][1] == bad and "not legal now" in final["error"][1] and not final["is_success"][1]
    assert final["turns"][1] == kept.field("turn") and infos["seed"][1] == 5  # the next game of row 1: 1 + 1 + 1 * 3
    assert final["_illegal_action"].tolist() == [False, True, False]


def test_illegal_action_random_legal_plays_a_legal_move_instead():
    env = SingleLearnerVectorEnv(2, "italia", num_players=2, illegal_action="random_legal")
    obs, infos = env.reset(seed=2)
    bad = int(np.flatnonzero(infos["action_mask"][0] == 0)[0])
    legal = np.flatnonzero(infos["action_mask"][0])
    actions = legal_random(np.random.default_rng(0), infos["action_mask"])
    actions[0] = bad
    _, _, terminated, _, infos = env.step(actions)
    assert not terminated.any() and infos["illegal_action"][0] == bad and infos["played_action"][0] in legal
    assert infos["_played_action"].tolist() == [True, False]


# ------------------------------------------------------------------ opponents and rendering
def test_self_opponents_fall_back_to_random_until_a_snapshot_exists():
    env = SingleLearnerVectorEnv(2, "italia", num_players=2, opponents="self=1")
    assert list(env.reset(seed=0)[1]["opponent"]) == ["random", "random"]
    rng = np.random.default_rng(0)
    layers = [(rng.normal(size=(b, a)).astype(np.float32) * 0.1, rng.normal(size=b).astype(np.float32))
              for a, b in zip((OBSERVATION_SIZE, 8, E.NUM_ACTIONS), (8, E.NUM_ACTIONS))]
    env.add_snapshot(FrozenPolicy.from_bounds(layers, "Tanh", env.single_observation_space.high, name="a"))
    assert env.num_snapshots() == 1
    out = run(env, 1, 40, check_same_step)
    assert list(out[0][1]["opponent"]) == ["self", "self"]


def test_ansi_render_gives_every_game_as_text():
    env = SingleLearnerVectorEnv(2, "italia", num_players=2, render_mode="ansi")
    assert env.render() is None  # nothing to show before reset
    env.reset(seed=0)
    frames = env.render()
    assert frames is not None and len(frames) == 2 and frames[0] == str(env.state(0))


# ------------------------------------------------------------------ the single env's info
def test_the_single_env_puts_the_mask_in_info_and_sync_vector_envs_see_it():
    env = SingleLearnerEnv("italia", num_players=2)
    _, info = env.reset(seed=0)
    assert info["action_mask"].dtype == np.int8 and np.array_equal(info["action_mask"], env.action_masks())
    rng = np.random.default_rng(0)
    done = False
    while not done:
        _, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = terminated or truncated
        assert np.array_equal(info["action_mask"], env.action_masks())
    assert not info["action_mask"].any()
    sync = SyncVectorEnv([lambda: SingleLearnerEnv("italia", num_players=2)] * 2,
                         autoreset_mode=AutoresetMode.SAME_STEP)
    ours = SingleLearnerVectorEnv(2, "italia", num_players=2)
    assert set(sync.reset(seed=0)[1]) <= set(ours.reset(seed=0)[1])


# ------------------------------------------------------------------ the parallel form
def test_the_parallel_form_is_registered_and_passes_pettingzoos_tests():
    assert isinstance(pettingzoo.make("parallel", concordia_env.ENV_ID, map_name="italia", num_players=2),
                      ConcordiaParallelEnv)
    parallel_api_test(concordia_env.parallel_env(map_name="italia", num_players=2), num_cycles=1000)
    parallel_api_test(concordia_env.parallel_env(map_name="imperium", num_players=5, max_turns=40), num_cycles=1000)
    parallel_seed_test(lambda: concordia_env.parallel_env(map_name="italia", num_players=3,
                                                          illegal_action="terminate"))


def test_the_parallel_form_plays_the_aec_game():
    par = concordia_env.parallel_env(map_name="italia", num_players=3)
    aec = concordia_env.raw_env(map_name="italia", num_players=3)
    obs, infos = par.reset(seed=9)
    aec.reset(seed=9)
    rng = np.random.default_rng(0)
    while par.agents:
        deciding = par.deciding_agent
        assert deciding == aec.agent_selection and set(obs) == set(par.agents) == set(infos)
        assert [a for a in par.agents if obs[a]["action_mask"].any()] == [deciding]
        action = int(rng.choice(np.flatnonzero(obs[deciding]["action_mask"])))
        obs, rewards, terminations, truncations, infos = par.step({a: 0 for a in par.agents} | {deciding: action})
        aec.step(action)
    assert par.deciding_agent is None and all(terminations.values()) and not any(truncations.values())
    assert rewards == aec.rewards and sorted(i["rank"] for i in infos.values()) == [1, 2, 3]
    with pytest.raises(RuntimeError, match="call reset"):
        par.step({})


def test_the_parallel_form_refuses_actions_without_the_deciding_seat():
    par = concordia_env.parallel_env(map_name="italia", num_players=2)
    obs, _ = par.reset(seed=0)
    before = par.aec_env.game_state.clone()
    other = next(a for a in par.agents if a != par.deciding_agent)
    with pytest.raises(ValueError, match=f"no entry for '{par.deciding_agent}', the seat that decides now"):
        par.step({other: 0})
    with pytest.raises(ValueError, match=r"agents this game does not have: \['player_7'\]"):
        par.step({"player_7": 0, par.deciding_agent: 0})
    assert par.aec_env.game_state == before
