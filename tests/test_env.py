"""The PettingZoo AEC env: PettingZoo's own test suite, observations, masks, rewards, errors."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from pettingzoo.test import api_test, seed_test

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT, OBSERVATION_SIZE, observation, unpack
from concordia_env.state import IllegalActionError

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]
RANDOM_GAMES_PER_COMBO = 84  # 6 x 84 = 504 games


def play_random(env, rng: random.Random, on_decision=None, max_steps: int = 100_000) -> dict:
    """Play one game with uniformly random legal actions through agent_iter(); returns the
    final (reward, info) per agent as seen by last() on each agent's dead step."""
    final = {}
    for step, agent in enumerate(env.agent_iter()):
        assert step < max_steps
        obs, reward, term, trunc, info = env.last()
        if term or trunc:
            final[agent] = (reward, info, term, trunc)
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        if on_decision is not None:
            on_decision(agent, obs)
        env.step(int(legal[rng.randrange(len(legal))]))
    return final


# ------------------------------------------------------------ PettingZoo's tests
@pytest.mark.parametrize("map_name,n", COMBOS)
def test_pettingzoo_api_test(map_name, n):
    api_test(ce.env(map_name=map_name, num_players=n), num_cycles=1000)


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_pettingzoo_seed_test(map_name, n):
    seed_test(lambda: ce.env(map_name=map_name, num_players=n), num_cycles=500)


def test_metadata_and_agents():
    env = ce.env(map_name="italia", num_players=3)
    assert env.metadata["name"] == "concordia_v0"
    assert env.metadata["is_parallelizable"] is False
    assert set(env.metadata["render_modes"]) == {"ansi", "rgb_array", "human"}
    assert env.metadata["render_fps"] > 0
    assert env.possible_agents == ["player_0", "player_1", "player_2"]
    assert isinstance(env.unwrapped, ce.raw_env)
    assert env.action_space("player_1").n == E.NUM_ACTIONS


# ------------------------------------------------------------ random play
@pytest.mark.parametrize("map_name,n", COMBOS)
def test_random_games_masks_match_core_and_obs_in_space(map_name, n):
    """>= 500 random games in all: the acting agent's mask is never empty, equals the
    legal actions of an independent core game fed the same actions, every other
    agent's mask is empty, every observation lies in the space, and "win" rewards sum to 0."""
    env = ce.env(map_name=map_name, num_players=n)
    space = env.observation_space("player_0")
    for g in range(RANDOM_GAMES_PER_COMBO):
        seed = 1000 * n + g
        env.reset(seed=seed)
        core = ce.new_game(map_name, n, seed=seed)
        rng = random.Random(seed)
        steps = 0
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                env.step(None)
                continue
            mask = obs["action_mask"]
            assert mask.dtype == np.int8 and mask.any(), (map_name, n, seed, steps)
            assert agent == f"player_{core.current_player}"
            assert np.flatnonzero(mask).tolist() == core.legal_actions(), (map_name, n, seed, steps)
            if steps % 7 == 0:  # every agent's view, not only the actor's
                for other in env.agents:
                    o = env.observe(other)
                    assert space.contains(o), (map_name, n, seed, steps, other)
                    assert (other == agent) == bool(o["action_mask"].any())
            legal = np.flatnonzero(mask)
            a = int(legal[rng.randrange(len(legal))])
            env.step(a)
            core.apply(a)
            steps += 1
        assert core.is_terminal()
        u = env.unwrapped
        assert u.game_state == core


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 5)])
def test_win_rewards_sum_to_zero_and_reach_every_seat(map_name, n):
    env = ce.env(map_name=map_name, num_players=n)
    for seed in range(6):
        env.reset(seed=seed)
        final = play_random(env, random.Random(seed))
        assert sorted(final) == sorted(env.possible_agents)  # every seat gets its last()
        rewards = [final[a][0] for a in env.possible_agents]
        assert abs(sum(rewards)) < 1e-9
        assert sorted(rewards) == [-1.0 / (n - 1)] * (n - 1) + [1.0]
        winner = {final[a][1]["winner"] for a in final}
        assert len(winner) == 1 and final[winner.pop()][0] == 1.0
        for _a, (r, info, term, trunc) in final.items():
            assert term and not trunc
            assert info["vp"] == sum(info["vp_breakdown"].values())
            assert (info["rank"] == 1) == (r == 1.0)


