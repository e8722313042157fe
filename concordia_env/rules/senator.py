"""Senator and Consul: buy cards from the display (the Senator up to two at their price, the Consul
one at the card's own cost), then refill the display; buying the last card ends the game."""

from __future__ import annotations

from ..data import GOODS
from . import rule, turn
from .layout import (
    A_BUYCARD,
    A_DONE,
    A_PAY,
    K_CONSUL,
    K_SENATOR,
    NDISP,
    NG,
    NT,
    O_BOUGHT_POS,
    O_BUYS_LEFT,
    O_CONCORDIA,
    O_CONSUL,
    O_DECK,
    O_DECK_LEN,
    O_DECK_POS,
    O_DISPLAY,
    O_GOODS,
    O_HAND,
    O_PAY_LEFT,
    O_PHASE,
    PH_BUY,
    PH_PAY,
    T_CARD_TYPE,
)
from .names import card_type_name, context, goods_list
from .quantities import card_any, card_goods


@rule()
def start(s, k):
    s[O_BUYS_LEFT] = 2 if k == K_SENATOR else 1
    s[O_CONSUL] = 1 if k == K_CONSUL else 0
    s[O_BOUGHT_POS] = 0
    s[O_PHASE] = PH_BUY


@rule(inline="always")
def can_afford(s, T, p, j):
    """Whether ``p`` holds the price of the card at display position ``j``: its goods, and goods
    left over for the position's '?'s."""
    cid = s[O_DISPLAY + j]
    consul = s[O_CONSUL]
    spare = 0
    for g in range(NG):
        need = card_goods(T, cid, j, consul, g)
        have = s[O_GOODS + p * NG + g]
        if have < need:
            return False
        spare += have - need
    return spare >= card_any(T, j, consul)


@rule(inline="always")
def legal_buy(s, T, p, mask):
    """Cards still on display, not yet bought this action, that ``p`` can pay for; or done."""
    if s[O_BUYS_LEFT] > 0:
        for j in range(NDISP):
            if s[O_DISPLAY + j] < 0 or (s[O_BOUGHT_POS] >> j) & 1:
                continue
            if can_afford(s, T, p, j):
                mask[A_BUYCARD + j] = 1
    mask[A_DONE] = 1


@rule(inline="always")
def legal_pay(s, p, mask):
    """A '?' is paid with any good held."""
    for g in range(NG):
        if s[O_GOODS + p * NG + g] > 0:
            mask[A_PAY + g] = 1


@rule()
def finish_buying(s, T, p):
    """After buying: close the display's gaps, refill it from the deck, and end the turn. A
    display left empty (the deck ran out) ends the game: its last buyer takes the Concordia card."""
    if s[O_BOUGHT_POS] != 0:
        k = 0
        for j in range(NDISP):
            cid = s[O_DISPLAY + j]
            if cid >= 0:
                s[O_DISPLAY + k] = cid
                k += 1
        while k < NDISP and s[O_DECK_POS] < s[O_DECK_LEN]:
            s[O_DISPLAY + k] = s[O_DECK + s[O_DECK_POS]]
            s[O_DECK_POS] += 1
            k += 1
        for j in range(k, NDISP):
            s[O_DISPLAY + j] = -1
        if k == 0 and s[O_CONCORDIA] < 0:
            s[O_CONCORDIA] = p
    turn.end_turn(s)


@rule()
def buy_card(s, T, p, a):
    """Pay the card's goods, take it into hand; its '?'s are paid next (phase PH_PAY)."""
    j = a - A_BUYCARD
    cid = s[O_DISPLAY + j]
    consul = s[O_CONSUL]
    for g in range(NG):
        s[O_GOODS + p * NG + g] -= card_goods(T, cid, j, consul, g)
    s[O_HAND + p * NT + T[T_CARD_TYPE + cid]] += 1
    s[O_DISPLAY + j] = -1
    s[O_BOUGHT_POS] |= 1 << j
    s[O_BUYS_LEFT] -= 1
    n_any = card_any(T, j, consul)
    if n_any > 0:
        s[O_PAY_LEFT] = n_any
        s[O_PHASE] = PH_PAY
    elif s[O_BUYS_LEFT] == 0:
        finish_buying(s, T, p)


@rule()
def pay(s, T, p, a):
    """Pay one '?' with a good; once all are paid, buying goes on (or ends with no buys left)."""
    s[O_GOODS + p * NG + a - A_PAY] -= 1
    s[O_PAY_LEFT] -= 1
    if s[O_PAY_LEFT] == 0:
        s[O_PHASE] = PH_BUY
        if s[O_BUYS_LEFT] == 0:
            finish_buying(s, T, p)


# ------------------------------------------------------------------ names
def name_buy_card(state, a: int) -> str:
    """e.g. ``Senator: buy Farmer at position 3 for food+brick+food`` (the price this state charges)."""
    s, T = state.s, state.game.tables
    j = a - A_BUYCARD
    cid = int(s[O_DISPLAY + j])
    who = context(state) or "Senator"
    if cid < 0:
        return f"{who}: buy card at position {j + 1} (empty)"
    consul = int(s[O_CONSUL])
    price = goods_list(lambda g: card_goods(T, cid, j, consul, g)) + ["?"] * int(card_any(T, j, consul))
    return f"{who}: buy {card_type_name(state, int(T[T_CARD_TYPE + cid]))} at position {j + 1} for {'+'.join(price)}"


def name_pay(state, a: int) -> str:
    return f"Senator: pay '?' with 1 {GOODS[a - A_PAY]}"
