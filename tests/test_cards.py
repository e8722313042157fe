"""Unit tests per card, storehouse, game end, tie-breaks and intermediate scoring (RULES.md).

Positions are set up with :mod:`concordia_env.scenario`; player 0 is to play unless a
test says otherwise, the Praefectus Magnus is with player 3 (4-player Imperium).
"""

from __future__ import annotations

import pytest

from concordia_env import engine as E
from concordia_env import new_game
from concordia_env import scenario as sc
from concordia_env.data import GOODS
from concordia_env.state import IllegalActionError

P = 0
NOTHING = dict(brick=0, food=0, tools=0, wine=0, cloth=0)


@pytest.fixture
def st():
    state = new_game("imperium", 4, seed=0)
    sc.set_turn(state, P)
    sc.give_pm(state, 3)
    return state


def coins(st, p=P):
    return int(st.field("coins")[p])


def goods(st, p=P):
    return st.field("goods")[p].tolist()


def city(st, name):
    return st.game.map.city_index(name)


def ctype(st, name):
    return st.game.components.card_type_index(name)


def legal_in_range(st, lo, hi):
    return [a - lo for a in st.legal_actions() if lo <= a < hi]


def built(st, p=P):
    return {st.game.map.city_names[c] for c in range(1, st.game.map.num_cities)
            if int(st.field("houses")[c]) >> p & 1}


def pass_turn(st):
    """The active player plays Praefectus and takes the cash bonus (a plain whole turn)."""
    p = st.active_player
    sc.set_hand(st, p, ["Praefectus"])
    sc.act(st, "play", "Praefectus")
    sc.act(st, "cash")


# ================================================================ Tribunus
@pytest.mark.parametrize("played, gain", [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2), (6, 4)])
def test_tribunus_coins_only_beyond_three_cards(st, played, gain):
    pile = ["Architectus", "Praefectus", "Praefectus", "Mercator (3)", "Senator", "Diplomat (Jupiter)"]
    sc.set_discard(st, P, pile[:played])
    sc.set_hand(st, P, ["Tribunus"])
    before = coins(st)
    sc.act(st, "play", "Tribunus")
    assert coins(st) == before + gain
    assert int(st.field("hand")[P].sum()) == played + 1 and st.field("hand")[P][ctype(st, "Tribunus")] == 1
    assert not st.field("discard")[P].any() and int(st.field("top")[P]) == -1


def test_tribunus_colonist_only_in_roma(st):
    sc.add_house(st, P, "Massilia")  # a house elsewhere does not widen the choice
    sc.act(st, "play", "Tribunus")
    assert st.phase == E.PH_TRIBUNUS
    assert set(st.legal_actions()) == {E.A_DONE, sc.action_id(st, "place", "land", "Roma"),
                                       sc.action_id(st, "place", "sea", "Roma")}
    sc.act(st, "place", "sea", "Roma")
    assert st.field("colonist")[P][3:].tolist().count(0) == 2
    assert goods(st) == [1, 1, 0, 1, 1]
    assert st.active_player == 1  # one colonist at most


def test_tribunus_colonist_needs_food_tools_and_a_stored_colonist(st):
    no_tools = st.clone()
    sc.set_goods(no_tools, P, food=3)
    sc.act(no_tools, "play", "Tribunus")
    assert no_tools.active_player == 1  # nothing to decide: the turn ended by itself
    sc.set_colonists(st, P, land=["Roma", "Roma", "Roma"], sea=["Roma"])
    sc.act(st, "play", "Tribunus")
    assert set(st.legal_actions()) == {E.A_DONE, sc.action_id(st, "place", "sea", "Roma")}


# ============================================================== Architectus
def test_architectus_points_are_colonists_on_board(st):
    sc.set_colonists(st, P, land=["Roma", ("Aquileia", "Vindobona")], sea=[("Roma", "Massilia"), "Carthago"])
    sc.act(st, "play", "Architectus")
    assert int(st.field("ctx_points")) == 4


def test_architectus_cost_is_shortest_path(st):
    sc.set_colonists(st, P, land=["Roma", "Roma"], sea=["Roma"])  # 3 points
    sc.act(st, "play", "Architectus")
    a = sc.action_id(st, "move", "land", "Roma", ("Sirmium", "Tomis"))  # Roma-Aquileia-Sirmium-Tomis
    assert st.action_to_string(a).endswith("cost 3")
    assert not sc.is_legal(st, "move", "land", "Roma", ("Napoca", "Tomis"))  # 4 steps away
    st.apply(a)
    assert int(st.field("ctx_points")) == 0
    assert st.field("colonist")[P][0] == E.NC + st.game.route_id("Sirmium", "Tomis")


def test_architectus_passes_but_never_ends_on_occupied_routes(st):
    sc.place_colonist(st, 1, "land", ("Roma", "Aquileia"))
    sc.place_colonist(st, 2, "land", ("Aquileia", "Sirmium"))
    sc.set_colonists(st, P, land=["Roma", ("Isca D.", "Londinium")], sea=["Roma"])
    sc.act(st, "play", "Architectus")
    assert not sc.is_legal(st, "move", "land", "Roma", ("Roma", "Aquileia"))
    assert not sc.is_legal(st, "move", "land", "Roma", ("Aquileia", "Sirmium"))
    assert not sc.is_legal(st, "move", "land", ("Isca D.", "Londinium"), ("Isca D.", "Londinium"))
    sc.act(st, "move", "land", "Roma", ("Sirmium", "Tomis"))  # through both occupied routes
    assert st.field("route_occ")[st.game.route_id("Sirmium", "Tomis")] == P
    assert st.field("route_occ")[st.game.route_id("Roma", "Aquileia")] == 1


