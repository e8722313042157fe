"""Scoring: the VP each god's cards give at the end of the game, and the intermediate scoring of
the Tribunus variant (paid in sestertii to the first two places)."""

from __future__ import annotations

import numpy as np

from . import rule
from .layout import (
    GOD_JUPITER,
    GOD_MARS,
    GOD_MERCURIUS,
    GOD_SATURNUS,
    GOD_VESTA,
    NG,
    NGODS,
    NT,
    O_CITY_GOOD,
    O_COINS,
    O_CONCORDIA,
    O_DISCARD,
    O_GOODS,
    O_HAND,
    O_INTER_DONE,
    O_INTER_SCORE,
    O_NCITIES,
    O_NPLAYERS,
    O_PM,
    T_CITY_PROV,
    T_CONCORDIA_VP,
    T_TYPE_GOD,
    T_TYPE_GOOD,
    T_TYPE_VP,
)
from .pieces import colonists_on_board, owns_house
from .quantities import good_price, intermediate_payout

#: bits per good in the packed count of a player's houses by good (at most 15 houses each)
_GOOD_BITS = 8


@rule(inline="always")
def _bits(x):
    n = 0
    while x:
        n += x & 1
        x >>= 1
    return n


@rule(inline="always")
def wealth(s, T, p):
    """Sestertii plus the goods at their price: what Vesta counts."""
    w = s[O_COINS + p]
    for g in range(NG):
        w += s[O_GOODS + p * NG + g] * good_price(T, g)
    return w


@rule(inline="always")
def _houses(s, T, p):
    """(houses outside brick cities, provinces with a house, goods produced, houses per good
    packed ``_GOOD_BITS`` to a good) of player ``p``: what the gods count on the board."""
    nonbrick = 0
    prov_mask = 0
    goods_mask = 0
    per_good = 0
    for c in range(1, s[O_NCITIES]):
        if owns_house(s, c, p):
            g = s[O_CITY_GOOD + c]
            per_good += 1 << (_GOOD_BITS * g)
            goods_mask |= 1 << g
            prov_mask |= 1 << T[T_CITY_PROV + c]
            if g != 0:
                nonbrick += 1
    return nonbrick, _bits(prov_mask), _bits(goods_mask), per_good


@rule()
def god_scores(s, T, p):
    """Final-scoring VP of player ``p`` per god: (Vesta, Jupiter, Saturnus, Mercurius, Mars,
    Minerva, Concordia); every card of a god scores what its god counts."""
    rich = wealth(s, T, p) // 10
    nonbrick, nprov, ngoods, per_good = _houses(s, T, p)
    on_board = colonists_on_board(s, p)
    vesta = jupiter = saturnus = mercurius = mars = minerva = 0
    for t in range(NT):
        cnt = s[O_HAND + p * NT + t] + s[O_DISCARD + p * NT + t]
        if cnt == 0:
            continue
        god = T[T_TYPE_GOD + t]
        if god == GOD_VESTA:
            vesta += cnt * rich
        elif god == GOD_JUPITER:
            jupiter += cnt * nonbrick
        elif god == GOD_SATURNUS:
            saturnus += cnt * nprov
        elif god == GOD_MERCURIUS:
            mercurius += cnt * 2 * ngoods
        elif god == GOD_MARS:
            mars += cnt * 2 * on_board
        else:  # Minerva: VP per house in cities of the card's good
            houses = (per_good >> (_GOOD_BITS * T[T_TYPE_GOOD + t])) & ((1 << _GOOD_BITS) - 1)
            minerva += cnt * T[T_TYPE_VP + t] * houses
    concordia = T[T_CONCORDIA_VP] if s[O_CONCORDIA] == p else 0
    return vesta, jupiter, saturnus, mercurius, mars, minerva, concordia


@rule(inline="always")
def score_total(s, T, p):
    """Player ``p``'s VP if the game were scored now."""
    v = god_scores(s, T, np.int64(p))  # int64 whatever the caller's int: one compiled version
    return v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6]


@rule("int32[::1], int32[::1], int64, int32[::1]")
def score_player(s, T, p, out):
    """Final-scoring VP of player ``p`` per god into ``out`` (NGODS); returns the total."""
    v = god_scores(s, T, p)
    total = 0
    for i in range(NGODS):
        out[i] = v[i]
        total += v[i]
    return total


@rule()
def intermediate_scoring(s, T, p):
    """Score ``p`` (once); when all are scored, pay the first two places (ties share the place)."""
    if s[O_INTER_DONE + p] != 0:
        return
    s[O_INTER_SCORE + p] = score_total(s, T, p)
    s[O_INTER_DONE + p] = 1
    n = s[O_NPLAYERS]
    for q in range(n):
        if s[O_INTER_DONE + q] == 0:
            return
    for q in range(n):
        s[O_COINS + q] += intermediate_payout(T, _place(s, n, q))
    for q in range(n):
        s[O_INTER_SCORE + q] = 0


@rule(inline="always")
def _place(s, n, q):
    """0-based place of ``q`` in the intermediate scoring: how many scored more."""
    place = 0
    for r in range(n):
        if s[O_INTER_SCORE + r] > s[O_INTER_SCORE + q]:
            place += 1
    return place


# ------------------------------------------------------------------ ranking and tie-break
@rule(inline="always")
def pm_distance(s, p):
    """Seat ``p``'s place in the tie-break: 0 for the Praefectus Magnus holder, else how many
    passes it would take to reach ``p`` (it passes to the right, the previous player in turn order)."""
    n = s[O_NPLAYERS]
    return (s[O_PM] - p + n) % n


@rule()
def final_place(s, T, p):
    """0-based place of seat ``p`` as final scoring ranks the players now: every player with more
    VP, or as many and a smaller :func:`pm_distance`, is ahead."""
    vp = score_total(s, T, p)
    key = pm_distance(s, p)
    place = 0
    for q in range(s[O_NPLAYERS]):
        vq = score_total(s, T, q)
        if vq > vp or (vq == vp and pm_distance(s, q) < key):
            place += 1
    return place


@rule()
def winner(s, T):
    """The seat that would win if the game were scored now (place 0 of :func:`final_place`)."""
    for p in range(s[O_NPLAYERS]):
        if final_place(s, T, p) == 0:
            return p
    return -1

