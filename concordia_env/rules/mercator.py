"""Mercator: take the card's coins, then sell and buy goods of at most two kinds (never selling and
buying the same kind)."""

from __future__ import annotations

from ..data import GOODS
from . import rule
from .layout import A_BUYGOOD, A_DONE, A_SELL, NG, O_BOUGHT, O_COINS, O_GOODS, O_PHASE, O_SOLD, PH_MERCATOR, T_KIND_MERC
from .pieces import free_slots
from .quantities import good_price


@rule()
def start(s, T, p, k):
    """The Mercator pays its coins (3, or 5 for the Mercator from the decks) first."""
    s[O_COINS + p] += T[T_KIND_MERC + k]
    s[O_SOLD] = 0
    s[O_BOUGHT] = 0
    s[O_PHASE] = PH_MERCATOR


@rule(inline="always")
def _kinds_traded(used):
    n = 0
    for g in range(NG):
        n += (used >> g) & 1
    return n


@rule(inline="always")
def legal(s, T, p, mask):
    """Sell a good held / buy one with room and coins, of a kind already traded or while fewer
    than two kinds are; a kind bought is not sold and one sold is not bought."""
    sold = s[O_SOLD]
    bought = s[O_BOUGHT]
    used = sold | bought
    nkinds = _kinds_traded(used)
    free = free_slots(s, T, p)
    for g in range(NG):
        bit = 1 << g
        if (used & bit) == 0 and nkinds >= 2:
            continue
        if not (bought & bit) and s[O_GOODS + p * NG + g] > 0:
            mask[A_SELL + g] = 1
        if not (sold & bit) and free > 0 and s[O_COINS + p] >= good_price(T, g):
            mask[A_BUYGOOD + g] = 1
    mask[A_DONE] = 1


@rule()
def sell(s, T, p, a):
    g = a - A_SELL
    s[O_GOODS + p * NG + g] -= 1
    s[O_COINS + p] += good_price(T, g)
    s[O_SOLD] |= 1 << g


@rule()
def buy(s, T, p, a):
    g = a - A_BUYGOOD
    s[O_GOODS + p * NG + g] += 1
    s[O_COINS + p] -= good_price(T, g)
    s[O_BOUGHT] |= 1 << g


# ------------------------------------------------------------------ names
def name_sell(state, a: int) -> str:
    g = a - A_SELL
    return f"Mercator: sell 1 {GOODS[g]} for {int(good_price(state.game.tables, g))}"


def name_buy(state, a: int) -> str:
    g = a - A_BUYGOOD
    return f"Mercator: buy 1 {GOODS[g]} for {int(good_price(state.game.tables, g))}"