def test_architectus_colonists_keep_to_their_kind_of_route(st):
    sc.set_colonists(st, P, land=["Roma", "Roma", "Roma"], sea=["Roma", "Roma", "Roma"])
    sc.act(st, "play", "Architectus")
    moves = [E.decode_move(a) for a in st.legal_actions() if E.A_MOVE <= a < E.A_BUILD]
    assert moves and all((slot < 3) == (r < E.NL) for slot, r in moves)
    land_only = st.game.route_id("Aquileia", "Vindobona")
    assert any(r == land_only for _, r in moves)
    with pytest.raises(ValueError, match="sea route"):
        sc.action_id(st, "move", "sea", "Roma", ("Aquileia", "Vindobona"))


def test_architectus_points_split_and_moving_off_a_route_frees_it(st):
    sc.set_colonists(st, P, land=[("Roma", "Novaria"), "Roma"], sea=["Roma"])
    sc.act(st, "play", "Architectus")
    sc.act(st, "move", "land", ("Roma", "Novaria"), ("Novaria", "Colonia A."))
    sc.act(st, "move", "sea", "Roma", ("Roma", "Syracusae"))
    assert int(st.field("ctx_points")) == 1
    assert st.field("route_occ")[st.game.route_id("Roma", "Novaria")] == -1
    sc.act(st, "move", "land", "Roma", ("Roma", "Novaria"))
    assert int(st.field("ctx_points")) == 0


def test_architectus_building_ends_movement(st):
    sc.set_colonists(st, P, land=[("Roma", "Novaria"), "Roma"], sea=["Roma"])
    sc.set_city_good(st, "Novaria", "brick")
    sc.act(st, "play", "Architectus")
    sc.act(st, "build", "Novaria")
    assert int(st.field("ctx_points")) == 3
    assert not legal_in_range(st, E.A_MOVE, E.A_BUILD)


def test_architectus_builds_only_beside_own_route_colonists_never_roma(st):
    sc.set_colonists(st, P, land=[("Roma", "Novaria")], sea=["Massilia"])
    sc.set_city_good(st, "Novaria", "brick")
    sc.set_city_good(st, "Massilia", "brick")
    sc.set_coins(st, P, 50)
    sc.act(st, "play", "Architectus")
    # a colonist standing in a city does not let you build there
    assert legal_in_range(st, E.A_BUILD, E.A_PRODUCE) == [city(st, "Novaria")]


def test_architectus_one_house_per_city_per_player(st):
    sc.set_colonists(st, P, land=[("Novaria", "Massilia")], sea=["Roma"])
    for c in ("Novaria", "Massilia"):
        sc.set_city_good(st, c, "brick")
    sc.add_house(st, P, "Massilia")
    sc.add_house(st, 1, "Novaria")
    sc.set_coins(st, P, 50)
    sc.act(st, "play", "Architectus")
    assert legal_in_range(st, E.A_BUILD, E.A_PRODUCE) == [city(st, "Novaria")]
    sc.act(st, "build", "Novaria")
    assert not sc.is_legal(st, "build", "Novaria")
    with pytest.raises(ValueError, match="already has a house"):
        sc.add_house(st, P, "Novaria")


@pytest.mark.parametrize("good", GOODS)
@pytest.mark.parametrize("others", [0, 1, 3])
def test_architectus_house_cost(st, good, others):
    sc.set_colonists(st, P, land=[("Roma", "Novaria")], sea=["Roma"])
    sc.set_city_good(st, "Novaria", good)
    for q in range(1, others + 1):
        sc.add_house(st, q, "Novaria")
    sc.set_goods(st, P, brick=1, food=1, tools=1, wine=1, cloth=1)
    price = {"brick": 1, "food": 2, "tools": 3, "wine": 4, "cloth": 5}[good] * (others + 1)
    paid = {"food": 1} if good == "brick" else {"brick": 1, good: 1}
    sc.set_coins(st, P, price)
    poorer = st.clone()
    sc.set_coins(poorer, P, price - 1)
    sc.act(poorer, "play", "Architectus")
    assert not sc.is_legal(poorer, "build", "Novaria")
    sc.act(st, "play", "Architectus")
    sc.act(st, "build", "Novaria")
    assert coins(st) == 0
    assert sc.goods_of(st, P) == {g: 1 - paid.get(g, 0) for g in GOODS}


def test_architectus_needs_the_goods(st):
    sc.set_colonists(st, P, land=[("Roma", "Novaria")], sea=["Roma"])
    sc.set_city_good(st, "Novaria", "wine")
    sc.set_goods(st, P, brick=1, cloth=3)
    sc.set_coins(st, P, 50)
    sc.act(st, "play", "Architectus")
    assert not sc.is_legal(st, "build", "Novaria")


