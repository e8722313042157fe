"""The maps' geometry, north up, in map units: city positions and route curves.

Both board scans are about 4560x3200 px and ``maps.json`` normalises their coordinates to
[0, 1] on each axis, so x is stretched back to keep the shapes. The Italia board lays Italy on
its side to fit a landscape board; turning it by :data:`NORTH_UP_TURN_DEG` puts north up
(least-squares fit of 19 cities to their real longitude/latitude). The Imperium board already
has north up. Routes on the board bend around coasts and mountains; each is drawn as a quadratic
Bezier through the spot where its colonist stands, so that spot lies on the drawn route.

Used by the picture (:mod:`concordia_env.display.picture`) and the replay viewer, so both drawings agree.
Plot coordinates have y pointing north; :func:`to_pixels` turns them into image pixels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import engine as E

BOARD_ASPECT = 1.425
"""Width / height of the board scans, by which normalised x is stretched."""

NORTH_UP_TURN_DEG: dict[str, float] = {"italia": -49.0}
"""Turn (degrees, counter-clockwise) that puts north up, per map; 0 when absent."""

CURVE_POINTS = 17
"""Points of each route's polyline (the Bezier sampled evenly in its parameter)."""


@dataclass(frozen=True)
class Geometry:
    """Plot coordinates of one map (north up, equal scale on both axes)."""

    city: np.ndarray  # (num_cities, 2)
    route_point: dict[int, tuple[float, float]]  # route id -> where its colonist stands
    land_lines: list[np.ndarray]  # (CURVE_POINTS, 2) each, land routes in ``game.routes`` order
    sea_lines: list[np.ndarray]  # the same for sea routes
    lo: np.ndarray  # bounding box of cities and routes
    hi: np.ndarray


_GEOMETRY: dict[str, Geometry] = {}


def map_geometry(game) -> Geometry:
    """The geometry of ``game``'s map (a :class:`~concordia_env.game.Game`), computed once per map."""
    m = game.map
    geo = _GEOMETRY.get(m.name)
    if geo is None:
        geo = _build(game)
        _GEOMETRY[m.name] = geo
    return geo


def _build(game) -> Geometry:
    m = game.map
    turn = math.radians(NORTH_UP_TURN_DEG.get(m.name, 0.0))
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])

    def to_plot(xy) -> np.ndarray:
        # Board y points down (image rows); the plot's y points north.
        p = np.asarray(xy, dtype=float).reshape(-1, 2) * np.array([BOARD_ASPECT, -1.0])
        return p @ rot.T

    city = to_plot(m.city_xy)
    point: dict[int, tuple[float, float]] = {}
    land_lines: list[np.ndarray] = []
    sea_lines: list[np.ndarray] = []
    t = np.linspace(0.0, 1.0, CURVE_POINTS)[:, None]
    for rid, a, b in game.routes:
        spots = m.land_route_xy if rid < E.NL else m.sea_route_xy
        j = rid if rid < E.NL else rid - E.NL
        pa, pb = city[a], city[b]
        mid = to_plot(spots[j])[0] if j < len(spots) else (pa + pb) / 2
        ctrl = 2 * mid - (pa + pb) / 2  # the Bezier passes through ``mid`` at t = 1/2
        curve = (1 - t) ** 2 * pa + 2 * t * (1 - t) * ctrl + t ** 2 * pb
        (land_lines if rid < E.NL else sea_lines).append(curve)
        point[rid] = (float(mid[0]), float(mid[1]))
    every = np.vstack([city, *land_lines, *sea_lines])
    return Geometry(city, point, land_lines, sea_lines, every.min(axis=0), every.max(axis=0))


@dataclass(frozen=True)
class PixelMap:
    """A map's geometry fitted into a rectangle of an image: everything in pixels, y down."""

    city: np.ndarray  # (num_cities, 2)
    spots: dict[int, tuple[float, float]]  # route id -> colonist spot
    land: list[np.ndarray]  # polylines
    sea: list[np.ndarray]
    rect: tuple[float, float, float, float]  # x, y, width, height the map was fitted into


def to_pixels(geo: Geometry, rect: tuple[float, float, float, float], pad: float = 0.0) -> PixelMap:
    """``geo`` scaled (equal on both axes) and centred into ``rect`` = (x, y, width, height), keeping
    ``pad`` pixels free on every side."""
    x, y, w, h = rect
    span = geo.hi - geo.lo
    scale = min((w - 2 * pad) / span[0], (h - 2 * pad) / span[1])
    centre = (geo.lo + geo.hi) / 2

    def px(p: np.ndarray) -> np.ndarray:
        q = np.asarray(p, dtype=float).reshape(-1, 2)
        return np.column_stack([x + w / 2 + (q[:, 0] - centre[0]) * scale, y + h / 2 - (q[:, 1] - centre[1]) * scale])

    spots: dict[int, tuple[float, float]] = {}
    for r, p in geo.route_point.items():
        sx, sy = px(np.array(p))[0]
        spots[r] = (float(sx), float(sy))
    return PixelMap(px(geo.city), spots, [px(c) for c in geo.land_lines], [px(c) for c in geo.sea_lines], rect)


