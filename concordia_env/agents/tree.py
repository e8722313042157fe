"""The search tree of :class:`~concordia_env.agents.mcts.MCTSAgent` and its subclasses, as flat
arrays walked by compiled kernels.

Why compiled: the tree was a Python object per node with a dict of children, and choosing a
child (PUCT over up to 402 action ids, several times per iteration) took more than half of a
search's time, more than evaluating the positions. Here a node is a row index into a few
preallocated arrays, and selection, descent and backup are kernels, so a search with compiled
evaluations (MCTS's heuristic priors and leaf values) runs every iteration without returning
to Python, and one whose evaluations run in Python (a network's) returns only for them.

The layout (:class:`SearchTree`, a node is a row; the root is row 0; rows are handed out in the
order nodes are added, so a lower row is an older node):

* ``player[i]``: the seat deciding at the node, or -1 for a finished (or truncated) game;
* ``visits[i]`` and ``value[i, :]``: iterations through the node and the sum of their results
  for every seat (max^n: the mean of seat ``p`` is ``value[i, p] / visits[i]``);
* ``prior[i, :]`` over the action ids, valid once ``has_prior[i]`` is 1 (a search may put off
  computing them until a node is searched from);
* ``child[i, a]``: the row of the node reached by action ``a``, or -1 while there is none;
* ``size[0]``: the rows in use.

:func:`select` is PUCT exactly as the Python search computed it, in the same floating-point
order (``q + c_puct * prior[a] * sqrt(n_node + 1) / (1 + n_child)``, an unvisited child valued at
the node's own mean for its player, or 0.5 before its first visit; ties to the lowest action
id), and :func:`backup` adds a result to every node on the path, so a seed replays a search
bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel

NUM_ACTIONS, MAXP = E.NUM_ACTIONS, E.MAXP
O_DECK, O_DECK_POS, NCARD = E.O_DECK, E.O_DECK_POS, E.NCARD

#: what :func:`descend` returns instead of an action id when it stops: the node at the end of the
#: path needs its priors, or it is a finished game (a leaf already in the tree), or no legal
#: action has a comparable score there (``NO_CHOICE``: a value or prior is NaN, so every
#: comparison fails; the search must stop with an error rather than apply no action)
NEEDS_PRIOR, AT_LEAF, NO_CHOICE = -1, -2, -3

#: numba's type of :attr:`SearchTree.arrays`, for the kernels' signatures
TREE_TYPE = ("Tuple((int64[::1], int64[::1], float64[:, ::1], float64[:, ::1], uint8[::1], int32[:, ::1], "
             "int64[::1]))")


@kernel(f"{TREE_TYPE}, int64", group="mcts")
def new_node(tree, player):
    """Add a node for ``player`` (-1: a finished game) with no visits, children nor priors; its row."""
    players, visits, value, _, has_prior, child, size = tree
    i = size[0]
    size[0] = i + 1
    players[i] = player
    visits[i] = 0
    value[i, :] = 0.0
    has_prior[i] = 0
    child[i, :] = -1
    return i


@kernel()
def select(tree, node, mask, c_puct):
    """The legal action (``mask``) PUCT picks at ``node`` for its player (see the module docstring),
    or -1 when no score beats -inf (NaN values or priors: NaN compares false)."""
    players, visits, value, prior, _, child, _ = tree
    p = players[node]
    n_node = visits[node]
    sqrt_n = math.sqrt(n_node + 1)
    # unvisited actions start from the node's own mean for its player (first-play urgency)
    fpu = value[node, p] / n_node if n_node else 0.5
    best, best_score = -1, -math.inf
    for a in range(NUM_ACTIONS):
        if mask[a]:
            c = child[node, a]
            if c < 0 or visits[c] == 0:
                q, n = fpu, 0
            else:
                q, n = value[c, p] / visits[c], visits[c]
            score = q + c_puct * prior[node, a] * sqrt_n / (1 + n)
            if score > best_score:
                best, best_score = a, score
    return best


@kernel(f"{TREE_TYPE}, int32[::1], int32[::1], int8[::1], int64[::1], int64, float64", group="mcts")
def descend(tree, s, T, mask, path, depth, c_puct):
    """Walk on from the node ``path[depth - 1]`` (state ``s``, legal ``mask``), applying each chosen
    action to ``s``, until an action leads out of the tree: returns ``(action, depth)``, ``s``
    stepped past it. Stops earlier at a node still lacking priors (``NEEDS_PRIOR``), at a
    finished game (``AT_LEAF``), that node last on the path, or where no action can be chosen
    (``NO_CHOICE``). Every walk ends: each step goes one node deeper in a tree of finitely
    many rows, and the path can hold them all."""
    players, _, _, _, has_prior, child, size = tree
    while True:
        node = path[depth - 1]
        if players[node] < 0:
            return AT_LEAF, depth
        if not has_prior[node]:
            return NEEDS_PRIOR, depth
        a = select(tree, node, mask, c_puct)
        if a < 0:
            return NO_CHOICE, depth
        E.step(s, T, mask, a)
        c = child[node, a]
        if c < 0:
            return a, depth
        if depth >= size[0]:  # a path longer than the tree: the child links form a cycle
            return NO_CHOICE, depth
        path[depth] = c
        depth += 1


@kernel(f"{TREE_TYPE}, int64[::1], int64, float64[::1]", group="mcts")
def backup(tree, path, depth, result):
    """Count one more visit with ``result`` (every seat's value) at each node of ``path[:depth]``."""
    _, visits, value, _, _, _, _ = tree
    for k in range(depth):
        node = path[k]
        visits[node] += 1
        for p in range(MAXP):
            value[node, p] += result[p]


@kernel()
def resample(deck, pos, starts, stops, rng):
    """Shuffle the undrawn cards of ``deck`` (from ``pos`` on) within their stacked decks
    (``starts``/``stops``), in place: the draws of :func:`~concordia_env.agents.mcts.resample_deck`
    (a shuffle draws as numpy's ``permutation`` does) from the same generator."""
    for b in range(starts.size):
        lo = max(starts[b], pos)
        if lo < stops[b] - 1:
            rng.shuffle(deck[lo:stops[b]])


@kernel("int32[::1], int64[::1], int64[::1], npy_rng, int32[:, ::1]", group="mcts")
def deck_samples(s, starts, stops, rng, out):
    """One deck order of ``s`` resampled (:func:`resample`) into each row of ``out``, in turn: the
    draws of as many iterations in one call (handing numba the generator costs tens of µs)."""
    for k in range(out.shape[0]):
        out[k, :] = s[O_DECK:O_DECK + NCARD]
        resample(out[k], s[O_DECK_POS], starts, stops, rng)





def no_choice_error(agent: str) -> RuntimeError:
    """The error of a search that reached a node where no action can be chosen (``NO_CHOICE``)."""
    return RuntimeError(f"{agent}: the search reached a node where no legal action has a comparable "
                        f"score (NaN values or priors); it stops rather than guess")


class Node:
    """One node of a :class:`SearchTree` seen from Python (what a search agent's hooks are given)."""

    __slots__ = ("tree", "index")

    def __init__(self, tree: SearchTree, index: int) -> None:
        self.tree, self.index = tree, index

    @property
    def player(self) -> int:
        return int(self.tree.player[self.index])

    @property
    def prior(self) -> np.ndarray | None:
        """The node's priors over the action ids (a view), or None while it has none."""
        return self.tree.prior[self.index] if self.tree.has_prior[self.index] else None

    @prior.setter
    def prior(self, value: np.ndarray) -> None:
        self.tree.prior[self.index] = value
        self.tree.has_prior[self.index] = 1


class SearchTree:
    """The nodes of one search (see the module docstring), kept by an agent from one search to the
    next: :meth:`clear` starts a new tree in the same arrays, :meth:`reserve` grows them."""

    def __init__(self, capacity: int) -> None:
        self._allocate(capacity)
        self.size = np.zeros(1, np.int64)

    def _allocate(self, capacity: int) -> None:
        self.player = np.empty(capacity, np.int64)
        self.visits = np.empty(capacity, np.int64)
        self.value = np.empty((capacity, MAXP))
        self.prior = np.empty((capacity, NUM_ACTIONS))
        self.has_prior = np.empty(capacity, np.uint8)
        self.child = np.empty((capacity, NUM_ACTIONS), np.int32)
        self.path = np.empty(capacity, np.int64)  # a root-to-leaf path is never longer than the tree

    @property
    def capacity(self) -> int:
        return self.player.size

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """The node arrays as the kernels take them (``TREE_TYPE``)."""
        return self.player, self.visits, self.value, self.prior, self.has_prior, self.child, self.size

    def clear(self) -> None:
        self.size[0] = 0

    def reserve(self, nodes: int) -> None:
        """Make room for ``nodes`` nodes in all, keeping those there (a time budget cannot tell
        ahead how many iterations, hence nodes, it will run): at least doubles when it grows."""
        if nodes <= self.capacity:
            return
        old, used = self.arrays, int(self.size[0])
        self._allocate(max(nodes, 2 * self.capacity))
        for new, kept in zip(self.arrays[:-1], old[:-1]):
            new[:used] = kept[:used]

    def add(self, player: int) -> Node:
        """A new node for ``player`` (-1: a finished game)."""
        self.reserve(int(self.size[0]) + 1)
        return Node(self, new_node(self.arrays, player))

    def node(self, index: int) -> Node:
        return Node(self, index)

    def children(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """The action ids with a child at node ``index`` and those children's rows, oldest child
        first (the order they were added)."""
        actions = np.flatnonzero(self.child[index] >= 0)
        rows = self.child[index, actions].astype(np.int64)
        order = np.argsort(rows)
        return actions[order], rows[order]
