"""Saved states and observations under faults: bounds, card ownership, deck order, hostile input.

* real games (random and heuristic play, every map and player count) never trip a check,
  and every state they pass through encodes inside the observation space;
* the fields the rules leave open (turn, sestertii, intermediate score) and the goods
  waiting for an overflow choice are bounded: a state at a bound is accepted, one past it
  refused with a message naming the field;
* starting cards stay with their player and the cards still to draw keep the decks' order;
* ``GameState.from_json`` turns what ``json`` raises on hostile text (deep nesting, non-UTF-8
  bytes, over-long integers) into a ``ValueError`` naming the document;
* ``state_from_observation`` refuses out-of-bound values before any work proportional to them;
* a model zip whose ``data`` is not a JSON object is refused with a ``ValueError``;
* a hypothesis property: random edits of saved states (extremes included) are either refused
  with ``ValueError`` or load, encode inside the observation space and play out to the end
  with every invariant intact.
"""

from __future__ import annotations

import json
import random
import zipfile

import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.policy import read_model_data
from concordia_env.decoding import state_from_observation
from concordia_env.encoding import OBSERVATION_LAYOUT, observation, observation_bounds
from concordia_env.scenario import play_random
from concordia_env.state import GameState
from concordia_env.validation import LOAD_LIMITS, MAX_BONUS_GOODS, MAX_COINS, MAX_SCORE, MAX_TURN, check_invariants

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]
INT32_MIN, INT32_MAX = -2**31, 2**31 - 1


def space(state) -> spaces.Box:
    low, high = observation_bounds(state.game.tables)
    return spaces.Box(low, high, dtype=np.float32)


def assert_encodes_inside(state) -> None:
    box = space(state)
    for seat in range(state.num_players):
        obs = observation(state, seat)
        assert box.contains(obs), [name for name, sl in OBSERVATION_LAYOUT.items()
                                   if not box.contains(_patched(box, obs, sl))]


def _patched(box, obs, sl):
    """``obs`` with everything outside slice ``sl`` set to the low bound (to name the bad block)."""
    out = box.low.copy()
    out[sl] = obs[sl]
    return out


def refused(fn, *needles) -> str:
    with pytest.raises(ValueError) as info:
        fn()
    msg = str(info.value)
    for nd in needles:
        assert nd in msg, (nd, msg)
    return msg


def one(state, *needles) -> list[str]:
    msgs = check_invariants(state)
    assert any(all(nd in m for nd in needles) for m in msgs), (needles, msgs)
    return msgs


def find(pred, map_name="imperium", n=5, seeds=range(200)) -> GameState:
    for seed in seeds:
        s = ce.new_game(map_name, n, seed)
        rng = random.Random(seed)
        while not s.is_terminal():
            if pred(s):
                return s
            s.apply(rng.choice(s.legal_actions()))
    raise AssertionError("no such position found")


# ------------------------------------------------------------------ real games
@pytest.mark.parametrize("map_name,n", COMBOS)
def test_random_and_heuristic_games_never_trip_the_checks(map_name, n):
    """Two random and two heuristic games per combination (one of each with intermediate
    scoring): invariants after every action, the observation space every few actions."""
    for agent in ("random", "heuristic"):
        for seed in (1, 2):
            state = ce.new_game(map_name, n, seed, intermediate_scoring=seed == 2)
            heuristic, rng = HeuristicAgent(seed), random.Random(seed)
            steps = 0
            while not state.is_terminal():
                p = state.current_player
                if agent == "random":
                    a = rng.choice(state.legal_actions())
                else:
                    a = heuristic.act(observation(state, p), state.legal_action_mask(), state)
                state.apply(a)
                steps += 1
                assert check_invariants(state) == [], (agent, map_name, n, seed, steps)
                if steps % 7 == 0:
                    assert_encodes_inside(state)
            assert_encodes_inside(state)
            assert int(state.field("turn")) < LOAD_LIMITS["turn"]
            assert int(state.field("coins").max()) < LOAD_LIMITS["coins"]


# ------------------------------------------------------------------ bounds
def test_turn_bound():
    s = ce.new_game("imperium", 4, 1)
    s.field("turn")[()] = MAX_TURN
    assert check_invariants(s) == []
    s.field("turn")[()] = MAX_TURN + 1
    one(s, "'turn'", str(MAX_TURN + 1), f"0..{MAX_TURN}")
    s.field("turn")[()] = INT32_MAX
    one(s, "'turn'", str(INT32_MAX))


