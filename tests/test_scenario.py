"""scenario.py: setters keep derived fields right, validate by name, restore on error,
and refresh the legal mask."""

from __future__ import annotations

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env import new_game
from concordia_env import scenario as sc


@pytest.fixture
def st():
    state = new_game("imperium", 4, seed=0)
    sc.set_turn(state, 0)
    return state


@pytest.mark.parametrize("call, message", [
    (lambda s: sc.set_city_good(s, "Atlantis", "wine"), "unknown city 'Atlantis'"),
    (lambda s: sc.set_city_good(s, "Novaria", "gold"), "unknown good 'gold'"),
    (lambda s: sc.set_city_good(s, "Roma", "wine"), "Roma"),
    (lambda s: sc.add_house(s, 4, "Novaria"), "unknown player 4"),
    (lambda s: sc.add_house(s, 0, "Roma"), "Roma"),
    (lambda s: sc.set_goods(s, 0, gold=1), "unknown good 'gold'"),
    (lambda s: sc.set_goods(s, 0, brick=9), "storehouse would hold 13"),
    (lambda s: sc.set_goods(s, 0, brick=-1), "non-negative"),
    (lambda s: sc.set_coins(s, -1, 3), "unknown player -1"),
    (lambda s: sc.set_hand(s, 0, {"Emperor": 1}), "unknown card 'Emperor'"),
    (lambda s: sc.set_discard(s, 0, ["Tribunus", "Jester"]), "unknown card 'Jester'"),
    (lambda s: sc.set_marker(s, "Atlantis", True), "unknown province 'Atlantis'"),
    (lambda s: sc.place_colonist(s, 0, "air", "Roma"), "unknown colonist kind 'air'"),
    (lambda s: sc.place_colonist(s, 0, "sea", ("Aquileia", "Vindobona")), "unknown sea route"),
    (lambda s: sc.place_colonist(s, 0, "sea", "Novaria"), "no sea route touches it"),
    (lambda s: sc.set_colonists(s, 0, land=["Roma"] * 4), "only 3 land colonists"),
    (lambda s: sc.set_display(s, ["Mason", "Mason"]), "no card 'Mason' left in the decks 4 players use"),
    (lambda s: sc.set_display(s, ["Tribunus"]), "no card 'Tribunus' left"),
    (lambda s: sc.set_display(s, ["Diplomat (Mars)"]), "no card 'Diplomat \\(Mars\\)' left"),  # deck V
    (lambda s: sc.set_display(s, [29]), "card id 29 is repeated or not in the decks 4 players use"),
    (lambda s: sc.set_display(s, list(range(8))), "holds 7 cards"),
    (lambda s: sc.set_deck(s, [s.field("display")[0]]), "repeated"),
    (lambda s: sc.give_pm(s, "0"), "unknown player '0'"),
    (lambda s: sc.set_turn(s, 7), "unknown player 7"),
    (lambda s: sc.action_id(s, "fly", "Roma"), "unknown action 'fly'"),
    (lambda s: sc.action_id(s, "build"), "got arguments"),
    (lambda s: sc.action_id(s, "move", "land", "Novaria", ("Roma", "Novaria")), "no land colonist at 'Novaria'"),
])
def test_bad_arguments_raise_value_error_and_change_nothing(st, call, message):
    before = st.s.copy()
    with pytest.raises(ValueError, match=message):
        call(st)
    assert np.array_equal(st.s, before)


def test_add_house_keeps_houses_left(st):
    sc.add_house(st, 2, "Novaria")
    sc.add_house(st, 1, "Novaria")
    assert int(st.field("houses")[st.game.map.city_index("Novaria")]) == 0b110
    assert st.field("houses_left")[:4].tolist() == [15, 14, 14, 15]