def test_architectus_fifteenth_house_takes_concordia(st):
    names = [c for c in st.game.map.city_names[1:] if c not in ("Novaria", "Aquileia")]
    for c in names[:14]:
        sc.add_house(st, P, c)
    sc.set_colonists(st, P, land=[("Novaria", "Aquileia")], sea=["Roma"])
    for c in ("Novaria", "Aquileia"):
        sc.set_city_good(st, c, "brick")
    sc.set_coins(st, P, 50)
    sc.act(st, "play", "Architectus")
    sc.act(st, "build", "Novaria")
    assert int(st.field("concordia")) == P and int(st.field("houses_left")[P]) == 0
    assert st.score_breakdown()[P][6] == 7
    # no 16th house: the action ended by itself; the others each get one more turn
    assert st.active_player == 1 and not st.is_terminal()
    for p in (1, 2, 3):
        assert st.active_player == p
        pass_turn(st)
    assert st.is_terminal() and st.current_player == -1 and st.legal_actions() == []


# =============================================================== Praefectus
def _province_setup(st):
    """Gallia: Lutetia wine (houses of 0 and 1), Massilia cloth (house of 2), Burdigala tools;
    bonus marker food; player 1 also has a house outside Gallia."""
    for c, g in (("Lutetia", "wine"), ("Massilia", "cloth"), ("Burdigala", "tools"), ("Novaria", "brick")):
        sc.set_city_good(st, c, g)
    sc.set_marker(st, "Gallia", True, good="food")
    sc.add_house(st, P, "Lutetia")
    sc.add_house(st, 1, "Lutetia")
    sc.add_house(st, 2, "Massilia")
    sc.add_house(st, 1, "Novaria")
    for p in range(4):
        sc.set_goods(st, p)


def test_praefectus_produce_bonus_and_every_house_in_province(st):
    _province_setup(st)
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Gallia")
    assert [goods(st, p) for p in range(4)] == [[0, 1, 0, 1, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1], [0] * 5]
    assert int(st.field("marker_active")[1]) == 0 and int(st.field("pm")) == 3
    assert st.active_player == 1


def test_praefectus_needs_no_house_and_not_on_flipped_markers(st):
    sc.set_marker(st, "Britannia", False)
    sc.set_marker(st, "Dacia", True, good="tools")
    for p in range(4):
        sc.set_goods(st, p)
    sc.act(st, "play", "Praefectus")
    assert not sc.is_legal(st, "produce", "Britannia")
    assert len(legal_in_range(st, E.A_PRODUCE, E.A_CASH)) == 11
    sc.act(st, "produce", "Dacia")
    assert goods(st) == [0, 0, 1, 0, 0] and sum(sum(goods(st, p)) for p in range(4)) == 1


@pytest.mark.parametrize("holder, receiver", [(0, 3), (2, 1), (1, 0)])
def test_praefectus_magnus_doubles_the_bonus_then_passes_right(st, holder, receiver):
    sc.set_turn(st, holder)
    sc.give_pm(st, holder)
    sc.set_goods(st, holder)
    sc.set_marker(st, "Dacia", True, good="tools")
    sc.act(st, "play", "Praefectus")
    a = sc.action_id(st, "produce", "Dacia")
    assert st.action_to_string(a) == "Praefectus: produce in Dacia (bonus 2 tools with the Praefectus Magnus)"
    st.apply(a)  # there is no way to produce without using it
    assert goods(st, holder) == [0, 0, 2, 0, 0]
    assert int(st.field("pm")) == receiver


def test_praefectus_cash_flips_all_back_and_leaves_pm(st):
    sc.give_pm(st, P)
    for prov, good in (("Gallia", "cloth"), ("Dacia", "brick"), ("Syria", "tools")):
        sc.set_marker(st, prov, False, good=good)
    before = coins(st)
    sc.act(st, "play", "Praefectus")
    sc.act(st, "cash")
    assert coins(st) == before + 1 + 2 + 2
    assert st.field("marker_active")[:12].all() and int(st.field("pm")) == P


def test_praefectus_cash_is_legal_for_zero(st):
    before = coins(st)
    sc.act(st, "play", "Praefectus")
    assert sc.is_legal(st, "cash")
    sc.act(st, "cash")
    assert coins(st) == before and st.active_player == 1


def test_praefectus_bonus_and_production_arrive_together(st):
    """Ruling: the bonus good and the houses' goods arrive at once (German example: "Gleichzeitig"),
    so with one free slot the player picks among all of them, the bonus not first."""
    sc.set_city_good(st, "Tomis", "food")
    sc.set_marker(st, "Dacia", True, good="cloth")
    sc.add_house(st, P, "Tomis")
    sc.set_goods(st, P, brick=7)  # + 4 stored colonists: 1 slot free for 1 cloth (bonus) + 1 food
    keep_food = st.clone()
    for state, kept, lost in ((st, "cloth", "food"), (keep_food, "food", "cloth")):
        sc.act(state, "play", "Praefectus")
        sc.act(state, "produce", "Dacia")
        assert state.phase == E.PH_KEEP and state.current_player == P
        assert legal_in_range(state, E.A_KEEP, E.NUM_ACTIONS) == [GOODS.index("food"), GOODS.index("cloth")]
        sc.act(state, "keep", kept)
        assert sc.goods_of(state, P)[kept] == 1 and sc.goods_of(state, P)[lost] == 0 and state.active_player == 1


