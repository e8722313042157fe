"""Static game data: the two maps and the components, loaded and validated.

The facts live in ``data/maps.json`` and ``data/components.json`` (transcribed
from the project's research notes; see docs/data.md). This
module turns them into small Python objects and fails loudly, naming the
defect, if a file is inconsistent (a route to a city that does not exist,
letters that do not match the city tokens, a province list that misses a
city, a deck of the wrong size, ...).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

GOODS: tuple[str, ...] = ("brick", "food", "tools", "wine", "cloth")
GODS: tuple[str, ...] = ("Vesta", "Jupiter", "Saturnus", "Mercurius", "Mars", "Minerva")
ACTIONS: tuple[str, ...] = (
    "tribunus", "architectus", "praefectus", "mercator", "colonus",
    "senator", "consul", "diplomat", "specialist",
)
MAP_NAMES: tuple[str, ...] = ("imperium", "italia")


class DataError(ValueError):
    """A data file is inconsistent; the message names the defect."""


@dataclass(frozen=True)
class MapData:
    """One board. City 0 is always the capital (Roma); provinces never contain it."""

    name: str
    players: tuple[int, ...]
    city_names: tuple[str, ...]
    city_letters: tuple[str, ...]  # "" for Roma
    city_province: tuple[int, ...]  # -1 for Roma
    city_xy: tuple[tuple[float, float], ...]
    province_names: tuple[str, ...]
    province_numerals: tuple[str, ...]
    land_routes: tuple[tuple[int, int], ...]
    sea_routes: tuple[tuple[int, int], ...]
    land_route_xy: tuple[tuple[float, float], ...]
    sea_route_xy: tuple[tuple[float, float], ...]
    aliases: dict[str, str]  # alias -> canonical name

    @property
    def num_cities(self) -> int:
        return len(self.city_names)

    @property
    def letters(self) -> tuple[str, ...]:
        return tuple(sorted({letter for letter in self.city_letters if letter}))

    def city_index(self, name: str) -> int:
        """Index of a city by name or alias (case-insensitive)."""
        key = name.strip().lower()
        for i, n in enumerate(self.city_names):
            if n.lower() == key:
                return i
        for alias, canonical in self.aliases.items():
            if alias.lower() == key:
                return self.city_names.index(canonical)
        raise KeyError(f"no city {name!r} on the {self.name} map")


@dataclass(frozen=True)
class CardType:
    name: str
    action: str
    god: str
    mercator_sestertii: int = 0
    good: int = -1  # specialists: index into GOODS
    minerva_vp: int = 0


@dataclass(frozen=True)
class Components:
    prices: tuple[int, ...]
    bonus_marker_coins: tuple[int, ...]
    bonus_markers_in_box: tuple[int, ...]
    house_coins: tuple[int, ...]
    house_goods: tuple[tuple[int, ...], ...]  # per city good: goods vector paid
    card_types: tuple[CardType, ...]
    starting_hand: tuple[int, ...]  # card type indices
    decks: dict[str, tuple[tuple[int, tuple[int, ...]], ...]]  # deck -> ((type, cost vector), ...)
    decks_per_player_count: dict[int, tuple[str, ...]]
    display_costs: tuple[tuple[tuple[int, ...], int], ...]  # per position: (fixed goods, number of '?')
    city_tokens: dict[str, tuple[int, ...]]  # letter -> count per good
    storehouse_slots: int
    starting_goods: tuple[int, ...]
    colonists_per_kind: int
    colonists_in_roma_per_kind: int
    houses: int
    starting_money: tuple[int, ...]
    concordia_vp: int
    colonist_cost: tuple[int, ...]
    tribunus_free_cards: int
    colonus_cash_base: int
    colonus_cash_per_colonist: int
    intermediate_payout: tuple[int, ...]

    def card_type_index(self, name: str) -> int:
        for i, t in enumerate(self.card_types):
            if t.name.lower() == name.strip().lower():
                return i
        raise KeyError(f"no card type {name!r}; known: {[t.name for t in self.card_types]}")


def _read(name: str) -> Any:
    text = resources.files("concordia_env").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    return json.loads(text)


def _goods_vector(d: dict[str, int], where: str) -> tuple[int, ...]:
    for g, n in d.items():
        if g not in GOODS:
            raise DataError(f"{where}: unknown good {g!r}")
        if not isinstance(n, int) or n < 0:
            raise DataError(f"{where}: bad amount {n!r} of {g}")
    return tuple(int(d.get(g, 0)) for g in GOODS)


def _parse_prices(goods: list[dict[str, Any]]) -> tuple[int, ...]:
    """The goods' prices, checking that the goods are :data:`GOODS` in value order and dearer each."""
    if [g["name"] for g in goods] != list(GOODS):
        raise DataError(f"components: goods must be {GOODS} in value order, got {[g['name'] for g in goods]}")
    prices = tuple(g["price"] for g in goods)
    if list(prices) != sorted(prices) or len(set(prices)) != len(prices):
        raise DataError(f"components: goods prices {prices} are not strictly increasing in value order")
    return prices