def test_coins_bound():
    s = ce.new_game("italia", 3, 1)
    s.field("coins")[1] = MAX_COINS
    assert check_invariants(s) == []
    assert_encodes_inside(s)
    s.field("coins")[1] = MAX_COINS + 1
    one(s, "'coins'", "player 1", str(MAX_COINS + 1), str(MAX_COINS))


def test_intermediate_score_bound():
    s = ce.new_game("imperium", 3, 1, intermediate_scoring=True)
    s.field("inter_done")[2] = 1
    s.field("inter_score")[2] = MAX_SCORE
    assert check_invariants(s) == []
    assert_encodes_inside(s)
    s.field("inter_score")[2] = MAX_SCORE + 1
    one(s, "'inter_score'", "player 2", str(MAX_SCORE + 1), str(MAX_SCORE))


def _keep_state(other_than_active: bool) -> GameState:
    return find(lambda st: st.phase == E.PH_KEEP
                and (int(st.field("ctx_keep_player")) != st.active_player) == other_than_active)


def _houses_of(state, player, good) -> int:
    m = state.game.map
    return sum(1 for c in range(1, m.num_cities)
               if int(state.field("city_good")[c]) == good and (int(state.field("houses")[c]) >> player) & 1)


def test_incoming_goods_bounded_by_houses_and_bonus():
    s = _keep_state(False)
    x = int(s.field("ctx_keep_player"))
    assert x == s.active_player
    g = int(np.argmax(s.field("incoming")[x]))
    top = _houses_of(s, x, g) + MAX_BONUS_GOODS
    s.field("incoming")[x, g] = top
    assert check_invariants(s) == []
    assert_encodes_inside(s)
    s.field("incoming")[x, g] = top + 1
    one(s, "'incoming'", f"player {x}", "more than production can bring")
    s.field("incoming")[x, g] = 10**6  # an absurd count: refused, not encoded past the bound
    one(s, "'incoming'", f"player {x}", "1000000")


def test_incoming_goods_of_a_player_not_active_have_no_bonus():
    s = _keep_state(True)
    x = int(s.field("ctx_keep_player"))
    g = int(np.argmax(s.field("incoming")[x]))
    s.field("incoming")[x, g] = _houses_of(s, x, g) + 1
    one(s, "'incoming'", f"player {x}", "more than production can bring")


def test_goods_already_stored_before_the_deciding_player():
    s = _keep_state(True)
    p, x = s.active_player, int(s.field("ctx_keep_player"))
    # the active player's goods were stored first: none of theirs may still wait (one good is
    # within the active player's production bound whatever their houses: the bonus)
    s.field("incoming")[p, 0] = 1
    one(s, "'incoming'", f"player {p}", f"player {x} is choosing")


def test_load_limits_leave_room_to_play_on():
    state = play_random(ce.new_game("imperium", 4, 3), 40, 3)
    for name, limit in LOAD_LIMITS.items():
        doc = json.loads(state.to_json())
        if name == "coins":
            doc[name][1] = limit
        else:
            doc[name] = limit
        back = GameState.from_json(json.dumps(doc))
        play_random(back, 200, 0)
        assert check_invariants(back) == []
        if name == "coins":
            doc[name][1] = limit + 1
        else:
            doc[name] = limit + 1
        refused(lambda d=doc: GameState.from_json(json.dumps(d)), f"field '{name}'", str(limit + 1), "loaded state")
        # past the invariants' bound the invariant's own message says it
        big = (MAX_COINS if name == "coins" else MAX_TURN) + 1
        if name == "coins":
            doc[name][1] = big
        else:
            doc[name] = big
        refused(lambda d=doc: GameState.from_json(json.dumps(d)), f"'{name}'", str(big))


# ------------------------------------------------------------------ cards
def test_starting_cards_stay_with_their_player():
    s = ce.new_game("imperium", 4, 1)
    comp = s.game.components
    pra = comp.card_type_index("Praefectus")
    s.field("hand")[0, pra] -= 1
    s.field("hand")[1, pra] += 1  # conserved in total and per type, but player 0's card moved
    msgs = one(s, "player 0", "Praefectus", "started with 2")
    assert not any("not conserved" in m for m in msgs)
    s = ce.new_game("italia", 2, 1)
    dip = comp.card_type_index("Diplomat (Jupiter)")
    s.field("hand")[1, dip] -= 1
    s.field("hand")[0, dip] += 1
    one(s, "player 1", "Diplomat (Jupiter)", "started with 1")