def test_only_the_praefectus_must_act(st):
    """Ruling: "darf entweder a) oder b)" (Praefectus, Colonus) is a choice between the two options;
    the Colonus's option a) places any number of colonists, none included, so it may end at once,
    while neither Praefectus option has an empty form. The Diplomat's "darf ... ausführen" has no
    alternative: it may copy nothing."""
    sc.set_goods(st, P, food=2, tools=2)
    sc.set_hand(st, P, ["Praefectus", "Colonus", "Diplomat (Jupiter)"])
    sc.set_discard(st, 1, ["Mercator (3)"])
    praefectus = st.clone()
    sc.act(praefectus, "play", "Praefectus")
    assert E.A_DONE not in praefectus.legal_actions()
    assert set(praefectus.legal_actions()) == {E.A_CASH} | set(range(E.A_PRODUCE, E.A_PRODUCE + 12))
    for card in ("Colonus", "Diplomat (Jupiter)"):
        state = st.clone()
        before = {f: state.field(f).copy() for f in ("coins", "goods", "colonist")}
        sc.act(state, "play", card)
        assert E.A_DONE in state.legal_actions() and len(state.legal_actions()) > 1
        sc.act(state, "done")
        assert state.active_player == 1 and all((state.field(f) == v).all() for f, v in before.items())


# ================================================================ Mercator
@pytest.mark.parametrize("card, gain", [("Mercator (3)", 3), ("Mercator (5)", 5)])
def test_mercator_income(st, card, gain):
    sc.set_hand(st, P, [card])
    before = coins(st)
    sc.act(st, "play", card)
    assert coins(st) == before + gain


def test_mercator_two_kinds_when_selling_two(st):
    sc.set_goods(st, P, wine=2, cloth=2, food=1)
    sc.act(st, "play", "Mercator (3)")
    sc.act(st, "sell", "wine")
    sc.act(st, "sell", "cloth")
    assert sorted(legal_in_range(st, E.A_SELL, E.A_BUYGOOD)) == [GOODS.index("wine"), GOODS.index("cloth")]
    assert not legal_in_range(st, E.A_BUYGOOD, E.A_PLACE)  # neither sold kind, nor a third one


def test_mercator_two_kinds_when_buying_two(st):
    sc.set_goods(st, P, wine=1)
    sc.set_coins(st, P, 40)
    sc.act(st, "play", "Mercator (3)")
    sc.act(st, "buy", "brick")
    sc.act(st, "buy", "food")
    assert not legal_in_range(st, E.A_SELL, E.A_BUYGOOD)  # wine would be a third kind
    assert sorted(legal_in_range(st, E.A_BUYGOOD, E.A_PLACE)) == [0, 1]


def test_mercator_free_slots_and_money_limit_buying(st):
    sc.set_goods(st, P, brick=8)  # + 4 colonists: full
    sc.set_coins(st, P, 0)
    sc.act(st, "play", "Mercator (3)")
    assert not legal_in_range(st, E.A_BUYGOOD, E.A_PLACE)
    sc.act(st, "sell", "brick")  # frees a slot; 6 sestertii now
    assert sorted(legal_in_range(st, E.A_BUYGOOD, E.A_PLACE)) == [1, 2, 3]  # food, tools, wine (not cloth: 7)


# ================================================================= Colonus
def test_colonus_places_in_roma_or_own_house_cities_by_route_kind(st):
    sc.add_house(st, P, "Novaria")  # land routes only
    sc.add_house(st, P, "Carthago")  # land and sea
    sc.add_house(st, 1, "Massilia")  # not ours
    sc.set_goods(st, P, food=4, tools=4)
    sc.set_hand(st, P, ["Colonus"])
    sc.act(st, "play", "Colonus")
    legal = {st.action_to_string(a) for a in st.legal_actions() if E.A_PLACE <= a < E.A_COLONUS_CASH}
    assert legal == {f"Colonus: new {k} colonist in {c}" for k, c in
                     [("land", "Roma"), ("sea", "Roma"), ("land", "Novaria"),
                      ("land", "Carthago"), ("sea", "Carthago")]}


def test_colonus_sea_colonist_needs_a_sea_route():
    st = new_game("italia", 3, seed=1)
    sc.set_turn(st, P)
    sc.add_house(st, P, "Aleria")  # Corsica: sea routes only
    sc.set_hand(st, P, ["Colonus"])
    sc.act(st, "play", "Colonus")
    assert sc.is_legal(st, "place", "sea", "Aleria") and not sc.is_legal(st, "place", "land", "Aleria")


@pytest.mark.parametrize("map_name", ["imperium", "italia"])
def test_colonus_route_kind_rule_loses_no_outcome(map_name):
    """Ruling: a colonist goes only to a city touching its kind of route (Polish and Japanese texts;
    the German calls the other choice merely pointless). Roma, always open to every player, touches
    both kinds of route, so any colonist may go there instead: the rule only removes placements of a
    colonist that could never move, which are no better than Roma."""
    st = new_game(map_name, 3, seed=0)
    T = st.game.tables
    assert T[E.T_CITY_LAND + 0] and T[E.T_CITY_SEA + 0]
    sc.set_turn(st, P)
    sc.set_goods(st, P, food=1, tools=1)
    sc.set_hand(st, P, ["Colonus"])
    sc.act(st, "play", "Colonus")
    assert sc.is_legal(st, "place", "land", "Roma") and sc.is_legal(st, "place", "sea", "Roma")


