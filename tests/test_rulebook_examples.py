"""The worked examples of the rulebook (RULES.md, "Rulebook examples worth a test each",
and the 114 VP scoring example), each set up exactly with :mod:`concordia_env.scenario`.

Colours of the examples: red = player 0, blue = 1, yellow = 2, green = 3 (4-player Imperium).
"""

from __future__ import annotations

import pytest

from concordia_env import engine as E
from concordia_env import new_game
from concordia_env import scenario as sc

RED, BLUE, YELLOW, GREEN = 0, 1, 2, 3


@pytest.fixture
def st():
    """4-player Imperium, red (player 0) to play; the Praefectus Magnus with green."""
    state = new_game("imperium", 4, seed=0)
    sc.set_turn(state, RED)
    sc.give_pm(state, GREEN)
    return state


def coins(state, p):
    return int(state.field("coins")[p])


def test_tribunus_four_cards_played(st):
    sc.set_discard(st, RED, ["Architectus", "Praefectus", "Mercator (3)", "Senator"])
    sc.set_hand(st, RED, {"Tribunus": 1, "Praefectus": 1, "Diplomat (Jupiter)": 1})
    sc.set_coins(st, RED, 10)
    sc.act(st, "play", "Tribunus")
    assert coins(st, RED) == 12  # 5 cards back: 2 beyond the third
    assert int(st.field("hand")[RED].sum()) == 7
    assert int(st.field("discard")[RED].sum()) == 0 and int(st.field("top")[RED]) == -1
    # then the optional colonist in Roma for 1 food + 1 tools
    assert st.phase == E.PH_TRIBUNUS
    sc.act(st, "place", "land", "Roma")
    assert sc.goods_of(st, RED)["food"] == 1 and sc.goods_of(st, RED)["tools"] == 0
    assert sorted(st.field("colonist")[RED][:3].tolist()) == [-1, 0, 0]
    assert st.active_player == BLUE


def test_architectus_example(st):
    # red: land colonist on Colonia A.–Novaria, land + sea colonist in Roma, a house in Colonia A.
    sc.set_colonists(st, RED, land=["Roma", ("Colonia A.", "Novaria")], sea=["Roma"])
    sc.add_house(st, RED, "Colonia A.")
    for city, good in [("Massilia", "cloth"), ("Novaria", "wine"), ("Aquileia", "food"),
                       ("Vindobona", "tools"), ("Colonia A.", "brick")]:
        sc.set_city_good(st, city, good)
    sc.add_house(st, BLUE, "Aquileia")
    sc.add_house(st, YELLOW, "Aquileia")
    sc.set_goods(st, RED, brick=3, cloth=1, wine=1, food=1)
    sc.set_coins(st, RED, 15)

    sc.act(st, "play", "Architectus")
    assert int(st.field("ctx_points")) == 3

    sea = sc.action_id(st, "move", "sea", "Roma", ("Roma", "Massilia"))
    assert st.action_to_string(sea) == "Architectus: move sea colonist 1 Roma→(Massilia–Roma), cost 1"
    st.apply(sea)
    assert int(st.field("ctx_points")) == 2

    land = sc.action_id(st, "move", "land", "Roma", ("Aquileia", "Vindobona"))
    assert st.action_to_string(land) == \
        "Architectus: move land colonist 1 Roma→(Aquileia–Vindobona), cost 2"
    st.apply(land)
    assert int(st.field("ctx_points")) == 0

    # 5 cities beside red's colonists: Colonia A. already has red's house, Roma never takes one,
    # Vindobona (tools) is out of reach of red's goods; red can afford the other three
    buildable = {st.game.map.city_names[a - E.A_BUILD] for a in st.legal_actions()
                 if E.A_BUILD <= a < E.A_PRODUCE}
    assert buildable == {"Massilia", "Novaria", "Aquileia"}
    expected = [("Massilia", "Architectus: build in Massilia (cloth), cost 5 sestertii + brick+cloth", 10),
                ("Novaria", "Architectus: build in Novaria (wine), cost 4 sestertii + brick+wine", 6),
                ("Aquileia", "Architectus: build in Aquileia (food), cost 6 sestertii + brick+food", 0)]
    for city, text, left in expected:
        a = sc.action_id(st, "build", city)
        assert st.action_to_string(a) == text
        st.apply(a)
        assert coins(st, RED) == left
    assert sc.goods_of(st, RED) == dict(brick=0, food=0, tools=0, wine=0, cloth=0)
    assert int(st.field("houses_left")[RED]) == 11
    for city in ("Massilia", "Novaria", "Aquileia", "Colonia A."):
        assert int(st.field("houses")[st.game.map.city_index(city)]) >> RED & 1
    # nothing left to pay with: the action ended by itself and blue is to play
    assert st.active_player == BLUE and st.phase == E.PH_PLAY