@pytest.mark.parametrize("mode", ["rank", "vp"])
def test_rank_and_vp_rewards(mode):
    n = 4
    env = ce.env(map_name="imperium", num_players=n, reward=mode)
    env.reset(seed=11)
    final = play_random(env, random.Random(11))
    core = env.unwrapped.game_state
    vp = core.scores()
    for p, a in enumerate(env.possible_agents):
        reward, info = final[a][0], final[a][1]
        assert info["vp"] == vp[p]
        if mode == "rank":
            assert reward == pytest.approx(1.0 - 2.0 * (info["rank"] - 1) / (n - 1))
        else:
            assert reward == pytest.approx((vp[p] - np.mean(vp)) / 50.0)
    assert abs(sum(f[0] for f in final.values())) < 1e-6
    if mode == "rank":
        assert sorted(f[0] for f in final.values()) == pytest.approx([-1.0, -1.0 / 3, 1.0 / 3, 1.0])


def test_truncation_after_max_turns():
    env = ce.env(map_name="italia", num_players=2, max_turns=6)
    env.reset(seed=0)
    final = play_random(env, random.Random(0))
    assert all(trunc and not term for _, _, term, trunc in final.values())
    assert all(r == 0.0 for r, *_ in final.values())
    assert env.unwrapped.game_state.field("turn") == 6 and not env.unwrapped.game_state.is_terminal()
    assert all("vp" in info for _, info, *_ in final.values())


def test_out_of_turn_overflow_choice_is_that_agents_turn():
    """A storehouse overflow during someone else's turn is decided by the goods' owner."""
    env = ce.env(map_name="imperium", num_players=5)
    for seed in range(400):
        env.reset(seed=seed)
        rng = random.Random(seed)
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            st = env.unwrapped.game_state
            if st.phase == E.PH_KEEP and st.current_player != st.active_player:
                assert agent == f"player_{st.current_player}"
                view = unpack(obs["observation"])
                assert view["deciding_seat"][0] == 1 and view["active_seat"][0] == 0
                assert view["phase"][E.PH_KEEP] == 1 and view["incoming_goods"][0].sum() > 0
                active = f"player_{st.active_player}"
                assert not env.observe(active)["action_mask"].any()
                legal = np.flatnonzero(obs["action_mask"])
                assert all(E.A_KEEP <= a < E.NUM_ACTIONS for a in legal)
                return
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.randrange(len(legal))]))
    pytest.fail("no out-of-turn overflow choice in 400 random 5-player games")


# ------------------------------------------------------------ errors
def test_illegal_action_raises_and_leaves_state_unchanged():
    env = ce.env(map_name="imperium", num_players=3)
    env.reset(seed=5)
    before = env.unwrapped.game_state.clone()
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        env.step(illegal)
    for bad in (-1, E.NUM_ACTIONS, 2.5, "3"):
        with pytest.raises(IllegalActionError):
            env.step(bad)
    assert env.unwrapped.game_state == before and env.agent_selection == agent
    env.step(np.int64(int(np.flatnonzero(env.last()[0]["action_mask"])[0])))  # numpy ints work
    assert env.unwrapped.game_state != before


