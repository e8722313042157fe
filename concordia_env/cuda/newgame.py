"""Setting up a new game inside a kernel: :func:`concordia_env.game.initial_state`, compiled.

:func:`concordia_env.game.initial_state` draws from a small SplitMix64 generator written in
Python (not numpy's), so the same draws are easy to make on a GPU: :func:`splitmix_next` and
:func:`splitmix_below` are the same generator over ``uint64``, and :func:`setup_state` makes the
same draws in the same order (city tokens per letter, each deck, the start player), so a game
seed gives the same game on the host, in the CPU batched env and on the device.

What does not depend on the seed (storehouses, colonists in Roma, hands, houses, the context
fields ...) is copied from a *template*, ``initial_state`` of seed 0 (:func:`template_state`);
what the draws decide is written over it. The map's and components' setup data, which
``initial_state`` reads from Python objects, travel as one flat int32 array
(:func:`setup_table`), read in order by :func:`setup_state`.

Like the rules, every function here is a numba kernel that allocates nothing: the CPU compile
is what the tests compare with ``initial_state`` seed by seed, and numba-cuda compiles the same
functions as device functions for :class:`concordia_env.cuda.ConcordiaCudaVecEnv`.
"""

from __future__ import annotations

import numpy as np

from .. import engine as E
from ..board import deck_card_ids
from ..game import Game, initial_state
from ..jit import kernel

# SplitMix64's constants, typed uint64 so that numba never mixes them with signed integers
# (uint64 op int64 gives float64 in numba)
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_ZERO = np.uint64(0)

O_DECK, O_DECK_LEN, O_DISPLAY, O_CITY_GOOD = E.O_DECK, E.O_DECK_LEN, E.O_DISPLAY, E.O_CITY_GOOD
O_MARKER_GOOD, O_COINS, O_START, O_ACTIVE = E.O_MARKER_GOOD, E.O_COINS, E.O_START, E.O_ACTIVE
O_CURRENT, O_PM, STATE_SIZE, NC, NPV, NCARD, NDISP = E.O_CURRENT, E.O_PM, E.STATE_SIZE, E.NC, E.NPV, E.NCARD, E.NDISP


@kernel(inline="always", group="cuda")
def splitmix_next(state):
    """One step of SplitMix64 (as :meth:`concordia_env.game.SplitMix64.next`): (new state, output)."""
    state = state + _GAMMA
    z = state
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return state, z ^ (z >> _S31)


@kernel(inline="always", group="cuda")
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


@kernel(inline="always", group="cuda")
def _shuffle(s, start, length, rng):
    """Fisher-Yates over ``s[start:start+length]`` (as :meth:`~concordia_env.game.SplitMix64.shuffle`)."""
    for i in range(length - 1, 0, -1):
        rng, j = splitmix_below(rng, i + 1)
        t = s[start + i]
        s[start + i] = s[start + j]
        s[start + j] = t
    return rng


@kernel(group="cuda")
def setup_state(s, template, R, seed):
    """Write the new game of ``seed`` into state row ``s``: ``template`` (:func:`template_state`)
    with what the seed decides drawn as :func:`concordia_env.game.initial_state` draws it, from
    the map's setup table ``R`` (:func:`setup_table`). The deck's slots serve as scratch for
    the city tokens (they are written afterwards)."""
    for k in range(STATE_SIZE):
        s[k] = template[k]
    rng = np.uint64(seed)  # two's complement, as SplitMix64(seed) masks a negative seed
    # city tokens, shuffled per letter and laid on that letter's cities in order
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
    # each province's bonus marker: the most valuable good of its cities
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
    r += ncities
    # the decks, each shuffled on its own, stacked I on top
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
    # the start player, money in turn order from them, the Praefectus Magnus to the last
    n = R[r]
    rng, start = splitmix_below(rng, n)
    for p in range(n):
        s[O_COINS + (start + p) % n] = R[r + 1 + p]
    s[O_START] = start
    s[O_ACTIVE] = start
    s[O_CURRENT] = start
    s[O_PM] = (start - 1 + n) % n


def setup_table(game: Game, num_players: int) -> np.ndarray:
    """The setup data :func:`setup_state` reads, as one flat int32 array:

    ``[letters, (tokens, token goods..., cities, city ids...) per letter, provinces, cities,
    province of each city..., decks, (cards, card ids...) per deck, players, money per turn position...]``
    (letters, decks and cities in the order :func:`~concordia_env.game.initial_state` uses)."""
    m, comp = game.map, game.components
    out: list[int] = [len(m.letters)]
    for letter in m.letters:
        tokens = [g for g, count in enumerate(comp.city_tokens[letter]) for _ in range(count)]
        cities = [c for c in range(m.num_cities) if m.city_letters[c] == letter]
        if len(tokens) > E.NCARD:
            raise ValueError(f"letter {letter}: {len(tokens)} city tokens do not fit the deck's {E.NCARD} slots")
        out += [len(tokens), *tokens, len(cities), *cities]
    out += [len(m.province_names), m.num_cities, *(int(q) for q in m.city_province)]
    ids = deck_card_ids(comp)
    decks = comp.decks_per_player_count[num_players]
    out.append(len(decks))
    for d in decks:
        out += [len(ids[d]), *(int(c) for c in ids[d])]
    out += [num_players, *comp.starting_money[:num_players]]
    return np.asarray(out, np.int32)


def template_state(game: Game, num_players: int, intermediate_scoring: bool) -> np.ndarray:
    """What :func:`setup_state` starts from: the seed-independent part of a new game (every field
    it does not write is the same in every new game of this map, player count and option)."""
    return initial_state(game, num_players, 0, intermediate_scoring)