def test_praefectus_syria(st):
    sc.set_city_good(st, "Tyros", "food")
    sc.set_city_good(st, "Antiochia", "cloth")
    sc.set_marker(st, "Syria", True, good="cloth")
    sc.add_house(st, RED, "Tyros")
    sc.add_house(st, BLUE, "Tyros")
    sc.add_house(st, YELLOW, "Antiochia")
    before = [sc.goods_of(st, p) for p in range(4)]
    a = sc.action_id(st, "produce", "Syria")
    sc.act(st, "play", "Praefectus")
    assert st.action_to_string(a) == "Praefectus: produce in Syria (bonus 1 cloth)"
    st.apply(a)
    gained = [{g: sc.goods_of(st, p)[g] - before[p][g] for g in before[p] if sc.goods_of(st, p)[g] != before[p][g]}
              for p in range(4)]
    assert gained == [{"cloth": 1, "food": 1}, {"food": 1}, {"cloth": 1}, {}]
    assert int(st.field("marker_active")[st.game.map.province_names.index("Syria")]) == 0
    assert int(st.field("pm")) == GREEN


def test_praefectus_cash_six_coins(st):
    flipped = {"Gallia": "wine", "Dacia": "food", "Syria": "cloth", "Asia": "cloth"}  # 2 + 2 + 1 + 1
    for prov, good in flipped.items():
        sc.set_marker(st, prov, False, good=good)
    sc.set_coins(st, RED, 0)
    sc.act(st, "play", "Praefectus")
    assert st.action_to_string(E.A_CASH) == "Praefectus: cash bonus, 6 sestertii"
    sc.act(st, "cash")
    assert coins(st, RED) == 6
    assert st.field("marker_active")[:len(st.game.map.province_names)].all()
    assert int(st.field("pm")) == GREEN


def test_colonus_two_colonists(st):
    sc.add_house(st, RED, "Massilia")
    sc.set_goods(st, RED, food=2, tools=2)
    sc.set_hand(st, RED, ["Colonus"])
    sc.act(st, "play", "Colonus")
    assert not sc.is_legal(st, "place", "land", "Novaria")  # no house of red there
    assert sc.is_legal(st, "place", "sea", "Roma") and sc.is_legal(st, "place", "land", "Massilia")
    sc.act(st, "place", "sea", "Roma")
    sc.act(st, "place", "land", "Massilia")
    col = st.field("colonist")[RED].tolist()
    massilia = st.game.map.city_index("Massilia")
    assert sorted(col[:3]) == [-1, 0, massilia] and sorted(col[3:]) == [-1, 0, 0]
    assert sc.goods_of(st, RED) == dict(brick=0, food=0, tools=0, wine=0, cloth=0)
    assert st.active_player == BLUE  # nothing more to pay with: the action ended


def test_mercator_starting(st):
    sc.set_coins(st, RED, 2)
    sc.set_goods(st, RED, food=1, tools=1, cloth=1, wine=3)  # + 4 colonists stored = 10 of 12
    sc.act(st, "play", "Mercator (3)")
    assert coins(st, RED) == 5
    for _ in range(3):
        sc.act(st, "sell", "wine")
    assert coins(st, RED) == 23  # money for 7 bricks, 5 free slots
    for _ in range(4):
        sc.act(st, "buy", "brick")
    assert coins(st, RED) == 11 and sc.goods_of(st, RED)["brick"] == 4
    assert not sc.is_legal(st, "buy", "food")  # a third kind
    assert not sc.is_legal(st, "sell", "food")
    assert not sc.is_legal(st, "buy", "wine")  # sold this action
    assert sc.is_legal(st, "buy", "brick")  # the fifth slot is still free
    sc.act(st, "buy", "brick")
    # storehouse full, no other kind allowed: only 'done' was left, applied automatically
    assert sc.goods_of(st, RED)["brick"] == 5 and coins(st, RED) == 8
    assert st.active_player == BLUE


