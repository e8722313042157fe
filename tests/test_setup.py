"""Setup (RULES.md "Setup") and the data loader's refusal of corrupted data."""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np
import pytest

from concordia_env import data, new_game
from concordia_env import engine as E
from concordia_env.board import deck_card_ids

COMBOS = [("imperium", 3), ("imperium", 4), ("imperium", 5), ("italia", 2), ("italia", 3), ("italia", 4)]
SEEDS = range(12)


def games():
    for m, n in COMBOS:
        for seed in SEEDS:
            yield m, n, seed, new_game(m, n, seed)


def test_money_by_turn_order_and_pm_to_the_last_player():
    starts = Counter()
    for _m, n, _seed, st in games():
        start = int(st.field("start_player"))
        starts[n, start] += 1
        assert [int(st.field("coins")[(start + i) % n]) for i in range(n)] == [5, 6, 7, 8, 9][:n]
        assert int(st.field("pm")) == (start - 1) % n
        assert st.active_player == st.current_player == start and st.phase == E.PH_PLAY
    assert all(starts[n, p] for _, n in COMBOS for p in range(n)), "every player can start"


def test_storehouses_colonists_hands():
    comp = data.components()
    starting = Counter(comp.card_types[t].name for t in comp.starting_hand)
    assert starting == {"Tribunus": 1, "Architectus": 1, "Praefectus": 2, "Mercator (3)": 1,
                        "Senator": 1, "Diplomat (Jupiter)": 1}
    for _m, n, _seed, st in games():
        for p in range(n):
            assert st.field("goods")[p].tolist() == [1, 2, 1, 1, 1]
            assert st.field("colonist")[p].tolist() == [0, -1, -1, 0, -1, -1]  # 1 land + 1 sea in Roma
            hand = {comp.card_types[t].name: int(c) for t, c in enumerate(st.field("hand")[p]) if c}
            assert hand == starting
            assert not st.field("discard")[p].any() and int(st.field("top")[p]) == -1
            assert int(st.field("houses_left")[p]) == 15
        assert not st.field("houses").any() and (st.field("route_occ") == -1).all()
        assert int(st.field("concordia")) == -1
        assert not st.field("goods")[n:].any(), "no padded player holds anything"


def test_display_and_decks():
    comp = data.components()
    ids = deck_card_ids(comp)
    for _m, n, _seed, st in games():
        decks = ["I", "II", "III", "IV", "V"][:n]
        assert list(comp.decks_per_player_count[n]) == decks
        stack = st.field("deck")[:int(st.field("deck_len"))].tolist()
        k = 0
        for d in decks:  # each deck shuffled on its own, I on top
            assert sorted(stack[k:k + len(ids[d])]) == ids[d]
            k += len(ids[d])
        assert k == len(stack)
        assert st.field("display").tolist() == stack[:7] and set(stack[:7]) <= set(ids["I"])
        assert int(st.field("deck_pos")) == 7


def test_city_tokens_per_letter_and_markers():
    comp = data.components()
    for m, _n, _seed, st in games():
        md = st.game.map
        goods = st.field("city_good")
        assert int(goods[0]) == -1  # Roma produces nothing
        for letter in md.letters:
            got = Counter(int(goods[c]) for c in range(md.num_cities) if md.city_letters[c] == letter)
            assert [got[g] for g in range(5)] == list(comp.city_tokens[letter])
        assert ("D" in md.letters) == (m == "imperium")
        for q in range(len(md.province_names)):
            best = max(int(goods[c]) for c in range(md.num_cities) if md.city_province[c] == q)
            assert int(st.field("marker_good")[q]) == best and st.field("marker_active")[q] == 1


def test_same_seed_same_game_other_seed_other_game():
    a, b, c = new_game("imperium", 4, 7), new_game("imperium", 4, 7), new_game("imperium", 4, 8)
    assert a == b and a.to_json() == b.to_json()
    assert a != c
    assert int(new_game("italia", 3, 1, intermediate_scoring=True).field("intermediate")) == 1
    assert int(new_game("italia", 3, 1).field("intermediate")) == 0


@pytest.mark.parametrize("map_name, n", [("imperium", 2), ("italia", 5), ("imperium", 6), ("italia", 1),
                                         ("imperium", True), ("italia", "3")])
def test_bad_player_counts_list_the_allowed_combinations(map_name, n):
    with pytest.raises(ValueError) as err:
        new_game(map_name, n, 0)
    assert "imperium with [3, 4, 5] players" in str(err.value)
    assert "italia with [2, 3, 4] players" in str(err.value)


