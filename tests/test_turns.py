"""Whole turns (concordia_env.turns) and the turn-level modes of the PettingZoo and batched envs."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test

import concordia_env
from concordia_env import engine as E
from concordia_env import new_game
from concordia_env import scenario as sc
from concordia_env.encoding import OBSERVATION_LAYOUT, OBSERVATION_SIZE, observation
from concordia_env.env import raw_env
from concordia_env.state import IllegalActionError
from concordia_env.turns import TurnGenerator, turn_ends, whole_turns
from concordia_env.vector import ConcordiaVecEnv

SETUPS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]


@pytest.fixture
def st():
    state = new_game("imperium", 4, seed=0)
    sc.set_turn(state, 0)
    sc.give_pm(state, 3)
    for p in range(4):
        sc.set_goods(state, p)
    return state


def _replayed(state, actions):
    c = state.clone()
    for a in actions:
        c.apply(a)  # raises IllegalActionError if any is not legal at its point
    return c


@pytest.mark.parametrize("map_name, players", SETUPS)
def test_every_candidate_replays_as_legal_atomic_actions_to_its_end_on_every_setup(map_name, players):
    env = raw_env(map_name, players, decisions="turn")
    env.reset(seed=11)
    rng = np.random.default_rng(players)
    decisions = 0
    while not env.game_state.is_terminal() and decisions < 25:
        st = env.game_state
        before = st.s.copy()
        obs = env.observe(env.agent_selection)
        turns = whole_turns(st)
        assert np.array_equal(st.s, before), "finding the candidates leaves the game unchanged"
        assert [t.actions for t in turns] == env.candidate_actions()
        assert obs["action_mask"].tolist() == [1] * len(turns) + [0] * (env.max_candidates - len(turns))
        ends = set()
        for k, turn in enumerate(turns):
            end = _replayed(st, turn.actions)
            assert np.array_equal(end.s, turn.end.s)
            np.testing.assert_array_equal(obs["candidates"][k], turn.observation)
            ends.add(end.s.tobytes())
            # the whole turn: play has passed on, the game is over, or someone else decides
            assert end.is_terminal() or end.active_player != st.active_player or end.current_player != st.current_player
        assert len(ends) == len(turns), "no two candidates end in the same position"
        assert not obs["candidates"][len(turns):].any()
        env.step(int(rng.integers(len(turns))))
        decisions += 1
    assert decisions == 25


def test_a_praefectus_turn_offers_every_province_and_the_cash_bonus(st):
    sc.set_hand(st, 0, ["Praefectus"])
    turns = whole_turns(st)
    play = sc.action_id(st, "play", "Praefectus")
    assert {t.actions[0] for t in turns} == {play}
    assert sorted(t.actions[1] for t in turns) == list(range(E.A_PRODUCE, E.A_PRODUCE + 12)) + [E.A_CASH]
    assert len(turns) == 13  # 12 provinces with a good marker, and the cash bonus
    # the greedy completion comes first: the best immediate value; ties go to the lowest id
    assert turns[0].value == max(t.value for t in turns)


def test_the_first_candidates_are_each_cards_greedy_turn_in_id_order(st):
    sc.set_hand(st, 0, ["Tribunus", "Praefectus", "Mercator (3)"])
    gen = TurnGenerator("imperium", max_candidates=3)
    n = gen.generate(st.s, st.game.tables)
    assert n == 3  # no room for variations: one greedy turn per card
    firsts = [gen.sequence(k)[0] for k in range(n)]
    assert firsts == sorted(firsts) == sorted(st.legal_actions())


def test_more_cards_than_candidates_keeps_the_best_greedy_turns(st):
    sc.set_hand(st, 0, ["Tribunus", "Praefectus", "Mercator (3)", "Architectus", "Senator"])
    every = {t.actions[0]: t.value for t in whole_turns(st, max_candidates=5, discrepancies=0)}
    assert len(every) == 5
    two = whole_turns(st, max_candidates=2)
    best = sorted(every, key=lambda a: (-every[a], a))[:2]
    assert sorted(t.actions[0] for t in two) == sorted(best)


def test_a_bought_card_is_seen_before_the_display_is_refilled(st):
    sc.set_hand(st, 0, ["Senator"])
    sc.set_coins(st, 0, 50)
    sc.set_goods(st, 0, brick=2, food=2, tools=2, wine=1, cloth=1)
    turns = whole_turns(st)
    bought = [t for t in turns if t.end.s[E.O_DECK_POS] > st.s[E.O_DECK_POS]]
    assert bought, "some candidate buys a card"
    display = OBSERVATION_LAYOUT["display_card"]
    deck_size = OBSERVATION_LAYOUT["deck_size"]
    seen_now = observation(st, 0)
    for t in bought:
        drawn = int(t.end.s[E.O_DECK_POS] - st.s[E.O_DECK_POS])
        cards = t.observation[display].reshape(E.NDISP, E.NT)
        assert cards.sum(axis=1)[E.NDISP - drawn:].tolist() == [0] * drawn  # the refilled places: unknown
        assert t.observation[deck_size] == seen_now[deck_size]  # the deck as the player knew it
        true_end = observation(t.end, 0)[display].reshape(E.NDISP, E.NT)
        assert true_end.sum(axis=1).tolist() == [1] * E.NDISP  # the true end has the display full


def test_an_overflow_choice_out_of_turn_offers_one_candidate_per_good(st):
    # player 1 gets wine (Lutetia) and cloth (Massilia) in Gallia with one slot free
    for c, g in (("Lutetia", "wine"), ("Massilia", "cloth"), ("Burdigala", "tools")):
        sc.set_city_good(st, c, g)
    sc.set_marker(st, "Gallia", True, good="food")
    sc.add_house(st, 1, "Lutetia")
    sc.add_house(st, 1, "Massilia")
    sc.set_goods(st, 1, brick=7)
    sc.set_hand(st, 0, ["Praefectus"])
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Gallia")
    assert st.phase == E.PH_KEEP and st.current_player == 1 and st.active_player == 0
    turns = whole_turns(st)
    assert [t.actions for t in turns] == [(sc.action_id(st, "keep", "wine"),), (sc.action_id(st, "keep", "cloth"),)]


def test_candidates_are_a_pure_function_of_the_position():
    st = new_game("italia", 3, seed=4)
    a = whole_turns(st)
    b = whole_turns(st.clone())
    assert [t.actions for t in a] == [t.actions for t in b]
    assert all(np.array_equal(x.observation, y.observation) for x, y in zip(a, b))


@pytest.mark.parametrize("map_name, players", [("italia", 2), ("imperium", 5)])
def test_pettingzoo_api_test_in_the_turn_level_mode(map_name, players):
    api_test(concordia_env.env(map_name=map_name, num_players=players, decisions="turn", max_candidates=8),
             num_cycles=60)


def test_turn_level_spaces_and_a_bad_choice_leave_the_game_unchanged():
    env = raw_env("italia", 2, decisions="turn", max_candidates=8)
    env.reset(seed=3)
    agent = env.agent_selection
    space = env.observation_space(agent)
    assert space["candidates"].shape == (8, OBSERVATION_SIZE) and space["action_mask"].shape == (8,)
    assert env.action_space(agent).n == 8
    obs = env.observe(agent)
    assert space.contains(obs)
    n = int(obs["action_mask"].sum())
    before = env.game_state.s.copy()
    for bad in (n, 8, -1, 1.5, "0"):
        if bad == n and n == 8:
            continue
        with pytest.raises(IllegalActionError, match="candidates"):
            env.step(bad)
        assert np.array_equal(env.game_state.s, before)
    other = [a for a in env.agents if a != agent][0]
    assert not env.observe(other)["action_mask"].any() and not env.observe(other)["candidates"].any()


def test_a_bad_choice_in_terminate_mode_ends_the_game_with_minus_one():
    env = raw_env("italia", 2, decisions="turn", max_candidates=4, illegal_action="terminate")
    env.reset(seed=3)
    agent = env.agent_selection
    with pytest.warns(UserWarning, match="illegal action"):
        env.step(99)
    assert env.rewards[agent] == -1.0 and all(env.terminations.values())


@pytest.mark.parametrize("bad", [dict(decisions="turns"), dict(decisions="turn", max_candidates=0),
                                 dict(decisions="turn", max_candidates=403), dict(max_candidates=True)])
def test_bad_turn_mode_arguments_name_the_problem(bad):
    with pytest.raises(ValueError, match="decisions|max_candidates"):
        raw_env("italia", 2, **bad)
    with pytest.raises(ValueError, match="decisions|max_candidates"):
        ConcordiaVecEnv(2, "italia", 2, **bad)


def test_atomic_mode_has_no_candidates():
    env = raw_env("italia", 2)
    env.reset(seed=0)
    assert "candidates" not in env.observe(env.agent_selection)
    with pytest.raises(RuntimeError, match="turn-level"):
        env.candidate_actions()


def test_the_batched_turn_mode_plays_the_games_the_aec_turn_mode_plays():
    vec = ConcordiaVecEnv(3, "italia", 2, seed=20, decisions="turn", max_candidates=8)
    obs, masks = vec.reset()
    assert obs.shape == (3, 8, OBSERVATION_SIZE) and masks.shape == (3, 8)
    singles = []
    for i in range(3):
        env = raw_env("italia", 2, decisions="turn", max_candidates=8)
        env.reset(seed=vec.game_seed(i, 0))
        singles.append(env)
    rng = np.random.default_rng(0)
    for _ in range(30):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        for i, env in enumerate(singles):
            o = env.observe(env.agent_selection)
            np.testing.assert_array_equal(o["candidates"], obs[i])
            assert vec.candidate_actions(i) == env.candidate_actions()
        # an illegal choice anywhere: nothing is stepped
        bad = acts.copy()
        bad[2] = 8
        before = vec.states.copy()
        with pytest.raises(IllegalActionError, match="game 2"):
            vec.step(bad)
        assert np.array_equal(vec.states, before)
        obs, masks, rewards, dones, infos = vec.step(acts)
        for i, env in enumerate(singles):
            env.step(int(acts[i]))
            assert np.array_equal(env.game_state.s, vec.states[i]) or dones[i]
        if dones.any():
            break


def test_turn_ends_of_a_played_game_are_its_turns_seen_by_their_players():
    st = new_game("italia", 2, seed=8)
    actions = []
    rng = np.random.default_rng(1)
    for _ in range(12):  # twelve whole turns, each a random candidate
        turns = whole_turns(st)
        t = turns[int(rng.integers(len(turns)))]
        for a in t.actions:
            st.apply(a)
        actions += t.actions
    ends = turn_ends(new_game("italia", 2, seed=8), actions)
    assert len(ends) == 12
    assert [seat for seat, _ in ends] == [k % 2 for k in range(12)]
    with pytest.raises(ValueError, match="illegal"):
        turn_ends(new_game("italia", 2, seed=8), [401])