def _parse_card_type(t: dict[str, Any]) -> CardType:
    """One card type: a known action and god; a good for specialists only, sestertii for Mercators only."""
    if t["action"] not in ACTIONS:
        raise DataError(f"card type {t['name']!r}: unknown action {t['action']!r}")
    if t["god"] not in GODS:
        raise DataError(f"card type {t['name']!r}: unknown god {t['god']!r}")
    good = GOODS.index(t["good"]) if "good" in t else -1
    if (t["action"] == "specialist") != (good >= 0):
        raise DataError(f"card type {t['name']!r}: specialists, and only they, name a good")
    if (t["action"] == "mercator") != ("mercator_sestertii" in t):
        raise DataError(f"card type {t['name']!r}: Mercators, and only they, give sestertii")
    return CardType(t["name"], t["action"], t["god"], t.get("mercator_sestertii", 0), good, t.get("minerva_vp", 0))


def _parse_card_types(raw_types: list[dict[str, Any]]) -> list[CardType]:
    """Every card type, their names distinct."""
    types = [_parse_card_type(t) for t in raw_types]
    names = [t.name for t in types]
    if len(set(names)) != len(names):
        raise DataError("components: duplicate card type names")
    return types


def _card_index(types: list[CardType], name: str, where: str) -> int:
    """The index of card type ``name``; ``DataError`` naming ``where`` if there is none."""
    names = [t.name for t in types]
    if name not in names:
        raise DataError(f"{where}: unknown card {name!r}")
    return names.index(name)


def _parse_decks(raw: dict[str, Any], types: list[CardType],
                 starting: tuple[int, ...]) -> dict[str, tuple[tuple[int, tuple[int, ...]], ...]]:
    """Every deck: its declared size, cards that are for sale, each with a cost."""
    decks = {}
    for d, cards in raw["decks"].items():
        expected = raw["deck_sizes"].get(d)
        if expected != len(cards):
            raise DataError(f"deck {d}: {len(cards)} cards, expected {expected}")
        entries = []
        for c in cards:
            ti = _card_index(types, c["card"], f"deck {d}")
            if types[ti].action in ("tribunus", "senator") or ti in starting and types[ti].action == "mercator":
                raise DataError(f"deck {d}: {c['card']} is not for sale in the base game")
            cost = _goods_vector(c["cost"], f"deck {d} card {c['card']}")
            if sum(cost) == 0:
                raise DataError(f"deck {d}: card {c['card']} has no cost")
            entries.append((ti, cost))
        decks[d] = tuple(entries)
    return decks


def _parse_decks_per_player_count(raw: dict[str, Any], decks: dict[str, Any]) -> dict[int, tuple[str, ...]]:
    """The decks each player count uses, every one of them existing."""
    dpp = {int(k): tuple(v) for k, v in raw["decks_per_player_count"].items()}
    for n, ds in dpp.items():
        for d in ds:
            if d not in decks:
                raise DataError(f"{n} players use deck {d!r}, which does not exist")
    return dpp


