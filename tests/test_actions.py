"""The action space: the table in actions.py against the kernel, readable names for every
id, and IllegalActionError for anything not legal."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys

import numpy as np
import pytest

from concordia_env import actions, new_game
from concordia_env import engine as E
from concordia_env import scenario as sc
from concordia_env.state import IllegalActionError

SIZES = {"play": E.NT, "done": 1, "copy": E.NCOPY, "move": E.NMOVE, "build": E.NC, "produce": E.NPV,
         "cash bonus": 1, "sell": E.NG, "buy good": E.NG, "place colonist": 2 * E.NC, "colonus cash": 1,
         "buy card": E.NDISP, "pay": E.NG, "keep": E.NG}
FIRST = {"play": E.A_PLAY, "done": E.A_DONE, "copy": E.A_COPY, "move": E.A_MOVE, "build": E.A_BUILD,
         "produce": E.A_PRODUCE, "cash bonus": E.A_CASH, "sell": E.A_SELL, "buy good": E.A_BUYGOOD,
         "place colonist": E.A_PLACE, "colonus cash": E.A_COLONUS_CASH, "buy card": E.A_BUYCARD,
         "pay": E.A_PAY, "keep": E.A_KEEP}


def test_table_is_contiguous_and_matches_the_kernel():
    table = actions.ACTION_TABLE
    assert table[0][0] == 0 and table[-1][1] == E.NUM_ACTIONS - 1
    for (_, hi, _), (lo, _, _) in zip(table, table[1:]):
        assert lo == hi + 1
    assert [name for _, _, name in table] == list(SIZES)
    for lo, hi, name in table:
        assert lo == FIRST[name] and hi - lo + 1 == SIZES[name], name
    for a in range(E.NUM_ACTIONS):
        lo, hi, name = next(row for row in table if row[0] <= a <= row[1])
        assert actions.action_range(a) == name
    for bad in (-1, E.NUM_ACTIONS):
        with pytest.raises(ValueError):
            actions.action_range(bad)


def test_docstring_table_matches():
    rows = []
    for line in actions.__doc__.splitlines():
        m = re.match(r"^(\d+)(?: – (\d+))?\s+(\S+(?: \S+)*)\s{2,}", line)
        if m:
            lo = int(m.group(1))
            rows.append((lo, int(m.group(2) or lo), m.group(3)))
    assert rows == list(actions.ACTION_TABLE)


def test_move_ids_round_trip():
    seen = set()
    for slot in range(E.NCOL):
        for r in (range(E.NL) if slot < 3 else range(E.NL, E.NR)):
            a = E.move_action(slot, r)
            assert E.A_MOVE <= a < E.A_BUILD and E.decode_move(a) == (slot, r)
            seen.add(a)
    assert seen == set(range(E.A_MOVE, E.A_BUILD))


def _states_of_every_phase():
    """States covering every decision phase, from random play plus two set-up positions."""
    found = {}
    for m, n in (("imperium", 5), ("italia", 2)):
        for seed in range(6):
            st = new_game(m, n, seed)
            rng = random.Random(seed)
            while not st.is_terminal():
                found.setdefault((m, st.phase), st.clone())
                st.apply(rng.choice(st.legal_actions()))
            found.setdefault((m, st.phase), st.clone())
    pay = new_game("imperium", 4, 0)
    sc.set_turn(pay, 0)
    sc.set_display(pay, ["Mason", "Farmer"])
    sc.set_goods(pay, 0, brick=2, food=2)
    sc.act(pay, "play", "Senator")
    sc.act(pay, "buy card", 2)
    keep = new_game("imperium", 4, 0)
    sc.set_turn(keep, 0)
    sc.give_pm(keep, 0)
    sc.set_city_good(keep, "Tomis", "food")
    sc.set_marker(keep, "Dacia", True, good="tools")
    sc.add_house(keep, 0, "Tomis")
    sc.set_goods(keep, 0, brick=6)
    sc.act(keep, "play", "Praefectus")
    sc.act(keep, "produce", "Dacia")
    found["pay"], found["keep"] = pay, keep
    return found


@pytest.fixture(scope="module")
def phase_states():
    return _states_of_every_phase()


def test_states_cover_every_phase(phase_states):
    assert {st.phase for st in phase_states.values()} == set(range(len(E.PHASE_NAMES)))


def test_every_id_has_a_name_in_every_phase(phase_states):
    for st in phase_states.values():
        before = st.s.copy()
        for a in range(E.NUM_ACTIONS):
            text = st.action_to_string(a)
            assert isinstance(text, str) and text, (st.phase_name, a)
        names = [st.action_to_string(a) for a in st.legal_actions()]
        assert len(set(names)) == len(names), f"two legal actions share a name: {sorted(names)}"
        assert np.array_equal(st.s, before)


def _assert_rejected(st, action, *fragments):
    before, mask, legal = st.s.copy(), st._mask.copy(), st.legal_actions()
    with pytest.raises(IllegalActionError) as err:
        st.apply(action)
    e = err.value
    assert isinstance(e, ValueError)
    assert e.player == st.current_player and e.phase == st.phase_name
    message = str(e)
    for frag in (f"player {st.current_player}", st.phase_name, *fragments):
        assert frag in message, (frag, message)
    assert np.array_equal(st.s, before) and np.array_equal(st._mask, mask) and st.legal_actions() == legal
    return e


def test_illegal_actions_are_rejected_and_change_nothing(phase_states):
    for st in phase_states.values():
        if st.is_terminal():
            continue
        illegal = [a for a in range(E.NUM_ACTIONS) if not st._mask[a]]
        for a in illegal[:: max(1, len(illegal) // 25)]:
            e = _assert_rejected(st, a, f"illegal action {a}", st.action_to_string(a))
            assert e.action == a
        for a in (-1, E.NUM_ACTIONS, 10**12):
            assert _assert_rejected(st, a, f"illegal action {a}", "ids run from 0").action == a


@pytest.mark.parametrize("action", ["3", 3.0, None, True, np.float64(0), [0]])
def test_non_int_actions_are_rejected(action):
    st = new_game("imperium", 3, 0)
    e = _assert_rejected(st, action, repr(action), "must be an int")
    assert e.action is action


def test_numpy_ints_are_accepted():
    st = new_game("imperium", 3, 0)
    st.apply(np.int64(st.legal_actions()[0]))
    st.apply(np.int32(st.legal_actions()[0]))


def test_nothing_is_legal_after_the_end(phase_states):
    over = [st for st in phase_states.values() if st.is_terminal()]
    assert over
    for st in over:
        assert st.legal_actions() == [] and st.current_player == -1
        _assert_rejected(st, E.A_DONE, "the game is over")


def test_names_of_actions_the_map_lacks_say_so():
    """One action space serves both maps: ids for routes, cities or provinces a map lacks are
    named as absent there, not after whatever the padding of the tables holds."""
    italia, imperium = new_game("italia", 2, seed=0), new_game("imperium", 4, seed=0)
    assert italia.action_to_string(259) == "Architectus: move sea colonist 3 to sea route 70 (no such route on Italia)"
    assert italia.action_to_string(298) == "Architectus: build in city 30 (no such city on Italia)"
    assert italia.action_to_string(E.A_PRODUCE + 11) == "Praefectus: produce in province 11 (no such province on Italia)"
    assert italia.action_to_string(E.A_PLACE + 30) == "Colonus: new land colonist in city 30 (no such city on Italia)"
    assert italia.action_to_string(E.A_PLACE + E.NC + 30) == "Colonus: new sea colonist in city 30 (no such city on Italia)"
    assert italia.action_to_string(E.A_BUILD) == "Architectus: build in Roma (never legal: Roma takes no houses)"
    assert imperium.action_to_string(259) == "Architectus: move sea colonist 3 storehouse→(Dyrrhachium–Syracusae), cost -"
    assert imperium.action_to_string(298) == "Architectus: build in Memphis (brick), cost 1 sestertii + food"
    assert "no such" not in imperium.action_to_string(E.A_PRODUCE + 11)
    for st in (italia, imperium):  # exactly the ids of absent things are so named
        m = st.game.map
        absent_routes = [r for r in range(E.NR) if (r < E.NL and r >= len(m.land_routes))
                         or (r >= E.NL and r - E.NL >= len(m.sea_routes))]
        named = {a for a in range(E.NUM_ACTIONS) if "(no such" in st.action_to_string(a)}
        moves = {E.move_action(slot, r) for r in absent_routes for slot in (range(3) if r < E.NL else range(3, 6))}
        cities = {base + c for c in range(m.num_cities, E.NC) for base in (E.A_BUILD, E.A_PLACE, E.A_PLACE + E.NC)}
        provinces = {E.A_PRODUCE + q for q in range(len(m.province_names), E.NPV)}
        assert named == moves | cities | provinces


def test_legal_actions_are_counted_exactly_without_the_compiler():
    """More than 127 legal actions (an Architectus with six colonists out): the count must not
    wrap in the pure-Python engine (NUMBA_DISABLE_JIT=1), which users debug with."""
    script = """
import numpy as np
from concordia_env import engine as E, new_game, scenario as sc
st = new_game("imperium", 4, seed=0)
sc.set_turn(st, 0)
sc.set_colonists(st, 0, land=["Roma", "Byzantium", "Alexandria"], sea=["Roma", "Carthago", "Massilia"])
sc.act(st, "play", "Architectus")
mask = np.zeros(E.NUM_ACTIONS, np.int8)
s = st.s.copy()
print(int(E.legal_mask(s, st.game.tables, mask)), int(mask.sum()), int(E.random_playout(s, st.game.tables, mask, 1, 20)))
"""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    count, total, steps = map(int, out.stdout.split())
    assert count == total > 127 and steps == 20
