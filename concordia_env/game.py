"""The game (static rules and data of one map) and the seeded setup of a new game.

Setup follows RULES.md: city tokens shuffled per letter, one bonus marker per
province (its most valuable good), the decks I..N shuffled each on its own and
stacked I on top, a display of 7, storehouses with 2 food + 1 of each other
good and 2 land + 2 sea colonists, 1 land + 1 sea colonist in Roma, money
5, 6, 7, 8, 9 in turn order from a random start player, and the Praefectus
Magnus to the last player in turn order.

Randomness comes from a small SplitMix64 generator written out here, so the
same seed gives the same game on every machine and every numpy version.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from . import engine as E
from .board import build_tables, route_index, stacked_decks
from .data import MAP_NAMES, Components, MapData, components, load_map


class SplitMix64:
    """Tiny deterministic generator (Steele et al. 2014): identical output everywhere."""

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


def initial_state(game: Game, num_players: int, seed: int, intermediate_scoring: bool) -> np.ndarray:
    """The flat state array of a new game set up from ``seed``."""
    m, comp = game.map, game.components
    rng = SplitMix64(seed)
    s = np.zeros(E.STATE_SIZE, dtype=np.int32)

    def f(name):
        return E.field_view(s, name)

    n = num_players
    f("num_players")[()] = n
    f("num_cities")[()] = m.num_cities
    f("num_provinces")[()] = len(m.province_names)
    f("intermediate")[()] = int(bool(intermediate_scoring))
    f("concordia")[()] = -1
    f("ctx_keep_player")[()] = -1

    city_good = f("city_good")
    city_good[:] = -1
    for letter in m.letters:
        tokens = [g for g, count in enumerate(comp.city_tokens[letter]) for _ in range(count)]
        rng.shuffle(tokens)
        cities = [c for c in range(m.num_cities) if m.city_letters[c] == letter]
        for c, g in zip(cities, tokens):
            city_good[c] = g
    marker = f("marker_good")
    marker[:] = -1
    for q in range(len(m.province_names)):
        marker[q] = max(city_good[c] for c in range(m.num_cities) if m.city_province[c] == q)
    f("marker_active")[:len(m.province_names)] = 1

    stack: list[int] = []
    for cards in stacked_decks(comp, n):
        rng.shuffle(cards)
        stack += cards
    deck = f("deck")
    deck[:] = -1
    deck[:len(stack)] = stack
    f("deck_len")[()] = len(stack)
    f("display")[:] = stack[:E.NDISP]
    f("deck_pos")[()] = E.NDISP

    f("route_occ")[:] = -1
    f("top")[:] = -1
    col = f("colonist")
    col[:] = -1
    start = rng.below(n)
    for p in range(n):
        f("goods")[p] = comp.starting_goods
        for i in range(comp.colonists_in_roma_per_kind):
            col[p, i] = 0
            col[p, 3 + i] = 0
        for t in comp.starting_hand:
            f("hand")[p, t] += 1
        f("houses_left")[p] = comp.houses
        f("coins")[(start + p) % n] = comp.starting_money[p]
    f("start_player")[()] = start
    f("active")[()] = start
    f("current")[()] = start
    f("pm")[()] = (start - 1) % n
    f("phase")[()] = E.PH_PLAY
    return s

