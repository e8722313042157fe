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
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from concordia_env import engine as E
from concordia_env.board import stacked_decks
from concordia_env.env import DEFAULT_MAX_TURNS, check_max_turns
from concordia_env.jit import kernel
from concordia_env.rules.scoring import winner
from concordia_env.state import GameState

from . import heuristic as H
from .base import Agent, check_mask

NGODS, NUM_ACTIONS, MAXP = E.NGODS, E.NUM_ACTIONS, E.MAXP
O_NPLAYERS, O_CURRENT, O_PHASE, O_PM, O_TURN, O_CONCORDIA = (E.O_NPLAYERS, E.O_CURRENT, E.O_PHASE, E.O_PM,
                                                            E.O_TURN, E.O_CONCORDIA)
PH_OVER, PH_PLAY, PH_DIPLOMAT = E.PH_OVER, E.PH_PLAY, E.PH_DIPLOMAT

#: a lead counts this much more once the end of the game is fixed (see the module docstring)
END_STAKE = 1.0


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


@kernel()
def _compiled_kernel_stamp():
    return KERNEL_STAMP


KERNEL_STAMP = E.source_stamp(__file__, H.KERNEL_STAMP)
E.refresh_stale_kernels(_compiled_kernel_stamp, KERNEL_STAMP, _winner, is_over, end_is_fixed, _stretch, evaluate,
                        leaf_value, random_result, priors)


class _Node:
    """Statistics of one action sequence from the root; children by action id."""

    __slots__ = ("player", "visits", "value", "children", "prior")

    def __init__(self, player: int, prior: np.ndarray | None) -> None:
        self.player = player
        self.visits = 0
        self.value = np.zeros(MAXP)  # summed results of every player
        self.children: dict[int, _Node] = {}
        self.prior = prior


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
        """Check and set the options every search agent shares."""
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

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        if state is None:
            raise ValueError(f"{type(self).__name__} searches the game itself: pass the core GameState as `state`")
        if not np.array_equal(np.flatnonzero(state.legal_action_mask()), legal):
            raise ValueError("action_mask does not match state's legal actions")
        if legal.size == 1:
            return int(legal[0])
        return self.search(state).action

    # ------------------------------------------------------------ search
    def _new_node(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, root: bool = False) -> _Node:
        if not root and is_over(s, self.max_turns):  # the root is a decision even past max_turns
            return _Node(-1, None)
        prior = np.empty(NUM_ACTIONS)
        priors(s, T, mask, prior)
        return _Node(int(s[E.O_CURRENT]), prior)

    def _root_prior_state(self, root_s: np.ndarray, blocks: list[tuple[int, int]]) -> np.ndarray:
        """The state the root's priors are computed on: the true one (the heuristic's priors, like
        the heuristic agent, look one step ahead on it)."""
        return root_s

    def _ensure_prior(self, node: _Node, s: np.ndarray, T: np.ndarray, mask: np.ndarray) -> None:
        """Give ``node`` (at ``s``, legal ``mask``) its priors if it has none yet (MCTS sets them
        when it adds a node; a subclass may put off that work until a node is searched from)."""

    def _leaf_value(self, s: np.ndarray, T: np.ndarray, mask: np.ndarray, leaf: _Node, out: np.ndarray) -> None:
        """Every player's value of the new leaf ``leaf`` at ``s`` into ``out``."""
        if self.rollout == "random" and leaf.player >= 0:
            random_result(s, T, mask, int(self.rng.integers(2**31)), self.max_turns, self.end_stake, out)
        else:
            leaf_value(s, T, self.temperature, self.max_turns, self.end_stake, out)

    def _select(self, node: _Node, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        p = node.player
        assert node.prior is not None, "a node is given priors before it is selected from"
        sqrt_n = math.sqrt(node.visits + 1)
        # unvisited actions start from the node's own mean for its player (first-play urgency)
        fpu = node.value[p] / node.visits if node.visits else 0.5
        best, best_score = -1, -math.inf
        for a in legal.tolist():
            child = node.children.get(a)
            if child is None or child.visits == 0:
                q, n = fpu, 0
            else:
                q, n = child.value[p] / child.visits, child.visits
            score = q + self.c_puct * node.prior[a] * sqrt_n / (1 + n)
            if score > best_score:
                best, best_score = a, score
        return best

    def _add_root_noise(self, root: _Node, mask: np.ndarray) -> None:
        """Mix Dirichlet noise into the root's priors over its legal actions (self-play exploration)."""
        legal = np.flatnonzero(mask)
        if self.root_noise == 0 or legal.size < 2 or root.prior is None:
            return
        noise = self.rng.dirichlet(np.full(legal.size, self.root_noise_alpha))
        root.prior = root.prior.copy()
        root.prior[legal] = (1 - self.root_noise) * root.prior[legal] + self.root_noise * noise

    def _finished(self, done: int, deadline: float | None) -> bool:
        if deadline is not None:
            return done > 0 and time.perf_counter() >= deadline
        return done >= self.iterations

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
        root = self._run(state, root_mask)
        visits = np.zeros(NUM_ACTIONS, np.int64)
        for a, child in root.children.items():
            visits[a] = child.visits
        return SearchResult(self._choose(root, visits), visits, root.value[:n] / max(root.visits, 1))

    def _choose(self, root: _Node, visits: np.ndarray) -> int:
        """The move: sampled from ``visits ** (1 / move_temperature)``, or the most visited (ties
        to the better mean for the deciding player)."""
        if self.move_temperature > 0:
            legal = np.flatnonzero(visits)
            w = visits[legal].astype(np.float64) ** (1.0 / self.move_temperature)
            return int(legal[self.rng.choice(legal.size, p=w / w.sum())])
        p = root.player
        return max(root.children.items(), key=lambda kv: (kv[1].visits, kv[1].value[p] / max(kv[1].visits, 1)))[0]

    def _run(self, state: GameState, root_mask: np.ndarray) -> _Node:
        T = state.game.tables
        blocks = deck_blocks(state)
        root_s = state.s
        root = self._new_node(root_s, T, root_mask, root=True)
        self._ensure_prior(root, self._root_prior_state(root_s, blocks), T, root_mask)
        self._add_root_noise(root, root_mask)
        result = np.zeros(MAXP)
        deadline = time.perf_counter() + self.ms / 1000 if self.ms is not None else None
        done = 0
        while not self._finished(done, deadline):
            s = root_s.copy()
            mask = root_mask.copy()
            resample_deck(s, blocks, self.rng)
            node, path = root, [root]
            while node.player >= 0:
                self._ensure_prior(node, s, T, mask)
                a = self._select(node, mask)
                E.step(s, T, mask, a)
                child = node.children.get(a)
                if child is None:
                    child = node.children[a] = self._new_node(s, T, mask)
                    path.append(child)
                    break
                node = child
                path.append(node)
            self._leaf_value(s, T, mask, path[-1], result)
            for n in path:
                n.visits += 1
                n.value += result
            done += 1
        self.last_iterations = done
        return root
