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

from . import encoding
from . import engine as E
from .agents.heuristic import position_value, step_values
from .encoding import OBSERVATION_SIZE, encode, map_id
from .jit import kernel
from .state import GameState, IllegalActionError

if TYPE_CHECKING:  # the agents import this module; the value network is only named here
    from .agents.value_net import ValueNet

#: the most candidates a decision offers, unless asked otherwise
DEFAULT_CANDIDATES = 32
#: actions considered where a completion leaves the greedy path, the greedy one included (0: all)
DEFAULT_WIDTH = 0
#: the most decisions at which one completion leaves the greedy path
DEFAULT_DISCREPANCIES = 1
#: the longest turn followed, in atomic actions (the longest seen in play: about 30; a
#: completion that runs past this is dropped as no whole turn)
MAX_TURN_LEN = 64

NUM_ACTIONS, STATE_SIZE, NDISP = E.NUM_ACTIONS, E.STATE_SIZE, E.NDISP
X_PRESENT = encoding.OBSERVATION_LAYOUT["seat_present"].start
O_PHASE, O_CURRENT, O_ACTIVE = E.O_PHASE, E.O_CURRENT, E.O_ACTIVE
O_DISPLAY, O_DECK_POS, NGODS = E.O_DISPLAY, E.O_DECK_POS, E.NGODS
PH_PLAY, PH_OVER, PH_DIPLOMAT = E.PH_PLAY, E.PH_OVER, E.PH_DIPLOMAT


@kernel(inline="always")
def turn_goes_on(s, p):
    """Whether ``p`` still decides within its own turn (``False`` once play passes on, the game
    ends, or another player must decide)."""
    ph = s[O_PHASE]
    return ph != PH_OVER and ph != PH_PLAY and s[O_ACTIVE] == p and s[O_CURRENT] == p


@kernel(inline="always")
def _state_hash(s):
    """FNV-1a over the state's words: a quick filter before comparing two end positions."""
    h = np.uint64(14695981039346656037)
    for i in range(s.shape[0]):
        h = (h ^ np.uint64(s[i] & 0xFFFFFFFF)) * np.uint64(1099511628211)
    return h


@kernel(inline="always")
def _net_score(x, net):
    """A one-layer ReLU network's score of observation ``x``: its one-output head's value (a policy
    head's afterstate logit), or a five-row win head's share for row 0 (the observer). The
    numpy networks' arithmetic over the non-zero inputs only (an observation has a few hundred
    of its 2,378; a zero input adds nothing, scaled or ``log1p``-ed)."""
    w1t, b1, wh, bh, scale, unbounded = net
    hidden = b1.shape[0]
    h = np.empty(hidden, np.float32)
    for j in range(hidden):
        h[j] = b1[j]
    for i in range(x.shape[0]):
        xi = x[i]
        if xi != 0.0:
            v = np.float32(np.log1p(max(xi, 0.0))) if unbounded[i] else xi * scale[i]
            for j in range(hidden):
                h[j] += v * w1t[i, j]
    for j in range(hidden):
        if h[j] < 0.0:
            h[j] = 0.0
    rows = bh.shape[0]
    z = np.empty(rows, np.float64)
    top = -np.inf
    for r in range(rows):
        z[r] = -np.inf
        if rows == 1 or x[X_PRESENT + r] > 0:
            acc = np.float64(bh[r])
            for j in range(hidden):
                acc += wh[r, j] * h[j]
            z[r] = acc
            top = max(top, acc)
    if rows == 1:
        return z[0]
    total = 0.0
    for r in range(rows):
        if z[r] > -np.inf:
            total += np.exp(z[r] - top)
    return np.exp(z[0] - top) / total