def test_unknown_map_and_bad_seed():
    with pytest.raises(ValueError, match=r"unknown map 'atlantis'.*imperium.*italia"):
        new_game("atlantis", 3, 0)
    for seed in ("1", 1.5, None, True):
        with pytest.raises(ValueError, match="seed must be an int"):
            new_game("imperium", 3, seed)
    assert new_game("imperium", 3, np.int64(3)) == new_game("imperium", 3, 3)


# ------------------------------------------------------------ data loader
@pytest.fixture(scope="module")
def raw_components():
    return data._read("components.json")


@pytest.fixture(scope="module")
def raw_maps():
    return data._read("maps.json")


def _broken(raw, edit):
    raw = copy.deepcopy(raw)
    edit(raw)
    return raw


def _set(path, value):
    def edit(raw):
        node = raw
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


COMPONENT_DEFECTS = [
    ("goods out of order", lambda r: r["goods"].reverse(), "goods must be"),
    ("prices not increasing", _set(["goods", 4, "price"], 2), "not strictly increasing"),
    ("unknown action", _set(["card_types", 0, "action"], "juggler"), "unknown action 'juggler'"),
    ("unknown god", _set(["card_types", 1, "god"], "Pluto"), "unknown god 'Pluto'"),
    ("specialist without good", lambda r: r["card_types"][12].pop("good"), "specialists, and only they"),
    ("mercator without income", lambda r: r["card_types"][3].pop("mercator_sestertii"), "Mercators"),
    ("duplicate card names", _set(["card_types", 1, "name"], "Tribunus"), "duplicate card type"),
    ("unknown starting card", _set(["starting_hand", 0], "Emperor"), "unknown card 'Emperor'"),
    ("deck size", lambda r: r["decks"]["I"].pop(), "deck I: 7 cards, expected 8"),
    ("tribunus for sale", _set(["decks", "II", 0, "card"], "Tribunus"), "not for sale"),
    ("unknown cost good", _set(["decks", "I", 0, "cost"], {"gold": 1}), "unknown good 'gold'"),
    ("negative cost", _set(["decks", "I", 0, "cost"], {"tools": -1}), "bad amount -1"),
    ("free card", _set(["decks", "I", 0, "cost"], {}), "has no cost"),
    ("missing deck", _set(["decks_per_player_count", "5"], ["I", "VI"]), "deck 'VI'"),
    ("display size", lambda r: r["display_costs"].pop(), "display has 6 positions"),
    ("starting money", _set(["setup", "starting_money"], [5, 6]), "5 amounts"),
]


@pytest.mark.parametrize("what, edit, message", COMPONENT_DEFECTS, ids=[d[0] for d in COMPONENT_DEFECTS])
def test_corrupt_components_fail_loudly(raw_components, what, edit, message):
    with pytest.raises(data.DataError, match=message):
        data.parse_components(_broken(raw_components, edit))


def _drop_city_routes(name):
    def edit(raw):
        for key in ("land_routes", "sea_routes"):
            raw["imperium"][key] = [r for r in raw["imperium"][key] if name not in r[:2]]
    return edit


MAP_DEFECTS = [
    ("duplicate city", _set(["imperium", "cities", 1, "name"], "Isca D."), "duplicate city names"),
    ("unknown province", _set(["imperium", "cities", 0, "province"], "Atlantis"), "unknown province 'Atlantis'"),
    ("province list", lambda r: r["imperium"]["provinces"][0]["cities"].pop(), "province Britannia lists"),
    ("unknown letter", _set(["imperium", "cities", 0, "letter"], "E"), "unknown letter 'E'"),
    ("letter count", _set(["imperium", "cities", 0, "letter"], "B"), "cities of letter A but 7 city tokens"),
    ("route to nowhere", _set(["imperium", "land_routes", 0, 1], "Atlantis"), "unknown city 'Atlantis'"),
    ("loop route", _set(["imperium", "sea_routes", 0, 1], "Alexandria"), "is a loop"),
    ("route twice", lambda r: r["imperium"]["land_routes"].append(["Cyrene", "Alexandria", 0, 0]), "listed twice"),
    ("isolated city", _drop_city_routes("Isca D."), "city Isca D. touches no route"),
]


@pytest.mark.parametrize("what, edit, message", MAP_DEFECTS, ids=[d[0] for d in MAP_DEFECTS])
def test_corrupt_maps_fail_loudly(raw_maps, what, edit, message):
    with pytest.raises(data.DataError, match=message):
        data.parse_map("imperium", _broken(raw_maps, edit)["imperium"], data.components())


def test_shipped_data_parse_cleanly(raw_components, raw_maps):
    comp = data.parse_components(raw_components)
    for name in data.MAP_NAMES:
        m = data.parse_map(name, raw_maps[name], comp)
        assert m.city_names[0] == "Roma" and m.city_province[0] == -1
    assert issubclass(data.DataError, ValueError)
