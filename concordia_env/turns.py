"""Whole turns: the candidate turns of a decision, each replayable as the env's atomic actions.

A player's turn in Concordia is one card played and its action carried out to the end: a
card choice, then anything from one to a few dozen atomic decisions (goods sold and bought,
colonists moved one route at a time, houses built, cards bought and paid for). A value learned
on positions judges the end of a turn far better than a half-finished one (the afterstate of
"play Mercator" is worth what the trades make of it), so this module turns one decision into a
short list of **whole turns**: each the atomic actions from here to the point where the turn
passes on, with the position it ends in.

How the candidates are found
----------------------------
From the decision at hand (usually a card choice):

1. every legal first action (every card in hand, at a card choice) is completed **greedily**:
   at each later decision the action whose resulting position the heuristic values most
   (:func:`concordia_env.agents.heuristic.step_values`; equal values go to the lowest id, so
   the candidates are a pure function of the position). These completions come first, one per
   first action in id order; they are exactly the turns the heuristic compares when it chooses
   a card. Where there are more first actions than ``max_candidates``, the ones whose greedy
   turns end best are kept.
2. the room left is shared out among the first actions for **alternative completions**: a
   limited-discrepancy search that leaves the greedy path at up to ``discrepancies``
   decisions, each time for one of the next-best actions (by default every other option; at
   most ``width - 1`` of them if ``width`` is set, but every option where the Diplomat chooses
   the card to copy), shallow deviations first. Where a card's action offers
   few choices (a Praefectus province, a Colonus placement, one Senator purchase, a short
   Mercator trade) this enumerates them in full; where it offers many (long Architect moves,
   two-kind trades) it keeps the variations the heuristic ranks highest.

Two sequences that end in the same position are one candidate (the first found). A turn ends
when play passes to the next player, the game ends, or someone else must decide (a storehouse
of another player overflows during a Praefectus production: that player chooses, then the
turn resumes as a new decision). A decision out of turn (choosing the good to keep when one's
storehouse overflows) has one candidate per legal atomic action.

What the decider sees of a candidate
------------------------------------
A turn that buys cards refills the display from the deck at its end, and the deck order is
hidden. The observation of a candidate (:meth:`TurnGenerator.observations`) is therefore taken
of its end position *before* the refill: the bought cards' places stay empty and the deck is
as it was (what the player knows when it commits to the turn). The candidate's ``states`` are
the true end positions, exactly what replaying its actions gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from . import engine as E
from .encoding import OBSERVATION_SIZE, map_id
from .state import GameState, IllegalActionError
from .turn_kernels import (
    DEFAULT_CANDIDATES,
    DEFAULT_DISCREPANCIES,
    DEFAULT_WIDTH,
    MAX_TURN_LEN,
    NUM_ACTIONS,
    O_ACTIVE,
    O_CURRENT,
    O_DECK_POS,
    O_PHASE,
    PH_OVER,
    RANK_SLOTS,
    STATE_SIZE,
    candidate_observations,
    turn_candidates,
    turn_goes_on,  # noqa: F401  (public here too)
)

if TYPE_CHECKING:  # the agents import this module; the value network is only named here
    from .agents.value_net import ValueNet

#: the weights of no completion network: the heuristic completes and values the turns
_NO_NET = (np.zeros((0, 0), np.float32), np.zeros(0, np.float32), np.zeros((0, 0), np.float32),
           np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, np.bool_))


def completion_weights(net: ValueNet | None) -> tuple:
    """What :func:`turn_candidates` reads of a network that completes the turns in place of the
    heuristic: its first layer transposed, its policy head (the afterstate logits it was trained
    to rank moves by) or else its win head, its observation scaling (an empty tuple of arrays
    for None). ``ValueError`` unless the network has exactly one ReLU trunk layer over the
    observation alone (the kernel computes that form only)."""
    if net is None:
        return _NO_NET
    source = net.path if net.path is not None else "the network"
    if net.features is not None:
        raise ValueError(f"{source}: completing turns needs a network over the observation alone; it also reads "
                         f"{net.features!r} features")
    if len(net.trunk) != 1 or net.activation != "ReLU":
        raise ValueError(f"{source}: completing turns needs a network with one ReLU trunk layer; it has "
                         f"{len(net.trunk)} {net.activation} layer(s)")
    (w1, b1), (wh, bh) = net.trunk[0], net.heads["policy" if net.has_policy else "win"]
    f32 = np.float32
    return (np.ascontiguousarray(w1.T, f32), np.ascontiguousarray(b1, f32), np.ascontiguousarray(wh, f32),
            np.ascontiguousarray(bh, f32), np.ascontiguousarray(net.scale, f32),
            np.ascontiguousarray(net.unbounded, np.bool_))


def check_candidates(max_candidates: object) -> int:
    """``max_candidates`` as an int; ``ValueError`` unless an int from 1 to 402 (the action count)."""
    if isinstance(max_candidates, bool) or not isinstance(max_candidates, (int, np.integer)) \
            or not 1 <= max_candidates <= NUM_ACTIONS:
        raise ValueError(f"max_candidates must be an int from 1 to {NUM_ACTIONS}; got {max_candidates!r}")
    return int(max_candidates)


def _check_count(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Turn:
    """One candidate turn: its atomic actions, the position they end in, the heuristic's value
    of that end for the decider, and the decider's observation of it (before the refill)."""

    actions: tuple[int, ...]
    end: GameState
    value: float
    observation: np.ndarray


