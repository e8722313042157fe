"""Setting up a new game: the one implementation of the seeded setup, a kernel the host and the
device both run.

Setup follows RULES.md: city tokens shuffled per letter, one bonus marker per province (its
most valuable good), the decks I..N shuffled each on its own and stacked I on top, a display of
7, money 5, 6, 7, 8, 9 in turn order from a random start player, and the Praefectus Magnus to
the last player in turn order. What does not depend on the seed (storehouses with 2 food + 1 of
each other good, 2 land + 2 sea colonists and 1 land + 1 sea colonist in Roma, the hands, the
houses, the context fields ...) comes from a *template*, and the map's and components' setup
data from one flat int32 *setup table*; both are built on the host by
:func:`concordia_env.game.template_state` and :func:`concordia_env.game.setup_table`.

Randomness comes from a small SplitMix64 generator (Steele et al. 2014) written out here in
``uint64`` arithmetic (:func:`splitmix_next`, :func:`splitmix_below`), so the same seed gives
the same game on every machine, every numpy version, on the host
(:func:`concordia_env.game.initial_state` calls :func:`setup_state`), in the CPU batched env and
on the GPU (:mod:`concordia_env.cuda` compiles the same functions as device functions).

Like the rest of the rules, nothing here allocates.
"""

from __future__ import annotations

import numpy as np

from . import rule
from .layout import (
    NC,
    NCARD,
    NDISP,
    NPV,
    O_ACTIVE,
    O_CITY_GOOD,
    O_COINS,
    O_CURRENT,
    O_DECK,
    O_DECK_LEN,
    O_DISPLAY,
    O_MARKER_GOOD,
    O_PM,
    O_START,
    STATE_SIZE,
)

# SplitMix64's constants, typed uint64 so that numba never mixes them with signed integers
# (uint64 op int64 gives float64 in numba)
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_ZERO = np.uint64(0)


@rule(inline="always")
def splitmix_next(state):
    """One step of SplitMix64 (as :meth:`concordia_env.game.SplitMix64.next`): (new state, output)."""
    state = state + _GAMMA
    z = state
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return state, z ^ (z >> _S31)


@rule(inline="always")
def splitmix_below(state, n):
    """Uniform integer in [0, n) by rejection, as :meth:`~concordia_env.game.SplitMix64.below`:
    (new state, value). ``2**64 % n`` is ``(0 - n) % n`` in uint64 arithmetic; when it is 0
    every draw is accepted."""
    un = np.uint64(n)
    rem = (_ZERO - un) % un
    limit = _ZERO - rem
    while True:
        state, x = splitmix_next(state)
        if rem == _ZERO or x < limit:
            return state, np.int64(x % un)


@rule(inline="always")
def _shuffle(s, start, length, rng):
    """Fisher-Yates over ``s[start:start+length]`` (as :meth:`~concordia_env.game.SplitMix64.shuffle`)."""
    for i in range(length - 1, 0, -1):
        rng, j = splitmix_below(rng, i + 1)
        t = s[start + i]
        s[start + i] = s[start + j]
        s[start + j] = t
    return rng


@rule(inline="always")
def _deal_city_tokens(s, R, rng):
    """The city tokens, shuffled per letter and laid on that letter's cities in order (the
    deck's slots serve as scratch: the decks are written afterwards). Returns (rng, the position
    of ``R`` after the letters)."""
    for c in range(NC):
        s[O_CITY_GOOD + c] = -1
    r = 1
    for _letter in range(R[0]):
        ntok = R[r]
        for k in range(ntok):
            s[O_DECK + k] = R[r + 1 + k]
        rng = _shuffle(s, O_DECK, ntok, rng)
        r += 1 + ntok
        ncity = R[r]
        for k in range(min(ncity, ntok)):
            s[O_CITY_GOOD + R[r + 1 + k]] = s[O_DECK + k]
        r += 1 + ncity
    return rng, r


@rule(inline="always")
def _place_markers(s, R, r):
    """Each province's bonus marker: the most valuable good of its cities. Returns the position
    of ``R`` after the provinces."""
    nprov, ncities = R[r], R[r + 1]
    r += 2
    for q in range(NPV):
        s[O_MARKER_GOOD + q] = -1
    for q in range(nprov):
        best = -2
        for c in range(ncities):
            if R[r + c] == q and s[O_CITY_GOOD + c] > best:
                best = s[O_CITY_GOOD + c]
        s[O_MARKER_GOOD + q] = best
    return r + ncities


@rule(inline="always")
def _stack_decks(s, R, r, rng):
    """The decks, each shuffled on its own, stacked I on top; the display is the top 7 cards.
    Returns (rng, the position of ``R`` after the decks)."""
    for k in range(NCARD):
        s[O_DECK + k] = -1
    ndecks = R[r]
    r += 1
    top = 0
    for _d in range(ndecks):
        size = R[r]
        for k in range(size):
            s[O_DECK + top + k] = R[r + 1 + k]
        rng = _shuffle(s, O_DECK + top, size, rng)
        top += size
        r += 1 + size
    s[O_DECK_LEN] = top
    for j in range(NDISP):
        s[O_DISPLAY + j] = s[O_DECK + j]
    return rng, r


@rule(inline="always")
def _seat_players(s, R, r, rng):
    """The start player, money in turn order from them, the Praefectus Magnus to the last."""
    n = R[r]
    rng, start = splitmix_below(rng, n)
    for p in range(n):
        s[O_COINS + (start + p) % n] = R[r + 1 + p]
    s[O_START] = start
    s[O_ACTIVE] = start
    s[O_CURRENT] = start
    s[O_PM] = (start - 1 + n) % n


@rule("int32[::1], int32[::1], int32[::1], int64")
def setup_state(s, template, R, seed):
    """Write the new game of ``seed`` into state row ``s``: ``template``
    (:func:`concordia_env.game.template_state`) with what the seed decides drawn from the map's
    setup table ``R`` (:func:`concordia_env.game.setup_table`), in this order: city tokens per
    letter, each deck, the start player. ``seed`` is an int64; a seed outside that range is
    taken modulo 2**64 by the host first (:func:`concordia_env.game.initial_state`)."""
    for k in range(STATE_SIZE):
        s[k] = template[k]
    rng = np.uint64(seed)  # two's complement: a negative seed is its value modulo 2**64
    rng, r = _deal_city_tokens(s, R, rng)
    r = _place_markers(s, R, r)
    rng, r = _stack_decks(s, R, r, rng)
    _seat_players(s, R, r, rng)