def test_bought_cards_may_sit_with_any_buyer():
    # a bought card is indistinguishable from another player's purchase: only totals are kept
    s = find(lambda st: st.phase == E.PH_PLAY and any(
        st.field("hand")[q].sum() + st.field("discard")[q].sum() > 7 for q in range(st.num_players)),
        "imperium", 4, seeds=range(5))
    q = next(q for q in range(4) if s.field("hand")[q].sum() + s.field("discard")[q].sum() > 7)
    start = np.bincount(np.asarray(s.game.components.starting_hand), minlength=E.NT)
    t = next(t for t in range(E.NT) if s.field("hand")[q, t] > start[t])
    r = (q + 1) % 4
    s.field("hand")[q, t] -= 1
    s.field("hand")[r, t] += 1
    assert check_invariants(s) == []


def test_cards_still_to_draw_keep_the_deck_order():
    s = ce.new_game("imperium", 5, 2)  # decks I..V, 30 cards; 7 drawn from deck I
    deck = s.field("deck")
    # swapping two undrawn cards of one deck is fine (each deck is shuffled) ...
    deck[9], deck[10] = int(deck[10]), int(deck[9])  # both deck II (positions 8..14)
    assert check_invariants(s) == []
    # ... across decks it is not: a deck-V card above the rest of deck IV
    deck[25], deck[29] = int(deck[29]), int(deck[25])
    one(s, "'deck'", "deck V", "deck IV", "stacked")
    # the drawn part keeps no order (the display and bought cards came off the top)
    s = ce.new_game("imperium", 5, 2)
    deck = s.field("deck")
    deck[0], deck[6] = int(deck[6]), int(deck[0])
    assert check_invariants(s) == []


# ------------------------------------------------------------------ from_json
def test_deep_nesting_is_a_value_error_naming_the_document():
    text = "[" * 200_000 + "]" * 200_000
    refused(lambda: GameState.from_json(text), "nested", "recursion")
    refused(lambda: GameState.from_json(text, source="saves/game.json"), "saves/game.json", "nested")
    doc = json.loads(ce.new_game("italia", 2, 0).to_json())
    deep: list = []
    for _ in range(400):  # inside json's limit: the shape checks refuse it without repr
        deep = [deep]
    doc["turn"] = deep
    refused(lambda: GameState.from_json(json.dumps(doc)), "'turn'", "must be an int", "list")


def test_non_utf8_bytes_are_a_value_error_naming_the_document():
    good = ce.new_game("italia", 3, 0).to_json()
    assert GameState.from_json(good.encode("utf-8")) == GameState.from_json(good)
    bad = good.encode("utf-8").replace(b'"italia"', b'"ital\xffia"')
    refused(lambda: GameState.from_json(bad, source="g.json"), "g.json", "not UTF-8")
    refused(lambda: GameState.from_json(b"\xfe\xff\x00{"), "not UTF-8")


def test_over_long_and_huge_integers():
    text = ce.new_game("italia", 3, 0).to_json()
    doc = json.loads(text)
    long_int = text.replace('"turn":0', '"turn":' + "9" * 5000)
    refused(lambda: GameState.from_json(long_int, source="x.json"), "x.json", "digits")
    for value in (2**31, -2**31 - 1, 2**63, 10**4000):
        doc["coins"][0] = value
        msg = refused(lambda: GameState.from_json(json.dumps(doc)), "'coins'[0]", "32-bit")
        assert len(msg) < 300
    doc["coins"][0] = 1e400  # json writes Infinity
    refused(lambda: GameState.from_json(json.dumps(doc)), "'coins'[0]", "float")


def test_messages_stay_short_and_name_the_source():
    doc = json.loads(ce.new_game("italia", 3, 0).to_json())
    for i in range(5000):
        doc[f"junk{i}"] = [[i]]
    msg = refused(lambda: GameState.from_json(json.dumps(doc), source="big.json"),
                  "big.json: invalid Concordia state", "unknown field", "more")
    assert len(msg) < 500
    refused(lambda: GameState.from_json(json.dumps({"format": ["x"] * 10**5}), source="f"), "'format'", "length")


