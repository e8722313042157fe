"""Board features: per-seat tables an MLP reads poorly from the flat observation, computed from it.

Why: the observation gives each city's good (one-hot) and each seat's house in each city as
separate blocks. What scores and what can be built next are products and thresholds over
them (houses of a seat per good, provinces with a house, cities a colonist can reach), which
a multilayer perceptron must learn from hundreds of thousands of positions. A value network
may take these as extra inputs (``ValueNet(features="board-v1")``); whether they help is an
ablation in ``docs/training.md``.

Everything is computed from the observation alone (the map is its ``map`` one-hot), so the
same function serves training data, play and any saved observation. Rows follow the
observation's seat rows (row k: the k-th player after the observer); an absent seat's row is 0.

Per seat row, :data:`FEATURE_LAYOUT` in order (each divided by the scale given, so values stay
about 0-2):

- ``houses_by_good`` (5, /5): houses in cities of each good (brick, food, tools, wine, cloth);
- ``provinces`` (1, /6): provinces with at least one of the seat's houses;
- ``houses_by_province`` (12, /3): the seat's houses in each province (map order; Italia has
  fewer provinces, the rest stay 0);
- ``reach`` (3, /10): cities (not Roma) without the seat's house that one of its colonists stands
  next to (0 moves), or can stand next to in at most 1 or 2 moves along routes of its kind,
  counted before other colonists' blocking;
- ``reach_by_good`` (5, /4): the cities of ``reach`` at at most 1 move, by good.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from . import encoding
from .data import MAP_NAMES
from .rules import layout as L

#: the name a value network's header gives these inputs
BOARD_V1 = "board-v1"
#: every feature set a value network may name
FEATURE_SETS: tuple[str, ...] = (BOARD_V1,)

ROWS = encoding.P
_PER_SEAT: tuple[tuple[str, int, float], ...] = (
    ("houses_by_good", L.NG, 5.0),
    ("provinces", 1, 6.0),
    ("houses_by_province", L.NPV, 3.0),
    ("reach", 3, 10.0),
    ("reach_by_good", L.NG, 4.0),
)
#: features per seat row
PER_SEAT = sum(n for _, n, _ in _PER_SEAT)
#: name -> slice within one seat row's features
FEATURE_LAYOUT: dict[str, slice] = {}
_at = 0
for _name, _n, _ in _PER_SEAT:
    FEATURE_LAYOUT[_name] = slice(_at, _at + _n)
    _at += _n
#: size of :func:`board_features`'s rows
FEATURE_SIZE = ROWS * PER_SEAT
#: the divisor of each of a row's features
_SCALE = np.concatenate([np.full(n, scale, np.float32) for _, n, scale in _PER_SEAT])

_OBS = encoding.OBSERVATION_LAYOUT
_MAX_MOVES = 2


def feature_size(name: str | None) -> int:
    """Inputs a feature set adds (0 for None); ``ValueError`` for an unknown name."""
    if name is None:
        return 0
    if name not in FEATURE_SETS:
        raise ValueError(f"unknown feature set {name!r}; known: {list(FEATURE_SETS)}")
    return FEATURE_SIZE


@cache
def _map_tables(map_name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(province one-hot (NC, NPV), within (MAX_MOVES + 1, NLOC * 2, NC))`` of a map: ``within[m]``
    is 1 where a land (first NLOC rows) or sea colonist at a location can stand next to a city in
    at most ``m`` moves (never for Roma, which is not counted). Computed once per map: the
    features of every batch read them."""
    from .game import get_game

    T = get_game(map_name).tables
    n_cities = int(T[L.T_NCITIES])
    prov = np.zeros((L.NC, L.NPV), np.float32)
    for c in range(1, n_cities):
        prov[c, T[L.T_CITY_PROV + c]] = 1.0
    dist = T[L.T_DIST:L.T_DIST + L.NLOC * L.NR].reshape(L.NLOC, L.NR).astype(np.int64)
    far = 1 << 20
    moves = np.full((2, L.NLOC, L.NC), far, np.int64)
    for r in range(L.NR):
        kind = 0 if r < L.NL else 1
        for c in (int(T[L.T_ROUTE_A + r]), int(T[L.T_ROUTE_B + r])):
            if 0 < c < n_cities:
                moves[kind, :, c] = np.minimum(moves[kind, :, c], dist[:, r])
    moves[:, :, 0] = far
    flat = moves.reshape(2 * L.NLOC, L.NC)
    return prov, np.stack([(flat <= m).astype(np.float32) for m in range(_MAX_MOVES + 1)])