def test_illegal_action_terminate_mode():
    env = ce.env(map_name="imperium", num_players=4, illegal_action="terminate")
    env.reset(seed=5)
    offender = env.agent_selection
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    with pytest.warns(UserWarning, match="illegal action"):
        env.step(illegal)
    final = play_random(env, random.Random(0))
    assert final[offender][0] == -1.0
    assert all(final[a][0] == 0.0 for a in final if a != offender)
    assert all(term for _, _, term, _ in final.values())
    assert final[offender][1]["illegal_action"] == illegal
    assert not env.agents


@pytest.mark.parametrize("kwargs,needle", [
    ({"map_name": "atlantis"}, "imperium"),
    ({"map_name": "italia", "num_players": 5}, "2"),
    ({"num_players": 2}, "3"),
    ({"reward": "score"}, "'win', 'rank', 'vp'"),
    ({"illegal_action": "ignore"}, "'raise', 'terminate'"),
    ({"render_mode": "video"}, "'ansi', 'rgb_array', 'human'"),
    ({"max_turns": 0}, "max_turns"),
    ({"intermediate_scoring": "yes"}, "intermediate_scoring"),
])
def test_bad_constructor_arguments(kwargs, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(")):
        ce.env(**kwargs)


def test_reset_seeds():
    env = ce.env(map_name="italia", num_players=3)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed="x")
    env.reset(seed=9)
    assert env.unwrapped.game_state == ce.new_game("italia", 3, seed=9)
    env.reset()
    first = env.unwrapped.game_state.clone()
    env.reset(seed=9)
    env.reset()
    assert env.unwrapped.game_state == first  # unseeded resets follow the last seed


# ------------------------------------------------------------ observations
def test_one_observation_shape_for_every_map_and_player_count():
    shapes = set()
    for map_name, n in COMBOS:
        env = ce.env(map_name=map_name, num_players=n)
        env.reset(seed=0)
        obs = env.last()[0]
        shapes.add(obs["observation"].shape)
        assert env.observation_space(env.agent_selection)["observation"].shape == (OBSERVATION_SIZE,)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].shape == (E.NUM_ACTIONS,)
    assert shapes == {(OBSERVATION_SIZE,)}


def test_observation_layout_covers_the_vector_once():
    env = ce.env()
    layout = env.unwrapped.observation_layout
    assert layout == OBSERVATION_LAYOUT
    covered = np.zeros(OBSERVATION_SIZE, int)
    for name, shape, _ in OBSERVATION_FIELDS:
        s = layout[name]
        assert s.stop - s.start == int(np.prod(shape))
        covered[s] += 1
    assert (covered == 1).all()


