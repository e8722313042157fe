"""The stall guard: a policy that stops moving the game toward its end hands its moves on.

A game of Concordia ends only when a player takes the last card of the display or builds
his last house (rules.md, "Game end"); nothing else ends it. A policy that stops buying cards
and building houses therefore plays on until the card-play cap truncates the game. The
released ``net`` does: against itself it reached the 2,000-card-play cap in 40 of 40
2-player Italia games, and against ``ppo`` in 21 of the strength table's 200 (in one of them
it played no Senator and no Consul after card play 73, holding both, and ended with 5,000
sestertii and 3 of its 15 houses built). Issue 13 asks that no pair of the package's agents
produce a truncated game.

The guard watches one number, :func:`progress_left`: the cards still to take (display and
deck) plus the houses still to build, over all players. Nothing in the rules raises it,
and every purchase and every house lowers it. The guard *acts* when the game is long (at
least ``after`` card plays per player, beyond any game the package's agents finish
normally: the longest the strength table saw between `net` and the heuristic or the search
agents was 84 card plays per player) and the number has not moved for ``rounds`` rounds
(``rounds`` card plays per player). While it acts, the guarded agent plays the heuristic's
move; as soon as anyone buys a card or builds a house, the policy plays again. So a game
shorter than ``after`` card plays per player is the policy's own, move for move.
"""

from __future__ import annotations

import numpy as np

from concordia_env import engine as E

STALL_AFTER = 100
"""Default ``after``: card plays per player before the guard may act (2-player: 200 card plays)."""

STALL_ROUNDS = 10
"""Default ``rounds``: rounds without a purchase or a house before the guard acts."""


def progress_left(s: np.ndarray) -> int:
    """Cards still to take (display and undrawn deck) plus houses still to build, all players:
    it falls with every purchase and every house and never rises."""
    n = int(s[E.O_NPLAYERS])
    display = int(np.count_nonzero(s[E.O_DISPLAY:E.O_DISPLAY + E.NDISP] >= 0))
    deck = int(s[E.O_DECK_LEN] - s[E.O_DECK_POS])
    houses = int(s[E.O_HOUSES_LEFT:E.O_HOUSES_LEFT + n].sum())
    return display + deck + houses


def check_stall_args(after: int, rounds: int) -> None:
    """``ValueError`` naming the option unless both are whole numbers >= 0."""
    for name, value in (("stall_after", after), ("stall_rounds", rounds)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a whole number >= 0, got {value!r}")


class StallGuard:
    """Says when a game has stalled: long, and no card taken nor house built for a while.

    Args:
        after: card plays per player before the guard may act.
        rounds: rounds (card plays per player) with :func:`progress_left` unchanged before it
            acts; 0 turns the guard off.

    The guard sees the game only when its agent decides, so it dates a change of
    :func:`progress_left` by the first card play it sees the new value at.
    """

    def __init__(self, after: int = STALL_AFTER, rounds: int = STALL_ROUNDS) -> None:
        check_stall_args(after, rounds)
        self.after, self.rounds = int(after), int(rounds)
        self.reset()

    def reset(self) -> None:
        """Forget the game watched so far."""
        self._left = -1
        self._since = 0
        self._turn = -1

    def stalled(self, s: np.ndarray) -> bool:
        """Whether the game at state ``s`` has stalled (and note what ``s`` shows)."""
        if not self.rounds:
            return False
        turn, left = int(s[E.O_TURN]), progress_left(s)
        if turn < self._turn or left != self._left:  # progress, or another game
            self._left, self._since = left, turn
        self._turn = turn
        n = int(s[E.O_NPLAYERS])
        return turn >= self.after * n and turn - self._since >= self.rounds * n
