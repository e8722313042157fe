"""``az`` over whole turns: a search whose moves are the candidate turns of each decision.

``az:turns=K`` expands every node by the candidate turns of its decision
(:func:`concordia_env.turn_kernels.turn_candidates`, at most ``K``: each card with its action
completed greedily by the heuristic, and the variations it ranks next), instead of by atomic
actions. A simulation walks down whole turns, so the new leaf it values is the end of a turn,
where learned values are reliable (a half-finished Mercator trade is not), and the search looks
several turns ahead in the simulations an atomic search spends inside one.

The tree is :class:`~concordia_env.agents.tree.SearchTree`'s, with the candidate's index ``k``
in place of an action id (a node has at most ``K`` <= 402 children), and :class:`TurnTree`
keeps each expanded node's candidates: their atomic actions, found once, on the deck sample of
the simulation that first searched from the node. A turn never sees the deck (a bought card's
place is refilled when the turn ends), so the candidates of the root hold for every sample;
deeper down the display may differ between samples, and a candidate that is not legal in a
sample is left out of that simulation's choice there (as an atomic search's mask does).

Priors are the softmax of the heuristic's values of the candidates' ends (as MCTS's priors at a
card choice are), values the network's win shares of a new leaf, exactly as in
:mod:`concordia_env.agents.az_search`; a simulation is one kernel from deck sample to backup.
"""

from __future__ import annotations

import math

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.turn_kernels import MAX_TURN_LEN, STATE_SIZE, turn_candidates
from concordia_env.turns import completion_weights

from .az_search import NET_TYPE, _leaf, net_value, simulation_result
from .tree import TREE_TYPE, SearchTree, backup, select

O_DECK, NCARD, NUM_ACTIONS = E.O_DECK, E.NCARD, E.NUM_ACTIONS
#: what a walk does at a node: go on down, stop at a finished game already in the tree, or stop at a
#: position where no candidate can be played in this sample (valued by the network in place)
_GO, _AT_END, _STUCK = 0, 1, 2

#: numba's type of :attr:`TurnTree.arrays`
TURN_TREE_TYPE = "Tuple((int64[::1], int64[:, ::1], int32[:, :, ::1]))"
#: numba's type of the candidate buffers (:class:`TurnBuffers`) and of a completion net's weights
BUFFERS_TYPE = "Tuple((int32[:, ::1], int32[:, ::1], int64[::1], float64[::1], int32[::1], int8[::1]))"
NO_NET_TYPE = "Tuple((float32[:, ::1], float32[::1], float32[:, ::1], float32[::1], float32[::1], boolean[::1]))"
ITERATE_TURNS_ARGS = (f"{TREE_TYPE}, {TURN_TREE_TYPE}, int64[::1], int32[::1], int32[::1], int32[::1], int8[::1], "
                      f"float64[::1], int32[:, ::1], float64, int64, float64, float64, float64, int64, int64, "
                      f"{BUFFERS_TYPE}, {NO_NET_TYPE}, float32[::1], {NET_TYPE}, float64[::1], float64[::1], "
                      "float64[::1]")


class TurnTree:
    """The candidate turns of each node of a :class:`SearchTree` (row ``i``: node ``i``):
    ``count[i]`` candidates, candidate ``k``'s ``length[i, k]`` atomic actions in ``actions[i, k]``.
    Grows with the tree (:meth:`reserve`)."""

    def __init__(self, capacity: int, candidates: int) -> None:
        self.candidates = candidates
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        self.count = np.zeros(capacity, np.int64)
        self.length = np.zeros((capacity, self.candidates), np.int64)
        self.actions = np.zeros((capacity, self.candidates, MAX_TURN_LEN + 1), np.int32)

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.count, self.length, self.actions

    def reserve(self, tree: SearchTree) -> None:
        """Room for as many nodes as ``tree`` has room for, keeping those there."""
        if tree.capacity <= self.count.size:
            return
        old, used = self.arrays, int(tree.size[0])
        self._allocate(tree.capacity)
        for new, kept in zip(self.arrays, old):
            new[:used] = kept[:used]

    def sequence(self, node: int, k: int) -> list[int]:
        """The atomic actions of candidate ``k`` of ``node``."""
        return [int(a) for a in self.actions[node, k, :self.length[node, k]]]


class TurnBuffers:
    """Scratch room for one call of :func:`turn_candidates` of at most ``candidates`` turns, and
    the walk's own (a saved state, the candidates open to a choice as a mask over the moves)."""

    def __init__(self, candidates: int) -> None:
        self.arrays = (np.zeros((candidates, STATE_SIZE), np.int32), np.zeros((candidates, MAX_TURN_LEN + 1), np.int32),
                       np.zeros(candidates, np.int64), np.zeros(candidates, np.float64),
                       np.zeros(STATE_SIZE, np.int32), np.zeros(NUM_ACTIONS, np.int8))
        self.no_net = completion_weights(None)