def test_colonus_places_several_while_goods_and_colonists_last(st):
    sc.set_colonists(st, P, land=["Roma"], sea=["Roma", "Roma"])
    sc.set_goods(st, P, food=4, tools=5)  # + 3 colonists stored: full
    sc.set_hand(st, P, ["Colonus"])
    sc.act(st, "play", "Colonus")
    sc.act(st, "place", "land", "Roma")
    sc.act(st, "place", "sea", "Roma")
    assert not sc.is_legal(st, "place", "sea", "Roma")  # all sea colonists out
    assert not sc.is_legal(st, "colonus cash")  # no cash after placing
    sc.act(st, "place", "land", "Roma")
    assert st.active_player == 1  # no colonist left: the action ended by itself
    assert (st.field("colonist")[P] == 0).all() and goods(st) == [0, 1, 2, 0, 0]


def test_colonus_cash_is_five_plus_colonists_on_board(st):
    sc.set_colonists(st, P, land=["Roma", ("Roma", "Novaria")], sea=["Roma", "Carthago"])
    sc.set_hand(st, P, ["Colonus"])
    before = coins(st)
    sc.act(st, "play", "Colonus")
    assert st.action_to_string(E.A_COLONUS_CASH) == "Colonus: cash, 9 sestertii"
    sc.act(st, "colonus cash")
    assert coins(st) == before + 9


# ================================================================ Diplomat
@pytest.mark.parametrize("card, gain", [("Mercator (3)", 3), ("Mercator (5)", 5)])
def test_diplomat_copies_mercator_amount(st, card, gain):
    sc.set_discard(st, 2, ["Praefectus", card])
    before = coins(st)
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert st.legal_actions() == [E.A_DONE, sc.action_id(st, "copy", card)]  # copying is optional
    sc.act(st, "copy", card)
    assert coins(st) == before + gain
    assert st.phase == E.PH_MERCATOR and int(st.field("top")[P]) == ctype(st, "Diplomat (Jupiter)")
    assert st.field("discard")[2].sum() == 2  # the copied pile is untouched


def test_diplomat_specialist_produces_for_the_copier(st):
    for c in ("Massilia", "Sinope", "Napoca"):
        sc.set_city_good(st, c, "cloth")
    sc.add_house(st, P, "Massilia")
    sc.add_house(st, P, "Sinope")
    sc.add_house(st, 1, "Napoca")
    sc.set_discard(st, 1, ["Weaver"])
    before = st.field("goods").copy()
    sc.act(st, "play", "Diplomat (Jupiter)")
    sc.act(st, "copy", "Weaver")
    assert (st.field("goods") - before)[:4].tolist() == [[0, 0, 0, 0, 2], [0] * 5, [0] * 5, [0] * 5]


def test_diplomat_praefectus_with_pm(st):
    sc.give_pm(st, P)
    sc.set_goods(st, P)
    sc.set_marker(st, "Dacia", True, good="wine")
    sc.set_discard(st, 3, ["Praefectus"])
    sc.act(st, "play", "Diplomat (Jupiter)")
    sc.act(st, "copy", "Praefectus")
    sc.act(st, "produce", "Dacia")
    assert goods(st) == [0, 0, 0, 2, 0] and int(st.field("pm")) == 3


def test_diplomat_copies_any_other_player_but_not_diplomats_or_own_pile(st):
    sc.set_discard(st, P, ["Architectus"])
    sc.set_discard(st, 1, ["Mercator (3)", "Diplomat (Saturnus)"])
    sc.set_discard(st, 2, ["Colonus"])
    sc.set_discard(st, 3, ["Senator"])
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert set(st.legal_actions()) == {E.A_DONE} | {sc.action_id(st, "copy", k) for k in ("Colonus", "Senator")}


def test_diplomat_with_nothing_to_copy_is_a_turn_without_effect(st):
    """German rulebook: a turn is playing one card, and the Diplomat's player *may* carry out the
    copied action. With nothing to copy, the Diplomat is still playable and ends the turn."""
    sc.set_discard(st, P, ["Mercator (3)"])  # own pile does not count
    sc.set_discard(st, 1, ["Diplomat (Mars)"])  # a Diplomat cannot be copied
    sc.set_discard(st, 2, [])  # emptied by a Tribunus
    sc.set_discard(st, 3, [])
    assert sc.is_legal(st, "play", "Diplomat (Jupiter)")
    before = {f: st.field(f).copy() for f in ("coins", "goods", "colonist", "houses")}
    hand, turn = int(st.field("hand")[P].sum()), int(st.field("turn"))
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert st.phase == E.PH_PLAY and st.active_player == 1 and int(st.field("turn")) == turn + 1
    assert all((st.field(f) == v).all() for f, v in before.items())
    assert int(st.field("hand")[P].sum()) == hand - 1
    assert int(st.field("top")[P]) == ctype(st, "Diplomat (Jupiter)")
    assert int(st.field("discard")[P].sum()) == 2


