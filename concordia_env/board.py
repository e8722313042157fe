"""Static tables of one map for the kernel: route geometry, movement costs, card data.

:func:`build_tables` flattens a :class:`~concordia_env.data.MapData` and the
:class:`~concordia_env.data.Components` into the ``T`` array that
:mod:`concordia_env.engine` reads.

Movement cost (the Architectus): a colonist standing in a city pays 1 point to
step onto a route touching that city and 1 more for each further route,
passing through the city shared by consecutive routes. So the cost from a
route to another is their distance in the route graph where two routes of the
colonist's kind are adjacent when they share a city (Roma included), and from
a city it is 1 + the distance from the nearest route touching it.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from . import engine as E
from .data import GODS, Components, MapData
from .rules.quantities import card_any, card_goods

_KIND_OF_ACTION = {
    "tribunus": E.K_TRIBUNUS, "architectus": E.K_ARCHITECTUS, "praefectus": E.K_PRAEFECTUS,
    "colonus": E.K_COLONUS, "senator": E.K_SENATOR, "consul": E.K_CONSUL, "diplomat": E.K_DIPLOMAT,
}


def card_kind(card_type) -> int:
    """Action kind (``engine.K_*``) of a :class:`~concordia_env.data.CardType`."""
    if card_type.action == "mercator":
        return E.K_MERCATOR3 if card_type.mercator_sestertii == 3 else E.K_MERCATOR5
    if card_type.action == "specialist":
        return E.K_SPECIALIST + card_type.good
    return _KIND_OF_ACTION[card_type.action]


def route_index(m: MapData) -> list[tuple[int, int, int]]:
    """(route id, city a, city b) of every route: land routes first, sea routes from ``engine.NL``."""
    out = [(i, a, b) for i, (a, b) in enumerate(m.land_routes)]
    out += [(E.NL + i, a, b) for i, (a, b) in enumerate(m.sea_routes)]
    return out


def movement_costs(m: MapData) -> np.ndarray:
    """Cost matrix (NLOC x NR): points to move from a location (city, or NC + route) to a route."""
    dist = np.full((E.NLOC, E.NR), E.UNREACHABLE, dtype=np.int32)
    for routes in (list(enumerate(m.land_routes)), [(E.NL + i, r) for i, r in enumerate(m.sea_routes)]):
        ids = [rid for rid, _ in routes]
        ends = dict(routes)
        touching: dict[int, list[int]] = {}
        for rid, (a, b) in routes:
            touching.setdefault(a, []).append(rid)
            touching.setdefault(b, []).append(rid)
        for src in ids:
            d = {src: 0}
            queue = deque([src])
            while queue:
                r = queue.popleft()
                for city in ends[r]:
                    for nxt in touching[city]:
                        if nxt not in d:
                            d[nxt] = d[r] + 1
                            queue.append(nxt)
            for dst, k in d.items():
                dist[E.NC + src, dst] = k
        for city, rs in touching.items():
            for dst in ids:
                best = min(int(dist[E.NC + r, dst]) for r in rs)
                if best < E.UNREACHABLE:
                    dist[city, dst] = best + 1
    return dist


def build_tables(m: MapData, comp: Components) -> np.ndarray:
    """The kernel's static table array ``T`` for map ``m``."""
    if m.num_cities > E.NC or len(m.land_routes) > E.NL or len(m.sea_routes) > E.NS \
            or len(m.province_names) > E.NPV:
        raise ValueError(f"map {m.name} exceeds the kernel's padded sizes")
    T = np.zeros(E.TABLE_SIZE, dtype=np.int32)

    def put(name, value):
        E.put_field(T, E.TABLE_LAYOUT, name, value)

    put("num_cities", m.num_cities)
    put("num_provinces", len(m.province_names))
    put("storehouse", comp.storehouse_slots)
    put("free_cards", comp.tribunus_free_cards)
    put("colonus_base", comp.colonus_cash_base)
    put("colonus_per", comp.colonus_cash_per_colonist)
    put("concordia_vp", comp.concordia_vp)
    put("houses", comp.houses)
    prov = np.full(E.NC, -1)
    prov[:m.num_cities] = m.city_province
    put("city_prov", prov)
    land = np.zeros(E.NC)
    sea = np.zeros(E.NC)
    ra = np.full(E.NR, -1)
    rb = np.full(E.NR, -1)
    for rid, a, b in route_index(m):
        ra[rid], rb[rid] = a, b
        (land if rid < E.NL else sea)[[a, b]] = 1
    put("city_land", land)
    put("city_sea", sea)
    put("route_a", ra)
    put("route_b", rb)
    put("dist", movement_costs(m))
    put("price", comp.prices)
    put("marker_coins", comp.bonus_marker_coins)
    put("house_coins", comp.house_coins)
    put("house_goods", comp.house_goods)
    put("colonist_cost", comp.colonist_cost)
    put("display_fixed", [fixed for fixed, _ in comp.display_costs])
    put("display_any", [n for _, n in comp.display_costs])
    if len(comp.card_types) != E.NT:
        raise ValueError(f"components list {len(comp.card_types)} card types, the kernel expects {E.NT}")
    put("type_kind", [card_kind(t) for t in comp.card_types])
    put("type_god", [GODS.index(t.god) for t in comp.card_types])
    put("type_vp", [t.minerva_vp for t in comp.card_types])
    put("type_good", [max(t.good, 0) for t in comp.card_types])
    merc = np.zeros(E.NK)
    for t in comp.card_types:
        if t.action == "mercator":
            merc[card_kind(t)] = t.mercator_sestertii
    put("kind_merc", merc)
    put("payout", comp.intermediate_payout)
    types, costs = all_purchasable(comp)
    put("card_type", types)
    put("card_cost", costs)
    return T


def all_purchasable(comp: Components) -> tuple[list[int], list[tuple[int, ...]]]:
    """Card type and cost of every purchasable card; card id = position in decks I..V order."""
    types, costs = [], []
    for deck in comp.decks.values():
        for t, cost in deck:
            types.append(t)
            costs.append(cost)
    if len(types) != E.NCARD:
        raise ValueError(f"components hold {len(types)} purchasable cards, the kernel expects {E.NCARD}")
    return types, costs


def deck_card_ids(comp: Components) -> dict[str, list[int]]:
    """Card ids of each deck (I..V)."""
    out, k = {}, 0
    for name, deck in comp.decks.items():
        out[name] = list(range(k, k + len(deck)))
        k += len(deck)
    return out


def stacked_decks(comp: Components, num_players: int) -> list[list[int]]:
    """Card ids of each deck ``num_players`` players use, in stacking order: deck I on top, then
    II, ... (each deck is shuffled on its own at setup). The one place the stacked-deck
    boundaries are derived: setup, the search's deck resampling, decoding and the invariants."""
    ids = deck_card_ids(comp)
    return [list(ids[d]) for d in comp.decks_per_player_count[num_players]]


def display_price(tables: np.ndarray, position: int, card_id: int) -> tuple[np.ndarray, int]:
    """A Senator's price of card ``card_id`` at display ``position`` (0-based): the goods vector
    (card cost plus the position's fixed extras) and the number of goods of any kind ('?')."""
    goods = np.array([card_goods(tables, card_id, position, 0, g) for g in range(E.NG)], dtype=np.int32)
    return goods, int(card_any(tables, position, 0))