@kernel(f"{TREE_TYPE}, {TURN_TREE_TYPE}, int64, int32[::1], int32[::1], int64, {BUFFERS_TYPE}, {NO_NET_TYPE}, int64")
def expand(tree, turns, node, s, T, discrepancies, buffers, no_net, map_index):
    """Find the candidate turns of ``node``'s decision in ``s`` (left unchanged) and give the node
    their priors, the softmax of the heuristic's values of their ends; returns their count."""
    _, _, _, prior, has_prior, _, _ = tree
    count, length, actions = turns
    states, cand_actions, cand_lengths, values, _, _ = buffers
    n = turn_candidates(s, T, np.int64(0), discrepancies, states, cand_actions, cand_lengths, values, no_net,
                        map_index, np.int64(1))  # the heuristic completes: nothing to cache
    count[node] = n
    top = -math.inf
    for k in range(n):
        length[node, k] = cand_lengths[k]
        for j in range(cand_lengths[k]):
            actions[node, k, j] = cand_actions[k, j]
        if values[k] > top:
            top = values[k]
    prior[node, :] = 0.0
    total = 0.0
    for k in range(n):
        prior[node, k] = math.exp(values[k] - top)
        total += prior[node, k]
    for k in range(n):
        prior[node, k] /= total
    has_prior[node] = 1
    return n


@kernel(inline="always")
def _replay(s, T, mask, actions, length):
    """Play ``actions[:length]`` on ``s`` while each is legal; whether all were."""
    E.legal_mask(s, T, mask)
    for j in range(length):
        a = actions[j]
        if not mask[a]:
            return False
        E.step(s, T, mask, a)
    return True


@kernel(inline="always")
def _walk(tree, turns, path, s, T, mask, c_puct, discrepancies, buffers, no_net, map_index):
    """Walk down from the root along whole turns, playing each on ``s``, until a turn leads out of
    the tree: returns ``(how the walk ended, depth, the node it left from, the candidate)``."""
    players, _, _, _, has_prior, child, size = tree
    count, length, actions = turns
    _, _, _, _, saved, open_ = buffers
    depth = np.int64(1)
    while True:
        node = path[depth - 1]
        if players[node] < 0:
            return _AT_END, depth, node, -1
        if not has_prior[node]:
            expand(tree, turns, node, s, T, discrepancies, buffers, no_net, map_index)
        open_[:] = 0
        open_[:count[node]] = 1
        # PUCT over the candidates, as over actions: candidate k is the node's move k
        k = select(tree, node, open_, c_puct)
        while k >= 0:
            saved[:] = s
            if _replay(s, T, mask, actions[node, k], length[node, k]):
                break
            s[:] = saved  # not legal in this sample: choose again without it
            open_[k] = 0
            k = select(tree, node, open_, c_puct)
        if k < 0:
            return _STUCK, depth, node, -1
        c = child[node, k]
        if c < 0:
            return _GO, depth, node, k
        if depth >= size[0]:  # a path longer than the tree: the child links form a cycle
            return _STUCK, depth, node, -1
        path[depth] = c
        depth += 1


@kernel(ITERATE_TURNS_ARGS)
def iterate_turns(tree, turns, path, root_s, T, s, mask, result, decks, c_puct, max_turns, end_stake, leaf_mix,
                  temperature, map_index, discrepancies, buffers, no_net, row, net, shares, leaf, heuristic):
    """One simulation over whole turns per row of ``decks`` (the root's undrawn cards, sampled
    beforehand; the root already expanded); returns how many ran."""
    child = tree[5]
    for i in range(decks.shape[0]):
        s[:] = root_s
        s[O_DECK:O_DECK + NCARD] = decks[i]
        path[0] = 0
        how, depth, node, k = _walk(tree, turns, path, s, T, mask, c_puct, discrepancies, buffers, no_net,
                                    map_index)
        if how == _GO:  # a new leaf: the end of candidate k of node
            new = _leaf(tree, s, T, max_turns, map_index, row, net, shares, leaf)
            child[node, k] = new
            path[depth] = new
            depth += 1
        elif how == _STUCK:
            net_value(s, T, map_index, row, net, shares, leaf)
        simulation_result(s, T, max_turns, end_stake, leaf_mix, temperature, leaf, heuristic, result)
        backup(tree, path, depth, result)
    return decks.shape[0]