def test_diplomat_may_decline_to_copy_but_a_copied_praefectus_must_act(st):
    sc.set_discard(st, 3, ["Praefectus"])
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert st.legal_actions() == [E.A_DONE, sc.action_id(st, "copy", "Praefectus")]
    assert st.action_to_string(E.A_DONE) == "Diplomat: done"
    declined = st.clone()
    before = coins(declined)
    declined.apply(E.A_DONE)
    assert declined.phase == E.PH_PLAY and declined.active_player == 1 and coins(declined) == before
    sc.act(st, "copy", "Praefectus")
    assert st.phase == E.PH_PRAEFECTUS and E.A_DONE not in st.legal_actions()


def test_diplomat_never_copies_a_tribunus(st):
    """German rules: actions of players who took their cards back with the Tribunus cannot be
    copied (so the Polish and Japanese texts). In play the Tribunus goes back to hand with the pile;
    a pile set up by hand to show one offers nothing either."""
    sc.set_discard(st, 1, ["Tribunus"])  # only a hand-built position shows it
    sc.set_discard(st, 2, ["Architectus", "Tribunus"])
    sc.set_discard(st, 3, ["Senator"])
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert set(st.legal_actions()) == {E.A_DONE, sc.action_id(st, "copy", "Senator")}
    assert not sc.is_legal(st, "copy", "Tribunus")
    assert st.action_to_string(sc.action_id(st, "copy", "Tribunus")) == \
        "Diplomat: copy Tribunus (never legal: a Tribunus cannot be copied)"
    with pytest.raises(IllegalActionError, match="Diplomat: copy Tribunus"):
        sc.act(st, "copy", "Tribunus")


def test_diplomat_after_a_real_tribunus_finds_that_pile_empty(st):
    sc.set_discard(st, 1, ["Architectus", "Praefectus", "Senator"])
    sc.set_discard(st, 2, [])
    sc.set_discard(st, 3, [])
    sc.set_turn(st, 1)
    before = coins(st, 1)
    sc.act(st, "play", "Tribunus")  # 4 cards back: 1 sestertius
    assert coins(st, 1) == before + 1 and int(st.field("top")[1]) == -1 and st.field("discard")[1].sum() == 0
    if st.active_player == 1:
        sc.act(st, "done")
    pass_turn(st)  # player 2
    pass_turn(st)  # player 3
    assert st.active_player == P
    sc.act(st, "play", "Diplomat (Jupiter)")
    # piles: 1 empty (Tribunus), 2 and 3 a Praefectus each
    assert set(st.legal_actions()) == {E.A_DONE, sc.action_id(st, "copy", "Praefectus")}


# ============================================================ Senator, Consul
DISPLAY = ["Mason", "Farmer", "Smith", "Architectus", "Praefectus", "Colonus", "Mercator (5)"]
# red-field costs:  food, brick+food, brick+tools, tools, wine, food, wine
# position extras:  -, ?, ?, cloth, cloth, ?+cloth, cloth+cloth


@pytest.fixture
def market(st):
    sc.set_display(st, DISPLAY)
    sc.set_deck(st, ["Vintner", "Weaver"])
    return st


def test_senator_prices_are_the_positions_before_the_slide(market):
    st = market
    sc.set_goods(st, P, food=1, wine=1, cloth=2)
    sc.act(st, "play", "Senator")
    sc.act(st, "buy card", 1)
    assert st.field("display")[0] == -1  # no slide yet
    assert sc.is_legal(st, "buy card", 7)  # still position 7: wine + cloth + cloth
    sc.act(st, "buy card", 7)
    assert goods(st) == [0] * 5
    assert sc.display_names(st) == ["Farmer", "Smith", "Architectus", "Praefectus", "Colonus", "Vintner", "Weaver"]
    assert int(st.field("deck_pos")) == int(st.field("deck_len")) and st.active_player == 1


def test_senator_pays_question_marks_with_chosen_goods(market):
    st = market
    sc.set_goods(st, P, food=2, cloth=1, tools=1, wine=1)
    sc.act(st, "play", "Senator")
    sc.act(st, "buy card", 6)  # Colonus: food + ? + cloth
    assert st.phase == E.PH_PAY and st.current_player == P
    assert legal_in_range(st, E.A_PAY, E.A_KEEP) == [1, 2, 3]  # any good left
    sc.act(st, "pay", "wine")
    assert goods(st) == [0, 1, 1, 0, 0] and st.phase == E.PH_BUY
    sc.act(st, "done")  # one card is enough
    assert sc.display_names(st)[5:] == ["Mercator (5)", "Vintner"] and st.active_player == 1


def test_senator_at_most_two_cards_and_not_unaffordable(market):
    st = market
    sc.set_goods(st, P, food=4, brick=2, tools=2)
    sc.act(st, "play", "Senator")
    assert legal_in_range(st, E.A_BUYCARD, E.A_PAY) == [0, 1, 2]
    sc.act(st, "buy card", 2)  # Farmer: brick + food + ?
    sc.act(st, "pay", "food")
    sc.act(st, "buy card", 1)
    assert st.active_player == 1 and goods(st) == [1, 1, 2, 0, 0]
    assert st.field("hand")[P][[ctype(st, "Mason"), ctype(st, "Farmer")]].tolist() == [1, 1]


