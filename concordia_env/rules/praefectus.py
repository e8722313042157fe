"""Praefectus: produce in one province (every house there yields its good, the player one or two
more), or take the cash bonus of the flipped province markers and turn them back."""

from __future__ import annotations

from ..data import GOODS
from . import rule, storehouse, turn
from .layout import (
    A_CASH,
    A_PRODUCE,
    NG,
    O_CITY_GOOD,
    O_COINS,
    O_HOUSES,
    O_INCOMING,
    O_MARKER_ACTIVE,
    O_MARKER_GOOD,
    O_NCITIES,
    O_NPLAYERS,
    O_NPROV,
    O_PHASE,
    O_PM,
    PH_PRAEFECTUS,
    T_CITY_PROV,
)
from .names import active, off_map
from .quantities import marker_coins


@rule()
def start(s):
    s[O_PHASE] = PH_PRAEFECTUS


@rule(inline="always")
def legal(s, mask):
    """Any province whose marker shows its good, or the cash bonus."""
    for q in range(s[O_NPROV]):
        if s[O_MARKER_ACTIVE + q]:
            mask[A_PRODUCE + q] = 1
    mask[A_CASH] = 1


@rule(inline="always")
def bonus_goods(s, p):
    """Goods of the province's kind the producing player gets on top: 2 with the Praefectus
    Magnus, else 1."""
    if s[O_PM] == p:
        return 2
    return 1


@rule()
def produce(s, T, p, a):
    """Produce in a province; the Praefectus Magnus passes to the player's right; the marker flips."""
    q = a - A_PRODUCE
    g = s[O_MARKER_GOOD + q]
    bonus = bonus_goods(s, p)
    if bonus == 2:
        s[O_PM] = (p - 1 + s[O_NPLAYERS]) % s[O_NPLAYERS]
    s[O_INCOMING + p * NG + g] += bonus
    s[O_MARKER_ACTIVE + q] = 0
    for c in range(1, s[O_NCITIES]):
        if T[T_CITY_PROV + c] == q:
            h = s[O_HOUSES + c]
            cg = s[O_CITY_GOOD + c]
            for x in range(s[O_NPLAYERS]):
                if (h >> x) & 1:
                    s[O_INCOMING + x * NG + cg] += 1
    storehouse.finish_production(s, T)


@rule()
def cash(s, T, p):
    """Coins for every flipped marker, which turns back; the turn ends."""
    for q in range(s[O_NPROV]):
        if s[O_MARKER_ACTIVE + q] == 0:
            s[O_COINS + p] += marker_coins(T, s[O_MARKER_GOOD + q])
            s[O_MARKER_ACTIVE + q] = 1
    turn.end_turn(s)


# ------------------------------------------------------------------ names
def name_produce(state, a: int) -> str:
    """e.g. ``Praefectus: produce in Dacia (bonus 1 wine)``; a province the map lacks is named as such."""
    q = a - A_PRODUCE
    names = state.game.map.province_names
    if q >= len(names):
        return f"Praefectus: produce in province {q}{off_map(state, 'province')}"
    name = names[q]
    good = int(state.s[O_MARKER_GOOD + q])
    bonus = int(bonus_goods(state.s, active(state)))
    extra = " with the Praefectus Magnus" if bonus == 2 else ""
    return f"Praefectus: produce in {name} (bonus {bonus} {GOODS[good] if good >= 0 else '?'}{extra})"


def name_cash(state, a: int) -> str:
    s = state.s
    coins = sum(int(marker_coins(state.game.tables, int(s[O_MARKER_GOOD + q])))
                for q in range(int(s[O_NPROV])) if s[O_MARKER_ACTIVE + q] == 0)
    return f"Praefectus: cash bonus, {coins} sestertii"