# ------------------------------------------------------------------ decoding
@pytest.fixture(scope="module")
def good_obs() -> np.ndarray:
    state = play_random(ce.new_game("imperium", 4, 5), 120, 5)
    obs = observation(state, state.current_player)
    state_from_observation(obs)
    return obs


def _with(obs, block, index, value):
    out = obs.astype(np.float64)
    out[OBSERVATION_LAYOUT[block].start + index] = value
    return out


@pytest.mark.parametrize("block,value", [("coins", 2**31), ("coins", 1e30), ("turn", 2**40), ("turn", MAX_TURN + 1),
                                         ("intermediate_score", 2**33), ("victory_points", 1e20),
                                         ("hand", 2**31), ("deck_cards", 1e12), ("incoming_goods", 3e9)])
def test_observation_values_out_of_bounds_refused(good_obs, block, value):
    refused(lambda: state_from_observation(_with(good_obs, block, 0, value)), f"'{block}'", "bound")


def test_absurd_colonist_count_refused_at_once(good_obs):
    # refused by the bounds check, before any loop over the count (1e9 colonists would take minutes)
    obs = _with(good_obs, "city_colonists", 2 * 1 + 0, 1e9)  # city 0, seat 1, land
    refused(lambda: state_from_observation(obs), "land colonists of seat 1", "bound 3")


def test_observation_at_the_bounds_decodes():
    s = ce.new_game("italia", 3, 4)
    s.field("turn")[()] = MAX_TURN
    s.field("coins")[:3] = MAX_COINS
    assert check_invariants(s) == []
    for seat in range(3):
        obs = observation(s, seat)
        assert obs[OBSERVATION_LAYOUT["turn"]][0] == MAX_TURN  # exact in float32
        back = state_from_observation(obs)
        assert np.array_equal(observation(back, 0), obs)


def test_contradictory_observation_refused(good_obs):
    refused(lambda: state_from_observation(_with(good_obs, "houses_left", 1, 3)),
            "does not describe a legal state", "houses_left")


def test_observation_of_non_numbers_refused(good_obs):
    refused(lambda: state_from_observation(good_obs.astype(object)), "numbers")
    refused(lambda: state_from_observation(good_obs.astype(str)), "numbers")


# ------------------------------------------------------------------ policy zips
@pytest.mark.parametrize("data,needle", [(b"[1, 2]", "JSON list, not an object"), (b"3", "JSON int"),
                                         (b"null", "JSON NoneType"), (b"[" * 100_000, "nested too deeply"),
                                         (b'{"a": "\xff"}', "not a stable-baselines3 model file"),
                                         (b'{"a": ' + b"9" * 5000 + b"}", "digits")])
def test_model_zip_with_bad_data_member(tmp_path, data, needle):
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data", data)
    msg = refused(lambda: read_model_data(path), str(path), needle)
    assert len(msg) < 600


def test_model_zip_with_corrupt_compressed_data(tmp_path):
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data", json.dumps({"policy_class": {"a": 1}}) * 50)
    raw = bytearray(path.read_bytes())
    start = raw.find(b"PK\x03\x04") + 30 + len("data")  # the compressed bytes
    for i in range(start, start + 16):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    refused(lambda: read_model_data(path), str(path))


# ------------------------------------------------------------------ property: mutated saves
_SNAPSHOTS: dict = {}


def _snapshot(map_name: str, n: int, steps: int) -> str:
    key = (map_name, n, steps)
    if key not in _SNAPSHOTS:
        state = ce.new_game(map_name, n, steps, intermediate_scoring=steps % 2 == 1)
        _SNAPSHOTS[key] = play_random(state, steps, steps).to_json()
    return _SNAPSHOTS[key]


_SHAPES = dict(E.STATE_FIELDS)
EXTREMES = sorted({INT32_MIN, INT32_MIN + 1, -2, -1, 0, 1, 2, 3, 7, 12, 15, 29, 30, 31, 99,
                   MAX_TURN - 1, MAX_TURN, MAX_TURN + 1, MAX_COINS, MAX_SCORE, MAX_SCORE + 1,
                   LOAD_LIMITS["turn"], LOAD_LIMITS["turn"] + 1, LOAD_LIMITS["coins"] - 1,
                   INT32_MAX - 1, INT32_MAX, 2**31, 2**32, -2**31 - 1, 2**63, -2**64})
