"""Ending a turn, and with it the game."""

from __future__ import annotations

from . import rule
from .layout import O_ACTIVE, O_CONCORDIA, O_CURRENT, O_NPLAYERS, O_PHASE, O_TURN, PH_OVER, PH_PLAY
from .names import context


@rule(inline="always")
def game_ends_before(s, player):
    """Whether the game is over when play would pass to ``player``: once somebody has taken the
    Concordia card (built their last house or bought the last card), the game ends after the
    turn of the player to their right, so when play comes back round to them."""
    return s[O_CONCORDIA] >= 0 and player == s[O_CONCORDIA]


@rule()
def end_turn(s):
    """Pass play to the next player in turn order, or end the game."""
    n = s[O_NPLAYERS]
    nxt = (s[O_ACTIVE] + 1) % n
    if game_ends_before(s, nxt):
        s[O_PHASE] = PH_OVER
        s[O_CURRENT] = -1
        return
    s[O_ACTIVE] = nxt
    s[O_CURRENT] = nxt
    s[O_PHASE] = PH_PLAY
    s[O_TURN] += 1


# ------------------------------------------------------------------ names
def name_done(state, a: int) -> str:
    ctx = context(state)
    return f"{ctx}: done" if ctx else "done"
