"""Tribunus: take back the played cards (paying for many), then perhaps one colonist into Roma."""

from __future__ import annotations

from . import colonus, rule, scoring, turn
from .layout import A_DONE, A_PLACE, NC, NT, O_COINS, O_DISCARD, O_HAND, O_INTERMEDIATE, O_PHASE, O_TOP, PH_TRIBUNUS
from .pieces import has_colonist_in_store
from .quantities import tribunus_coins


@rule()
def start(s, T, p):
    """Take the discard pile back into hand and pay for the cards beyond the free ones; with the
    intermediate-scoring variant, the player is scored now."""
    taken = 0
    for t in range(NT):
        taken += s[O_DISCARD + p * NT + t]
        s[O_HAND + p * NT + t] += s[O_DISCARD + p * NT + t]
        s[O_DISCARD + p * NT + t] = 0
    s[O_TOP + p] = -1
    s[O_COINS + p] += tribunus_coins(T, taken)
    if s[O_INTERMEDIATE]:
        scoring.intermediate_scoring(s, T, p)
    s[O_PHASE] = PH_TRIBUNUS


@rule(inline="always")
def legal(s, T, p, mask):
    """A new colonist in Roma (land or sea, if one waits and can be paid for), or done."""
    if colonus.can_pay_colonist(s, T, p):
        for kind in range(2):
            if has_colonist_in_store(s, p, kind):
                mask[A_PLACE + kind * NC] = 1  # city 0 is Roma
    mask[A_DONE] = 1


@rule()
def place(s, T, p, a):
    """The colonist goes to Roma, and that ends the Tribunus."""
    colonus.put_colonist(s, T, p, a)
    turn.end_turn(s)
