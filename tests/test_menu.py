"""The terminal menu of a decision (concordia_env.display.menu): groups, sections and numbers, what each
entry says (routes with their ends and the cities beyond, Praefectus provinces with the goods each
player receives), input, and 80 columns over whole games."""

from __future__ import annotations

import random

import pytest

from concordia_env import new_game
from concordia_env import scenario as sc
from concordia_env.data import GOODS
from concordia_env.display.menu import COMMANDS, MAX_LINES, Choice, build_menu
from concordia_env.display.render import WIDTH, state_to_text, status_lines, wrap


def praefectus_position():
    """Imperium, 3 players: player 0 holds the Praefectus Magnus and houses in Lutetia (wine) and
    Massilia (food) in Gallia, where player 1 has a house in Massilia and player 2 one in Burdigala
    (tools); the markers of Dacia and Hispania are on their coin side. Player 0 plays the Praefectus."""
    st = new_game("imperium", 3, seed=0)
    sc.set_turn(st, 0)
    sc.set_hand(st, 0, ["Praefectus", "Architectus"])
    for city, good in [("Burdigala", "tools"), ("Lutetia", "wine"), ("Massilia", "food")]:
        sc.set_city_good(st, city, good)
    for player, city in [(0, "Lutetia"), (0, "Massilia"), (1, "Massilia"), (2, "Burdigala")]:
        sc.add_house(st, player, city)
    sc.give_pm(st, 0)
    sc.set_marker(st, "Dacia", False)
    sc.set_marker(st, "Hispania", False)
    sc.set_goods(st, 0, brick=2)
    sc.act(st, "play", "Praefectus")
    return st


def expected_production(st, province: str, p: int) -> str:
    """What producing in ``province`` gives, counted from the position as the rules say: the
    producer 1 good of the province marker's kind (2 with the Praefectus Magnus), and every house
    in the province 1 good of its city's kind to its owner."""
    m, n = st.game.map, st.num_players
    q = m.province_names.index(province)
    got = [[0] * len(GOODS) for _ in range(n)]
    got[p][int(st.field("marker_good")[q])] += 2 if int(st.field("pm")) == p else 1
    for c in range(m.num_cities):
        if m.city_province[c] == q:
            for x in range(n):
                if int(st.field("houses")[c]) >> x & 1:
                    got[x][int(st.field("city_good")[c])] += 1

    def goods(row):
        return " + ".join(f"{v} {GOODS[g]}" for g, v in enumerate(row) if v)

    return f"{province}: you get {goods(got[p])}" + "".join(
        f"; P{x} gets {goods(got[x])}" for x in range(n) if x != p and any(got[x]))


def test_praefectus_entries_say_what_every_player_receives():
    st = praefectus_position()
    menu = build_menu(st, "you")
    assert menu.view() == [
        "Player 0 (you): Praefectus: produce in a province, or take the cash bonus",
        "Praefectus: produce in a province (with the Praefectus Magnus: 2 bonus goods,",
        "    then it passes to P2):",
        "   1 Britannia: you get 2 cloth",
        "   2 Gallia: you get 1 food + 3 wine; P1 gets 1 food; P2 gets 1 tools",
        "   3 Germania: you get 2 wine",
        "   4 Italia: you get 2 cloth",
        "   5 Mauretania: you get 2 food",
        "   6 Hellas: you get 2 wine",
        "   7 Lybia: you get 2 tools",
        "   8 Asia: you get 2 cloth",
        "   9 Syria: you get 2 wine",
        "  10 Aegyptus: you get 2 food",
        "  11 Praefectus: cash bonus, 3 sestertii",
    ]
    flipped = [q for q, up in enumerate(st.field("marker_active")[:len(st.game.map.province_names)]) if not up]
    coins = sum(st.game.components.bonus_marker_coins[int(st.field("marker_good")[q])] for q in flipped)
    assert len(flipped) == 2 and menu.entries[-1].text == f"Praefectus: cash bonus, {coins} sestertii"
    produce = [e for e in menu.entries if e.text.split(":")[0] in st.game.map.province_names]
    assert len(produce) == 10  # 12 provinces, two markers on their coin side
    for e in produce:
        assert e.text == expected_production(st, e.text.split(":")[0], 0)
    # the menu did not touch the position
    before = st.s.copy()
    build_menu(st)
    assert (st.s == before).all()


