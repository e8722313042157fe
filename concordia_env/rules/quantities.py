"""Every number the rules derive, each computed in one place.

The kernel, the action names (:mod:`concordia_env.actions`), the observation
(:mod:`concordia_env.encoding`), the board helpers and the docs' examples all call these; no
rule number is written twice. Each is a small kernel that also works from Python (on the
tables ``T`` of a :class:`concordia_env.game.Game`).
"""

from __future__ import annotations

from . import rule
from .layout import (
    A_MOVE,
    NG,
    NL,
    NS,
    T_CARD_COST,
    T_COLONUS_BASE,
    T_COLONUS_PER,
    T_DISPLAY_ANY,
    T_DISPLAY_FIXED,
    T_FREE_CARDS,
    T_HOUSE_COINS,
    T_HOUSE_GOODS,
    T_MARKER_COINS,
    T_PAYOUT,
    T_PRICE,
)


@rule(inline="always")
def house_coins(T, good, houses_there):
    """Sestertii a house costs in a city producing ``good`` that holds ``houses_there`` houses:
    the good's coin cost once more for every house already there."""
    return T[T_HOUSE_COINS + good] * (houses_there + 1)


@rule(inline="always")
def house_goods(T, good, h):
    """Goods of kind ``h`` a house in a city producing ``good`` costs."""
    return T[T_HOUSE_GOODS + good * NG + h]


@rule(inline="always")
def card_goods(T, card, position, consul, g):
    """Goods of kind ``g`` paid for ``card`` at display ``position``: the card's own cost, plus
    the position's fixed extra unless bought with the Consul (who pays the card's cost only)."""
    need = T[T_CARD_COST + card * NG + g]
    if not consul:
        need += T[T_DISPLAY_FIXED + position * NG + g]
    return need


@rule(inline="always")
def card_any(T, position, consul):
    """Goods of any kind ('?') paid at display ``position`` (none with the Consul)."""
    if consul:
        return 0
    return T[T_DISPLAY_ANY + position]


@rule(inline="always")
def good_price(T, g):
    """Sestertii a good of kind ``g`` sells or buys for at the Mercator (and counts for Vesta)."""
    return T[T_PRICE + g]


@rule(inline="always")
def marker_coins(T, good):
    """Sestertii a Praefectus cash bonus pays for one flipped province marker of ``good``."""
    return T[T_MARKER_COINS + good]


@rule(inline="always")
def colonus_cash(T, colonists_on_board):
    """Sestertii the Colonus pays instead of placing: a base plus so much per colonist on the board."""
    return T[T_COLONUS_BASE] + T[T_COLONUS_PER] * colonists_on_board


@rule(inline="always")
def tribunus_coins(T, cards_taken):
    """Sestertii the Tribunus pays for taking back ``cards_taken`` cards: one per card beyond the free ones."""
    free = T[T_FREE_CARDS]
    if cards_taken > free:
        return cards_taken - free
    return 0


@rule(inline="always")
def intermediate_payout(T, place):
    """Sestertii an intermediate scoring pays for ``place`` (0 first, 1 second; nothing after)."""
    if place < 2:
        return T[T_PAYOUT + place]
    return 0


@rule(inline="always")
def move_action(colonist, route):
    """Action id of moving colonist slot ``colonist`` (0-2 land, 3-5 sea) to ``route``: land
    colonists over land routes first, then sea colonists over sea routes (ids from NL)."""
    if colonist < 3:
        return A_MOVE + colonist * NL + route
    return A_MOVE + 3 * NL + (colonist - 3) * NS + (route - NL)


@rule(inline="always")
def decode_move(action):
    """Inverse of :func:`move_action`: (colonist slot, route)."""
    i = action - A_MOVE
    if i < 3 * NL:
        return i // NL, i % NL
    i -= 3 * NL
    return 3 + i // NS, NL + i % NS
