"""The rules kernel's entry points: the two dispatch tables and the step.

* :func:`legal_mask`: which family says what is legal in each phase;
* :func:`apply`: which family carries out each action range (the ranges are listed in
  :mod:`concordia_env.actions`);
* :func:`step`: apply an action, then skip decisions whose only option is 'done';
* :func:`random_playout`: uniformly random legal actions to the end of the game.
"""

from __future__ import annotations

import numpy as np

from .._internal.jit import kernel
from . import (
    architectus,
    colonus,
    diplomat,
    mercator,
    play,
    praefectus,
    rule,
    senator,
    storehouse,
    tribunus,
    turn,
)
from .layout import (
    A_BUILD,
    A_BUYGOOD,
    A_CASH,
    A_COLONUS_CASH,
    A_DONE,
    A_KEEP,
    A_MOVE,
    A_PAY,
    A_PLACE,
    A_PRODUCE,
    NUM_ACTIONS,
    O_ACTIVE,
    O_PHASE,
    PH_ARCHITECTUS,
    PH_BUY,
    PH_COLONUS,
    PH_DIPLOMAT,
    PH_KEEP,
    PH_MERCATOR,
    PH_OVER,
    PH_PAY,
    PH_PLAY,
    PH_PRAEFECTUS,
    PH_TRIBUNUS,
)


@rule(inline="always")
def _count(mask):
    """How many actions ``mask`` allows. Counted with ``+= 1``, not by adding the int8 entries:
    without the compiler (``NUMBA_DISABLE_JIT=1``) numpy keeps ``0 + int8`` an int8, which wraps
    past 127 legal actions, where numba widens it to int64."""
    n = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            n += 1
    return n


@rule("int32[::1], int32[::1], int8[::1]")
def legal_mask(s, T, mask):
    """Fill ``mask`` (int8, NUM_ACTIONS) with the legal actions; return how many there are."""
    mask[:] = 0
    ph = s[O_PHASE]
    p = s[O_ACTIVE]
    if ph == PH_PLAY:
        play.legal(s, T, p, mask)
    elif ph == PH_TRIBUNUS:
        tribunus.legal(s, T, p, mask)
    elif ph == PH_ARCHITECTUS:
        architectus.legal(s, T, p, mask)
    elif ph == PH_PRAEFECTUS:
        praefectus.legal(s, mask)
    elif ph == PH_MERCATOR:
        mercator.legal(s, T, p, mask)
    elif ph == PH_COLONUS:
        colonus.legal(s, T, p, mask)
    elif ph == PH_DIPLOMAT:
        diplomat.legal(s, T, p, mask)
    elif ph == PH_BUY:
        senator.legal_buy(s, T, p, mask)
    elif ph == PH_PAY:
        senator.legal_pay(s, p, mask)
    elif ph == PH_KEEP:
        storehouse.legal(s, mask)
    return _count(mask)  # PH_OVER: none


@rule()
def done(s, T, p):
    """'done' ends the current card's action (after buying, the display is refilled first)."""
    if s[O_PHASE] == PH_BUY:
        senator.finish_buying(s, T, p)
    else:
        turn.end_turn(s)


@rule()
def apply(s, T, a):
    """Carry out legal action ``a`` (ranges in increasing order of their first id)."""
    p = s[O_ACTIVE]
    if a == A_DONE:
        done(s, T, p)
    elif a < A_DONE:
        play.play_card(s, T, a)
    elif a < A_MOVE:  # the Diplomat's copy: the copied action starts as if its card had been played
        play.start_kind(s, T, diplomat.copied_kind(a))
    elif a < A_BUILD:
        architectus.move(s, T, p, a)
    elif a < A_PRODUCE:
        architectus.build(s, T, p, a)
    elif a < A_CASH:
        praefectus.produce(s, T, p, a)
    elif a == A_CASH:
        praefectus.cash(s, T, p)
    elif a < A_BUYGOOD:
        mercator.sell(s, T, p, a)
    elif a < A_PLACE:
        mercator.buy(s, T, p, a)
    elif a < A_COLONUS_CASH:
        if s[O_PHASE] == PH_TRIBUNUS:
            tribunus.place(s, T, p, a)
        else:
            colonus.put_colonist(s, T, p, a)
    elif a == A_COLONUS_CASH:
        colonus.cash(s, T, p)
    elif a < A_PAY:
        senator.buy_card(s, T, p, a)
    elif a < A_KEEP:
        senator.pay(s, T, p, a)
    else:
        storehouse.keep(s, T, a)


@rule("int32[::1], int32[::1], int8[::1], int64")
def step(s, T, mask, a):
    """Apply legal action ``a``; then end actions whose only option is 'done'.

    Leaves ``mask`` holding the legal actions of the new state and returns their count."""
    while True:
        apply(s, T, a)
        n = legal_mask(s, T, mask)
        if n == 1 and mask[A_DONE] == 1:
            # through the variable: passing the constant A_DONE would make numba compile
            # apply a second time, specialised for that literal value
            a = A_DONE
            continue
        return n


@rule(inline="always")
def nth_legal(mask, k):
    """The ``k``-th legal action (0-based, in id order)."""
    for a in range(NUM_ACTIONS):
        if mask[a]:
            if k == 0:
                return a
            k -= 1
    return -1


@kernel("int32[::1], int32[::1], int8[::1], int64, int64", group="rollout")
def random_playout(s, T, mask, seed, max_steps):
    """Play uniformly random legal actions until the game ends (or ``max_steps``).

    Uses numba's own generator seeded with ``seed``; returns the number of actions."""
    np.random.seed(seed)
    m = legal_mask(s, T, mask)
    count = 0
    while s[O_PHASE] != PH_OVER and count < max_steps:
        m = step(s, T, mask, nth_legal(mask, np.random.randint(0, m)))
        count += 1
    return count
