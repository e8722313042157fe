"""MCTSAgent: Monte Carlo tree search over the core game with the deck order re-sampled.

Each iteration copies the current state, shuffles the cards still in the deck
(within each stacked deck I, II, ...: that is exactly what every player
knows, so the sample is a fair draw from the player's belief), walks the tree
from the root, adds one node and evaluates it:

* ``rollout="heuristic"`` (default): the :mod:`concordia_env.agents.heuristic` position value
  of every player, turned into shares of a win by a softmax with temperature
  ``temperature`` (VP-like units, :func:`evaluate`);
* ``rollout="random"``: a uniformly random playout to the end of the game
  (compiled), 1 for the winner, 0 for the others.

A finished game scores 1 for the winner after the tie-break, as the rules score
it. A game truncated at ``max_turns`` card plays (the env's and the tournament's
cap, 2,000 by default) is scored the same way, as if final scoring happened then:
1 for the player with the most VP after the tie-break.

Finishing a won game. Once the end is fixed (the Concordia card is taken: the
last display card bought with the deck empty, or a 15th house built; every other
player has one turn left) or the game is over, a lead has little time left to be
overturned, so the leaf's win shares are stretched away from the even split by
``1 + end_stake`` (default 2; they still sum to 1; :func:`leaf_value`). A leader
therefore gains by ending the game, and a trailing player loses by it, as in the
real game. Without it a leader whose win share is close to 1 everywhere sees
every move as equally good, and follows its priors: MCTS, hundreds of VP ahead
of the ``ppo`` policy, farmed sestertii for Vesta with the Mercator and the
Tribunus (the cards whose gain comes at once) until the 2,000-card-play cap.
The stretch is a step at the trigger, not a ramp over the last purchases or
builds: a ramp rewards the leader for *anyone's* step toward the end, and in the
tree the opponents' replies (few visits, led by their priors) take steps the
real opponents do not, so a leader waited for them and stalled again.

Selection is PUCT for the player deciding at each node (max^n: every node
keeps the mean result of every player), with priors from a softmax of the
heuristic's values (:func:`priors`), so the search looks first where the
heuristic would: at a card choice (playing a card, the Diplomat's copy), the
value at the end of the turn that the heuristic would play after each card, as
:class:`~concordia_env.agents.heuristic.HeuristicAgent` itself compares them;
within an action, the value one step on. (One-step values at a card choice
favour the cards that pay at once: an Architectus gains nothing the moment it
is played, only through its moves and builds. With them a leader whose win
share is close to 1 never built or bought again.)
Actions legal in one deck sample but not another (a card that appears only in
some orders) are simply skipped where illegal.

The budget is ``iterations`` per decision, or ``ms`` milliseconds per decision
when given (then results depend on the machine's speed; iterations are
reproducible everywhere). A decision with one legal action is not searched.

The tree is a set of preallocated arrays, a node a row (:mod:`concordia_env.agents.tree`
describes the layout), kept by the agent from one search to the next. Choosing a child
among up to 402 action ids several times per iteration cost more than half of a search
when nodes were Python objects, so the whole iteration is compiled: :func:`_iterate_heuristic`
and :func:`_iterate_random` sample the deck (numba draws from the agent's own numpy
``Generator``, exactly the draws ``resample_deck`` makes), descend, add the node with its
priors, value it and back the value up, for all the iterations of a search in one call (a
time budget runs them in chunks and reads the clock between). Python only sets up the root
(its priors and the root noise) and reads the result. A subclass whose evaluations run in
Python (:class:`~concordia_env.agents.az.AZAgent`'s network) overrides :meth:`MCTSAgent._iterate`
and uses the compiled descent and backup around its own evaluations. A seed gives the same
search, bit for bit, as the Python tree it replaced (``tests/test_search_golden.py``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.board import stacked_decks
from concordia_env.env import DEFAULT_MAX_TURNS, check_max_turns
from concordia_env.rules.scoring import winner
from concordia_env.state import GameState

from . import heuristic as H
from .base import Agent, check_mask
from .tree import NO_CHOICE, TREE_TYPE, Node, SearchTree, backup, descend, new_node, no_choice_error, resample

NGODS, NUM_ACTIONS, MAXP = E.NGODS, E.NUM_ACTIONS, E.MAXP
O_NPLAYERS, O_CURRENT, O_PHASE, O_PM, O_TURN, O_CONCORDIA = (E.O_NPLAYERS, E.O_CURRENT, E.O_PHASE, E.O_PM,
                                                            E.O_TURN, E.O_CONCORDIA)
PH_OVER, PH_PLAY, PH_DIPLOMAT = E.PH_OVER, E.PH_PLAY, E.PH_DIPLOMAT
O_DECK, O_DECK_POS, NCARD = E.O_DECK, E.O_DECK_POS, E.NCARD

#: a lead counts this much more once the end of the game is fixed (see the module docstring)
END_STAKE = 1.0
#: the nodes a search with a time budget (``ms``) starts with room for; it grows as needed
TIMED_TREE_NODES = 1024


@kernel()
def _winner(s, T):
    """The winner as final scoring ranks the players now: most VP, then the Praefectus Magnus."""
    return winner(s, T)


@kernel()
def is_over(s, max_turns):
    """The game is over, or truncated: ``max_turns`` card plays made (0: no cap)."""
    return s[O_PHASE] == PH_OVER or (max_turns > 0 and s[O_TURN] >= max_turns)


@kernel()
def end_is_fixed(s, max_turns):
    """The game is over or truncated, or its end is triggered (the Concordia card is taken)."""
    return is_over(s, max_turns) or s[O_CONCORDIA] >= 0


@kernel()
def _stretch(out, n, f):
    """Stretch the win shares ``out[:n]`` away from the even split by the factor ``f`` (they
    keep summing to 1)."""
    for p in range(n):
        out[p] = 1.0 / n + f * (out[p] - 1.0 / n)


@kernel("int32[::1], int32[::1], float64, float64[::1]")
def evaluate(s, T, temperature, out):
    """Every player's share of a win (sums to 1) into ``out[:n]``: a softmax of the heuristic
    position values, 1 for the winner of a finished game."""
    n = s[O_NPLAYERS]
    out[:] = 0.0
    if s[O_PHASE] == PH_OVER:
        out[_winner(s, T)] = 1.0
        return
    vp = np.zeros(NGODS, np.int32)
    top = -np.inf
    for p in range(n):
        out[p] = H.position_value(s, T, p, vp) / temperature
        if out[p] > top:
            top = out[p]
    total = 0.0
    for p in range(n):
        out[p] = math.exp(out[p] - top)
        total += out[p]
    for p in range(n):
        out[p] /= total


@kernel("int32[::1], int32[::1], float64, int64, float64, float64[::1]")
def leaf_value(s, T, temperature, max_turns, end_stake, out):
    """The search's value of a leaf for every player into ``out[:n]``: :func:`evaluate`'s win
    shares (1 for the player ahead after the tie-break once ``max_turns`` card plays are made:
    a truncated game scored as if it ended now), stretched by ``1 + end_stake`` once the end
    is fixed (:func:`end_is_fixed`)."""
    if is_over(s, max_turns):
        out[:] = 0.0
        out[_winner(s, T)] = 1.0
    else:
        evaluate(s, T, temperature, out)
    if end_is_fixed(s, max_turns):
        _stretch(out, s[O_NPLAYERS], 1.0 + end_stake)


@kernel("int32[::1], int32[::1], int8[::1], int64, int64, float64, float64[::1]", group="rollout")
def random_result(s, T, mask, seed, max_turns, end_stake, out):
    """Play ``s`` out at random (in place) until the game ends or is truncated; 1 for the winner
    (the player ahead, if truncated) in ``out``, stretched like :func:`leaf_value` when the end
    was fixed at ``s`` already."""
    fixed = end_is_fixed(s, max_turns)
    np.random.seed(seed)  # the draws of engine.random_playout, with the truncation added
    E.legal_mask(s, T, mask)
    idx = np.empty(NUM_ACTIONS, np.int64)
    while not is_over(s, max_turns):
        m = 0
        for a in range(NUM_ACTIONS):
            if mask[a]:
                idx[m] = a
                m += 1
        E.step(s, T, mask, idx[np.random.randint(0, m)])
    out[:] = 0.0
    out[_winner(s, T)] = 1.0
    if fixed:
        _stretch(out, s[O_NPLAYERS], 1.0 + end_stake)


@kernel("int32[::1], int32[::1], int8[::1], float64[::1]")
def priors(s, T, mask, out):
    """Softmax over the legal actions of the deciding player's heuristic values: after the
    turn the heuristic would play, at a card choice; one step on, within an action."""
    p = s[O_CURRENT]
    ph = s[O_PHASE]
    if ph == PH_PLAY or ph == PH_DIPLOMAT:
        H.turn_values(s, T, mask, p, np.zeros(NUM_ACTIONS), out)  # no tie-break noise: priors tie
    else:
        tmp = np.empty_like(s)
        tmask = np.empty_like(mask)
        vp = np.zeros(NGODS, np.int32)
        H.step_values(s, T, mask, p, out, tmp, tmask, vp)
    top = -np.inf
    for a in range(NUM_ACTIONS):
        if out[a] > top:
            top = out[a]
    total = 0.0
    for a in range(NUM_ACTIONS):
        out[a] = math.exp(out[a] - top) if mask[a] else 0.0
        total += out[a]
    for a in range(NUM_ACTIONS):
        out[a] /= total


ITERATE_ARGS = (f"{TREE_TYPE}, int64[::1], int32[::1], int8[::1], int32[::1], int32[::1], int8[::1], float64[::1], "
                "int64[::1], int64[::1], npy_rng, int64, float64, float64, int64, float64")


# inlined into its two callers: compiled alone it would carry one more copy of the whole engine
@kernel(inline="always")
def _walk(tree, path, root_s, root_mask, T, s, mask, starts, stops, rng, c_puct, max_turns):
    """One iteration up to its leaf: a fresh deck sample of the root into ``s``, the descent, and
    the new node (with its priors) where the walk leaves the tree. Returns the path's length, or
    -1 where the walk found no action to choose (``NO_CHOICE``: NaN values or priors)."""
    s[:] = root_s
    mask[:] = root_mask
    resample(s[O_DECK:O_DECK + NCARD], s[O_DECK_POS], starts, stops, rng)
    path[0] = 0
    # every searchable node has priors here; typed constants: a literal would compile another copy
    a, depth = descend(tree, s, T, mask, path, np.int64(1), c_puct)
    if a == NO_CHOICE:
        return np.int64(-1)
    if a >= 0:
        _, _, _, prior, has_prior, child, _ = tree
        player = np.int64(-1) if is_over(s, max_turns) else np.int64(s[O_CURRENT])
        leaf = new_node(tree, player)
        if player >= 0:
            priors(s, T, mask, prior[leaf])
            has_prior[leaf] = 1
        child[path[depth - 1], a] = leaf
        path[depth] = leaf
        depth += 1
    return depth


@kernel(ITERATE_ARGS)
def _iterate_heuristic(tree, path, root_s, root_mask, T, s, mask, result, starts, stops, rng, count, c_puct,
                       temperature, max_turns, end_stake):
    """``count`` iterations valued by :func:`leaf_value` at the new node, all compiled; returns how
    many ran (fewer when a walk found no action to choose)."""
    for k in range(count):
        depth = _walk(tree, path, root_s, root_mask, T, s, mask, starts, stops, rng, c_puct, max_turns)
        if depth < 0:
            return k
        leaf_value(s, T, temperature, max_turns, end_stake, result)
        backup(tree, path, depth, result)
    return count


@kernel(ITERATE_ARGS, group="rollout")
def _iterate_random(tree, path, root_s, root_mask, T, s, mask, result, starts, stops, rng, count, c_puct,
                    temperature, max_turns, end_stake):
    """``count`` iterations valued by a random playout from the new node (:func:`random_result`,
    seeded from ``rng``), all compiled; returns how many ran, as :func:`_iterate_heuristic`."""
    players = tree[0]
    for k in range(count):
        depth = _walk(tree, path, root_s, root_mask, T, s, mask, starts, stops, rng, c_puct, max_turns)
        if depth < 0:
            return k
        if players[path[depth - 1]] >= 0:
            random_result(s, T, mask, rng.integers(0, 2**31), max_turns, end_stake, result)
        else:
            leaf_value(s, T, temperature, max_turns, end_stake, result)
        backup(tree, path, depth, result)
    return count





def deck_blocks(state: GameState) -> list[tuple[int, int]]:
    """(start, stop) positions of each stacked deck (I, II, ...) within the deck array."""
    out, start = [], 0
    for cards in stacked_decks(state.game.components, state.num_players):
        out.append((start, start + len(cards)))
        start += len(cards)
    return out


def resample_deck(s: np.ndarray, blocks: list[tuple[int, int]], rng: np.random.Generator) -> None:
    """Shuffle the undrawn cards of ``s`` within their stacked decks (in place)."""
    pos = int(s[E.O_DECK_POS])
    deck = s[E.O_DECK:E.O_DECK + E.NCARD]
    for start, stop in blocks:
        lo = max(start, pos)
        if lo < stop - 1:
            deck[lo:stop] = rng.permutation(deck[lo:stop])


@dataclass
class SearchResult:
    """What a search found at the root: the move it plays, the root's visit counts per action
    id (the policy target of expert iteration) and the root's mean value per absolute seat."""

    action: int
    visits: np.ndarray
    value: np.ndarray


