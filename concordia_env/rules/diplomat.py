"""Diplomat: carry out the action of the card on top of another player's discard pile.

The rule (German rulebook, "Diplomat"): the player *may* carry out the action of the card another
player played last, as if they had played it themselves. Actions of players who last played a
Diplomat, or took their cards back with the Tribunus, cannot be copied (the Polish and Japanese
texts say the same). A Tribunus takes its own card back with the pile, so in play a Tribunus never
lies on top of a pile; a position built by hand may show one, and it is not copyable either.
"""

from __future__ import annotations

from . import rule
from .layout import A_COPY, A_DONE, K_DIPLOMAT, K_TRIBUNUS, O_NPLAYERS, O_PHASE, O_TOP, PH_DIPLOMAT, T_TYPE_KIND
from .names import KIND_NAMES


@rule(inline="always")
def copyable_top(s, T, q):
    """The action kind on top of player ``q``'s discard pile, or -1: none when the pile is empty
    or shows a Diplomat or a Tribunus, whose actions the rulebooks forbid copying."""
    t = s[O_TOP + q]
    if t < 0:
        return -1
    k = T[T_TYPE_KIND + t]
    if k == K_DIPLOMAT or k == K_TRIBUNUS:
        return -1
    return k


@rule()
def start(s):
    s[O_PHASE] = PH_DIPLOMAT


@rule(inline="always")
def legal(s, T, p, mask):
    """Copy the action of any other player's discard top, or not: the Diplomat's player *may*
    carry out the copied action (German rulebook), so 'done' ends the turn without one. With
    nothing to copy, 'done' is all there is and :func:`~.kernel.step` applies it at once."""
    for q in range(s[O_NPLAYERS]):
        if q != p:
            k = copyable_top(s, T, q)
            if k >= 0:
                mask[A_COPY + k] = 1
    mask[A_DONE] = 1


@rule(inline="always")
def copied_kind(a):
    """The action kind copy action ``a`` carries out, as if its card had been played
    (:func:`~.kernel.apply` starts it through :func:`~.play.start_kind`, which this module
    cannot call: that dispatch starts a Diplomat too)."""
    return a - A_COPY


# ------------------------------------------------------------------ names
def name_copy(state, a: int) -> str:
    """e.g. ``Diplomat: copy Senator``; the Tribunus is named as never copyable."""
    k = a - A_COPY
    if k == K_TRIBUNUS:
        return f"Diplomat: copy {KIND_NAMES[k]} (never legal: a Tribunus cannot be copied)"
    return f"Diplomat: copy {KIND_NAMES[k]}"
