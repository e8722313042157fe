"""Afterstates: the observation of the position each legal action leads to.

A learned policy over Concordia's 402 action ids would have to learn what each positional id
means in every phase (a 512-512 network cloning the heuristic agreed with it on 55% of moves
and won 2.5% of games against it). Scoring the position an action *leads to* instead lets one
network judge every action with what it knows about positions: the ``policy`` head of
:class:`~concordia_env.agents.value_net.ValueNet` gives one logit per afterstate, and the
softmax over a decision's legal actions is the policy.

An afterstate is seen by the player deciding *before* the action (a card play passes the turn
on; the decider still wants to know what its move achieved), with the same encoding as the
env's observations (:func:`concordia_env.encoding.encode`). The action is applied with
:func:`concordia_env.engine.step`, so afterstates skip the forced ``done`` the env skips too.
A search that samples the deck order sees, in the afterstate of a card purchase, the display
card its sample draws next: the same one-sample guess its own tree makes.
"""

from __future__ import annotations

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.encoding import OBSERVATION_SIZE, encode, map_id
from concordia_env.state import GameState

NUM_ACTIONS = E.NUM_ACTIONS


@kernel("int32[::1], int32[::1], int8[::1], int64, int64, int32[::1], int8[::1], float32[:, ::1]")
def afterstate_observations(s, T, mask, map_index, observer, buf, buf_mask, out):
    """Row ``k`` of ``out``: the observation by ``observer`` of ``s`` after its ``k``-th legal action
    (ascending id, ``mask``); ``buf``/``buf_mask`` are scratch of ``s``'s and ``mask``'s shapes.
    Returns the number of legal actions (rows written)."""
    k = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            buf[:] = s
            E.step(buf, T, buf_mask, a)
            encode(buf, T, map_index, observer, out[k])
            k += 1
    return k





class AfterstateEncoder:
    """Reusable scratch for :func:`afterstate_observations` on one map (no allocation per call
    beyond the returned view)."""

    def __init__(self, map_name: str) -> None:
        self.map_index = map_id(map_name)
        self.out = np.empty((NUM_ACTIONS, OBSERVATION_SIZE), np.float32)
        self.buf_mask = np.empty(NUM_ACTIONS, np.int8)
        self.buf: np.ndarray | None = None

    def rows(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, observer: int) -> np.ndarray:
        """``(L, OBSERVATION_SIZE)`` afterstate observations of the legal actions of ``s`` (a view
        into this encoder's buffer: valid until the next call)."""
        if self.buf is None or self.buf.shape != s.shape:
            self.buf = np.empty_like(s)
        n = afterstate_observations(s, T, mask, self.map_index, observer, self.buf, self.buf_mask, self.out)
        return self.out[:n]


def legal_afterstates(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """The legal action ids ``(L,)`` of ``state`` and the ``(L, OBSERVATION_SIZE)`` float32
    observations of the positions they lead to, seen by the deciding player (a new array)."""
    mask = state.legal_action_mask().astype(np.int8)
    enc = AfterstateEncoder(state.game.name)
    rows = enc.rows(state.s, state.game.tables, mask, state.current_player).copy()
    return np.flatnonzero(mask).astype(np.int64), rows
