"""state_from_observation: an observation rebuilds a state that agrees with it exactly.

Over random games on every map and player count, at every decision: the state
rebuilt from the deciding seat's observation encodes back to that observation,
has the same legal actions and breaks no rule invariant; rebuilt from any other
seat's observation it encodes back too and names the right (relative) deciding
seat. The rebuilt deck holds the same cards as the real one, stacked deck I
before II and so on. Malformed vectors are refused with a ValueError naming the
problem.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env.board import deck_card_ids
from concordia_env.decoding import state_from_observation
from concordia_env.encoding import OBSERVATION_LAYOUT, OBSERVATION_SIZE, observation
from concordia_env.state import new_game
from concordia_env.validation import check_invariants

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]
DECISION_PHASES = frozenset(E.PHASE_NAMES) - {"game over"}
# Rebuilding costs ~2 ms, so not every decision is rebuilt: the deciding seat's observation at
# every STRIDE-th decision and at every decision of the rarer phases, another seat's at every
# OTHER_STRIDE-th. Per combo at least MIN_GAMES games and MIN_CHECKED rebuilt decisions
# (6 combos: over 3,600 decisions, plus the other seats), more games until every decision
# phase has been rebuilt.
STRIDE, OTHER_STRIDE = 2, 3
ALWAYS = frozenset({"Tribunus: colonist to Roma", "Colonus", "pay '?' with a good", "storehouse full: keep goods",
                    "buy cards", "Diplomat: choose card to copy"})
MIN_GAMES, MAX_GAMES, MIN_CHECKED = 2, 12, 600


def deck_position_of_card(state) -> dict[int, int]:
    """card id -> index of its stacked deck (0 for deck I, 1 for II, ...) in this player count."""
    ids = deck_card_ids(state.game.components)
    decks = state.game.components.decks_per_player_count[state.num_players]
    return {cid: k for k, d in enumerate(decks) for cid in ids[d]}


def remaining_deck(state) -> list[int]:
    s = state.s
    return s[E.O_DECK + int(s[E.O_DECK_POS]):E.O_DECK + int(s[E.O_DECK_LEN])].tolist()


def card_types(state, ids) -> Counter:
    return Counter(int(state.game.tables[E.T_CARD_TYPE + cid]) for cid in ids)


def check_deck(real, rebuilt) -> None:
    """The rebuilt deck: the real remaining cards (by type), stacked in deck order."""
    rest = remaining_deck(rebuilt)
    assert card_types(rebuilt, rest) == card_types(real, remaining_deck(real))
    assert int(rebuilt.s[E.O_DECK_LEN]) == int(real.s[E.O_DECK_LEN])
    block = deck_position_of_card(rebuilt)
    order = [block[cid] for cid in rest]
    assert order == sorted(order), f"rebuilt deck breaks the stacking of decks I, II, ...: {order}"
    # the real deck obeys the same stacking, so the check above is not vacuous
    real_order = [block[cid] for cid in remaining_deck(real)]
    assert real_order == sorted(real_order)
    # every card id appears once among the drawn, displayed and remaining cards
    deck = rebuilt.s[E.O_DECK:E.O_DECK + int(rebuilt.s[E.O_DECK_LEN])].tolist()
    assert len(set(deck)) == len(deck) and set(deck) == set(block)


def check_rebuild(real, observer: int) -> None:
    """Rebuild from ``observer``'s observation and compare with the real state."""
    n = real.num_players
    obs = observation(real, observer)
    rebuilt = state_from_observation(obs)
    assert rebuilt.num_players == n and rebuilt.game is real.game
    np.testing.assert_array_equal(observation(rebuilt, 0), obs)
    assert rebuilt.phase == real.phase
    assert rebuilt.current_player == (real.current_player - observer) % n
    assert rebuilt.active_player == (real.active_player - observer) % n
    if observer == real.current_player:
        assert rebuilt.current_player == 0
        np.testing.assert_array_equal(rebuilt.legal_action_mask(), real.legal_action_mask())
    assert check_invariants(rebuilt) == []
    # VP are in the observation, but check the rebuilt scores the way agents read them
    assert rebuilt.scores() == [real.scores()[(observer + k) % n] for k in range(n)]
    check_deck(real, rebuilt)