@kernel(inline="always")
def _ranked(s, T, mask, p, width, vals, tmp, tmask, vp, order, net, map_index, obs):
    """``order[:n]``: the legal actions of ``s`` best first for ``p`` (equal values: lowest id
    first) by the heuristic's step value, or with a ``net`` (non-empty weights) by the
    network's score of the position each leads to (:func:`_net_score`); returns how many a completion may try
    there: all of them where the Diplomat picks a card or ``width`` is 0, else at most ``width``."""
    if net[1].shape[0] == 0:
        step_values(s, T, mask, p, vals, tmp, tmask, vp)
    else:
        for a in range(NUM_ACTIONS):
            vals[a] = -np.inf
            if mask[a]:
                for i in range(s.shape[0]):
                    tmp[i] = s[i]
                E.step(tmp, T, tmask, a)
                encode(tmp, T, map_index, p, obs)
                vals[a] = _net_score(obs, net)
    n = 0
    for a in range(NUM_ACTIONS):
        if mask[a]:
            j = n
            while j > 0 and vals[order[j - 1]] < vals[a]:
                order[j] = order[j - 1]
                j -= 1
            order[j] = a
            n += 1
    if s[O_PHASE] == PH_DIPLOMAT or width == 0 or n < width:
        return n
    return width


@kernel(inline="always")
def _end_value(end, T, p, vp, net, map_index, obs, buf, deck_pos):
    """The value of a turn's end for ``p``: the heuristic's, or the ``net``'s score of the end as
    ``p`` sees it before the display refill."""
    if net[1].shape[0] == 0:
        return position_value(end, T, p, vp)
    for i in range(end.shape[0]):
        buf[i] = end[i]
    undraw(buf, deck_pos)
    encode(buf, T, map_index, p, obs)
    return _net_score(obs, net)


@kernel(inline="always")
def _record(end, path, length, T, p, states, actions, lengths, values, hashes, count, vp, net, map_index, obs, buf,
            deck_pos):
    """Add the turn ``path[:length]`` ending in ``end`` as candidate ``count`` unless a candidate
    ends in the same position; returns the new count."""
    h = _state_hash(end)
    for k in range(count):
        if hashes[k] == h:
            same = True
            for i in range(end.shape[0]):
                if states[k, i] != end[i]:
                    same = False
                    break
            if same:
                return count
    for i in range(end.shape[0]):
        states[count, i] = end[i]
    for i in range(length):
        actions[count, i] = path[i]
    lengths[count] = length
    values[count] = _end_value(end, T, p, vp, net, map_index, obs, buf, deck_pos)
    hashes[count] = h
    return count + 1


@kernel(inline="always")
def _complete(T, p, first, dmax, width, quota, stack, masks, order, nkids, tried, disc, path,
              states, actions, lengths, values, hashes, count, room, vals, tmp, tmask, vp, net, map_index, obs, buf):
    """Add the completions of first action ``first`` from ``stack[0]`` that leave the greedy
    path at exactly ``dmax`` decisions (all of them, at most ``quota`` new ones, while the
    candidate rows last: ``room``); returns the new count."""
    for i in range(stack.shape[1]):
        stack[1, i] = stack[0, i]
    E.step(stack[1], T, masks[1], first)
    path[0] = first
    if not turn_goes_on(stack[1], p):
        if dmax == 0 and count < room:
            count = _record(stack[1], path, 1, T, p, states, actions, lengths, values, hashes, count, vp, net,
                            map_index, obs, buf, stack[0, O_DECK_POS])
        return count
    added = 0
    depth = 1
    nkids[1] = _ranked(stack[1], T, masks[1], p, width, vals, tmp, tmask, vp, order[1], net, map_index, obs)
    disc[1] = 0
    tried[1] = 0
    while depth >= 1 and count < room and added < quota:
        f = depth
        alternatives = nkids[f] - 1 if disc[f] < dmax else 0
        if tried[f] > alternatives:
            depth -= 1
            continue
        # the alternatives first, then the greedy action: shallow deviations are found first
        idx = tried[f] + 1 if tried[f] < alternatives else 0
        tried[f] += 1
        a = order[f, idx]
        nd = disc[f] + (1 if idx > 0 else 0)
        for i in range(stack.shape[1]):
            stack[f + 1, i] = stack[f, i]
        E.step(stack[f + 1], T, masks[f + 1], a)
        path[f] = a
        if not turn_goes_on(stack[f + 1], p):
            if nd == dmax:  # fewer deviations were found by an earlier pass
                before = count
                count = _record(stack[f + 1], path, f + 1, T, p, states, actions, lengths, values, hashes, count,
                                vp, net, map_index, obs, buf, stack[0, O_DECK_POS])
                added += count - before
            continue
        if f + 1 >= MAX_TURN_LEN:
            continue
        depth = f + 1
        nkids[depth] = _ranked(stack[depth], T, masks[depth], p, width, vals, tmp, tmask, vp, order[depth], net,
                               map_index, obs)
        disc[depth] = nd
        tried[depth] = 0
    return count