def _text_width_pt(text: str, size: float) -> float:
    return 0.58 * size * len(text)  # DejaVu Sans averages a bit over half an em per character


def province_text(m, q: int) -> str:
    """A province's label: its numeral and name, e.g. ``IV Germania``."""
    return f"{m.province_numerals[q]} {m.province_names[q]}"


def legacy_province_labels(game, geo: Geometry, pt: float, xlim, ylim) -> list[tuple[float, float]]:
    """Left-centre anchor (map units) of each province label, for the replay viewer's SVG.

    The matplotlib picture's placement, kept for the viewer (``pt`` is one typographic point
    in map units, ``xlim``/``ylim`` the visible area). Greedy: each label takes the spot near
    its cities' centre that overlaps least with city markers, names, pieces, route spots,
    route lines and the labels placed before it. The Pillow picture places its labels with
    :mod:`concordia_env.display.drawing.labels` instead, where no label may touch a route."""
    m = game.map
    key = (m.name, round(pt, 9), tuple(float(v) for v in xlim), tuple(float(v) for v in ylim))
    if key not in _LEGACY_LABELS:
        _LEGACY_LABELS[key] = _legacy_place(game, geo, pt, xlim, ylim)
    return _LEGACY_LABELS[key]


_LEGACY_LABELS: dict[tuple, list[tuple[float, float]]] = {}


def _legacy_place(game, geo: Geometry, pt: float, xlim, ylim) -> list[tuple[float, float]]:
    m = game.map
    boxes, weights = [], []

    def reserve(x0, y0, x1, y1, w):
        boxes.append(np.stack(np.broadcast_arrays(x0, y0, x1, y1), axis=-1).reshape(-1, 4))
        weights.append(np.full(boxes[-1].shape[0], float(w)))

    cx, cy = geo.city[:, 0], geo.city[:, 1]
    reserve(cx - 8 * pt, cy - 8 * pt, cx + 8 * pt, cy + 8 * pt, 10)  # marker
    name_w = np.array([_text_width_pt(n, 7) / 2 for n in m.city_names]) * pt
    reserve(cx - name_w, cy - 17 * pt, cx + name_w, cy - 7 * pt, 10)  # name
    reserve(cx - 17 * pt, cy + 7 * pt, cx + 17 * pt, cy + 14 * pt, 4)  # houses
    reserve(cx + 8 * pt, cy - 8 * pt, cx + 34 * pt, cy + 8 * pt, 3)  # colonists
    reserve(cx[0] + 8 * pt, cy[0] - 8 * pt, cx[0] + 60 * pt, cy[0] + 8 * pt, 6)  # Roma's crowd
    sp = np.array(list(geo.route_point.values()))
    reserve(sp[:, 0] - 5 * pt, sp[:, 1] - 5 * pt, sp[:, 0] + 5 * pt, sp[:, 1] + 5 * pt, 8)
    line = np.vstack([c[1:-1] for c in geo.land_lines + geo.sea_lines])
    reserve(line[:, 0] - 1.5 * pt, line[:, 1] - 1.5 * pt, line[:, 0] + 1.5 * pt, line[:, 1] + 1.5 * pt, 1)

    ox, oy = np.meshgrid(np.arange(-70, 71, 5.0), np.arange(-45, 46, 4.0))
    ox, oy = ox.ravel() * pt, oy.ravel() * pt
    out = []
    for q in range(len(m.province_names)):
        members = [c for c in range(m.num_cities) if m.city_province[c] == q]
        centre = geo.city[members].mean(axis=0)
        w = (12 + _text_width_pt(province_text(m, q), 7.5)) * pt
        h = 11 * pt
        x0 = centre[0] + ox - w / 2
        y0 = centre[1] + oy - h / 2
        obs, wt = np.vstack(boxes), np.concatenate(weights)
        ix = np.clip(np.minimum(x0[:, None] + w, obs[None, :, 2]) - np.maximum(x0[:, None], obs[None, :, 0]), 0, None)
        iy = np.clip(np.minimum(y0[:, None] + h, obs[None, :, 3]) - np.maximum(y0[:, None], obs[None, :, 1]), 0, None)
        cost = (ix * iy * wt).sum(axis=1) / (pt * pt) + 0.02 * (ox ** 2 + oy ** 2) / (pt * pt)
        outside = (x0 < xlim[0]) | (x0 + w > xlim[1]) | (y0 < ylim[0]) | (y0 + h > ylim[1])
        cost[outside] = np.inf
        k = int(np.argmin(cost))
        out.append((float(x0[k]), float(y0[k] + h / 2)))
        reserve(x0[k], y0[k], x0[k] + w, y0[k] + h, 20)
    return out