def check_game_over(real) -> None:
    n = real.num_players
    sc = real.scores()
    for observer in range(n):
        obs = observation(real, observer)
        rebuilt = state_from_observation(obs)
        assert rebuilt.is_terminal() and rebuilt.phase_name == "game over"
        assert rebuilt.current_player == -1 and rebuilt.legal_actions() == []
        np.testing.assert_array_equal(observation(rebuilt, 0), obs)
        assert rebuilt.scores() == [sc[(observer + k) % n] for k in range(n)]
        assert (rebuilt.winner() - (real.winner() - observer)) % n == 0
        assert check_invariants(rebuilt) == []
        check_deck(real, rebuilt)


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_rebuild_at_the_decisions_of_random_games(map_name, n):
    phases: Counter = Counter()  # rebuilt decisions (deciding seat) by phase
    checked = games = 0
    for seed in range(MAX_GAMES):
        if games >= MIN_GAMES and checked >= MIN_CHECKED and set(phases) >= DECISION_PHASES:
            break
        # every other game with the intermediate-scoring variant (its own fields in the observation)
        st = new_game(map_name, n, seed, intermediate_scoring=bool(seed % 2))
        rng = random.Random(1000 + seed)
        step = 0
        while not st.is_terminal():
            p = st.current_player
            if step % STRIDE == 0 or st.phase_name in ALWAYS:
                check_rebuild(st, p)
                phases[st.phase_name] += 1
                checked += 1
            if step % OTHER_STRIDE == 0:  # a non-deciding seat, cycling through all of them
                check_rebuild(st, (p + 1 + (step // OTHER_STRIDE) % (n - 1)) % n)
            step += 1
            st.apply(rng.choice(st.legal_actions()))
        check_game_over(st)
        games += 1
    assert checked >= MIN_CHECKED
    assert set(phases) >= DECISION_PHASES, f"phases never rebuilt: {sorted(DECISION_PHASES - set(phases))}"


def test_rebuild_from_the_first_decision_and_a_fresh_game():
    for map_name, n in COMBOS:
        st = new_game(map_name, n, seed=7)
        for observer in range(n):
            check_rebuild(st, observer)


def test_rebuilt_state_plays_on_like_the_real_one_within_the_turn():
    """Within the observer's turn the rebuilt state is exact: the same actions lead to the
    same observations (the deck order only matters once cards are drawn)."""
    st = new_game("imperium", 4, seed=3)
    rng = random.Random(3)
    checked = 0
    while not st.is_terminal() and checked < 200:
        p = st.current_player
        rebuilt = state_from_observation(observation(st, p))
        if st.phase_name not in ("play a card", "buy cards", "pay '?' with a good"):
            a = rng.choice(st.legal_actions())
            real_after, rebuilt_after = st.clone(), rebuilt.clone()
            real_after.apply(a)
            rebuilt_after.apply(a)
            if real_after.current_player == p and real_after.phase == st.phase:
                np.testing.assert_array_equal(observation(rebuilt_after, 0), observation(real_after, p))
                checked += 1
        st.apply(rng.choice(st.legal_actions()))
    assert checked >= 50


# ---------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def good_obs() -> np.ndarray:
    st = new_game("imperium", 4, seed=0)
    rng = random.Random(0)
    for _ in range(150):
        st.apply(rng.choice(st.legal_actions()))
    obs = observation(st, st.current_player)
    state_from_observation(obs)  # well-formed
    return obs


def _with(obs: np.ndarray, block: str, values) -> np.ndarray:
    out = obs.copy()
    out[OBSERVATION_LAYOUT[block]] = values
    return out


def _raises(obs, *fragments) -> str:
    with pytest.raises(ValueError) as info:
        state_from_observation(obs)
    msg = str(info.value)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)
    return msg


def test_wrong_shape_is_refused(good_obs):
    _raises(good_obs[:-1], "shape", f"({OBSERVATION_SIZE},)", f"({OBSERVATION_SIZE - 1},)")
    _raises(np.append(good_obs, 0.0), "shape", f"({OBSERVATION_SIZE + 1},)")
    _raises(good_obs[None, :], "shape", f"(1, {OBSERVATION_SIZE})")
    _raises(np.zeros(0, np.float32), "shape")


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_values_are_refused(good_obs, value):
    obs = good_obs.copy()
    obs[OBSERVATION_LAYOUT["coins"].start] = value
    _raises(obs, "non-negative whole numbers")


def test_negative_values_are_refused(good_obs):
    obs = good_obs.copy()
    obs[OBSERVATION_LAYOUT["goods"].start] = -1
    _raises(obs, "non-negative whole numbers")


def test_non_integer_values_are_refused(good_obs):
    obs = good_obs.copy()
    obs[OBSERVATION_LAYOUT["coins"].start] += 0.5
    _raises(obs, "whole numbers")
    # a scaled observation (e.g. a normalising wrapper's output) is refused the same way
    _raises(good_obs / 7.0, "whole numbers", "scaled")


def test_map_block_must_be_one_hot(good_obs):
    k = OBSERVATION_LAYOUT["map"].stop - OBSERVATION_LAYOUT["map"].start
    assert k >= 2
    _raises(_with(good_obs, "map", 0), "'map'", "one-hot")  # no map
    _raises(_with(good_obs, "map", 1), "'map'", "one-hot")  # every map
    _raises(_with(good_obs, "map", [2] + [0] * (k - 1)), "'map'", "one-hot")  # not a flag


@pytest.mark.parametrize("present", [[0, 0, 0, 0, 0], [1, 0, 0, 0, 0], [1, 0, 1, 1, 0], [0, 1, 1, 1, 1]])
def test_seat_present_block_must_list_two_or_more_leading_seats(good_obs, present):
    _raises(_with(good_obs, "seat_present", present), "'seat_present'", "malformed", str(present))


def test_inconsistent_cards_are_refused(good_obs):
    # more cards of a type in the deck than the game holds
    deck = good_obs[OBSERVATION_LAYOUT["deck_cards"]].copy()
    deck[int(np.argmax(deck))] += 40
    _raises(_with(good_obs, "deck_cards", deck), "'deck_cards'")
    # a display card whose price no card of that type has
    price = good_obs[OBSERVATION_LAYOUT["display_price"]].copy().reshape(E.NDISP, E.NG)
    price[0, :] += 5
    _raises(_with(good_obs, "display_price", price.ravel()), "display position 1")


def test_too_many_colonists_are_refused(good_obs):
    cols = good_obs[OBSERVATION_LAYOUT["city_colonists"]].copy().reshape(E.NC, E.MAXP, 2)
    cols[0, 1, 0] = 4  # four land colonists of seat 1 in Roma
    _raises(_with(good_obs, "city_colonists", cols.ravel()), "land colonists of seat 1")
