"""Playing a card from hand, and starting the action it stands for.

:func:`start_kind` is the table of which family starts each action kind; the Diplomat starts
the same way with the kind it copies.
"""

from __future__ import annotations

import numpy as np

from . import architectus, colonus, diplomat, mercator, praefectus, rule, senator, specialists, tribunus
from .layout import (
    A_PLAY,
    K_ARCHITECTUS,
    K_COLONUS,
    K_CONSUL,
    K_DIPLOMAT,
    K_MERCATOR3,
    K_MERCATOR5,
    K_PRAEFECTUS,
    K_SENATOR,
    K_TRIBUNUS,
    NT,
    O_ACTIVE,
    O_DISCARD,
    O_HAND,
    O_KIND,
    O_TOP,
    T_TYPE_KIND,
)
from .names import card_type_name


@rule(inline="always")
def legal(s, T, p, mask):
    """Any card in hand may be played: a turn is playing one card (the German rulebook), so a
    Diplomat is playable even with nothing to copy (then the turn has no effect)."""
    for t in range(NT):
        if s[O_HAND + p * NT + t] > 0:
            mask[A_PLAY + t] = 1


@rule()
def start_kind(s, T, k):
    """Start action kind ``k`` for the active player: which family handles which kind."""
    p = s[O_ACTIVE]
    s[O_KIND] = k
    if k == K_TRIBUNUS:
        tribunus.start(s, T, p)
    elif k == K_ARCHITECTUS:
        architectus.start(s, p)
    elif k == K_PRAEFECTUS:
        praefectus.start(s)
    elif k == K_MERCATOR3 or k == K_MERCATOR5:
        mercator.start(s, T, p, k)
    elif k == K_COLONUS:
        colonus.start(s)
    elif k == K_SENATOR or k == K_CONSUL:
        senator.start(s, k)
    elif k == K_DIPLOMAT:
        diplomat.start(s)
    else:
        specialists.start(s, T, p, k)


@rule()
def play_card(s, T, a):
    """Play card type ``a - A_PLAY``: it goes from hand onto the player's discard pile."""
    p = s[O_ACTIVE]
    t = a - A_PLAY
    s[O_HAND + p * NT + t] -= 1
    s[O_DISCARD + p * NT + t] += 1
    s[O_TOP + p] = t
    start_kind(s, T, np.int64(T[T_TYPE_KIND + t]))  # int64 as for the Diplomat's copy: one compiled version


# ------------------------------------------------------------------ names
def name_play(state, a: int) -> str:
    return f"play {card_type_name(state, a - A_PLAY)}"