# fields a mutation often leaves valid (open counters, goods, flags): listed again so that a
# good share of the edited saves loads and is played out, not only refused
SOFT = ["coins", "turn", "inter_score", "goods", "marker_active", "inter_done", "houses_left", "pm"]
FIELDS = st.sampled_from(list(_SHAPES) + SOFT * 4)
SET = st.tuples(st.just("set"), st.one_of(st.sampled_from(EXTREMES), st.integers(-3, 40),
                                          st.integers(0, LOAD_LIMITS["coins"]), st.integers(INT32_MIN, INT32_MAX)))
ADD = st.tuples(st.just("add"), st.integers(-3, 3))
EDITS = st.lists(st.tuples(FIELDS, st.integers(0, 10**6), st.one_of(SET, ADD, ADD)), min_size=1, max_size=3)


def _edit(doc: dict, name: str, where: int, how: tuple[str, int]) -> None:
    """Set (or add to) one int of field ``name``, the one ``where`` picks."""
    shape = _SHAPES[name]
    target, key = doc, name
    for size in shape:
        target, key = target[key], where % size
        where //= size
    target[key] = how[1] if how[0] == "set" else target[key] + how[1]


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(combo=st.sampled_from(COMBOS), steps=st.sampled_from([0, 41, 160, 401, 5000]), edits=EDITS,
       play_seed=st.integers(0, 2**16))
def test_mutated_saves_are_refused_or_play_out_within_the_invariants(combo, steps, edits, play_seed):
    doc = json.loads(_snapshot(*combo, steps))
    for name, where, how in edits:
        _edit(doc, name, where, how)
    try:
        state = GameState.from_json(json.dumps(doc), source="mutated.json")
    except ValueError as exc:
        assert str(exc).startswith("mutated.json: invalid Concordia state: "), exc
        return
    assert check_invariants(state) == []
    assert GameState.from_json(state.to_json()) == state
    assert_encodes_inside(state)
    rng = random.Random(play_seed)
    for _ in range(20_000):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        assert legal, f"no legal action for player {state.current_player} in '{state.phase_name}'"
        state.apply(rng.choice(legal))
        msgs = check_invariants(state)
        assert msgs == [], (edits, msgs)
    assert state.is_terminal(), "the game did not end"
    assert_encodes_inside(state)


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(combo=st.sampled_from(COMBOS), steps=st.sampled_from([0, 41, 160, 401]),
       turn=st.integers(0, LOAD_LIMITS["turn"]), coins=st.lists(st.integers(0, LOAD_LIMITS["coins"]), min_size=5,
                                                                  max_size=5),
       score=st.integers(0, MAX_SCORE), play_seed=st.integers(0, 2**16))
def test_open_counters_anywhere_below_the_load_limits_play_out(combo, steps, turn, coins, score, play_seed):
    """The edits above rarely leave a large counter valid: here turn, every present player's
    sestertii and a scored player's intermediate score take any value up to their limits."""
    doc = json.loads(_snapshot(*combo, steps))
    n = combo[1]
    doc["turn"] = turn
    doc["coins"] = coins[:n] + [0] * (E.MAXP - n)
    done = [q for q in range(n) if doc["inter_done"][q]]
    if doc["intermediate"] and 0 < len(done) < n:
        doc["inter_score"][done[0]] = score
    state = GameState.from_json(json.dumps(doc))
    assert_encodes_inside(state)
    rng = random.Random(play_seed)
    for _ in range(20_000):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
        assert check_invariants(state) == []
    assert state.is_terminal(), "the game did not end"
    assert_encodes_inside(state)


_STATES: dict = {}


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(combo=st.sampled_from(COMBOS), steps=st.sampled_from([0, 41, 160, 401, 5000]), edits=EDITS)
def test_states_check_invariants_accepts_encode_inside_the_space(combo, steps, edits):
    """check_invariants, not only loading: an edited state array it accepts (bounds up to the
    invariants' own, past the load limits) encodes inside the observation space."""
    if (combo, steps) not in _STATES:
        _STATES[combo, steps] = GameState.from_json(_snapshot(*combo, steps))
    state = _STATES[combo, steps].clone()
    for name, where, how in edits:
        view = state.field(name).reshape(-1)
        i = where % view.size
        value = how[1] if how[0] == "set" else int(view[i]) + how[1]
        if not INT32_MIN <= value <= INT32_MAX:
            return  # an int32 array holds no such value: loading refuses it (tested above)
        view[i] = value
    if check_invariants(state) == []:
        state.refresh()
        assert_encodes_inside(state)