def test_consul_pays_only_the_red_field_and_buys_one(market):
    st = market
    sc.set_hand(st, P, ["Consul"])
    sc.set_goods(st, P, wine=2, food=1)
    sc.act(st, "play", "Consul")
    assert legal_in_range(st, E.A_BUYCARD, E.A_PAY) == [0, 4, 5, 6]
    assert st.action_to_string(sc.action_id(st, "buy card", 7)) == "Consul: buy Mercator (5) at position 7 for wine"
    sc.act(st, "buy card", 7)
    assert goods(st) == [0, 1, 0, 1, 0] and st.active_player == 1
    assert sc.display_names(st)[6] == "Vintner"


# ============================================================== Specialists
@pytest.mark.parametrize("card, good", [("Mason", "brick"), ("Farmer", "food"), ("Smith", "tools"),
                                        ("Vintner", "wine"), ("Weaver", "cloth")])
def test_specialist_produces_for_own_houses_of_its_good(st, card, good):
    other = "food" if good != "food" else "wine"
    for c, g in (("Novaria", good), ("Massilia", good), ("Sinope", good), ("Tyros", other)):
        sc.set_city_good(st, c, g)
    for c in ("Novaria", "Massilia", "Tyros"):
        sc.add_house(st, P, c)
    sc.add_house(st, 1, "Sinope")
    sc.add_house(st, 2, "Novaria")
    for p in range(4):
        sc.set_goods(st, p)
    sc.set_hand(st, P, [card])
    sc.act(st, "play", card)
    assert sc.goods_of(st, P) == {**NOTHING, good: 2}
    assert not st.field("goods")[1:].any() and st.active_player == 1


# =============================================================== Storehouse
def test_overflow_choice_by_a_non_active_owner(st):
    _province_setup(st)
    sc.add_house(st, 1, "Massilia")  # player 1 now gets wine + cloth in Gallia
    sc.set_goods(st, 1, brick=7)  # + 4 colonists: 1 slot free
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Gallia")
    assert st.phase == E.PH_KEEP and st.current_player == 1 and st.active_player == P
    assert legal_in_range(st, E.A_KEEP, E.NUM_ACTIONS) == [3, 4]  # wine or cloth; no discarding bricks
    assert st.action_to_string(sc.action_id(st, "keep", "cloth")) == "player 1: keep 1 cloth"
    sc.act(st, "keep", "cloth")
    assert goods(st, 1) == [7, 0, 0, 0, 1]  # the wine is lost, the bricks stay
    assert goods(st, 2) == [0, 0, 0, 0, 1]  # later players resolved as usual
    assert st.active_player == 1 and st.phase == E.PH_PLAY


def test_overflow_must_fill_every_slot(st):
    sc.give_pm(st, P)
    sc.set_city_good(st, "Tomis", "food")
    sc.set_marker(st, "Dacia", True, good="tools")
    sc.add_house(st, P, "Tomis")
    sc.set_goods(st, P, brick=6)  # 2 free; incoming 2 tools + 1 food
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Dacia")
    assert st.phase == E.PH_KEEP and st.current_player == P
    sc.act(st, "keep", "tools")
    assert st.phase == E.PH_KEEP  # still tools and food to choose from, one slot left
    sc.act(st, "keep", "food")
    assert goods(st) == [6, 1, 1, 0, 0] and st.active_player == 1


def test_overflow_of_one_kind_or_into_a_full_store_needs_no_choice(st):
    _province_setup(st)
    sc.set_goods(st, 1, brick=8)  # full: its wine is lost
    sc.set_goods(st, P, brick=7)  # 1 free: of food bonus + wine, must choose
    full = st.clone()
    sc.act(full, "play", "Praefectus")
    sc.act(full, "produce", "Gallia")
    assert full.phase == E.PH_KEEP and full.current_player == P
    sc.act(full, "keep", "food")
    assert goods(full, 1) == [8, 0, 0, 0, 0] and full.active_player == 1
    sc.set_marker(st, "Gallia", True, good="wine")  # bonus wine + house wine: one kind
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Gallia")
    assert goods(st) == [7, 0, 0, 1, 0] and st.active_player == 1


def test_overflow_choices_in_turn_order_from_the_active_player(st):
    _province_setup(st)
    sc.set_turn(st, 2)
    sc.add_house(st, 1, "Massilia")
    sc.add_house(st, P, "Massilia")
    for p in (P, 1):
        sc.set_goods(st, p, brick=7)
    sc.act(st, "play", "Praefectus")
    sc.act(st, "produce", "Gallia")
    assert st.current_player == P  # 2 (fits), 3 (nothing), then 0, then 1
    sc.act(st, "keep", "wine")
    assert st.current_player == 1
    sc.act(st, "keep", "cloth")
    assert goods(st, P) == [7, 0, 0, 1, 0] and goods(st, 1) == [7, 0, 0, 0, 1]
    assert st.active_player == 3


# ================================================================ Game end
def test_buying_the_last_card_takes_concordia_and_others_play_once(st):
    sc.set_display(st, ["Mason"])
    sc.set_deck(st, [])
    sc.set_turn(st, 2)
    sc.set_goods(st, 2, food=1)
    sc.act(st, "play", "Senator")
    sc.act(st, "buy card", 1)
    assert int(st.field("concordia")) == 2 and (st.field("display") == -1).all()
    order = []
    while not st.is_terminal():
        order.append(st.active_player)
        pass_turn(st)
    assert order == [3, 0, 1]
    assert st.scores()[2] == st.score_breakdown()[2].sum() and st.score_breakdown()[2][6] == 7