class TurnGenerator:
    """Candidate turns of one map's decisions, with reusable buffers (one per env or agent).

    Args:
        map_name: the map of the games it serves.
        max_candidates: K, the most candidates of one decision (the rows of every buffer).
        width, discrepancies: how far alternative completions stray (module docstring).
        completion: a network that ranks the steps of a completion instead of the heuristic (by
            its policy head's logit of the position each step leads to, or its win share without
            one; :func:`completion_weights`): a learned completion, with no hand-written
            evaluation. ``values`` are then its scores of the turns' ends.

    After :meth:`generate`, the first ``count`` rows of ``states``, ``actions`` (up to
    ``lengths``) and ``values`` describe the candidates; :meth:`observations` encodes them.
    """

    def __init__(self, map_name: str, max_candidates: int = DEFAULT_CANDIDATES, width: int = DEFAULT_WIDTH,
                 discrepancies: int = DEFAULT_DISCREPANCIES, completion: ValueNet | None = None) -> None:
        self.map_name = map_name
        self.completion = completion_weights(completion)
        self.map_index = map_id(map_name)
        #: positions a learned completion ranks once per decision (1: none; the same candidates)
        self.rank_slots = RANK_SLOTS
        self.max_candidates = check_candidates(max_candidates)
        self.width = _check_count(width, "width", 0)
        self.discrepancies = _check_count(discrepancies, "discrepancies", 0)
        k = self.max_candidates
        self.states = np.zeros((k, STATE_SIZE), np.int32)
        self.actions = np.zeros((k, MAX_TURN_LEN + 1), np.int32)
        self.lengths = np.zeros(k, np.int64)
        self.values = np.zeros(k, np.float64)
        self.count = 0
        self.deck_pos = 0
        self._buf = np.empty(STATE_SIZE, np.int32)

    def generate(self, s: np.ndarray, T: np.ndarray) -> int:
        """Find the candidates of the decision in state ``s`` (left unchanged); their count."""
        self.count = int(turn_candidates(s, T, self.width, self.discrepancies, self.states, self.actions,
                                         self.lengths, self.values, self.completion, self.map_index, self.rank_slots))
        self.deck_pos = int(s[O_DECK_POS])
        return self.count

    def sequence(self, k: int) -> tuple[int, ...]:
        """The atomic actions of candidate ``k``."""
        return tuple(int(a) for a in self.actions[k, :self.lengths[k]])

    def observations(self, T: np.ndarray, observer: int, out: np.ndarray | None = None) -> np.ndarray:
        """``(max_candidates, OBSERVATION_SIZE)`` float32: ``observer``'s view of each candidate's
        end before the refill, zero rows past :attr:`count` (into ``out`` if given)."""
        if out is None:
            out = np.empty((self.max_candidates, OBSERVATION_SIZE), np.float32)
        candidate_observations(self.states, self.count, T, self.map_index, observer, self.deck_pos, self._buf, out)
        return out

    def mask(self) -> np.ndarray:
        """int8 ``(max_candidates,)``: 1 for the rows holding a candidate."""
        m = np.zeros(self.max_candidates, np.int8)
        m[:self.count] = 1
        return m


def turn_plan(s: np.ndarray, T: np.ndarray, sequence: tuple[int, ...] | list[int]) -> list[tuple[np.ndarray, int]]:
    """A chosen turn as an agent follows it: each action of ``sequence`` paired with the position
    it is played in, from ``s`` (left unchanged) on."""
    s = s.copy()
    scratch = np.empty(NUM_ACTIONS, np.int8)
    plan = []
    for a in sequence:
        plan.append((s.copy(), int(a)))
        E.step(s, T, scratch, a)
    return plan