def test_praefectus_without_the_magnus_and_with_a_full_storehouse():
    st = praefectus_position()
    sc.give_pm(st, 1)
    sc.set_goods(st, 0, brick=7)  # 7 goods + 4 colonists waiting: 1 slot free
    menu = build_menu(st)
    assert menu.groups[0].title == "Praefectus: produce in a province"
    gallia = next(e for e in menu.entries if e.text.startswith("Gallia"))
    assert gallia.text == "Gallia: you get 1 food + 2 wine (room for 1); P1 gets 1 food; P2 gets 1 tools"
    assert gallia.text.replace(" (room for 1)", "") == expected_production(st, "Gallia", 0)


def architectus_position():
    """Imperium, 3 players: player 0 has land colonists in Roma and on Lutetia–Massilia and a sea
    colonist on Massilia–Roma (3 movement points); players 1 and 2 have houses in Novaria."""
    st = praefectus_position()
    sc.set_turn(st, 0)
    sc.set_colonists(st, 0, land=["Roma", ("Lutetia", "Massilia")], sea=[("Massilia", "Roma")])
    sc.add_house(st, 1, "Novaria")
    sc.add_house(st, 2, "Novaria")
    sc.set_city_good(st, "Novaria", "tools")
    sc.act(st, "play", "Architectus")
    return st


def test_a_big_decision_is_a_short_menu_of_groups_then_sections_then_routes():
    st = architectus_position()
    menu = build_menu(st, "you")
    assert len(st.legal_actions()) == 61
    assert menu.view() == [
        "Player 0 (you): Architectus: 3 movement points left",
        "   a move land colonist 1 from Roma: 16 routes (1-16)",
        "   c move land colonist 2 from (Lutetia–Massilia): 23 routes (17-39)",
        "   d move sea colonist 1 from (Massilia–Roma): 21 routes (40-60)",
        "  61 Architectus: done",
    ]
    assert menu.prompt == "Your choice (1-61, a letter for a group; h for help): "
    assert [(g.key, len(g.entries)) for g in menu.groups] == [("a", 16), ("c", 23), ("d", 21), ("e", 1)]
    assert menu.keys == ["a", "a1", "a2", "a3", "c", "c1", "c2", "c3", "d", "d1", "d2", "d3"]
    assert menu.view("a") == [
        "move land colonist 1 from Roma:",
        "  a1 1 point: 3 routes (1-3)",
        "  a2 2 points: 5 routes (4-8)",
        "  a3 3 points: 8 routes (9-16)",
    ]
    # a route: both ends with their goods and the owners of their houses, and the cities one route on
    assert menu.view("a1") == [
        "move land colonist 1 from Roma, 1 point:",
        "   1 Aquileia [food]–Roma; onward: Novaria, Sirmium, Syracusae, Vindobona",
        "   2 Novaria [tools, houses P1 P2]–Roma; onward: Aquileia, Colonia A., Massilia,",
        "     Syracusae",
        "   3 Roma–Syracusae [cloth]; onward: Aquileia, Novaria",
    ]
    assert menu.view("c1")[9:11] == [
        "  21 Massilia [food, houses P0 P1]–Novaria [tools, houses P1 P2]; onward:",
        "     Aquileia, Burdigala, Colonia A., Lutetia, Roma, Valentia",
    ]
    # numbers run through the whole decision, in menu order, and name the legal actions
    assert [e.number for e in menu.entries] == list(range(1, 62))
    assert sorted(menu.actions()) == st.legal_actions()
    assert menu.parse("21") == Choice("action", sc.action_id(st, "move", "land", ("Lutetia", "Massilia"),
                                                              ("Massilia", "Novaria")))
    assert menu.parse("61") == Choice("action", sc.action_id(st, "done"))