def test_senator_slide(st):
    display = ["Mason", "Farmer", "Smith", "Architectus", "Praefectus", "Colonus", "Mercator (5)"]
    sc.set_display(st, display)
    sc.set_deck(st, ["Vintner", "Weaver", "Consul"])
    sc.set_goods(st, RED, food=2, brick=1, tools=1, wine=1)
    sc.act(st, "play", "Senator")
    sc.act(st, "buy card", 1)  # Mason: food, nothing for position 1
    sc.act(st, "buy card", 3)  # Smith: brick + tools, plus '?' for position 3
    assert st.phase == E.PH_PAY
    sc.act(st, "pay", "wine")
    assert sc.display_names(st) == ["Farmer", "Architectus", "Praefectus", "Colonus", "Mercator (5)",
                                    "Vintner", "Weaver"]
    assert sc.goods_of(st, RED) == dict(brick=0, food=1, tools=0, wine=0, cloth=0)
    hand = st.field("hand")[RED]
    comp = st.game.components
    assert hand[comp.card_type_index("Mason")] == 1 and hand[comp.card_type_index("Smith")] == 1
    assert int(st.field("deck_len")) - int(st.field("deck_pos")) == 1
    assert st.active_player == BLUE


def test_consul_position_six(st):
    sc.set_display(st, ["Mason", "Farmer", "Smith", "Architectus", "Praefectus", "Vintner", "Colonus"])
    sc.set_goods(st, RED, brick=1, wine=1)  # exactly the Vintner's red field
    sc.set_hand(st, RED, {"Consul": 1, "Senator": 1})
    senator = st.clone()
    sc.act(senator, "play", "Senator")
    assert not sc.is_legal(senator, "buy card", 6)  # the board adds '?' + cloth
    sc.act(st, "play", "Consul")
    assert st.action_to_string(sc.action_id(st, "buy card", 6)) == "Consul: buy Vintner at position 6 for brick+wine"
    sc.act(st, "buy card", 6)
    assert sc.goods_of(st, RED) == dict(brick=0, food=0, tools=0, wine=0, cloth=0)
    assert st.field("hand")[RED][st.game.components.card_type_index("Vintner")] == 1
    assert st.active_player == BLUE


def test_vintner_four_houses(st):
    wine_cities = ["Novaria", "Lutetia", "Athenae", "Antiochia"]
    for c in wine_cities + ["Sinope"]:
        sc.set_city_good(st, c, "wine")
    sc.set_city_good(st, "Tyros", "food")
    for c in wine_cities:
        sc.add_house(st, RED, c)
    sc.add_house(st, RED, "Tyros")
    sc.add_house(st, BLUE, "Novaria")
    sc.add_house(st, YELLOW, "Sinope")
    sc.set_goods(st, RED)
    sc.set_hand(st, RED, {"Vintner": 1})
    before = st.field("goods").copy()
    sc.act(st, "play", "Vintner")
    gained = st.field("goods") - before
    assert gained[RED].tolist() == [0, 0, 0, 4, 0]
    assert not gained[1:].any()


def test_scoring_114():
    st = new_game("imperium", 4, seed=0)
    houses = {"Isca D.": "food", "Londinium": "food", "Brigantium": "food", "Vindobona": "food",
              "Burdigala": "brick", "Olisipo": "brick", "Novaria": "brick",
              "Lutetia": "tools", "Colonia A.": "tools", "Bycantium": "tools",
              "Massilia": "cloth", "Napoca": "cloth"}  # 7 provinces
    for city, good in houses.items():
        sc.set_city_good(st, city, good)
        sc.add_house(st, RED, city)
    sc.set_colonists(st, RED, land=["Roma", ("Aquileia", "Vindobona"), ("Isca D.", "Londinium")],
                     sea=["Roma", ("Roma", "Massilia")])
    sc.set_coins(st, RED, 13)
    sc.set_goods(st, RED, cloth=1, tools=3, brick=1)
    sc.set_concordia(st, RED)
    sc.set_hand(st, RED, {"Senator": 1, "Architectus": 1, "Praefectus": 2, "Diplomat (Saturnus)": 1,
                          "Mercator (3)": 1, "Tribunus": 1, "Colonus": 1, "Farmer": 1})
    sc.set_discard(st, RED, ["Consul", "Praefectus", "Mercator (5)", "Diplomat (Mars)"])
    row = st.score_breakdown()[RED].tolist()
    assert row == [3, 18, 28, 16, 30, 12, 7]  # Vesta .. Minerva, Concordia
    assert st.scores()[RED] == 114