def test_colonists_keep_route_occupancy(st):
    r = st.game.route_id("Roma", "Novaria")
    sc.place_colonist(st, 1, "land", ("Roma", "Novaria"))
    assert st.field("route_occ")[r] == 1 and st.field("colonist")[1].tolist()[:3] == [0, E.NC + r, -1]
    with pytest.raises(ValueError, match="already holds a colonist of player 1"):
        sc.place_colonist(st, 2, "land", ("Novaria", "Roma"))
    sc.place_colonist(st, 1, "land", None)  # the last one on the board goes home
    assert st.field("route_occ")[r] == -1 and st.field("colonist")[1].tolist()[:3] == [0, -1, -1]
    sc.set_colonists(st, 3, land=[("Roma", "Novaria")], sea=[("Roma", "Massilia"), "Carthago"])
    assert st.field("route_occ")[r] == 3
    sc.set_colonists(st, 3)
    assert (st.field("route_occ") == -1).all() and (st.field("colonist")[3] == -1).all()


def test_display_and_deck_by_name(st):
    sc.set_display(st, ["Architectus", "Architectus", 25])
    assert sc.display_names(st) == ["Architectus", "Architectus", st.game.components.card_types[
        int(st.game.tables[E.T_CARD_TYPE + 25])].name, None, None, None, None]
    deck = st.field("deck")
    assert sorted(deck[:26].tolist()) == list(range(26)) and (deck[26:] == -1).all()
    assert deck[:3].tolist() == st.field("display")[:3].tolist()
    rest = deck[int(st.field("deck_pos")):int(st.field("deck_len"))].tolist()
    assert not set(rest) & set(st.field("display").tolist())
    sc.set_deck(st, ["Consul", 3])
    assert deck[int(st.field("deck_pos")):].tolist()[:3] == [sc._card_ids(st, ["Consul"], set())[0], 3, -1]
    sc.set_deck(st, [])
    assert int(st.field("deck_pos")) == int(st.field("deck_len")) == 26
    sc.set_display(st, ["Mason"])
    with pytest.raises(ValueError, match="at most 19 cards can be left in the deck, got 20"):
        sc.set_deck(st, [c for c in range(26) if c != int(st.field("display")[0])][:20])


def test_city_good_rederives_the_bonus_marker(st):
    for c in ("Napoca", "Sirmium", "Tomis"):
        sc.set_city_good(st, c, "brick")
    q = st.game.map.province_names.index("Dacia")
    sc.set_marker(st, "Dacia", False)
    assert int(st.field("marker_good")[q]) == 0
    sc.set_city_good(st, "Tomis", "wine")
    assert int(st.field("marker_good")[q]) == 3 and int(st.field("marker_active")[q]) == 0
    sc.set_marker(st, "Dacia", True, good="cloth")  # an explicit override
    assert int(st.field("marker_good")[q]) == 4


def test_reachable_positions_pass_the_invariant_checker(st):
    from concordia_env.validation import check_invariants

    sc.add_house(st, 1, "Novaria")
    sc.add_house(st, 1, "Carthago")
    sc.set_colonists(st, 1, land=[("Roma", "Novaria"), ("Novaria", "Aquileia")], sea=["Roma", "Carthago"])
    sc.set_goods(st, 1, brick=2, cloth=4)
    sc.set_coins(st, 1, 30)
    sc.set_marker(st, "Gallia", False)
    comp = st.game.components
    sc.set_display(st, ["Consul", "Colonus", "Mason", "Architectus", "Praefectus", "Farmer", "Smith"])
    bought = [comp.card_types[int(st.game.tables[E.T_CARD_TYPE + c])].name
              for c in st.field("deck")[7:int(st.field("deck_pos"))]]
    sc.set_hand(st, 2, ["Tribunus", "Architectus", "Praefectus", "Praefectus", "Mercator (3)"] + bought)
    sc.set_discard(st, 2, ["Diplomat (Jupiter)", "Senator"])
    sc.give_pm(st, 2)
    sc.set_turn(st, 3)
    assert check_invariants(st) == []


def test_setters_refresh_the_legal_mask(st):
    sc.set_hand(st, 0, ["Colonus", "Tribunus"])
    assert st.legal_actions() == sorted(sc.action_id(st, "play", c) for c in ("Colonus", "Tribunus"))
    sc.set_discard(st, 1, ["Mercator (5)"])
    sc.set_hand(st, 0, ["Diplomat (Mars)"])
    assert st.legal_actions() == [sc.action_id(st, "play", "Diplomat (Mars)")]
    sc.set_turn(st, 2)
    assert st.current_player == 2 and E.A_PLAY in st.legal_actions()
