"""Colonus: place new colonists in Roma or cities with one's own house, or take cash instead."""

from __future__ import annotations

from . import rule, turn
from .layout import (
    A_COLONUS_CASH,
    A_DONE,
    A_PLACE,
    NC,
    NCOL,
    NG,
    O_COINS,
    O_COLONIST,
    O_GOODS,
    O_NCITIES,
    O_PHASE,
    O_PLACED,
    PH_COLONUS,
    T_CITY_LAND,
    T_CITY_SEA,
    T_COLONIST_COST,
)
from .names import active, city_name, context, has_city, off_map
from .pieces import colonists_on_board, has_colonist_in_store, owns_house
from .quantities import colonus_cash


@rule()
def start(s):
    s[O_PLACED] = 0
    s[O_PHASE] = PH_COLONUS


@rule(inline="always")
def can_pay_colonist(s, T, p):
    """Whether player ``p`` holds the goods a new colonist costs."""
    for g in range(NG):
        if s[O_GOODS + p * NG + g] < T[T_COLONIST_COST + g]:
            return False
    return True


@rule(inline="always")
def may_place_in(s, T, p, kind, c):
    """Whether a colonist of ``kind`` (0 land, 1 sea) may be placed in city ``c``: Roma or a city
    with one of ``p``'s houses, touching a route of that kind."""
    if c != 0 and not owns_house(s, c, p):
        return False
    if kind == 0:
        return T[T_CITY_LAND + c] != 0
    return T[T_CITY_SEA + c] != 0


@rule(inline="always")
def legal(s, T, p, mask):
    """Placements while colonists wait and can be paid for; cash only before any placement."""
    if can_pay_colonist(s, T, p):
        for kind in range(2):
            if not has_colonist_in_store(s, p, kind):
                continue
            for c in range(s[O_NCITIES]):
                if may_place_in(s, T, p, kind, c):
                    mask[A_PLACE + kind * NC + c] = 1
    if s[O_PLACED] == 0:
        mask[A_COLONUS_CASH] = 1
    mask[A_DONE] = 1


@rule()
def put_colonist(s, T, p, a):
    """Pay for a colonist and put the first waiting one of its kind in the chosen city."""
    i = a - A_PLACE
    kind = i // NC
    c = i % NC
    for g in range(NG):
        s[O_GOODS + p * NG + g] -= T[T_COLONIST_COST + g]
    for slot in range(3 * kind, 3 * kind + 3):
        if s[O_COLONIST + p * NCOL + slot] < 0:
            s[O_COLONIST + p * NCOL + slot] = c
            break
    s[O_PLACED] = 1


@rule()
def cash(s, T, p):
    """Cash instead of placing, and the turn ends."""
    s[O_COINS + p] += colonus_cash(T, colonists_on_board(s, p))
    turn.end_turn(s)


# ------------------------------------------------------------------ names
def name_place(state, a: int) -> str:
    """e.g. ``Colonus: new sea colonist in Roma``; a city the map lacks is named as such."""
    i = a - A_PLACE
    where = city_name(state, i % NC) + ("" if has_city(state, i % NC) else off_map(state, "city"))
    return f"{context(state) or 'Colonus'}: new {'land' if i < NC else 'sea'} colonist in {where}"


def name_cash(state, a: int) -> str:
    coins = int(colonus_cash(state.game.tables, colonists_on_board(state.s, active(state))))
    return f"Colonus: cash, {coins} sestertii"