def _parse_display(raw_costs: list[list[str]]) -> tuple[tuple[tuple[int, ...], int], ...]:
    """The 7 display positions' extra costs: (fixed goods, number of goods of any kind)."""
    display = []
    for pos, cost in enumerate(raw_costs):
        fixed = _goods_vector({g: cost.count(g) for g in cost if g != "any"}, f"display position {pos + 1}")
        display.append((fixed, cost.count("any")))
    if len(display) != 7:
        raise DataError(f"components: display has {len(display)} positions, expected 7")
    return tuple(display)


def _parse_starting_money(setup: dict[str, Any]) -> tuple[int, ...]:
    """The starting money by turn position, checking the setup's colonist counts too."""
    money = tuple(setup["starting_money"])
    if len(money) < 5:
        raise DataError("components: starting money must list 5 amounts")
    if setup["colonists"]["land"] != setup["colonists"]["sea"]:
        raise DataError("components: land and sea colonist counts differ")
    return money


def parse_components(raw: dict[str, Any]) -> Components:
    """Build and validate :class:`Components` from the JSON structure."""
    goods = raw["goods"]
    prices = _parse_prices(goods)
    types = _parse_card_types(raw["card_types"])
    starting = tuple(_card_index(types, n, "starting hand") for n in raw["starting_hand"])
    decks = _parse_decks(raw, types, starting)
    dpp = _parse_decks_per_player_count(raw, decks)
    display = _parse_display(raw["display_costs"])
    tokens = {k: _goods_vector(v, f"city tokens {k}") for k, v in raw["city_tokens"].items()}
    setup = raw["setup"]
    money = _parse_starting_money(setup)
    return Components(
        prices=prices,
        bonus_marker_coins=tuple(g["bonus_marker_coins"] for g in goods),
        bonus_markers_in_box=tuple(g["bonus_markers_in_box"] for g in goods),
        house_coins=tuple(g["house_coins"] for g in goods),
        house_goods=tuple(_goods_vector(g["house_goods"], f"house cost in {g['name']} city") for g in goods),
        card_types=tuple(types),
        starting_hand=starting,
        decks=decks,
        decks_per_player_count=dpp,
        display_costs=display,
        city_tokens=tokens,
        storehouse_slots=setup["storehouse_slots"],
        starting_goods=_goods_vector(setup["starting_goods"], "starting goods"),
        colonists_per_kind=setup["colonists"]["land"],
        colonists_in_roma_per_kind=setup["colonists_in_roma"]["land"],
        houses=setup["houses"],
        starting_money=money,
        concordia_vp=setup["concordia_vp"],
        colonist_cost=_goods_vector(raw["colonist_cost"], "colonist cost"),
        tribunus_free_cards=raw["tribunus_free_cards"],
        colonus_cash_base=raw["colonus_cash"]["base"],
        colonus_cash_per_colonist=raw["colonus_cash"]["per_colonist"],
        intermediate_payout=tuple(raw["intermediate_scoring_payout"]),
    )


def _city_provinces_and_letters(where: str, cities: list[dict[str, Any]], prov_names: list[str],
                                components: Components) -> tuple[list[int], list[str]]:
    """Each city's province index and letter, Roma first (-1, ""); both must be known."""
    city_prov = [-1]
    letters = [""]
    for c in cities:
        if c["province"] not in prov_names:
            raise DataError(f"{where}: city {c['name']} lies in unknown province {c['province']!r}")
        city_prov.append(prov_names.index(c["province"]))
        if c["letter"] not in components.city_tokens:
            raise DataError(f"{where}: city {c['name']} has unknown letter {c['letter']!r}")
        letters.append(c["letter"])
    return city_prov, letters


