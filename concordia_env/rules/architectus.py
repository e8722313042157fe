"""Architectus: move colonists along routes for as many points as one has colonists on the
board, then build houses next to them. Once a house is built no colonist moves any more."""

from __future__ import annotations

from ..data import GOODS
from . import rule
from .layout import (
    A_BUILD,
    A_DONE,
    NC,
    NCOL,
    NG,
    NL,
    NR,
    O_BUILT,
    O_CITY_GOOD,
    O_COINS,
    O_COLONIST,
    O_CONCORDIA,
    O_GOODS,
    O_HOUSES,
    O_HOUSES_LEFT,
    O_NCITIES,
    O_PHASE,
    O_POINTS,
    O_ROUTE_OCC,
    PH_ARCHITECTUS,
    T_DIST,
    T_ROUTE_A,
    T_ROUTE_B,
)
from .names import active, city_name, goods_list, has_city, off_map
from .pieces import colonists_on_board, house_count, owns_house
from .quantities import decode_move, house_coins, house_goods, move_action


@rule()
def start(s, p):
    """One movement point per colonist on the board; nothing built yet."""
    s[O_POINTS] = colonists_on_board(s, p)
    s[O_BUILT] = 0
    s[O_PHASE] = PH_ARCHITECTUS


# ------------------------------------------------------------------ moving
@rule(inline="always")
def _twin_before(s, base, i, loc):
    """Whether an earlier colonist of the same kind stands in the same city as colonist ``i``:
    colonists of one kind in one city are interchangeable, so only the first one moves."""
    if loc >= NC:
        return False
    for j in range((i // 3) * 3, i):
        if s[base + j] == loc:
            return True
    return False


@rule(inline="always")
def _legal_moves_of(s, T, p, i, mask):
    """Moves of colonist ``i`` to free routes of its kind within the points left."""
    loc = s[O_COLONIST + p * NCOL + i]
    lo, hi = (0, NL) if i < 3 else (NL, NR)
    drow = T_DIST + loc * NR
    for r in range(lo, hi):
        if T[drow + r] <= s[O_POINTS] and s[O_ROUTE_OCC + r] < 0:
            mask[move_action(i, r)] = 1


@rule()
def move(s, T, p, a):
    """Move a colonist to a route, paying the shortest path's points; its old route frees up."""
    slot, r = decode_move(a)
    idx = O_COLONIST + p * NCOL + slot
    loc = s[idx]
    s[O_POINTS] -= T[T_DIST + loc * NR + r]
    if loc >= NC:
        s[O_ROUTE_OCC + loc - NC] = -1
    s[O_ROUTE_OCC + r] = p
    s[idx] = NC + r


# ---------------------------------------------------------------- building
@rule()
def can_build(s, T, p, c):
    """Whether player ``p`` can afford and may place a house in city ``c`` (ignoring reach)."""
    if c <= 0 or c >= s[O_NCITIES]:
        return False
    if owns_house(s, c, p):
        return False
    if s[O_HOUSES_LEFT + p] <= 0:
        return False
    g = s[O_CITY_GOOD + c]
    if s[O_COINS + p] < house_coins(T, g, house_count(s, c)):
        return False
    for h in range(NG):
        if s[O_GOODS + p * NG + h] < house_goods(T, g, h):
            return False
    return True


@rule(inline="always")
def _legal_builds(s, T, p, mask):
    """Houses in the cities at either end of a route holding one of ``p``'s colonists."""
    for i in range(NCOL):
        loc = s[O_COLONIST + p * NCOL + i]
        if loc >= NC:
            r = loc - NC
            for c in (T[T_ROUTE_A + r], T[T_ROUTE_B + r]):
                if can_build(s, T, p, c):
                    mask[A_BUILD + c] = 1


@rule(inline="always")
def legal(s, T, p, mask):
    """Moves (before any house is built, while points are left), builds, or done."""
    base = O_COLONIST + p * NCOL
    if s[O_BUILT] == 0 and s[O_POINTS] > 0:
        for i in range(NCOL):
            loc = s[base + i]
            if loc >= 0 and not _twin_before(s, base, i, loc):
                _legal_moves_of(s, T, p, i, mask)
    _legal_builds(s, T, p, mask)
    mask[A_DONE] = 1


@rule()
def build(s, T, p, a):
    """Pay for a house and place it; the player's last house takes the Concordia card."""
    c = a - A_BUILD
    g = s[O_CITY_GOOD + c]
    s[O_COINS + p] -= house_coins(T, g, house_count(s, c))
    for h in range(NG):
        s[O_GOODS + p * NG + h] -= house_goods(T, g, h)
    s[O_HOUSES + c] |= 1 << p
    s[O_HOUSES_LEFT + p] -= 1
    s[O_BUILT] = 1
    if s[O_HOUSES_LEFT + p] == 0 and s[O_CONCORDIA] < 0:
        s[O_CONCORDIA] = p


# ------------------------------------------------------------------ names
def name_move(state, a: int) -> str:
    """e.g. ``Architectus: move land colonist 1 Roma→Roma-Novaria, cost 1``; a route the map
    lacks is named as such."""
    game = state.game
    slot, r = decode_move(a)
    loc = int(state.s[O_COLONIST + active(state) * NCOL + slot])
    label = "land" if slot < 3 else "sea"
    if (r < NL and r >= len(game.map.land_routes)) or (r >= NL and r - NL >= len(game.map.sea_routes)):
        return f"Architectus: move {label} colonist {slot % 3 + 1} to {label} route {r}{off_map(state, 'route')}"
    src = "storehouse" if loc < 0 else (game.map.city_names[loc] if loc < NC else game.route_name(loc - NC))
    cost = int(game.tables[T_DIST + max(loc, 0) * NR + r]) if loc >= 0 else "-"
    return f"Architectus: move {label} colonist {slot % 3 + 1} {src}→{game.route_name(r)}, cost {cost}"


def name_build(state, a: int) -> str:
    """e.g. ``Architectus: build in Novaria (cloth), cost 10 sestertii + brick+cloth``; Roma and
    cities the map lacks are named as never legal."""
    c = a - A_BUILD
    name = city_name(state, c)
    if c == 0:
        return f"Architectus: build in {name} (never legal: {name} takes no houses)"
    if not has_city(state, c):
        return f"Architectus: build in {name}{off_map(state, 'city')}"
    good = int(state.s[O_CITY_GOOD + c]) if c < state.game.map.num_cities else -1
    if good < 0:
        return f"Architectus: build in {name}"
    T = state.game.tables
    coins = int(house_coins(T, good, house_count(state.s, c)))
    paid = "+".join(goods_list(lambda h: house_goods(T, good, h)))
    return f"Architectus: build in {name} ({GOODS[good]}), cost {coins} sestertii + {paid}"