@kernel(inline="always")
def _keep_best(g_states, g_actions, g_lengths, g_values, g_hashes, g_first, n_g, states, actions, lengths, values,
               hashes, kept_first):
    """Copy the greedy turns into the candidate rows, in id order; where there are more than the
    rows, the best by their end's value (equal values: the lowest first action). Returns how
    many were kept (their first actions in ``kept_first``)."""
    cap = states.shape[0]
    keep = np.ones(n_g, np.bool_)
    if n_g > cap:
        ranked = np.argsort(-g_values[:n_g], kind="mergesort")
        keep[:] = False
        for r in range(cap):
            keep[ranked[r]] = True
    count = 0
    for k in range(n_g):
        if keep[k]:
            for i in range(g_states.shape[1]):
                states[count, i] = g_states[k, i]
            for i in range(g_lengths[k]):
                actions[count, i] = g_actions[k, i]
            lengths[count] = g_lengths[k]
            values[count] = g_values[k]
            hashes[count] = g_hashes[k]
            kept_first[count] = g_first[k]  # one greedy turn per first action
            count += 1
    return count


@kernel("int32[::1], int32[::1], int64, int64, int32[:, ::1], int32[:, ::1], int64[::1], float64[::1], "
        "Tuple((float32[:, ::1], float32[::1], float32[:, ::1], float32[::1], float32[::1], boolean[::1])), int64")
