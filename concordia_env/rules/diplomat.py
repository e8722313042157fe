"""Diplomat: carry out the action of the card on top of another player's discard pile."""

from __future__ import annotations

from . import play, rule
from .layout import A_COPY, A_DONE, K_DIPLOMAT, O_NPLAYERS, O_PHASE, O_TOP, PH_DIPLOMAT, T_TYPE_KIND
from .names import KIND_NAMES


@rule(inline="always")
def copyable_top(s, T, q):
    """The action kind on top of player ``q``'s discard pile, or -1 (none, or a Diplomat)."""
    t = s[O_TOP + q]
    if t < 0:
        return -1
    k = T[T_TYPE_KIND + t]
    if k == K_DIPLOMAT:
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


@rule()
def copy(s, T, a):
    """Carry out the copied action as if its card had been played."""
    play.start_kind(s, T, a - A_COPY)


# ------------------------------------------------------------------ names
def name_copy(state, a: int) -> str:
    return f"Diplomat: copy {KIND_NAMES[a - A_COPY]}"
