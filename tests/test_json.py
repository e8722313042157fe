"""JSON save/load: exact round trips, and clear errors for corrupt or rule-breaking input."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.scenario import play_random
from concordia_env.state import GameState
from concordia_env.validation import state_from_document

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]


def roundtrip(state: GameState) -> GameState:
    text = state.to_json()
    back = GameState.from_json(text)
    assert back == state
    assert back.game is state.game
    assert np.array_equal(back.legal_action_mask(), state.legal_action_mask())
    assert back.legal_actions() == state.legal_actions()
    assert back.to_json() == text
    assert back.current_player == state.current_player
    assert back.is_terminal() == state.is_terminal()
    return back


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_roundtrip_every_state_of_random_games(map_name, n):
    for seed in range(3):
        state = ce.new_game(map_name, n, seed, intermediate_scoring=seed == 1)
        rng = random.Random(seed)
        roundtrip(state)
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
            roundtrip(state)
        assert roundtrip(state).scores() == state.scores()


def test_restored_state_plays_on_identically():
    state = play_random(ce.new_game("imperium", 4, 11), 150, 11)
    copy = GameState.from_json(state.to_json())
    assert copy.s is not state.s
    rng2 = random.Random(5)
    rng3 = random.Random(5)
    while not state.is_terminal():
        a = rng2.choice(state.legal_actions())
        b = rng3.choice(copy.legal_actions())
        assert a == b
        state.apply(a)
        copy.apply(b)
        assert copy == state
    assert copy.scores() == state.scores() and copy.winner() == state.winner()


def test_document_is_compact_and_complete():
    doc = json.loads(ce.new_game("italia", 3, 0).to_json())
    assert doc["format"] == "concordia-env/state" and doc["version"] == 1 and doc["map"] == "italia"
    assert set(doc) == {"format", "version", "map"} | {name for name, _ in E.STATE_FIELDS}


# ------------------------------------------------------------------ corrupt input
def base_doc(map_name="imperium", n=4, seed=3, steps=40):
    return json.loads(play_random(ce.new_game(map_name, n, seed), steps, seed).to_json())


def rejects(doc_or_text, *needles):
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)
    with pytest.raises(ValueError) as info:
        GameState.from_json(text)
    msg = str(info.value)
    for nd in needles:
        assert nd in msg, (nd, msg)
    return msg


def test_base_doc_loads():
    GameState.from_json(json.dumps(base_doc()))


@pytest.mark.parametrize("text", ["", "{", "not json", "{'a': 1}", "[1, 2", "NaN-ish"])
def test_not_json(text):
    rejects(text, "not valid JSON")


def test_not_a_string():
    with pytest.raises(ValueError, match="not valid JSON"):
        GameState.from_json(None)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [[], 3, "x", None, [1, 2]])
def test_not_an_object(value):
    rejects(json.dumps(value), "expected a JSON object")


def test_wrong_format_tag():
    doc = base_doc()
    doc["format"] = "chess/state"
    rejects(doc, "'format'", "chess/state")
    del doc["format"]
    rejects(doc, "'format'")


@pytest.mark.parametrize("version", [2, 0, "1", 1.0, True, None])
def test_wrong_version(version):
    doc = base_doc()
    doc["version"] = version
    rejects(doc, "'version'")


@pytest.mark.parametrize("name", ["atlantis", "Imperium", "", 3, None])
def test_bad_map_name(name):
    doc = base_doc()
    doc["map"] = name
    rejects(doc, "'map'", "imperium", "italia")


@pytest.mark.parametrize("field", ["coins", "num_players", "deck", "colonist", "ctx_keep_player"])
def test_missing_field(field):
    doc = base_doc()
    del doc[field]
    rejects(doc, "missing field", field)


def test_extra_field():
    doc = base_doc()
    doc["cheat_mode"] = 1
    rejects(doc, "unknown field", "cheat_mode")


@pytest.mark.parametrize("field,value,needle", [
    ("coins", [5, 6, 7], "length 5"),
    ("coins", 5, "must be a list"),
    ("goods", [[1, 1, 1, 1, 1]] * 4, "length 5"),
    ("goods", [[1, 1, 1, 1]] * 5, "'goods'[0] must have length 5"),
    ("num_players", [4], "must be an int"),
    ("deck", list(range(29)), "length 30"),
    ("colonist", [[-1] * 6] * 5 + [[-1] * 6], "length 5"),
])
def test_wrong_shape(field, value, needle):
    doc = base_doc()
    doc[field] = value
    rejects(doc, f"'{field}'", needle)


@pytest.mark.parametrize("field,path,value,tname", [
    ("coins", (1,), 5.0, "float"),
    ("coins", (1,), 5.5, "float"),
    ("phase", (), True, "bool"),
    ("num_players", (), False, "bool"),
    ("goods", (2, 3), "1", "str"),
    ("route_occ", (0,), None, "NoneType"),
    ("hand", (0, 0), [1], "list"),
])
def test_non_int_values(field, path, value, tname):
    doc = base_doc()
    if path:
        target = doc[field]
        for i in path[:-1]:
            target = target[i]
        target[path[-1]] = value
    else:
        doc[field] = value
    rejects(doc, f"'{field}'", "must be an int", tname)


def test_int32_overflow():
    doc = base_doc()
    doc["coins"][0] = 2**40
    rejects(doc, "'coins'[0]", "32-bit")


def test_negative_coins():
    doc = base_doc()
    doc["coins"][2] = -3
    rejects(doc, "field 'coins': player 2 has -3 sestertii")


def test_two_colonists_on_one_route():
    doc = base_doc(steps=0)
    r = 6
    doc["colonist"][0][1] = E.NC + r
    doc["colonist"][1][1] = E.NC + r
    doc["route_occ"][r] = 0
    rejects(doc, "2 colonists", "route 6")


def test_house_in_roma():
    doc = base_doc()
    doc["houses"][0] = 1
    rejects(doc, "houses", "Roma")


def test_storehouse_overflow():
    doc = base_doc(steps=0)
    doc["goods"][1] = [5, 5, 1, 1, 1]
    rejects(doc, "player 1", "storehouse", "12 slots")


def test_card_not_conserved():
    doc = base_doc()
    doc["hand"][0][4] += 1
    rejects(doc, "not conserved")


def test_wrong_num_players_for_map():
    doc = base_doc("italia", 3)
    doc["num_players"] = 5
    rejects(doc, "num_players", "italia")


def test_map_swapped():
    # an Italia state claimed to be Imperium: the city counts disagree
    doc = base_doc("italia", 3)
    doc["map"] = "imperium"
    rejects(doc, "num_cities")


def test_route_occ_inconsistent():
    doc = base_doc(steps=0)
    doc["route_occ"][3] = 1
    rejects(doc, "route_occ", "player 1", "no colonist")


def test_current_inconsistent():
    doc = base_doc(steps=0)
    doc["current"] = (doc["active"] + 1) % 4
    rejects(doc, "'current'")


def test_phase_out_of_range():
    doc = base_doc(steps=0)
    doc["phase"] = 42
    rejects(doc, "'phase'", "42")


def test_hostile_indices_do_not_crash():
    # values that would index out of bounds in the kernel are rejected before it runs
    for field, idx, value in [("active", None, 1000), ("top", 0, 10**6), ("colonist", (0, 0), 10**7),
                              ("display", 0, -5), ("deck_pos", None, 10**5), ("city_good", 1, 99),
                              ("marker_good", 0, -9), ("ctx_keep_player", None, 77),
                              ("num_players", None, -1), ("pm", None, 2**31 - 1)]:
        doc = base_doc(steps=0)
        if idx is None:
            doc[field] = value
        elif isinstance(idx, tuple):
            doc[field][idx[0]][idx[1]] = value
        else:
            doc[field][idx] = value
        rejects(doc, field if field != "marker_good" else "marker")


def test_several_problems_listed_together():
    doc = base_doc()
    doc["coins"][0] = -1
    doc["houses"][0] = 2
    msg = rejects(doc, "coins", "Roma")
    assert msg.startswith("invalid Concordia state: ")


def test_running_game_without_legal_action():
    # paying a Senator's '?' with no good left: every field valid, but no move for the player
    # (a Diplomat with nothing to copy is no such case: 'done' is legal in its choice)
    state = ce.new_game("imperium", 3, 0)
    rng = np.random.default_rng(0)
    while state.phase != E.PH_PAY:
        legal = state.legal_actions()
        state.apply(int(legal[rng.integers(len(legal))]))
    p = state.active_player
    state.field("goods")[p] = 0
    rejects(state.to_json(), "no legal action", f"player {p}")


def test_state_from_document_directly():
    doc = base_doc()
    st = state_from_document(doc)
    assert isinstance(st, GameState) and st.map_name == "imperium"
    with pytest.raises(ValueError):
        state_from_document("a string")


# ------------------------------------------------------------------ fuzzing
_SNAPSHOTS: dict = {}


def _snapshot(map_name: str, n: int, steps: int) -> GameState:
    """A state ``steps`` random actions into a game (cached: hypothesis reuses them)."""
    key = (map_name, n, steps)
    if key not in _SNAPSHOTS:
        _SNAPSHOTS[key] = play_random(ce.new_game(map_name, n, steps), steps, steps)
    return _SNAPSHOTS[key]


_FIELD_LIST = [name for name, _ in E.STATE_FIELDS]


@settings(max_examples=400, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(combo=st.sampled_from(COMBOS), steps=st.sampled_from([0, 37, 150, 400, 2000]),
       edits=st.lists(st.tuples(st.sampled_from(_FIELD_LIST), st.integers(0, 10**6),
                                st.one_of(st.integers(-3, 40), st.integers(-2**31, 2**31 - 1))),
                      min_size=1, max_size=3))
def test_mutated_documents_are_rejected_or_sound(combo, steps, edits):
    """Any in-range integer edit either raises ValueError or gives a sound, playable state."""
    state = _snapshot(*combo, steps)
    doc = json.loads(state.to_json())
    shapes = dict(E.STATE_FIELDS)
    for name, where, value in edits:
        shape = shapes[name]
        if not shape:
            doc[name] = value
            continue
        target = doc[name]
        idx = []
        for size in shape:
            idx.append(where % size)
            where //= size
        for i in idx[:-1]:
            target = target[i]
        target[idx[-1]] = value
    try:
        back = GameState.from_json(json.dumps(doc))
    except ValueError as exc:
        assert str(exc).startswith("invalid Concordia state: ")
        return
    from concordia_env.validation import check_invariants
    assert check_invariants(back) == []
    # an accepted state plays on within the invariants (they are closed under legal play)
    rng = random.Random(steps)
    for _ in range(300):
        if back.is_terminal():
            break
        legal = back.legal_actions()
        assert legal
        back.apply(rng.choice(legal))
        assert check_invariants(back) == []


def test_negative_bitmasks_rejected_without_hanging():
    # regression: a negative ctx_bought in a Mercator once made the checker loop forever
    state = ce.new_game("italia", 2, 0)
    state.apply(E.A_PLAY + 3)  # Mercator (3)
    assert state.phase == E.PH_MERCATOR
    for field in ("ctx_bought", "ctx_sold", "ctx_bought_pos", "houses"):
        doc = json.loads(state.to_json())
        if field == "houses":
            doc[field][3] = -1
        else:
            doc[field] = -1
        rejects(doc, field)