def _colonist_locations(x: np.ndarray) -> np.ndarray:
    """``(B, ROWS, NLOC * 2)``: whether each seat row has a land (first NLOC) or sea colonist at
    each location (a city, or NC + route)."""
    b = len(x)
    at = np.zeros((b, ROWS, 2, L.NLOC), bool)
    in_city = x[:, _OBS["city_colonists"]].reshape(b, L.NC, ROWS, 2) > 0
    at[:, :, :, :L.NC] = in_city.transpose(0, 2, 3, 1)
    on_route = x[:, _OBS["route_colonist"]].reshape(b, L.NR, ROWS) > 0
    at[:, :, 0, L.NC:L.NC + L.NL] = on_route[:, :L.NL].transpose(0, 2, 1)
    at[:, :, 1, L.NC + L.NL:] = on_route[:, L.NL:].transpose(0, 2, 1)
    return at.reshape(b, ROWS, 2 * L.NLOC)


def _map_features(x: np.ndarray, map_name: str) -> np.ndarray:
    prov, within = _map_tables(map_name)
    b = len(x)
    good = x[:, _OBS["city_good"]].reshape(b, L.NC, L.NG)
    houses = x[:, _OBS["city_houses"]].reshape(b, L.NC, ROWS)
    out = np.zeros((b, ROWS, PER_SEAT), np.float32)
    out[:, :, FEATURE_LAYOUT["houses_by_good"]] = np.einsum("bck,bcg->bkg", houses, good)
    by_prov = np.einsum("bck,cq->bkq", houses, prov)
    out[:, :, FEATURE_LAYOUT["houses_by_province"]] = by_prov
    out[:, :, FEATURE_LAYOUT["provinces"]] = (by_prov > 0).sum(axis=2, keepdims=True)
    at = _colonist_locations(x).astype(np.float32)
    free = (houses.transpose(0, 2, 1) == 0) & (np.arange(L.NC) > 0)  # (B, ROWS, NC)
    reach = out[:, :, FEATURE_LAYOUT["reach"]]
    for m in range(_MAX_MOVES + 1):
        near = (at @ within[m] > 0) & free
        reach[:, :, m] = near.sum(axis=2)
        if m == 1:
            out[:, :, FEATURE_LAYOUT["reach_by_good"]] = np.einsum("bkc,bcg->bkg", near.astype(np.float32), good)
    present = x[:, _OBS["seat_present"]] > 0
    out *= present[:, :, None]
    return (out / _SCALE).reshape(b, FEATURE_SIZE)


def board_features(obs: np.ndarray) -> np.ndarray:
    """``(B, FEATURE_SIZE)`` float32 board features of a ``(B, OBSERVATION_SIZE)`` batch of
    observations (see the module doc); ``ValueError`` for another shape or a row naming no map."""
    x = np.asarray(obs, np.float32)
    if x.ndim != 2 or x.shape[1] != encoding.OBSERVATION_SIZE:
        raise ValueError(f"observations must be a (B, {encoding.OBSERVATION_SIZE}) batch, got {x.shape}")
    maps = x[:, _OBS["map"]]
    which = maps.argmax(axis=1) if len(x) else np.zeros(0, np.int64)
    if len(x) and not np.all(maps[np.arange(len(x)), which] == 1.0):
        raise ValueError("an observation's map one-hot names no map")
    out = np.zeros((len(x), FEATURE_SIZE), np.float32)
    for m, name in enumerate(MAP_NAMES):
        rows = np.flatnonzero(which == m)
        if len(rows):
            out[rows] = _map_features(x[rows], name)
    return out