def next_planned(plan: list[tuple[np.ndarray, int]], s: np.ndarray) -> int | None:
    """The next action of ``plan`` (taken off it) if the game stands at the position it was chosen
    for; else None, and the plan is dropped (someone else's decision came in between)."""
    if plan and np.array_equal(plan[0][0], s):
        return plan.pop(0)[1]
    plan.clear()
    return None


def whole_turns(state: GameState, max_candidates: int = DEFAULT_CANDIDATES, width: int = DEFAULT_WIDTH,
                discrepancies: int = DEFAULT_DISCREPANCIES) -> list[Turn]:
    """The candidate turns of ``state``'s decision (empty once the game is over), seen by the
    deciding seat; ``state`` is left unchanged. See the module docstring for how they are found."""
    gen = TurnGenerator(state.game.name, max_candidates, width, discrepancies)
    n = gen.generate(state.s, state.game.tables)
    obs = gen.observations(state.game.tables, state.current_player)
    return [Turn(gen.sequence(k), GameState(state.game, gen.states[k].copy()), float(gen.values[k]), obs[k].copy())
            for k in range(n)]


#: the two ways an env cuts the game into decisions
DECISION_MODES = ("atomic", "turn")


def check_decisions(decisions: object) -> str:
    """``decisions`` if it is one of :data:`DECISION_MODES`, else ``ValueError`` naming them."""
    if decisions not in DECISION_MODES:
        raise ValueError(f"decisions must be one of {', '.join(map(repr, DECISION_MODES))}; got {decisions!r}")
    return str(decisions)


class TurnDecision:
    """The candidates of a game's current decision, found once per decision (the turn-level
    envs' cache): :meth:`refresh` after every change of the game, :meth:`play` a candidate."""

    def __init__(self, map_name: str, max_candidates: int = DEFAULT_CANDIDATES) -> None:
        self.generator = TurnGenerator(map_name, max_candidates)
        self.observations = np.zeros((self.generator.max_candidates, OBSERVATION_SIZE), np.float32)
        self._for: np.ndarray | None = None

    def refresh(self, s: np.ndarray, T: np.ndarray) -> None:
        """Find the candidates of the decision in ``s`` and encode them for its decider, unless
        they are those of ``s`` already."""
        if self._for is not None and np.array_equal(self._for, s):
            return
        self.generator.generate(s, T)
        observer = int(s[O_CURRENT])
        if self.generator.count:
            self.generator.observations(T, observer, self.observations)
        else:
            self.observations[:] = 0.0
        self._for = s.copy()

    def mask(self) -> np.ndarray:
        return self.generator.mask()

    def sequence(self, k: int) -> tuple[int, ...]:
        """The atomic actions of candidate ``k``; :class:`~concordia_env.state.IllegalActionError`
        unless ``k`` is an int naming one of the candidates."""
        n = self.generator.count
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 0 <= k < n:
            phase = E.PHASE_NAMES[int(self._for[O_PHASE])] if self._for is not None else "?"
            player = int(self._for[O_CURRENT]) if self._for is not None else None
            raise IllegalActionError(
                f"turn-level action {k!r} is not one of this decision's {n} candidates (0 to {n - 1}; "
                f"the action mask marks them) for player {player}", k, player, phase)
        return self.generator.sequence(int(k))


def turn_ends(state: GameState, actions: list[int] | tuple[int, ...]) -> list[tuple[int, np.ndarray]]:
    """Replay ``actions`` from ``state`` (a copy is played) and return, for every turn that ends
    in them, ``(seat whose turn it was, that seat's observation of where the turn ended)``, in
    order: the end seen before the display refill, as candidate observations are (a turn ends
    when play passes on or the game ends; overflow choices by others within it belong to it)."""
    game = state.game
    T = game.tables
    s = state.s.copy()
    mask = np.empty(NUM_ACTIONS, np.int8)
    E.legal_mask(s, T, mask)
    index = map_id(game.name)
    buf = np.empty(STATE_SIZE, np.int32)
    out: list[tuple[int, np.ndarray]] = []
    active, deck_pos = int(s[O_ACTIVE]), int(s[O_DECK_POS])
    for i, a in enumerate(actions):
        if not 0 <= a < NUM_ACTIONS or not mask[a]:
            raise ValueError(f"action {i} ({a}) is illegal in the game replayed")
        E.step(s, T, mask, a)
        if s[O_PHASE] == PH_OVER or int(s[O_ACTIVE]) != active:
            row = np.zeros((1, OBSERVATION_SIZE), np.float32)
            candidate_observations(s.reshape(1, -1), 1, T, index, active, deck_pos, buf, row)
            out.append((active, row[0]))
            active, deck_pos = int(s[O_ACTIVE]), int(s[O_DECK_POS])
    return out