def test_emptying_the_deck_alone_does_not_end_the_game(market):
    st = market
    sc.set_deck(st, [])
    sc.set_goods(st, P, food=1)
    sc.act(st, "play", "Senator")
    sc.act(st, "buy card", 1)  # nothing else affordable: the action ends
    assert int(st.field("concordia")) == -1 and sc.display_names(st)[5:] == ["Mercator (5)", None]


def _finish(st):
    st.field("phase")[()] = E.PH_OVER
    st.field("current")[()] = -1


def test_ties_go_to_the_praefectus_magnus_then_to_whom_it_reaches_first(st):
    # in the opening position everybody scores 7 (Vesta 3, Mars 4)
    assert st.scores() == [7, 7, 7, 7]
    sc.give_pm(st, 2)
    assert st.ranking() == [2, 1, 0, 3]
    sc.set_coins(st, 2, 0)  # the holder drops to 6
    assert st.scores() == [7, 7, 6, 7]
    assert st.ranking() == [1, 0, 3, 2]
    assert st.winner() is None and st.returns() == [0.0] * 4
    _finish(st)
    assert st.winner() == 1
    assert st.returns() == pytest.approx([-1 / 3, 1.0, -1 / 3, -1 / 3]) and sum(st.returns()) == pytest.approx(0)


def test_most_vp_wins_regardless_of_pm(st):
    sc.give_pm(st, 0)
    sc.add_house(st, 3, "Massilia")  # Saturnus (2 Praefectus) + Jupiter if not brick
    _finish(st)
    assert st.winner() == 3 and st.returns()[3] == 1.0


# =================================================== intermediate scoring
def _play_tribunus(st, p):
    sc.set_turn(st, p)
    sc.act(st, "play", "Tribunus")
    if st.active_player == p:
        sc.act(st, "done")


def test_intermediate_scoring_is_off_by_default(st):
    before = [coins(st, p) for p in range(4)]
    for p in range(4):
        _play_tribunus(st, p)
    assert not st.field("inter_done")[:4].any() and [coins(st, p) for p in range(4)] == before


@pytest.mark.parametrize("wealth, payout", [
    ((100, 90, 40, 30), (2, 1, 0, 0)),
    ((100, 100, 40, 30), (2, 2, 0, 0)),  # shared first place; the next is third
    ((100, 40, 40, 30), (2, 1, 1, 0)),  # shared second place
    ((50, 50, 50, 50), (2, 2, 2, 2)),
])
def test_intermediate_scoring_first_tribunus_then_payout(wealth, payout):
    st = new_game("imperium", 4, seed=0, intermediate_scoring=True)
    for p, w in enumerate(wealth):
        sc.set_coins(st, p, w - 29)  # the starting goods are worth 29
    expected = st.scores()
    assert expected == [w // 10 + 4 for w in wealth]
    coins0 = [coins(st, p) for p in range(4)]
    for p in (2, 0, 3):
        _play_tribunus(st, p)
        assert int(st.field("inter_score")[p]) == expected[p]
    sc.set_coins(st, 0, coins0[0] + 100)  # a second Tribunus does not score again
    _play_tribunus(st, 0)
    assert int(st.field("inter_score")[0]) == expected[0]
    sc.set_coins(st, 0, coins0[0])
    _play_tribunus(st, 1)
    assert [coins(st, p) - coins0[p] for p in range(4)] == list(payout)
    assert st.field("inter_done")[:4].all() and not st.field("inter_score").any()


def test_concordia_is_taken_only_once(st):
    sc.set_concordia(st, 2)
    sc.set_turn(st, 3)  # 3's last turn: its 15th house brings no second Concordia
    names = [c for c in st.game.map.city_names[1:] if c != "Novaria"]
    for c in names[:14]:
        sc.add_house(st, 3, c)
    sc.set_colonists(st, 3, land=[("Roma", "Novaria")])
    sc.set_city_good(st, "Novaria", "brick")
    sc.act(st, "play", "Architectus")
    sc.act(st, "build", "Novaria")
    assert int(st.field("concordia")) == 2 and int(st.field("houses_left")[3]) == 0
    assert st.score_breakdown()[3][6] == 0
    assert st.active_player == 0 and not st.is_terminal()


def test_intermediate_scoring_only_on_a_players_own_tribunus():
    """A Diplomat cannot copy a Tribunus, so only one's own Tribunus triggers the variant's scoring."""
    st = new_game("imperium", 4, seed=0, intermediate_scoring=True)
    sc.set_turn(st, 1)
    sc.set_discard(st, 2, ["Tribunus"])  # a hand-built pile: not copyable
    sc.act(st, "play", "Diplomat (Jupiter)")
    assert not sc.is_legal(st, "copy", "Tribunus")
    assert int(st.field("inter_done")[1]) == 0
    st = new_game("imperium", 4, seed=0, intermediate_scoring=True)
    _play_tribunus(st, 1)
    assert int(st.field("inter_done")[1]) == 1 and int(st.field("inter_score")[1]) == st.scores()[1]