def _check_provinces(where: str, provinces: list[dict[str, Any]], cities: list[dict[str, Any]]) -> None:
    """Every province lists exactly the cities that lie in it, and at least one."""
    for p in provinces:
        listed = set(p["cities"])
        actual = {c["name"] for c in cities if c["province"] == p["name"]}
        if listed != actual:
            raise DataError(f"{where}: province {p['name']} lists {sorted(listed)} but its cities are {sorted(actual)}")
        if not listed:
            raise DataError(f"{where}: province {p['name']} has no city")


def _check_letters(where: str, letters: list[str], components: Components) -> None:
    """As many cities of each letter as there are city tokens of it."""
    for letter in sorted(set(letters) - {""}):
        n_cities = letters.count(letter)
        n_tokens = sum(components.city_tokens[letter])
        if n_cities != n_tokens:
            raise DataError(f"{where}: {n_cities} cities of letter {letter} but {n_tokens} city tokens")


def _parse_routes(where: str, raw: dict[str, Any], key: str,
                  city_names: list[str]) -> tuple[list[tuple[int, int]], list[tuple[float, float]]]:
    """The ``key`` routes as (city a, city b) pairs and their (x, y): known ends, no loops, none twice."""
    pairs, xys, seen = [], [], set()
    for r in raw[key]:
        a, b = r[0], r[1]
        for end in (a, b):
            if end not in city_names:
                raise DataError(f"{where}: {key} route {a}-{b} ends in unknown city {end!r}")
        if a == b:
            raise DataError(f"{where}: {key} route {a}-{b} is a loop")
        k = frozenset((a, b))
        if k in seen:
            raise DataError(f"{where}: {key} route {a}-{b} listed twice")
        seen.add(k)
        pairs.append((city_names.index(a), city_names.index(b)))
        xys.append((float(r[2]), float(r[3])))
    return pairs, xys


def parse_map(name: str, raw: dict[str, Any], components: Components) -> MapData:
    """Build and validate one :class:`MapData` from the JSON structure."""
    where = f"map {name}"
    capital = raw["capital"]
    cities = raw["cities"]
    city_names = [capital] + [c["name"] for c in cities]
    if len(set(city_names)) != len(city_names):
        raise DataError(f"{where}: duplicate city names")
    provinces = raw["provinces"]
    prov_names = [p["name"] for p in provinces]
    city_prov, letters = _city_provinces_and_letters(where, cities, prov_names, components)
    _check_provinces(where, provinces, cities)
    _check_letters(where, letters, components)
    land, land_xy = _parse_routes(where, raw, "land_routes", city_names)
    sea, sea_xy = _parse_routes(where, raw, "sea_routes", city_names)
    for i, n in enumerate(city_names):
        if not any(i in r for r in land + sea):
            raise DataError(f"{where}: city {n} touches no route")
    aliases = {a: c["name"] for c in cities for a in c.get("aliases", [])}
    xy = [tuple(raw["capital_xy"])] + [tuple(c["xy"]) for c in cities]
    return MapData(
        name=name,
        players=tuple(raw["players"]),
        city_names=tuple(city_names),
        city_letters=tuple(letters),
        city_province=tuple(city_prov),
        city_xy=tuple((float(x), float(y)) for x, y in xy),
        province_names=tuple(prov_names),
        province_numerals=tuple(p["numeral"] for p in provinces),
        land_routes=tuple(land),
        sea_routes=tuple(sea),
        land_route_xy=tuple(land_xy),
        sea_route_xy=tuple(sea_xy),
        aliases=aliases,
    )


@cache
def components() -> Components:
    """The validated components (cached)."""
    return parse_components(_read("components.json"))


@cache
def load_map(name: str) -> MapData:
    """The validated map ``name`` ("imperium" or "italia"), cached."""
    if name not in MAP_NAMES:
        raise ValueError(f"unknown map {name!r}; choose one of {list(MAP_NAMES)}")
    return parse_map(name, _read("maps.json")[name], components())
