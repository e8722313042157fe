"""check_invariants catches each kind of rule-invariant violation, with a message naming it.

Each test starts from a legal state (a fresh game, or one reached by a few
chosen actions), breaks one thing through ``state.field(...)`` views and checks
that the reported messages mention the field and the player, city or route.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.validation import check_invariants

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]


def fresh(map_name="imperium", n=4, seed=1, intermediate=False):
    s = ce.new_game(map_name, n, seed, intermediate_scoring=intermediate)
    assert check_invariants(s) == []
    return s


def one(state, *needles):
    """The violations; asserts at least one mentions every needle."""
    msgs = check_invariants(state)
    assert msgs, "expected a violation"
    assert any(all(nd in m for nd in needles) for m in msgs), (needles, msgs)
    return msgs


def play_until(state, pred, seed=0, limit=20000):
    """Random play until ``pred(state)`` holds (asserting invariants on the way)."""
    rng = random.Random(seed)
    for _ in range(limit):
        if pred(state):
            return state
        assert not state.is_terminal(), "game ended before the wanted position"
        state.apply(rng.choice(state.legal_actions()))
        assert check_invariants(state) == []
    raise AssertionError("wanted position not reached")


def find(pred, map_name="imperium", n=4, seeds=range(50)):
    for seed in seeds:
        s = ce.new_game(map_name, n, seed)
        rng = random.Random(seed)
        while not s.is_terminal():
            if pred(s):
                return s
            s.apply(rng.choice(s.legal_actions()))
        if pred(s):
            return s
    raise AssertionError("no such position found")


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_fresh_games_are_clean(map_name, n):
    for seed in range(5):
        assert check_invariants(ce.new_game(map_name, n, seed)) == []
        assert check_invariants(ce.new_game(map_name, n, seed, intermediate_scoring=True)) == []


# ------------------------------------------------------------ setup fields
def test_num_players_not_allowed_on_map():
    s = fresh("italia", 2)
    s.field("num_players")[()] = 5
    one(s, "num_players", "5 players", "italia")
    s = fresh("imperium", 3)
    s.field("num_players")[()] = 2
    one(s, "num_players", "imperium")
    s.field("num_players")[()] = 99
    one(s, "num_players")


def test_num_cities_and_provinces_match_map():
    s = fresh("italia", 3)
    s.field("num_cities")[()] = 31
    one(s, "num_cities", "31", "26")
    s = fresh("italia", 3)
    s.field("num_provinces")[()] = 12
    one(s, "num_provinces", "12", "11")


def test_phase_out_of_range():
    s = fresh()
    s.field("phase")[()] = 11
    one(s, "phase", "11")
    s.field("phase")[()] = -1
    one(s, "phase", "-1")


def test_current_must_match_phase():
    s = fresh()
    s.field("current")[()] = (s.active_player + 1) % 4
    one(s, "current", "active player")
    s = fresh()
    s.field("phase")[()] = E.PH_OVER
    one(s, "current", "game is over")


def test_scalar_ranges():
    for name, value in [("active", 4), ("pm", -1), ("pm", 4), ("concordia", 4), ("concordia", -2),
                        ("start_player", 7), ("turn", -1), ("intermediate", 2), ("ctx_kind", 14),
                        ("ctx_points", 7), ("ctx_built", 2), ("ctx_sold", 32), ("ctx_buys_left", 3),
                        ("ctx_consul", -1), ("ctx_bought_pos", 128), ("ctx_keep_player", 4),
                        ("ctx_pay_left", 5), ("ctx_placed", 2), ("ctx_bought", -1)]:
        s = fresh("imperium", 4)
        s.field(name)[()] = value
        if name == "active":
            s.field("current")[()] = value
        one(s, f"'{name}'", str(value))


# ------------------------------------------------------------ storehouse
def test_negative_coins_named_with_player():
    s = fresh()
    s.field("coins")[2] = -3
    one(s, "coins", "player 2", "-3")


def test_negative_goods():
    s = fresh()
    s.field("goods")[1, 3] = -1
    one(s, "goods", "player 1", "wine")


def test_storehouse_overflow():
    s = fresh()
    s.field("goods")[3, 0] = 8  # 6 goods + 4 colonists, now 13 + 4
    one(s, "player 3", "storehouse", "12 slots")


def test_storehouse_full_is_fine():
    s = fresh()
    s.field("goods")[0] = [1, 2, 1, 3, 1]  # 8 goods + 4 colonists = 12
    assert check_invariants(s) == []


# ------------------------------------------------------------ colonists and routes
def test_colonist_on_nonexistent_location():
    s = fresh()
    s.field("colonist")[1, 1] = E.NLOC + 3
    one(s, "colonist", "player 1", "land colonist 2")
    s = fresh("italia", 3)
    s.field("colonist")[0, 1] = 28  # index of a padding city: Italia has 26
    one(s, "colonist", "player 0", "location 28")


def test_land_colonist_on_sea_route_and_padding_route():
    s = fresh("italia", 3)
    r = E.NL + 2  # a sea route
    s.field("colonist")[0, 1] = E.NC + r
    s.field("route_occ")[r] = 0
    one(s, "colonist", "player 0", "not a land route")
    s = fresh("italia", 3)
    r = 42  # Italia has 40 land routes: padding
    s.field("colonist")[0, 1] = E.NC + r
    s.field("route_occ")[r] = 0
    one(s, "player 0", "route 42")


def test_colonist_in_city_needs_house():
    s = fresh()
    g = s.game
    c = next(c for c in range(1, g.map.num_cities) if g.tables[E.T_CITY_LAND + c])
    s.field("colonist")[2, 1] = c
    one(s, "colonist", "player 2", g.map.city_names[c], "no house")
    # with a house there it is fine
    s.field("houses")[c] |= 1 << 2
    s.field("houses_left")[2] -= 1
    assert check_invariants(s) == []


def test_sea_colonist_in_city_without_sea_route():
    s = fresh()
    g = s.game
    c = next(c for c in range(1, g.map.num_cities) if not g.tables[E.T_CITY_SEA + c])
    s.field("colonist")[0, 4] = c
    s.field("houses")[c] |= 1
    s.field("houses_left")[0] -= 1
    one(s, "colonist", "player 0", "sea colonist 2", g.map.city_names[c], "no sea route")


def test_two_colonists_on_one_route():
    s = fresh()
    r = 5
    s.field("colonist")[0, 1] = E.NC + r
    s.field("colonist")[1, 1] = E.NC + r
    s.field("route_occ")[r] = 0
    msgs = one(s, "2 colonists", "land route 5")
    assert any("player 1" in m and "route_occ" in m for m in msgs)


def test_route_occupancy_without_colonist():
    s = fresh()
    s.field("route_occ")[7] = 2
    one(s, "route_occ", "route 7", "player 2", "no colonist")
    s = fresh()
    s.field("route_occ")[7] = 9
    one(s, "route_occ", "route 7", "9")


def test_route_occ_on_padding_route():
    s = fresh("italia", 2)
    s.field("route_occ")[E.NR - 1] = 0
    one(s, "route_occ", f"index {E.NR - 1}")


def test_colonist_on_route_with_wrong_occupant():
    s = fresh()
    s.field("colonist")[3, 0] = E.NC + 11
    s.field("route_occ")[11] = 1
    msgs = one(s, "route_occ", "player 3", "route 11")
    assert any("player 1" in m and "no colonist" in m for m in msgs)


def test_no_colonist_of_a_kind_on_board():
    s = fresh()
    s.field("colonist")[1, 3] = -1  # the sea colonist in Roma back to the storehouse
    one(s, "player 1", "no sea colonist on the board")


# ------------------------------------------------------------ houses
def test_house_in_roma():
    s = fresh()
    s.field("houses")[0] = 1
    one(s, "houses", "Roma")


def test_house_of_absent_player():
    s = fresh("imperium", 3)
    s.field("houses")[4] = 1 << 3
    one(s, "houses", "city 4", "players who do not exist")


def test_house_in_padding_city():
    s = fresh("italia", 2)
    s.field("houses")[28] = 1
    one(s, "houses", "index 28")


def test_houses_left_must_match_houses_built():
    s = fresh()
    s.field("houses")[5] = 0b11
    s.field("houses_left")[0] -= 1
    one(s, "houses_left", "player 1", "15 houses left and 1 built")
    s = fresh()
    s.field("houses_left")[2] = 16
    one(s, "houses_left", "player 2")


def test_sixteen_houses_impossible():
    s = fresh()
    cities = [c for c in range(1, 17)]
    for c in cities:
        s.field("houses")[c] |= 1
    s.field("houses_left")[0] = 0
    s.field("concordia")[()] = 0
    one(s, "houses_left", "player 0", "16 built")


# ------------------------------------------------------------ cards
def test_negative_card_counts():
    s = fresh()
    s.field("hand")[1, 2] = -1
    one(s, "hand", "player 1", "Praefectus")
    s = fresh()
    s.field("discard")[3, 4] = -2
    one(s, "discard", "player 3")


def test_top_must_match_discard():
    s = fresh()
    s.field("top")[0] = 3
    one(s, "top", "player 0", "discard pile holds none")
    s = fresh()
    s.field("hand")[0, 3] -= 1
    s.field("discard")[0, 3] += 1
    one(s, "top", "player 0", "top is -1")
    s.field("top")[0] = 17
    one(s, "top", "player 0", "17")


def test_card_conservation():
    s = fresh()
    s.field("hand")[2, 4] += 1  # an extra Mercator (5) out of nowhere
    one(s, "not conserved", "29 cards", "expected 28")
    s = fresh()
    s.field("hand")[2, 1] -= 1  # Architectus becomes a Colonus
    s.field("hand")[2, 5] += 1
    one(s, "not conserved", "Architectus")


def test_card_conservation_counts_bought_cards():
    # drop a display card without anybody receiving it
    s = fresh()
    s.field("display")[:6] = s.field("display")[1:].copy()
    s.field("display")[6] = s.field("deck")[7]
    s.field("deck_pos")[()] = 8
    one(s, "not conserved", "1 bought")


def test_tribunus_and_senator_exactly_once():
    s = fresh()
    s.field("hand")[1, 0] = 0
    s.field("hand")[1, 1] += 1
    one(s, "player 1", "0 Tribunus")
    s = fresh()
    s.field("hand")[1, 6] = 2
    s.field("hand")[1, 1] -= 1
    one(s, "player 1", "2 Senator")


def test_tribunus_must_be_in_hand():
    s = fresh()
    s.field("hand")[2, 0] = 0
    s.field("discard")[2, 0] = 1
    s.field("top")[2] = 0
    one(s, "player 2", "Tribunus is on the discard pile")


# ------------------------------------------------------------ city tokens, markers
def test_city_goods_follow_tokens():
    s = fresh()
    cg = s.field("city_good")
    c = 1
    cg[c] = (cg[c] + 1) % 5
    one(s, "city_good", "letter")


def test_swapping_tokens_within_letter_is_fine_but_markers_follow():
    s = fresh()
    m = s.game.map
    cg = s.field("city_good")
    a, b = next((a, b) for a in range(1, m.num_cities) for b in range(a + 1, m.num_cities)
                if m.city_letters[a] == m.city_letters[b] and cg[a] != cg[b]
                and m.city_province[a] != m.city_province[b])
    cg[a], cg[b] = int(cg[b]), int(cg[a])
    msgs = check_invariants(s)
    assert all("marker_good" in x for x in msgs)
    # repair the markers: then the position is legal
    for q in range(len(m.province_names)):
        s.field("marker_good")[q] = max(int(cg[c]) for c in range(m.num_cities) if m.city_province[c] == q)
    assert check_invariants(s) == []


def test_roma_and_padding_cities_produce_nothing():
    s = fresh()
    s.field("city_good")[0] = 2
    one(s, "city_good", "Roma")
    s = fresh("italia", 3)
    s.field("city_good")[27] = 2
    one(s, "city_good", "index 27")


def test_city_good_out_of_range():
    s = fresh()
    s.field("city_good")[3] = 5
    one(s, "city_good", "city 3", "not a good")


def test_marker_good_is_most_valuable():
    s = fresh()
    mg = s.field("marker_good")
    mg[2] = 0 if mg[2] != 0 else 1
    one(s, "marker_good", "province 2", s.game.map.province_names[2])


def test_marker_active_values():
    s = fresh()
    s.field("marker_active")[4] = 2
    one(s, "marker_active", "province 4")
    s = fresh("italia", 2)
    s.field("marker_active")[11] = 1
    one(s, "marker_good'/'marker_active", "index 11")


# ------------------------------------------------------------ deck and display
def test_display_duplicate_and_invalid():
    s = fresh()
    d = s.field("display")
    d[3] = d[2]
    one(s, "display", "position 3", "second time")
    s = fresh()
    s.field("display")[0] = 30
    one(s, "display", "position 0", "30")


def test_display_card_not_drawn():
    s = fresh()
    s.field("display")[6] = s.field("deck")[10]
    one(s, "display", "position 6", "deck_pos")


def test_display_gap_outside_buying():
    s = fresh()
    d = s.field("display")
    d[2] = -1
    msgs = one(s, "display", "position 2 is empty")
    assert any("not conserved" in m for m in msgs)


def test_display_must_be_refilled():
    s = fresh()
    s.field("display")[6] = -1
    one(s, "display", "only 6 cards")


def test_deck_duplicates_foreign_cards_and_length():
    s = fresh("imperium", 3)  # decks I-III: card ids 0..20
    s.field("deck")[15] = s.field("deck")[16]
    one(s, "deck", "position 16", "already at position 15")
    s = fresh("imperium", 3)
    s.field("deck")[20] = 27  # a deck V card
    one(s, "deck", "position 20", "3 players")
    s = fresh("imperium", 3)
    s.field("deck")[25] = 3
    one(s, "deck", "position 25", "past deck_len")
    s = fresh("imperium", 3)
    s.field("deck_len")[()] = 26
    one(s, "deck_len", "26")
    s = fresh("imperium", 3)
    s.field("deck_pos")[()] = 3
    one(s, "deck_pos", "3")


def test_display_count_at_most_seven_by_construction():
    s = fresh()
    assert s.field("display").shape == (E.NDISP,)
    assert (s.field("display") >= 0).sum() <= 7


# ------------------------------------------------------------ Concordia card, game end
def test_concordia_required_after_last_house():
    s = fresh()
    for c in range(1, 16):
        s.field("houses")[c] |= 1 << 1
    s.field("houses_left")[1] = 0
    one(s, "concordia", "player 1", "nobody holds")
    s.field("concordia")[()] = 1
    assert check_invariants(s) == []


def test_concordia_required_when_cards_run_out():
    s = find(lambda st: st.field("concordia")[()] >= 0
             and int(st.field("deck_pos")) == int(st.field("deck_len"))
             and (st.field("display") < 0).all(), "italia", 2, seeds=range(200))
    s.field("concordia")[()] = -1
    one(s, "concordia", "deck and display are empty")


def test_concordia_unearned():
    s = fresh()
    s.field("concordia")[()] = 2
    one(s, "concordia", "player 2", "houses left")


def test_game_over_needs_concordia_and_right_active():
    s = fresh()
    s.field("phase")[()] = E.PH_OVER
    s.field("current")[()] = -1
    one(s, "concordia", "game is over")
    s = find(lambda st: st.is_terminal(), "italia", 3, seeds=range(3))
    s.field("active")[()] = (s.active_player + 1) % 3
    one(s, "'active'", "game ended")


# ------------------------------------------------------------ actions in progress
def test_incoming_only_in_keep_phase():
    s = fresh()
    s.field("incoming")[1, 2] = 1
    one(s, "incoming", "player 1", "tools")
    s = fresh()
    s.field("incoming")[1, 2] = -1
    one(s, "incoming", "player 1", "-1")


def test_keep_phase_needs_real_overflow():
    s = find(lambda st: st.phase == E.PH_KEEP, "imperium", 5, seeds=range(100))
    assert check_invariants(s) == []
    x = int(s.field("ctx_keep_player"))
    s.field("incoming")[x] = 0
    one(s, "incoming", f"player {x}", "must choose goods")


def test_ctx_kind_matches_phase():
    s = fresh()
    s.apply(E.A_PLAY + 3)  # Mercator (3)
    assert s.phase == E.PH_MERCATOR
    s.field("ctx_kind")[()] = E.K_COLONUS
    one(s, "ctx_kind", "Colonus", "Mercator")


def test_mercator_at_most_two_kinds():
    s = fresh()
    s.apply(E.A_PLAY + 3)
    s.field("ctx_sold")[()] = 0b00011
    s.field("ctx_bought")[()] = 0b00100
    one(s, "ctx_sold", "more than 2 kinds")
    s.field("ctx_sold")[()] = 0b00001
    s.field("ctx_bought")[()] = 0b00001
    one(s, "ctx_sold", "both sold and bought", "brick")


def test_active_top_must_be_the_card_played():
    s = fresh()
    s.apply(E.A_PLAY + 3)
    p = s.active_player
    s.field("discard")[p, 3] -= 1
    s.field("hand")[p, 3] += 1
    s.field("discard")[p, 2] += 1
    s.field("hand")[p, 2] -= 1
    s.field("top")[p] = 2
    one(s, "top", f"active player {p}", "Praefectus", "Mercator")


def test_architectus_points_bounded():
    s = fresh()
    s.apply(E.A_PLAY + 1)  # Architectus: 2 colonists on the board
    assert s.phase == E.PH_ARCHITECTUS
    s.field("ctx_points")[()] = 4
    one(s, "ctx_points", "4 movement points", "only 2")


def test_senator_buy_bookkeeping():
    s = fresh()
    s.apply(E.A_PLAY + 6)  # Senator
    assert s.phase == E.PH_BUY
    assert check_invariants(s) == []
    s.field("ctx_buys_left")[()] = 1
    one(s, "ctx_buys_left", "should total 2")
    s.field("ctx_buys_left")[()] = 2
    s.field("ctx_consul")[()] = 1
    one(s, "ctx_consul", "Senator")


def test_bought_position_must_be_empty_while_buying():
    s = fresh()
    s.apply(E.A_PLAY + 6)
    s.field("ctx_bought_pos")[()] = 1
    s.field("ctx_buys_left")[()] = 1
    one(s, "display", "position 0 was bought")


def test_diplomat_needs_a_pile_to_copy():
    s = find(lambda st: st.phase not in (E.PH_PLAY, E.PH_OVER, E.PH_DIPLOMAT, E.PH_TRIBUNUS, E.PH_KEEP)
             and st.game.components.card_types[int(st.field("top")[st.active_player])].action == "diplomat")
    p = s.active_player
    kind = int(s.field("ctx_kind"))
    for q in range(s.num_players):
        t = int(s.field("top")[q])
        if q != p and t >= 0 and s.game.tables[E.T_TYPE_KIND + t] == kind:
            # hide that pile's top card under a Tribunus-free history: empty the pile into the hand
            s.field("hand")[q] += s.field("discard")[q]
            s.field("discard")[q] = 0
            s.field("top")[q] = -1
    one(s, "Diplomat", f"player {p}")


def test_tribunus_phase_has_empty_discard():
    s = fresh()
    p = s.active_player
    s.apply(E.A_PLAY + 0)
    if s.phase != E.PH_TRIBUNUS:
        pytest.skip("Tribunus auto-finished")
    s.field("hand")[p, 1] -= 1
    s.field("discard")[p, 1] += 1
    s.field("top")[p] = 1
    one(s, "discard", f"player {p}", "Tribunus")


# ------------------------------------------------------------ intermediate scoring
def test_intermediate_fields_zero_when_variant_off():
    s = fresh()
    s.field("inter_done")[1] = 1
    one(s, "inter_done", "player 1", "off")


def test_intermediate_scores_consistent():
    s = fresh(intermediate=True)
    s.field("inter_score")[0] = 5
    one(s, "inter_score", "player 0")
    s.field("inter_done")[:4] = 1
    one(s, "inter_score", "not reset")
    s.field("inter_score")[0] = 0
    assert check_invariants(s) == []
    s.field("inter_done")[1] = 3
    one(s, "inter_done", "player 1")


# ------------------------------------------------------------ absent seats
@pytest.mark.parametrize("name,value", [
    ("coins", 5), ("goods", 1), ("hand", 1), ("discard", 1), ("top", 2), ("houses_left", 15),
    ("colonist", 0), ("incoming", 1), ("inter_done", 1), ("inter_score", 3)])
def test_absent_seats_stay_neutral(name, value):
    s = fresh("imperium", 3)
    view = s.field(name)
    if view.ndim == 1:
        view[4] = value
    else:
        view[4, 0] = value
    one(s, f"'{name}'", "seat 4 is absent")


def test_messages_are_strings_and_many_violations_reported():
    s = fresh()
    s.field("coins")[:4] = -1
    s.field("goods")[:4] = -1
    msgs = check_invariants(s)
    assert all(isinstance(m, str) for m in msgs)
    assert sum("coins" in m for m in msgs) == 4
    assert sum("field 'goods'" in m for m in msgs) >= 16


def test_state_array_must_have_layout():
    s = fresh()
    s.s = s.s.astype(np.int64)
    one(s, "int32")


def test_check_is_pure():
    s = fresh()
    play_until(s, lambda st: st.phase == E.PH_ARCHITECTUS, seed=3)
    before = s.s.copy()
    mask = s.legal_action_mask()
    check_invariants(s)
    assert np.array_equal(before, s.s)
    assert np.array_equal(mask, s.legal_action_mask())
