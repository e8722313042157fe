"""``az``'s simulations compiled: deck sample to backup without returning to Python.

:class:`~concordia_env.agents.az.AZAgent` with the heuristic's priors (``prior_mix=1``, its
default) needs the network only for the value of each new leaf. Then a whole simulation is a
kernel, as an MCTS iteration is (:func:`concordia_env.agents.mcts._iterate_heuristic`): the
deck sample, the walk down the tree (:func:`~concordia_env.agents.tree.descend`), the heuristic's
priors of a node searched from for the first time, the new leaf's observation
(:func:`~concordia_env.encoding.encode`) and its value through the compiled network
(:func:`~concordia_env.agents.net_kernels.win_shares`), and the backup.

It does what the Python loop (:meth:`AZAgent._iterate_python`) does in the same order, drawing
the same decks, so a search differs from it only where the network's float sums round
differently (about 1e-7 in a value); ``az:compiled=0`` runs the Python loop, which also serves the
network's own priors (``prior_mix < 1``: a batch of afterstates per node).
"""

from __future__ import annotations

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.encoding import encode

from .mcts import _stretch, _winner, end_is_fixed, evaluate, is_over, priors
from .net_kernels import win_shares
from .tree import NEEDS_PRIOR, NO_CHOICE, TREE_TYPE, backup, descend, new_node

O_CURRENT, O_NPLAYERS, O_DECK, NCARD = E.O_CURRENT, E.O_NPLAYERS, E.O_DECK, E.NCARD

#: numba's type of :attr:`~concordia_env.agents.net_kernels.CompiledNet.arrays`
NET_TYPE = ("Tuple((float32[::1], uint8[::1], float32[:, ::1], float32[::1], float32[::1], float32[::1], int64[::1], "
            "int64, float32[:, ::1], float32[::1], float64[:, ::1]))")
ITERATE_NET_ARGS = (f"{TREE_TYPE}, int64[::1], int32[::1], int8[::1], int32[::1], int32[::1], int8[::1], float64[::1], "
                    f"int32[:, ::1], float64, int64, float64, float64, float64, int64, float32[::1], {NET_TYPE}, "
                    "float64[::1], float64[::1], float64[::1]")


@kernel(inline="always")
def net_value(s, T, map_index, row, net, shares, leaf):
    """The network's value of the unfinished position ``s`` (every seat's win share, by absolute
    seat) into ``leaf``; returns the deciding seat."""
    p = np.int64(s[O_CURRENT])
    n = s[O_NPLAYERS]
    encode(s, T, map_index, p, row)
    (scale, unbounded, first, first_bias, weights, biases, widths, activation, win_weight, win_bias, scratch) = net
    win_shares(row, scale, unbounded, first, first_bias, weights, biases, widths, activation, win_weight, win_bias,
               scratch, shares)
    leaf[:] = 0.0
    for k in range(n):  # row k of the observation is seat (p + k) % n
        leaf[(p + k) % n] = shares[k]
    return p


@kernel(inline="always")
def _leaf(tree, s, T, max_turns, map_index, row, net, shares, leaf):
    """A new node for the position ``s``; the network's value of it (:func:`net_value`) into
    ``leaf`` unless the game is over. Returns the node's row."""
    if is_over(s, max_turns):
        return new_node(tree, np.int64(-1))
    return new_node(tree, net_value(s, T, map_index, row, net, shares, leaf))


@kernel(inline="always")
def simulation_result(s, T, max_turns, end_stake, leaf_mix, temperature, leaf, heuristic, result):
    """What a simulation ending at ``s`` backs up, into ``result``: the winner's win once the game
    is over, else the leaf's network value (``leaf``) blended with the heuristic's by
    ``leaf_mix``; stretched by ``end_stake`` once the end is fixed."""
    n = s[O_NPLAYERS]
    result[:] = 0.0
    if is_over(s, max_turns):
        result[_winner(s, T)] = 1.0
    else:
        result[:] = leaf
        if leaf_mix > 0:
            evaluate(s, T, temperature, heuristic)
            for q in range(n):
                result[q] = (1 - leaf_mix) * result[q] + leaf_mix * heuristic[q]
    if end_is_fixed(s, max_turns):
        _stretch(result, n, 1.0 + end_stake)


@kernel(ITERATE_NET_ARGS)
def iterate_net(tree, path, root_s, root_mask, T, s, mask, result, decks, c_puct, max_turns, end_stake, leaf_mix,
                temperature, map_index, row, net, shares, leaf, heuristic):
    """One simulation per row of ``decks`` (the root's undrawn cards, sampled beforehand); returns
    how many ran (fewer when a walk found no action to choose: NaN values or priors)."""
    _, _, _, prior, has_prior, child, _ = tree
    for k in range(decks.shape[0]):
        s[:] = root_s
        s[O_DECK:O_DECK + NCARD] = decks[k]
        mask[:] = root_mask
        path[0] = 0
        a, depth = descend(tree, s, T, mask, path, np.int64(1), c_puct)
        while a == NEEDS_PRIOR:
            node = path[depth - 1]
            priors(s, T, mask, prior[node])
            has_prior[node] = 1
            a, depth = descend(tree, s, T, mask, path, depth, c_puct)
        if a == NO_CHOICE:
            return k
        if a >= 0:  # the walk left the tree by action a: a new leaf
            node = _leaf(tree, s, T, max_turns, map_index, row, net, shares, leaf)
            child[path[depth - 1], a] = node
            path[depth] = node
            depth += 1
        simulation_result(s, T, max_turns, end_stake, leaf_mix, temperature, leaf, heuristic, result)
        backup(tree, path, depth, result)
    return decks.shape[0]