def reference_observation(st, observer: int) -> dict[str, np.ndarray]:  # noqa: C901
    """An independent, slow encoding written from the documented layout."""
    f = st.field
    n = st.num_players
    T = st.game.tables
    seats = [(observer + k) % n for k in range(n)]  # row k -> absolute seat
    out = {name: np.zeros(shape, np.float32) for name, shape, _ in OBSERVATION_FIELDS}
    out["map"][ce.MAP_NAMES.index(st.map_name)] = 1
    out["intermediate_scoring"][0] = f("intermediate")
    out["turn"][0] = f("turn")
    for c in range(1, st.game.map.num_cities):
        out["city_good"][c, f("city_good")[c]] = 1
    for q in range(len(st.game.map.province_names)):
        out["marker_good"][q, f("marker_good")[q]] = 1
        out["marker_good_side"][q] = f("marker_active")[q]
    breakdown = st.score_breakdown()
    for k, p in enumerate(seats):
        for c in range(1, st.game.map.num_cities):
            out["city_houses"][c, k] = (int(f("houses")[c]) >> p) & 1
        for slot, loc in enumerate(f("colonist")[p]):
            sea = int(slot >= 3)
            if loc < 0:
                out["storehouse_colonists"][k, sea] += 1
            elif loc < E.NC:
                out["city_colonists"][loc, k, sea] += 1
            else:
                out["route_colonist"][loc - E.NC, k] = 1
            if k == 0 and loc >= 0:
                out["own_colonist_slots"][slot, loc] = 1
        out["seat_present"][k] = 1
        out["start_player"][k] = int(f("start_player")) == p
        out["praefectus_magnus"][k] = int(f("pm")) == p
        out["concordia_card"][k] = int(f("concordia")) == p
        out["coins"][k] = f("coins")[p]
        out["goods"][k] = f("goods")[p]
        out["houses_left"][k] = f("houses_left")[p]
        out["hand"][k] = f("hand")[p]
        out["discard"][k] = f("discard")[p]
        if f("top")[p] >= 0:
            out["top_card"][k, f("top")[p]] = 1
        out["victory_points"][k] = breakdown[p]
        out["incoming_goods"][k] = f("incoming")[p]
        out["intermediate_scored"][k] = f("inter_done")[p]
        out["intermediate_score"][k] = f("inter_score")[p]
    for j, cid in enumerate(f("display")):
        if cid >= 0:
            out["display_card"][j, T[E.T_CARD_TYPE + cid]] = 1
            out["display_price"][j] = (T[E.T_CARD_COST + cid * E.NG:E.T_CARD_COST + (cid + 1) * E.NG]
                                       + T[E.T_DISPLAY_FIXED + j * E.NG:E.T_DISPLAY_FIXED + (j + 1) * E.NG])
            out["display_price_any"][j] = T[E.T_DISPLAY_ANY + j]
    deck = f("deck")[int(f("deck_pos")):int(f("deck_len"))]
    out["deck_size"][0] = len(deck)
    for cid in deck:
        out["deck_cards"][T[E.T_CARD_TYPE + cid]] += 1
    ph = st.phase
    out["phase"][ph] = 1
    if ph != E.PH_OVER:
        out["deciding_seat"][seats.index(st.current_player)] = 1
        out["active_seat"][seats.index(st.active_player)] = 1
    if ph not in (E.PH_PLAY, E.PH_OVER):
        out["action_kind"][f("ctx_kind")] = 1
    if ph == E.PH_ARCHITECTUS:
        out["move_points"][0] = f("ctx_points")
        out["house_built"][0] = f("ctx_built")
    if ph == E.PH_MERCATOR:
        out["goods_sold"] = np.array([(int(f("ctx_sold")) >> g) & 1 for g in range(E.NG)], np.float32)
        out["goods_bought"] = np.array([(int(f("ctx_bought")) >> g) & 1 for g in range(E.NG)], np.float32)
    if ph == E.PH_COLONUS:
        out["colonist_placed"][0] = f("ctx_placed")
    if ph in (E.PH_BUY, E.PH_PAY):
        out["buys_left"][0] = f("ctx_buys_left")
        out["consul"][0] = f("ctx_consul")
        out["bought_positions"] = np.array([(int(f("ctx_bought_pos")) >> j) & 1 for j in range(E.NDISP)],
                                           np.float32)
    if ph == E.PH_PAY:
        out["pay_left"][0] = f("ctx_pay_left")
    return out


@pytest.mark.parametrize("map_name,n,intermediate", [("italia", 2, False), ("imperium", 5, True),
                                                      ("imperium", 3, False)])
def test_encoding_matches_an_independent_reference(map_name, n, intermediate):
    phases_seen = set()
    for seed in range(3):
        st = ce.new_game(map_name, n, seed=seed, intermediate_scoring=intermediate)
        rng = random.Random(seed)
        while True:
            phases_seen.add(st.phase)
            for observer in range(n):
                got = unpack(observation(st, observer))
                want = reference_observation(st, observer)
                for name in want:
                    np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name} seed {seed}")
            if st.is_terminal():
                break
            st.apply(rng.choice(st.legal_actions()))
    assert phases_seen >= set(range(E.PH_OVER + 1)) - {E.PH_KEEP}