def turn_candidates(s, T, width, discrepancies, states, actions, lengths, values, net, map_index):
    """The candidate turns of the decision in ``s`` (see the module docstring), at most
    ``states.shape[0]`` of them: row ``k`` of ``states`` is candidate ``k``'s end position,
    ``actions[k, :lengths[k]]`` its atomic actions, ``values[k]`` the value of its end for the
    decider. The completions and values are the heuristic's, or, where ``net`` (the weights of
    :func:`completion_weights`) is not empty, that network's win shares (``map_index``: the
    map's, for encoding). Returns the number of candidates (0 once the game is over)."""
    cap = states.shape[0]
    p = s[O_CURRENT]
    if s[O_PHASE] == PH_OVER or p < 0:
        return 0
    n_state = s.shape[0]
    stack = np.empty((MAX_TURN_LEN + 1, n_state), np.int32)
    masks = np.empty((MAX_TURN_LEN + 1, NUM_ACTIONS), np.int8)
    order = np.empty((MAX_TURN_LEN + 1, NUM_ACTIONS), np.int64)
    nkids = np.zeros(MAX_TURN_LEN + 1, np.int64)
    tried = np.zeros(MAX_TURN_LEN + 1, np.int64)
    disc = np.zeros(MAX_TURN_LEN + 1, np.int64)
    path = np.zeros(MAX_TURN_LEN + 1, np.int32)
    vals = np.empty(NUM_ACTIONS, np.float64)
    tmp = np.empty(n_state, np.int32)
    tmask = np.empty(NUM_ACTIONS, np.int8)
    vp = np.zeros(NGODS, np.int32)
    obs = np.zeros(OBSERVATION_SIZE, np.float32)
    buf = np.empty(n_state, np.int32)
    for i in range(n_state):
        stack[0, i] = s[i]
    E.legal_mask(stack[0], T, masks[0])
    firsts = np.flatnonzero(masks[0])
    n_first = firsts.shape[0]
    # 1. the greedy turn of every first action, into scratch rows (there may be more than cap)
    g_states = np.empty((n_first, n_state), np.int32)
    g_actions = np.zeros((n_first, MAX_TURN_LEN + 1), np.int32)
    g_lengths = np.zeros(n_first, np.int64)
    g_values = np.empty(n_first, np.float64)
    g_hashes = np.empty(n_first, np.uint64)
    g_first = np.empty(n_first, np.int64)
    n_g = 0
    for k in range(n_first):
        before = n_g
        n_g = _complete(T, p, firsts[k], 0, width, 1, stack, masks, order, nkids, tried, disc, path, g_states,
                        g_actions, g_lengths, g_values, g_hashes, n_g, n_first, vals, tmp, tmask, vp, net, map_index,
                        obs, buf)
        if n_g > before:
            g_first[n_g - 1] = firsts[k]
    hashes = np.empty(cap, np.uint64)
    kept_first = np.empty(cap, np.int64)
    count = _keep_best(g_states, g_actions, g_lengths, g_values, g_hashes, g_first, n_g, states, actions, lengths,
                       values, hashes, kept_first)
    n_kept = count
    if n_kept == 0 or count >= cap or s[O_ACTIVE] != p:
        return count
    # 2. alternative completions, in rounds: the room left shared out among the first actions
    # kept; one with fewer alternatives than its share leaves the rest to the others
    open_ = np.ones(n_kept, np.bool_)
    n_open = n_kept
    while count < cap and n_open > 0:
        quota = max(1, (cap - count) // n_open)
        for k in range(n_kept):
            if not open_[k] or count >= cap:
                continue
            start = count
            for d in range(1, discrepancies + 1):
                if count >= cap or count - start >= quota:
                    break
                count = _complete(T, p, kept_first[k], d, width, quota - (count - start), stack, masks, order,
                                  nkids, tried, disc, path, states, actions, lengths, values, hashes, count, cap,
                                  vals, tmp, tmask, vp, net, map_index, obs, buf)
            if count - start < quota:  # all its alternatives are in
                open_[k] = False
                n_open -= 1
    return count


@kernel(inline="always")
def undraw(s, deck_pos):
    """Put back the cards drawn from the deck since it stood at ``deck_pos`` (they refilled the
    display's last places): the position as the player knew it before the draw."""
    drawn = s[O_DECK_POS] - deck_pos
    j = NDISP - 1
    while drawn > 0 and j >= 0:
        if s[O_DISPLAY + j] >= 0:
            s[O_DISPLAY + j] = -1
            drawn -= 1
        j -= 1
    s[O_DECK_POS] = deck_pos


@kernel("int32[:, ::1], int64, int32[::1], int64, int64, int64, int32[::1], float32[:, ::1]")
def candidate_observations(states, count, T, map_index, observer, deck_pos, buf, out):
    """Row ``k < count`` of ``out``: ``observer``'s observation of candidate ``k``'s end before
    the display refill (:func:`undraw`); the rows after ``count`` are zero."""
    for k in range(count):
        for i in range(states.shape[1]):
            buf[i] = states[k, i]
        undraw(buf, deck_pos)
        encode(buf, T, map_index, observer, out[k])
    for k in range(count, out.shape[0]):
        for i in range(out.shape[1]):
            out[k, i] = 0.0





#: the weights of no completion network: the heuristic completes and values the turns
_NO_NET = (np.zeros((0, 0), np.float32), np.zeros(0, np.float32), np.zeros((0, 0), np.float32),
           np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, np.bool_))


def completion_weights(net: ValueNet | None) -> tuple:
    """What :func:`turn_candidates` reads of a network that completes the turns in place of the
    heuristic: its first layer transposed, its policy head (the afterstate logits it was trained
    to rank moves by) or else its win head, its observation scaling (an empty tuple of arrays
    for None). ``ValueError`` unless the network has exactly one ReLU trunk layer (the kernel
    computes that form only)."""
    if net is None:
        return _NO_NET
    source = net.path if net.path is not None else "the network"
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
                                         self.lengths, self.values, self.completion, self.map_index))
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