def test_neighbours_of_a_route_come_from_the_map():
    st = architectus_position()
    menu = build_menu(st)
    m = st.game.map
    for e in menu.entries[:-1]:
        ends = e.text.split(";")[0]
        a, b = (part.split(" [")[0] for part in ends.split("–"))
        ia, ib = m.city_index(a), m.city_index(b)
        sea = e.number >= 40
        routes = m.sea_routes if sea else m.land_routes
        near = {x for r in routes for x in r if {ia, ib} & set(r) and set(r) != {ia, ib}} - {ia, ib}
        assert e.text.split("; onward: ")[1] == ", ".join(sorted(m.city_names[c] for c in near))


def test_parse_numbers_keys_commands_and_bad_input():
    menu = build_menu(architectus_position())
    assert menu.parse(" 3 ") == Choice("action", menu.actions()[2])
    assert menu.parse("A") == Choice("view", key="a") and menu.parse("c2") == Choice("view", key="c2")
    assert [menu.parse(w).kind for w in ("b", "Board", "h", "?", "m", "menu", "q", "QUIT", "exit")] == [
        "board", "board", "help", "help", "menu", "menu", "quit", "quit", "quit"]
    assert set(COMMANDS) & set("acdefg") == set()
    for bad, msg in [("", "type a number from 1 to 61 (h for help)"),
                     ("x", "'x' is not a number from the list; type 1 to 61 (h for help)"),
                     ("0", "0 is not in the list; choose 1 to 61"), ("62", "62 is not in the list; choose 1 to 61"),
                     ("1.5", "'1.5' is not a number"), ("e", "'e' is not a number"),  # e: the one-entry group
                     ("a9", "'a9' is not a number"), ("x" * 300, "'xxxxxxxxxxxxxxxxx...' is not a number")]:
        with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            menu.parse(bad)


def test_short_decisions_show_everything_with_columns():
    st = new_game("italia", 2, seed=0)
    sc.set_turn(st, 0)
    menu = build_menu(st, "you")
    assert menu.view() == [
        "Player 0 (you): play a card (card play 1 of the game)",
        "cards in your hand:",
        "   1 Tribunus (Mars)                       4 Mercator (3, Mercurius)",
        "   2 Architectus (Jupiter)                 5 Senator (Vesta)",
        "   3 Praefectus (Saturnus)                 6 Diplomat (Jupiter)",
    ]
    assert menu.prompt == "Your choice (1-6; h for help): "
    with pytest.raises(ValueError, match="no group 'z'"):
        menu.view("z")


def test_the_menu_of_a_finished_game_is_refused():
    st = new_game("italia", 2, seed=0)
    st.field("phase")[()] = 10  # PH_OVER
    st.field("current")[()] = -1
    st.refresh()
    with pytest.raises(ValueError, match="the game is over"):
        build_menu(st)


@pytest.mark.parametrize("map_name,players", [("italia", 2), ("imperium", 5)])
def test_every_menu_view_and_status_of_a_whole_game_fits_80_columns(map_name, players):
    """Random legal play to the end: at every decision each view of the menu (the whole menu, every
    group and section), the deciding player's status and, at each card play, the board."""
    st = new_game(map_name, players, seed=5)
    rng = random.Random(5)
    decisions = 0
    while not st.is_terminal():
        legal = st.legal_actions()
        menu = build_menu(st, "you")
        assert sorted(menu.actions()) == legal and [e.number for e in menu.entries] == list(range(1, len(legal) + 1))
        title = len(wrap(menu.title))
        assert len(menu.view()) - title <= MAX_LINES, menu.view()
        lines = menu.view() + [ln for key in menu.keys for ln in menu.view(key)]
        lines += status_lines(st, st.current_player) + [menu.prompt]
        if st.phase == 0:
            lines += state_to_text(st).splitlines()
        assert max(map(len, lines)) <= WIDTH, [ln for ln in lines if len(ln) > WIDTH]
        assert title <= 2
        st.apply(rng.choice(legal))
        decisions += 1
    assert decisions > 100