def test_observation_is_seat_relative():
    st = ce.new_game("imperium", 4, seed=2)
    coins = st.field("coins")[:4].tolist()
    for observer in range(4):
        view = unpack(observation(st, observer))
        assert view["coins"][:4].tolist() == [coins[(observer + k) % 4] for k in range(4)]
        assert view["seat_present"].tolist() == [1, 1, 1, 1, 0]
        assert view["coins"][4] == 0 and not view["hand"][4].any()
    with pytest.raises(ValueError, match="observer"):
        observation(st, 4)


def test_observation_bounds_hold_for_display_prices_and_card_counts():
    """The finite upper bounds of the space are true bounds of the components."""
    from concordia_env.encoding import observation_bounds

    for map_name in ce.MAP_NAMES:
        game = ce.get_game(map_name)
        T = game.tables
        low, high = observation_bounds(T)
        card_cost = T[E.T_CARD_COST:E.T_CARD_COST + E.NCARD * E.NG].reshape(E.NCARD, E.NG)
        fixed = T[E.T_DISPLAY_FIXED:E.T_DISPLAY_FIXED + E.NDISP * E.NG].reshape(E.NDISP, E.NG)
        assert (card_cost.max(axis=0)[None, :] + fixed).max() <= high[OBSERVATION_LAYOUT["display_price"]].min()
        assert (low == 0).all()


def test_registered_with_pettingzoo():
    import pettingzoo

    if not hasattr(pettingzoo, "make"):
        pytest.fail("PettingZoo without a registry; the package requires one that has it")
    env = pettingzoo.make("aec", ce.ENV_ID, map_name="italia", num_players=2)
    env.reset(seed=1)
    assert isinstance(env.unwrapped, ce.raw_env) and env.unwrapped.game_state == ce.new_game("italia", 2, seed=1)


def test_pickle_recreates_the_env_from_its_arguments():
    import pickle

    env = ce.raw_env(map_name="italia", num_players=3, reward="rank", max_turns=50)
    copy = pickle.loads(pickle.dumps(env))
    assert (copy.map_name, copy.num_players, copy.reward_mode, copy.max_turns) == ("italia", 3, "rank", 50)
    copy.reset(seed=2)
    assert copy.game_state == ce.new_game("italia", 3, seed=2)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=hs.integers(0, 2**31), combo=hs.sampled_from(COMBOS), p_illegal=hs.sampled_from([0.0, 0.002, 0.05]),
       mode=hs.sampled_from(["win", "rank", "vp"]))
def test_env_never_breaks_a_rule_whatever_it_is_sent(seed, combo, p_illegal, mode):
    """Any action id, legal or not, in "terminate" mode: a legal one moves the game on, an
    illegal one ends it with -1 for the sender only; the game never breaks an invariant."""
    from concordia_env.validation import check_invariants

    map_name, n = combo
    env = ce.env(map_name=map_name, num_players=n, reward=mode, illegal_action="terminate")
    env.reset(seed=seed)
    rng = random.Random(seed)
    sent_illegal = None
    final = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for steps, agent in enumerate(env.agent_iter()):
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                final[agent] = reward
                env.step(None)
                continue
            if rng.random() < p_illegal:
                a = rng.randrange(-3, E.NUM_ACTIONS + 3)
                if 0 <= a < E.NUM_ACTIONS and obs["action_mask"][a]:
                    env.step(a)
                else:
                    sent_illegal = agent
                    env.step(a)
            else:
                legal = np.flatnonzero(obs["action_mask"])
                env.step(int(legal[rng.randrange(len(legal))]))
            if steps % 50 == 0 or sent_illegal:
                assert check_invariants(env.unwrapped.game_state) == [], (map_name, n, seed, steps)
    assert sorted(final) == sorted(env.possible_agents)
    if sent_illegal is not None:
        assert final[sent_illegal] == -1.0 and all(r == 0.0 for a, r in final.items() if a != sent_illegal)
    else:
        assert abs(sum(final.values())) < 1e-9
