"""The compiled search behind :mod:`concordia_env.turns`: the candidate turns of a decision
(greedy completions, then limited-discrepancy variations), the learned completion's scoring, and
the observations of candidate ends before the display refill. Kernel group ``turns``."""

from __future__ import annotations

import numpy as np

from . import encoding
from . import engine as E
from ._internal.jit import kernel
from .agents.heuristic import position_value, step_values
from .encoding import OBSERVATION_SIZE, encode

#: the most candidates a decision offers, unless asked otherwise
DEFAULT_CANDIDATES = 32
#: actions considered where a completion leaves the greedy path, the greedy one included (0: all)
DEFAULT_WIDTH = 0
#: the most decisions at which one completion leaves the greedy path
DEFAULT_DISCREPANCIES = 1
#: the longest turn followed, in atomic actions (the longest seen in play: about 30; a
#: completion that runs past this is dropped as no whole turn)
MAX_TURN_LEN = 64
#: positions a learned completion ranks once per decision (the rest are ranked anew; 1: no cache),
#: and how far the cache looks for a free slot
RANK_SLOTS = 4096
RANK_PROBES = 32

NUM_ACTIONS, STATE_SIZE, NDISP = E.NUM_ACTIONS, E.STATE_SIZE, E.NDISP
X_PRESENT = encoding.OBSERVATION_LAYOUT["seat_present"].start
O_PHASE, O_CURRENT, O_ACTIVE = E.O_PHASE, E.O_CURRENT, E.O_ACTIVE
O_DISPLAY, O_DECK_POS, NGODS = E.O_DISPLAY, E.O_DECK_POS, E.NGODS
PH_PLAY, PH_OVER, PH_DIPLOMAT = E.PH_PLAY, E.PH_OVER, E.PH_DIPLOMAT


@kernel(group="turns", inline="always")
def turn_goes_on(s, p):
    """Whether ``p`` still decides within its own turn (``False`` once play passes on, the game
    ends, or another player must decide)."""
    ph = s[O_PHASE]
    return ph != PH_OVER and ph != PH_PLAY and s[O_ACTIVE] == p and s[O_CURRENT] == p


@kernel(group="turns", inline="always")
def _state_hash(s):
    """FNV-1a over the state's words: a quick filter before comparing two end positions."""
    h = np.uint64(14695981039346656037)
    for i in range(s.shape[0]):
        h = (h ^ np.uint64(s[i] & 0xFFFFFFFF)) * np.uint64(1099511628211)
    return h


@kernel(group="turns", inline="always")
def _same_row(rows, k, s):
    """Whether ``rows[k]`` is the position ``s``, entry for entry (after equal hashes)."""
    for i in range(s.shape[0]):
        if rows[k, i] != s[i]:
            return False
    return True


@kernel(group="turns", inline="always")
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


@kernel(group="turns", inline="always")
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


@kernel(group="turns", inline="always")
def _ranked_once(s, T, mask, p, width, vals, tmp, tmask, vp, order, net, map_index, obs, cache):
    """:func:`_ranked`, each position ranked once per decision where a network ranks: a learned
    completion meets the same positions again and again (every pass of the alternatives follows
    the greedy path anew), and each ranking scores every afterstate. The cache is keyed by the
    whole position (its hash, then every entry compared) and keeps the first ``n`` of ``order``,
    all a completion reads, so what it returns is exactly what :func:`_ranked` would compute; a
    full table just ranks anew."""
    keys, used, seen, orders, kept = cache
    slots = used.shape[0]
    if slots == 0:
        return _ranked(s, T, mask, p, width, vals, tmp, tmask, vp, order, net, map_index, obs)
    h = _state_hash(s)
    j = np.int64(h % np.uint64(slots))
    for _ in range(RANK_PROBES):
        if not used[j]:
            break
        if keys[j] == h and _same_row(seen, j, s):
            for k in range(kept[j]):
                order[k] = orders[j, k]
            return kept[j]
        j = (j + 1) % slots
    n = _ranked(s, T, mask, p, width, vals, tmp, tmask, vp, order, net, map_index, obs)
    if not used[j]:
        used[j] = True
        keys[j] = h
        for i in range(s.shape[0]):
            seen[j, i] = s[i]
        for k in range(n):
            orders[j, k] = order[k]
        kept[j] = n
    return n


@kernel(group="turns", inline="always")
def rank_cache(n_state, net, slots):
    """The empty cache of :func:`_ranked_once`: ``slots`` positions where a network ranks; none
    (no slot) where ``slots`` is at most 1 or the heuristic ranks, as its step values cost little."""
    if net[1].shape[0] == 0 or slots < 2:
        slots = 0
    return (np.zeros(slots, np.uint64), np.zeros(slots, np.bool_), np.empty((slots, n_state), np.int32),
            np.empty((slots, NUM_ACTIONS), np.int16), np.zeros(slots, np.int64))


@kernel(group="turns", inline="always")
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