@dataclass(frozen=True)
class SearchRoot:
    """What every iteration of one search starts from: the root's state and legal mask, the map's
    tables, and the stacked decks' (start, stop) in the deck (also as arrays, for the kernels)."""

    s: np.ndarray
    mask: np.ndarray
    T: np.ndarray
    blocks: list[tuple[int, int]]
    starts: np.ndarray
    stops: np.ndarray

    @classmethod
    def of(cls, state: GameState, mask: np.ndarray) -> SearchRoot:
        blocks = deck_blocks(state)
        return cls(state.s, mask, state.game.tables, blocks, np.array([b[0] for b in blocks], np.int64),
                   np.array([b[1] for b in blocks], np.int64))


def check_fraction(name: str, value: object) -> float:
    """``value`` as a float in [0, 1], else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def check_nonnegative(name: str, value: object) -> float:
    """``value`` as a float >= 0, else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


class MCTSAgent(Agent):
    """Determinized PUCT search (see the module docstring).

    Args:
        seed: seeds the deck samples, the random playouts and tie-breaks.
        iterations: search iterations per decision (default 400 when ``ms`` is not given).
        ms: time budget per decision in milliseconds (overrides ``iterations``).
        rollout: "heuristic" (position value at the new node) or "random" (random playout).
        c_puct: exploration constant.
        temperature: softmax temperature turning position values into win shares.
        end_stake: how much more a lead counts once the end of the game is fixed (0: no more;
            see the module docstring).
        max_turns: the card plays after which the game is truncated (the env's and the
            tournament's default, 2,000; None: never), scored in the search as if final scoring
            happened then. It only tells the search how the caller scores such a game.
        root_noise: weight of Dirichlet noise mixed into the root's priors (0: none; self-play
            exploration, as AlphaZero's 0.25).
        root_noise_alpha: the Dirichlet concentration of that noise.
        move_temperature: 0 plays the most visited action; ``t > 0`` samples an action with
            probability proportional to ``visits ** (1 / t)`` (self-play exploration).
    """

    name = "mcts"

    def __init__(self, seed: int = 0, iterations: int | None = None, ms: float | None = None,
                 rollout: str = "heuristic", c_puct: float = 1.5, temperature: float = 8.0,
                 end_stake: float = END_STAKE, max_turns: int | None = DEFAULT_MAX_TURNS,
                 root_noise: float = 0.0, root_noise_alpha: float = 0.3, move_temperature: float = 0.0) -> None:
        if rollout not in ("heuristic", "random"):
            raise ValueError(f"rollout must be 'heuristic' or 'random', got {rollout!r}")
        if not c_puct > 0 or not temperature > 0:
            raise ValueError("c_puct and temperature must be positive")
        self.rollout = rollout
        self.temperature = float(temperature)
        self._configure(iterations, ms, c_puct, end_stake, max_turns, root_noise, root_noise_alpha, move_temperature)
        self.reset(seed)

    def _configure(self, iterations: int | None, ms: float | None, c_puct: float, end_stake: float,
                   max_turns: int | None, root_noise: float, root_noise_alpha: float,
                   move_temperature: float) -> None:
        """Check and set the options every search agent shares; allocate the tree and the buffers
        its searches reuse."""
        if ms is not None and (isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms > 0):
            raise ValueError(f"ms must be a positive number of milliseconds, got {ms!r}")
        if iterations is None:
            iterations = 400
        if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
            raise ValueError(f"iterations must be a positive int, got {iterations!r}")
        if isinstance(c_puct, bool) or not isinstance(c_puct, (int, float)) or not c_puct > 0:
            raise ValueError(f"c_puct must be a positive number, got {c_puct!r}")
        self.iterations, self.ms, self.c_puct = iterations, ms, float(c_puct)
        self.end_stake = check_nonnegative("end_stake", end_stake)
        self.max_turns = check_max_turns(max_turns)
        self.root_noise = check_fraction("root_noise", root_noise)
        self.root_noise_alpha = check_nonnegative("root_noise_alpha", root_noise_alpha)
        if self.root_noise > 0 and not self.root_noise_alpha > 0:
            raise ValueError("root_noise_alpha must be positive when root_noise is used")
        self.move_temperature = check_nonnegative("move_temperature", move_temperature)
        self.last_iterations = 0
        # an iteration adds at most one node: the root and one per iteration (a time budget grows it)
        self._tree = SearchTree(iterations + 1 if ms is None else TIMED_TREE_NODES)
        self._s = np.empty(E.STATE_SIZE, np.int32)  # the iteration's sampled state
        self._mask = np.empty(NUM_ACTIONS, np.int8)
        self._result = np.zeros(MAXP)  # the leaf's value for every seat

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        if state is None:
            raise ValueError(f"{type(self).__name__} searches the game itself: pass the core GameState as `state`")
        if not np.array_equal(np.flatnonzero(state.legal_action_mask()), legal):
            raise ValueError("action_mask does not match state's legal actions")
        return self._move(state, legal)

    def _move(self, state: GameState, legal: np.ndarray) -> int:
        """The move at a checked decision (``legal``: its legal action ids): the only legal
        action, else the search's."""
        if legal.size == 1:
            return int(legal[0])
        return self.search(state).action

    # ------------------------------------------------------------ search
    def _new_node(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, root: bool = False) -> Node:
        """Add the node of position ``s`` (legal ``mask``) to the tree, with its priors. The search
        adds its root here; the compiled iterations add the other nodes alike (:func:`_walk`)."""
        if not root and is_over(s, self.max_turns):  # the root is a decision even past max_turns
            return self._tree.add(-1)
        node = self._tree.add(int(s[E.O_CURRENT]))
        prior = np.empty(NUM_ACTIONS)
        priors(s, T, mask, prior)
        node.prior = prior
        return node

    def _root_prior_state(self, root_s: np.ndarray, blocks: list[tuple[int, int]]) -> np.ndarray:
        """The state the root's priors are computed on: the true one (the heuristic's priors, like
        the heuristic agent, look one step ahead on it)."""
        return root_s

    def _ensure_prior(self, node: Node, s: np.ndarray, T: np.ndarray, mask: np.ndarray) -> None:
        """Give ``node`` (at ``s``, legal ``mask``) its priors if it has none yet (MCTS sets them
        when it adds a node; a subclass may put off that work until a node is searched from)."""

    def _iterate(self, root: SearchRoot, count: int) -> None:
        """Run ``count`` iterations from ``root`` on the tree (room for ``count`` more nodes is made
        before): compiled from the deck sample to the backup."""
        iterate = _iterate_random if self.rollout == "random" else _iterate_heuristic
        ran = iterate(self._tree.arrays, self._tree.path, root.s, root.mask, root.T, self._s, self._mask,
                      self._result, root.starts, root.stops, self.rng, count, self.c_puct, self.temperature,
                      self.max_turns, self.end_stake)
        if ran < count:
            raise no_choice_error(type(self).__name__)

    def _add_root_noise(self, root: Node, mask: np.ndarray) -> None:
        """Mix Dirichlet noise into the root's priors over its legal actions (self-play exploration)."""
        legal = np.flatnonzero(mask)
        prior = root.prior
        if self.root_noise == 0 or legal.size < 2 or prior is None:
            return
        noise = self.rng.dirichlet(np.full(legal.size, self.root_noise_alpha))
        prior[legal] = (1 - self.root_noise) * prior[legal] + self.root_noise * noise

    def search(self, state: GameState) -> SearchResult:
        """Search ``state`` with this agent's budget: the move to play, the root's visit counts
        and mean values. A decision with one legal action is answered without searching."""
        root_mask = state.legal_action_mask()
        legal = np.flatnonzero(root_mask)
        n = state.num_players
        if legal.size == 1:
            visits = np.zeros(NUM_ACTIONS, np.int64)
            visits[legal[0]] = 1
            return SearchResult(int(legal[0]), visits, np.full(n, 1.0 / n))
        self._run(SearchRoot.of(state, root_mask))
        tree = self._tree
        actions, rows = tree.children(0)
        visits = np.zeros(NUM_ACTIONS, np.int64)
        visits[actions] = tree.visits[rows]
        return SearchResult(self._choose(visits, actions, rows), visits,
                            tree.value[0, :n] / max(int(tree.visits[0]), 1))

    def _choose(self, visits: np.ndarray, actions: np.ndarray, rows: np.ndarray) -> int:
        """The move: sampled from ``visits ** (1 / move_temperature)``, or the most visited of the
        root's children (``actions``, their tree ``rows``, oldest first), ties to the better mean
        for the deciding player, then to the older child."""
        if self.move_temperature > 0:
            legal = np.flatnonzero(visits)
            w = visits[legal].astype(np.float64) ** (1.0 / self.move_temperature)
            return int(legal[self.rng.choice(legal.size, p=w / w.sum())])
        tree = self._tree
        p = int(tree.player[0])
        best, best_key = -1, (-1, -math.inf)
        for a, row in zip(actions.tolist(), rows.tolist()):
            n = int(tree.visits[row])
            key = (n, tree.value[row, p] / max(n, 1))
            if key > best_key:
                best, best_key = a, key
        return best

    def _run(self, root: SearchRoot) -> None:
        """Build the tree of one search from ``root`` (row 0) with this agent's budget."""
        tree = self._tree
        tree.clear()
        tree.reserve(self.iterations + 1 if self.ms is None else TIMED_TREE_NODES)
        node = self._new_node(root.s, root.T, root.mask, root=True)
        self._ensure_prior(node, self._root_prior_state(root.s, root.blocks), root.T, root.mask)
        self._add_root_noise(node, root.mask)
        if self.ms is None:
            self._iterate(root, self.iterations)
            self.last_iterations = self.iterations
            return
        # a time budget: iterations in chunks, each sized to about half the time left, so the
        # clock is read between chunks (at least one iteration, as before the deadline was known)
        deadline = time.perf_counter() + self.ms / 1000
        done, chunk = 0, 1
        while True:
            tree.reserve(int(tree.size[0]) + chunk)
            start = time.perf_counter()
            self._iterate(root, chunk)
            done += chunk
            now = time.perf_counter()
            if now >= deadline:
                break
            chunk = int((deadline - now) / ((now - start) / chunk) / 2) + 1
        self.last_iterations = done
