"""The game (static rules and data of one map) and the seeded setup of a new game.

Setup follows RULES.md: city tokens shuffled per letter, one bonus marker per
province (its most valuable good), the decks I..N shuffled each on its own and
stacked I on top, a display of 7, storehouses with 2 food + 1 of each other
good and 2 land + 2 sea colonists, 1 land + 1 sea colonist in Roma, money
5, 6, 7, 8, 9 in turn order from a random start player, and the Praefectus
Magnus to the last player in turn order.

The setup rules live in one place, the kernel :func:`concordia_env.rules.setup.setup_state`,
which the host (:func:`initial_state`), the CPU batched env and the GPU env all run; this module
builds what it reads (:func:`template_state`, :func:`setup_table`). Its randomness comes from a
small SplitMix64 generator written out in ``uint64`` arithmetic, so the same seed gives the same
game on every machine and every numpy version (:class:`SplitMix64` is the same generator in Python).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from . import engine as E
from .board import build_tables, route_index, stacked_decks
from .data import MAP_NAMES, Components, MapData, components, load_map
from .rules.setup import setup_state


class SplitMix64:
    """Tiny deterministic generator (Steele et al. 2014): identical output everywhere. The same
    draws as the setup kernel's :func:`~concordia_env.rules.setup.splitmix_next` and
    :func:`~concordia_env.rules.setup.splitmix_below`, in Python."""

    _MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self._MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & self._MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self._MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self._MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """Uniform integer in [0, n) (rejection sampling, no modulo bias)."""
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next()
            if x < limit:
                return x % n

    def shuffle(self, items: list) -> None:
        """Fisher-Yates shuffle in place."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


@dataclass(frozen=True, eq=False)
class Game:
    """Static rules and data of one map: names, tables for the kernel, allowed player counts."""

    map: MapData
    components: Components
    tables: np.ndarray

    @property
    def name(self) -> str:
        return self.map.name

    @property
    def num_actions(self) -> int:
        return E.NUM_ACTIONS

    @property
    def routes(self) -> list[tuple[int, int, int]]:
        """(route id, city a, city b) for every route of the map."""
        return route_index(self.map)

    def route_name(self, r: int) -> str:
        a, b = int(self.tables[E.T_ROUTE_A + r]), int(self.tables[E.T_ROUTE_B + r])
        return f"({self.map.city_names[a]}–{self.map.city_names[b]})"

    def route_id(self, a: str, b: str, kind: str = "land") -> int:
        """Route id of the ``kind`` route ("land" or "sea") between cities ``a`` and ``b``."""
        ia, ib = self.map.city_index(a), self.map.city_index(b)
        for rid, x, y in self.routes:
            if {x, y} == {ia, ib} and (rid < E.NL) == (kind == "land"):
                return rid
        raise KeyError(f"no {kind} route between {a} and {b} on the {self.name} map")


@cache
def get_game(map_name: str) -> Game:
    """The (cached) :class:`Game` of ``map_name``."""
    m = load_map(map_name)
    comp = components()
    return Game(m, comp, build_tables(m, comp))


def check_setup_args(map_name: str, num_players: int) -> None:
    """Raise ``ValueError`` naming the allowed values for a bad map/player combination."""
    if map_name not in MAP_NAMES:
        raise ValueError(f"unknown map {map_name!r}; allowed maps: {list(MAP_NAMES)}")
    allowed = load_map(map_name).players
    if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
            or int(num_players) not in allowed:
        combos = ", ".join(f"{n} with {list(load_map(n).players)} players" for n in MAP_NAMES)
        raise ValueError(
            f"{map_name} cannot be played by {num_players!r} players; allowed: {combos}")


def check_seed(seed) -> int:
    """``seed`` as an int; ``ValueError`` for anything else (bools included)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"seed must be an int, got {seed!r}")
    return int(seed)


def template_state(game: Game, num_players: int, intermediate_scoring: bool) -> np.ndarray:
    """What :func:`~concordia_env.rules.setup.setup_state` starts from: the seed-independent part
    of a new game (storehouses, colonists in Roma, hands, houses, the context fields ...). The
    fields the seed decides (city goods, markers, decks, display, money, start player, Praefectus
    Magnus) are left blank here: ``setup_state`` writes every one of them."""
    m, comp = game.map, game.components
    s = np.zeros(E.STATE_SIZE, dtype=np.int32)

    def f(name):
        return E.field_view(s, name)

    f("num_players")[()] = num_players
    f("num_cities")[()] = m.num_cities
    f("num_provinces")[()] = len(m.province_names)
    f("intermediate")[()] = int(bool(intermediate_scoring))
    for name in ("concordia", "ctx_keep_player", "city_good", "marker_good", "deck", "route_occ", "top",
                 "colonist"):
        f(name)[...] = -1
    f("marker_active")[:len(m.province_names)] = 1
    f("deck_pos")[()] = E.NDISP
    col = f("colonist")
    for p in range(num_players):
        f("goods")[p] = comp.starting_goods
        for i in range(comp.colonists_in_roma_per_kind):
            col[p, i] = 0
            col[p, 3 + i] = 0
        for t in comp.starting_hand:
            f("hand")[p, t] += 1
        f("houses_left")[p] = comp.houses
    f("phase")[()] = E.PH_PLAY
    return s


def setup_table(game: Game, num_players: int) -> np.ndarray:
    """The setup data :func:`~concordia_env.rules.setup.setup_state` reads, as one flat int32 array:

    ``[letters, (tokens, token goods..., cities, city ids...) per letter, provinces, cities,
    province of each city..., decks, (cards, card ids...) per deck, players, money per turn position...]``
    (letters in the map's order, cities ascending, decks in stacking order)."""
    m, comp = game.map, game.components
    out: list[int] = [len(m.letters)]
    for letter in m.letters:
        tokens = [g for g, count in enumerate(comp.city_tokens[letter]) for _ in range(count)]
        cities = [c for c in range(m.num_cities) if m.city_letters[c] == letter]
        if len(tokens) > E.NCARD:
            raise ValueError(f"letter {letter}: {len(tokens)} city tokens do not fit the deck's {E.NCARD} slots")
        out += [len(tokens), *tokens, len(cities), *cities]
    out += [len(m.province_names), m.num_cities, *(int(q) for q in m.city_province)]
    decks = stacked_decks(comp, num_players)
    out.append(len(decks))
    for cards in decks:
        out += [len(cards), *cards]
    out += [num_players, *comp.starting_money[:num_players]]
    return np.asarray(out, np.int32)


@lru_cache(maxsize=64)
def _setup_inputs(game: Game, num_players: int, intermediate_scoring: bool) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`template_state`, :func:`setup_table`) of a map, player count and option, built once
    (read only by the setup kernel, never handed out)."""
    return template_state(game, num_players, intermediate_scoring), setup_table(game, num_players)


def initial_state(game: Game, num_players: int, seed: int, intermediate_scoring: bool) -> np.ndarray:
    """The flat state array of a new game set up from ``seed`` (any int, taken modulo 2**64):
    :func:`~concordia_env.rules.setup.setup_state`, the same compiled setup the device runs."""
    template, table = _setup_inputs(game, int(num_players), bool(intermediate_scoring))
    s = np.empty(E.STATE_SIZE, dtype=np.int32)
    bits = np.int64(((int(seed) + 2**63) & SplitMix64._MASK) - 2**63)  # seed mod 2**64, as a two's complement int64
    with np.errstate(over="ignore"):  # uint64 arithmetic wraps by design; numpy scalars (NUMBA_DISABLE_JIT) would warn
        setup_state(s, template, table, bits)
    return s
