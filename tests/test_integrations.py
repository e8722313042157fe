"""concordia_env.integrations and what other libraries need of the envs: the gymnasium ids, check_env
(gymnasium's and SB3's) on the single-learner env, its illegal-action modes and finite bounds, the
SB3 VecEnv over the batched env (with a tiny MaskablePPO run), and the AEC env's global ``state()``."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

import concordia_env
from concordia_env import engine as E
from concordia_env.encoding import OBSERVATION_LAYOUT, OBSERVATION_SIZE, observation
from concordia_env.env import FINITE_BOUND, GLOBAL_STATE_LAYOUT, GLOBAL_STATE_SIZE
from concordia_env.integrations.gym_registration import GYM_IDS
from concordia_env.rewards import VP_SCALE
from concordia_env.state import GameState, IllegalActionError
from concordia_env.training.selfplay import ILLEGAL_PENALTY, SingleLearnerEnv

sb3 = pytest.importorskip("stable_baselines3")
pytest.importorskip("sb3_contrib")

from concordia_env.integrations.sb3 import LearnerVecEnv  # noqa: E402  (needs stable-baselines3)


def first_illegal(env: SingleLearnerEnv) -> int:
    return int(np.flatnonzero(~env.action_masks())[0])


# ------------------------------------------------------------------ gymnasium ids
def test_importing_the_package_registers_the_ids_and_imports_nothing_heavy():
    """Registering imports nothing; making the env imports neither torch nor stable-baselines3."""
    code = ("import sys, gymnasium, concordia_env\n"
            "ids = sorted(k for k in gymnasium.registry if k.startswith('concordia/'))\n"
            "heavy = [m for m in ('torch', 'stable_baselines3', 'numba', 'concordia_env.training.selfplay') "
            "if m in sys.modules]\n"
            "print(ids, heavy)\n"
            "env = gymnasium.make('concordia/Italia-v0')\n"
            "env.reset(seed=0)\n"
            "print([m for m in ('torch', 'stable_baselines3') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == [f"{sorted(GYM_IDS)} []", "[]"]  # the single-learner env never needs torch


@pytest.mark.parametrize("env_id, map_name", [("concordia/Concordia-v0", "imperium"),
                                              ("concordia/Imperium-v0", "imperium"),
                                              ("concordia/Italia-v0", "italia")])
def test_gymnasium_make_builds_the_single_learner_env(env_id, map_name):
    env = gymnasium.make(env_id, num_players=3, reward="win")
    inner = env.unwrapped
    assert isinstance(inner, SingleLearnerEnv) and inner.map_name == map_name and inner.player_counts == (3,)
    obs, info = env.reset(seed=0)
    assert obs.shape == (OBSERVATION_SIZE,) and info["num_players"] == 3
    mask = env.get_wrapper_attr("action_masks")()
    env.step(int(np.flatnonzero(mask)[0]))
    assert gymnasium.make("concordia/Concordia-v0", map_name="italia").unwrapped.map_name == "italia"


def test_a_per_map_id_refuses_the_other_map():
    with pytest.raises(ValueError, match="map_name='imperium' contradicts this id, which plays 'italia'"):
        gymnasium.make("concordia/Italia-v0", map_name="imperium")


@pytest.mark.parametrize("mode", ["terminate", "random_legal"])
def test_check_env_of_gymnasium_and_sb3_pass_without_warnings(mode):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gymnasium.make("concordia/Italia-v0", illegal_action=mode, observation_bounds="finite", render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)  # (gymnasium asks for the unwrapped env; the spec lets it test render modes)
        sb3_check_env(SingleLearnerEnv("imperium", illegal_action=mode, observation_bounds="finite"))
    assert SingleLearnerEnv.metadata["render_fps"] > 0


def test_default_bounds_stay_those_trained_models_use():
    env = SingleLearnerEnv("imperium")
    pz = concordia_env.raw_env(map_name="imperium", num_players=4).observation_space("player_0")["observation"]
    assert env.illegal_action == "raise" and env.observation_space == pz
    assert np.isinf(env.observation_space.high).any()


def test_finite_bounds_cap_only_what_the_rules_leave_open_and_contain_every_observation():
    from concordia_env.validation import MAX_COINS, MAX_SCORE, MAX_TURN

    rules = SingleLearnerEnv("italia").observation_space.high
    env = SingleLearnerEnv("italia", observation_bounds="finite", num_players=4, max_turns=None)
    high = env.observation_space.high
    assert np.isfinite(high).all() and np.array_equal(high[np.isfinite(rules)], rules[np.isfinite(rules)])
    for name in ("turn", "coins", "victory_points", "intermediate_score"):
        assert (high[OBSERVATION_LAYOUT[name]] == FINITE_BOUND).all(), name
    assert FINITE_BOUND >= 2**31 - 1 > max(MAX_COINS, MAX_SCORE, MAX_TURN)  # the int32 state cannot exceed it
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    done = False
    while not done:
        assert obs in env.observation_space
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        done = terminated or truncated
    assert obs in env.observation_space


# ------------------------------------------------------------------ illegal actions
def test_illegal_actions_raise_by_default_and_terminate_with_the_penalty():
    env = SingleLearnerEnv("italia", num_players=2)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=f"illegal action {first_illegal(env)}"):
        env.step(first_illegal(env))

    env = SingleLearnerEnv("italia", num_players=2, illegal_action="terminate", illegal_penalty=-2.5)
    obs, _ = env.reset(seed=0)
    before = env.state.s.copy()
    bad = first_illegal(env)
    obs2, reward, terminated, truncated, info = env.step(np.int64(bad))
    assert (reward, terminated, truncated) == (-2.5, True, False)
    assert info["illegal_action"] == bad and "not legal now" in info["error"] and info["is_success"] is False
    assert {"vp", "rank", "seat", "opponent", "num_players"} <= set(info)
    assert np.array_equal(env.state.s, before) and np.array_equal(obs, obs2) and not env.action_masks().any()
    with pytest.raises(RuntimeError, match="finished episode"):
        env.step(0)
    assert SingleLearnerEnv("italia", illegal_action="terminate").illegal_penalty == ILLEGAL_PENALTY == -1.0


def test_random_legal_plays_a_legal_move_instead_and_is_reproducible():
    def run() -> list:
        env = SingleLearnerEnv("imperium", num_players=3, illegal_action="random_legal")
        env.reset(seed=4)
        seen = []
        for _ in range(20):
            bad = first_illegal(env)
            legal = env.state.legal_actions()
            _, _, terminated, truncated, info = env.step(bad)
            assert info["illegal_action"] == bad and info["played_action"] in legal
            seen.append(info["played_action"])
            if terminated or truncated:
                break
        return seen

    assert run() == run()


@pytest.mark.parametrize("kwargs, message", [
    ({"illegal_action": "ignore"}, "illegal_action must be one of 'raise', 'terminate', 'random_legal'; got 'ignore'"),
    ({"observation_bounds": "none"}, "observation_bounds must be one of 'rules', 'finite'; got 'none'"),
    ({"illegal_penalty": float("nan")}, "illegal_penalty must be a finite number; got nan"),
    ({"illegal_penalty": "-1"}, "illegal_penalty must be a finite number; got '-1'"),
])
def test_wrong_options_name_the_option_and_the_allowed_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SingleLearnerEnv("italia", **kwargs)


# ------------------------------------------------------------------ SB3 VecEnv over the batched env
def lead(state: GameState, seat: int) -> float:
    vp = np.asarray(state.scores(), dtype=np.float64)
    return float(vp[seat] - np.delete(vp, seat).mean()) / VP_SCALE


def test_learner_vec_env_keeps_the_single_learner_contract():
    env = LearnerVecEnv(6, "imperium", 3, reward="rank", shaping=0.5, seed=11)
    obs = env.reset()
    rng = np.random.default_rng(0)
    episode_seeds = {i: env.games.game_seed(i, 0) for i in range(6)}
    potentials = np.zeros(6)
    finished = 0
    for _ in range(400):
        masks = env.action_masks()
        for i in range(6):
            st = env.games.state(i)
            assert st.current_player == env.seats[i]
            np.testing.assert_array_equal(obs[i], observation(st, int(env.seats[i])))
            np.testing.assert_array_equal(masks[i], st.legal_action_mask().astype(bool))
        assert np.array_equal(np.stack(env.env_method("action_masks")), masks)
        obs, rewards, dones, infos = env.step((rng.random(masks.shape) * masks).argmax(1))
        assert rewards.dtype == np.float32 and obs.dtype == np.float32
        for i in range(6):
            if not dones[i]:
                now = lead(env.games.state(i), int(env.seats[i]))
                assert rewards[i] == pytest.approx(0.5 * (now - potentials[i]), abs=1e-5)
                potentials[i] = now
                continue
            finished += 1
            info = infos[i]
            assert info["seed"] == episode_seeds[i] and not info["TimeLimit.truncated"]
            terminal = 1.0 - 2.0 * (info["rank"] - 1) / 2  # "rank" mode, 3 players
            assert info["is_success"] == (info["rank"] == 1)
            end_lead = rewards[i] - terminal  # = 0.5 * (phi(end) - phi(before))
            assert info["terminal_observation"].shape == (OBSERVATION_SIZE,) and abs(end_lead) < 1.0
            episode_seeds[i] = info["seed"] + 6
            potentials[i] = 0.0
    assert finished >= 3


def test_learner_vec_env_is_reproducible_and_truncates():
    def run(seed: int) -> tuple:
        env = LearnerVecEnv(4, "italia", 2, seed=0, max_turns=30)
        env.seed(seed)
        out = [env.reset()]
        seats = [env.seats.copy()]
        for _ in range(60):
            masks = env.action_masks()
            obs, rewards, dones, infos = env.step(masks.argmax(1))
            out += [obs, rewards, dones]
            seats.append(env.seats.copy())
            for i in np.flatnonzero(dones):
                assert infos[i]["TimeLimit.truncated"] and infos[i]["turns"] == 30 and not infos[i]["is_success"]
        return out, seats

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for x, y in zip(a[0] + a[1], b[0] + b[1]))
    assert not all(np.array_equal(x, y) for x, y in zip(a[0], c[0]))


def test_learner_vec_env_bad_input():
    env = LearnerVecEnv(2, "italia", 2, learner_seat=1)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(2, np.int64))
    env.reset()
    assert (env.seats == 1).all()
    bad = np.array([int(np.flatnonzero(~env.action_masks()[0])[0]), int(np.flatnonzero(env.action_masks()[1])[0])])
    with pytest.raises(IllegalActionError, match=r"^game 0: illegal action"):
        env.step(bad)
    with pytest.raises(ValueError, match="actions must be 2 integers"):
        env.step(np.zeros(3, np.int64))
    for kwargs, message in [({"opponent": "heuristic"}, "opponent must be one of 'random'; got 'heuristic'"),
                            ({"learner_seat": 2}, "learner_seat must be 0..1 in a 2-player game; got 2"),
                            ({"max_turns": 1}, "max_turns must be None or at least num_players"),
                            ({"shaping": -1.0}, "shaping must be a finite number >= 0"),
                            ({"num_players": 5}, "italia"),
                            ({"observation_bounds": "x"}, "observation_bounds must be one of")]:
        with pytest.raises(ValueError, match=message):
            LearnerVecEnv(2, "italia", **{"num_players": 2, **kwargs})


def test_maskable_ppo_trains_on_the_learner_vec_env():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    env = VecMonitor(LearnerVecEnv(8, "italia", 2, observation_bounds="finite"))
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs={"net_arch": [32]})
    model.learn(512)
    assert model.num_timesteps == 512
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=np.stack(env.env_method("action_masks")))
    assert np.stack(env.env_method("action_masks"))[np.arange(8), actions].all()


# ------------------------------------------------------------------ the AEC env's global state
def test_state_is_the_seat_0_view_plus_every_colonist_slot_and_stays_in_its_space():
    with pytest.raises(RuntimeError, match="call reset"):
        concordia_env.raw_env(map_name="imperium", num_players=4).state()
    env = concordia_env.env(map_name="imperium", num_players=4)
    env.reset(seed=2)
    space = env.unwrapped.state_space
    assert space.shape == (GLOBAL_STATE_SIZE,) and np.isfinite(space.high).all()
    rng = np.random.default_rng(1)
    moved = False
    for _agent in env.agent_iter():
        state = env.state()
        assert state.dtype == np.float32 and state in space
        st = env.unwrapped.game_state
        np.testing.assert_array_equal(state[GLOBAL_STATE_LAYOUT["observation_of_seat_0"]], observation(st, 0))
        slots = state[GLOBAL_STATE_LAYOUT["colonist_slots"]].reshape(E.MAXP, E.NCOL, E.NLOC)
        loc = st.s[E.O_COLONIST:E.O_COLONIST + 4 * E.NCOL].reshape(4, E.NCOL)
        assert slots.sum() == (loc >= 0).sum() and not slots[4:].any()
        for p in range(4):
            for i in range(E.NCOL):
                assert slots[p, i].sum() == (loc[p, i] >= 0) and (loc[p, i] < 0 or slots[p, i, loc[p, i]] == 1)
        moved = moved or bool(slots[:, :, 1:].any() and (loc > 0).any())
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
        else:
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert moved and env.unwrapped.game_state.is_terminal() and env.state() in space


def test_state_hides_the_deck_order_only():
    env = concordia_env.raw_env(map_name="italia", num_players=3)
    env.reset(seed=5)
    st = env.game_state
    pos, end = int(st.s[E.O_DECK_POS]), int(st.s[E.O_DECK_LEN])
    shuffled = st.s.copy()
    shuffled[E.O_DECK + pos:E.O_DECK + end] = shuffled[E.O_DECK + pos:E.O_DECK + end][::-1]
    assert not np.array_equal(shuffled, st.s)
    before = env.state()
    env.game_state = GameState(env.game, shuffled)
    np.testing.assert_array_equal(env.state(), before)
    deck = before[OBSERVATION_LAYOUT["deck_cards"]]
    assert deck.sum() == end - pos == before[OBSERVATION_LAYOUT["deck_size"]][0]


def test_pettingzoo_state_checks_pass():
    from pettingzoo.test.state_test import test_state, test_state_space

    env = concordia_env.env(map_name="italia", num_players=2, illegal_action="terminate")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        test_state_space(env)
        warnings.filterwarnings("ignore", message=".*illegal action by")  # the env's own notice on terminating
        test_state(env, 20)