@kernel(group="turns", inline="always")
def _record(end, path, length, T, p, states, actions, lengths, values, hashes, count, vp, net, map_index, obs, buf,
            deck_pos):
    """Add the turn ``path[:length]`` ending in ``end`` as candidate ``count`` unless a candidate
    ends in the same position; returns the new count."""
    h = _state_hash(end)
    for k in range(count):
        if hashes[k] == h and _same_row(states, k, end):
            return count
    for i in range(end.shape[0]):
        states[count, i] = end[i]
    for i in range(length):
        actions[count, i] = path[i]
    lengths[count] = length
    values[count] = _end_value(end, T, p, vp, net, map_index, obs, buf, deck_pos)
    hashes[count] = h
    return count + 1


@kernel(group="turns", inline="always")
def _complete(T, p, first, dmax, width, quota, stack, masks, order, nkids, tried, disc, path,
              states, actions, lengths, values, hashes, count, room, vals, tmp, tmask, vp, net, map_index, obs, buf,
              cache):
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
    nkids[1] = _ranked_once(stack[1], T, masks[1], p, width, vals, tmp, tmask, vp, order[1], net, map_index, obs,
                            cache)
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
        nkids[depth] = _ranked_once(stack[depth], T, masks[depth], p, width, vals, tmp, tmask, vp, order[depth],
                                    net, map_index, obs, cache)
        disc[depth] = nd
        tried[depth] = 0
    return count


@kernel(group="turns", inline="always")
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


@kernel(group="turns")
def _greedy_turns(T, p, firsts, width, stack, masks, order, nkids, tried, disc, path, vals, tmp, tmask, vp, net,
                  map_index, obs, buf, cache):
    """The greedy turn of every first action ``firsts`` from the position in ``stack[0]``, in new
    scratch rows (there may be more than the caller keeps): ``(count, states, actions, lengths,
    values, hashes, first action of each)``."""
    n_first = firsts.shape[0]
    n_state = stack.shape[1]
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
                        obs, buf, cache)
        if n_g > before:
            g_first[n_g - 1] = firsts[k]
    return n_g, g_states, g_actions, g_lengths, g_values, g_hashes, g_first


@kernel(group="turns")
def _alternatives(T, p, kept_first, n_kept, count, discrepancies, width, stack, masks, order, nkids, tried, disc,
                  path, states, actions, lengths, values, hashes, vals, tmp, tmask, vp, net, map_index, obs, buf, cache):
    """Add alternative completions of the ``n_kept`` first actions kept, after the ``count`` rows
    already filled, up to the rows of ``states``; the new count. In rounds: the room left is shared
    out among the first actions, and one with fewer alternatives than its share leaves the rest to
    the others."""
    cap = states.shape[0]
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
                                  vals, tmp, tmask, vp, net, map_index, obs, buf, cache)
            if count - start < quota:  # all its alternatives are in
                open_[k] = False
                n_open -= 1
    return count


@kernel("int32[::1], int32[::1], int64, int64, int32[:, ::1], int32[:, ::1], int64[::1], float64[::1], "
        "Tuple((float32[:, ::1], float32[::1], float32[:, ::1], float32[::1], float32[::1], boolean[::1])), int64, int64")
def turn_candidates(s, T, width, discrepancies, states, actions, lengths, values, net, map_index, rank_slots):
    """The candidate turns of the decision in ``s`` (see the module docstring), at most
    ``states.shape[0]`` of them: row ``k`` of ``states`` is candidate ``k``'s end position,
    ``actions[k, :lengths[k]]`` its atomic actions, ``values[k]`` the value of its end for the
    decider. The completions and values are the heuristic's, or, where ``net`` (the weights of
    :func:`completion_weights`) is not empty, that network's win shares (``map_index``: the
    map's, for encoding). ``rank_slots``: the positions a learned completion ranks once (1: none;
    the candidates are the same either way, only slower). Returns the number of candidates (0
    once the game is over)."""
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
    # 1. the greedy turn of every first action, into scratch rows (there may be more than cap)
    cache = rank_cache(n_state, net, rank_slots)
    n_g, g_states, g_actions, g_lengths, g_values, g_hashes, g_first = _greedy_turns(
        T, p, firsts, width, stack, masks, order, nkids, tried, disc, path, vals, tmp, tmask, vp, net, map_index,
        obs, buf, cache)
    hashes = np.empty(cap, np.uint64)
    kept_first = np.empty(cap, np.int64)
    count = _keep_best(g_states, g_actions, g_lengths, g_values, g_hashes, g_first, n_g, states, actions, lengths,
                       values, hashes, kept_first)
    n_kept = count
    if n_kept == 0 or count >= cap or s[O_ACTIVE] != p:
        return count
    # 2. alternative completions, in rounds
    return _alternatives(T, p, kept_first, n_kept, count, discrepancies, width, stack, masks, order, nkids, tried,
                         disc, path, states, actions, lengths, values, hashes, vals, tmp, tmask, vp, net, map_index,
                         obs, buf, cache)


@kernel(group="turns", inline="always")
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


@kernel("int32[:, ::1], int64, int32[::1], int64, int64, int64, int32[::1], float32[:, ::1]", group="turns")
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
