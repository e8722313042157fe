"""Where the map's names and pieces go: every city name and province label clear of every
route, route spot, city, row of houses and other label.

The placement is computed once per map in design pixels (the 1280x800 frame) and scaled with
the frame. Each label is a box: a city's name, or a province's bonus marker followed by its
numeral and name. Candidate boxes lie on a grid around the label's anchor (the city; the
centre of the province's cities). A candidate is *allowed* when it stays inside the map area
and touches none of these:

* a route's polyline (as drawn, widened by :data:`ROUTE_CLEARANCE`),
* the spot where a colonist stands on a route, a city marker (Roma's star included),
* the legend, where it is drawn on the map (Italia's, in the empty sea at the bottom left),
* the colonists in Roma, where every player's start (beside, below or above Roma: the first of
  these places that covers no city or route spot),
* the place of a city's first :data:`HARD_HOUSES` houses, a row above the city or below it,
* a label already placed (with :data:`LABEL_GAP` between them).

A city's name and its row of houses are placed together: each candidate is a name box with the
row above the city (preferred) or below, so the houses move below where a route spot lies above
or the name needs the room. Among its allowed candidates a label takes the cheapest: near its
anchor (city names prefer below their city, then beside, then above), not nearer another city
than its own, over as little as possible of the places of further houses (up to one per player
of the map) and of a city's colonists. City names go most constrained first (the city with the
fewest allowed candidates left), then the provinces. :func:`conflicts` lists what a placement
touches (the tests assert it lists nothing for either map, and check it independently).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .canvas import text_width
from .geometry import PixelMap, map_geometry, province_text, to_pixels
from .style import (
    CITY_RADIUS,
    COLONIST_DX,
    COLONIST_DY,
    COLONIST_STEP,
    HOUSE_DY,
    HOUSE_SIZE,
    HOUSE_STEP,
    LABEL_SIZE,
    LAND_RADIUS,
    LAYOUTS,
    MARKER_SIZE,
    ROMA_RADIUS,
    SEA_RADIUS,
)

Box = tuple[float, float, float, float]

ROUTE_CLEARANCE = 1.8
"""Least distance in design px between a label's box and the centre line of a route (the widest
route is drawn 2.2 px wide: 0.7 px stay free on each side)."""
ROUTE_COMFORT = 4.0
"""Labels keep this far from routes where they can."""
LABEL_GAP = 2.0
"""Least gap in design px between two labels."""
MARKER_GAP = 4.0
"""Gap between a province's bonus marker and its name."""
MAP_PAD = 8.0
"""Margin of the map area kept free of labels."""
NAME_HEIGHT = 12.0
"""Height of a city name's box (the names are written at :data:`~.style.LABEL_SIZE` px)."""
HARD_HOUSES = 3
"""A label never covers the place of a city's first three houses (a fourth or fifth, rarer, it
avoids where it can)."""

_PLACE_COST = 0.5  # per px² of a label over the place of a piece
_NEAR_ROUTE_COST = 0.3  # per px² of a label closer than ROUTE_COMFORT to a route
_BLOCKED = 1e6  # added to the cost of a candidate that touches something: taken only if nothing else fits
_HOUSES_BELOW = 3.0  # cost of putting a city's houses below it rather than above
_HOUSES_ON_SPOT = 60.0  # cost of a row of houses over a route spot or another city
_SEA_ROW = COLONIST_DY[1] - COLONIST_DY[0]  # the sea colonists' row is this far below the land row


@dataclass(frozen=True)
class MapLabels:
    """A map's labels and the places of its pieces, in design px: boxes are (x0, y0, x1, y1), y down."""

    pixels: PixelMap
    city_boxes: np.ndarray  # (num_cities, 4)
    province_boxes: np.ndarray  # (num_provinces, 4): the marker at the left end, then the name
    obstacles: np.ndarray  # (k, 4) boxes no label may touch: route spots, cities, Roma's colonists, house rows
    segments: np.ndarray  # (s, 2, 2) the routes' polylines as segments
    house_dy: np.ndarray  # (num_cities,) where a city's row of houses is centred, below the city (< 0: above)
    colonist_at: np.ndarray  # (num_cities, 2) offset from its city of a city's first land colonist
    legend: np.ndarray | None  # (4,) the legend's box where it is drawn on the map, else None

    def marker_centre(self, q: int) -> tuple[float, float]:
        """Centre of province ``q``'s bonus marker."""
        x0, y0, _x1, y1 = self.province_boxes[q]
        return float(x0 + MARKER_SIZE / 2), float((y0 + y1) / 2)

    def province_text_x(self, q: int) -> float:
        """Left end of province ``q``'s name."""
        return float(self.province_boxes[q, 0] + MARKER_SIZE + MARKER_GAP)


# ------------------------------------------------------------------ geometry tests
def route_segments(pixels: PixelMap) -> np.ndarray:
    """Every route polyline of ``pixels`` as an (s, 2, 2) array of segments."""
    lines = pixels.land + pixels.sea
    return np.concatenate([np.stack([c[:-1], c[1:]], axis=1) for c in lines])


def boxes_touch_segments(boxes: np.ndarray, segments: np.ndarray, clearance: float) -> np.ndarray:
    """For each box (m, 4), whether any segment comes within ``clearance`` of it (the box is
    widened by ``clearance``; Liang-Barsky clipping of each segment against it)."""
    if len(boxes) == 0 or len(segments) == 0:
        return np.zeros(len(boxes), dtype=bool)
    a, d = segments[:, 0], segments[:, 1] - segments[:, 0]  # (s, 2)
    t_lo = np.zeros((len(boxes), len(segments)))
    t_hi = np.ones((len(boxes), len(segments)))
    for axis in (0, 1):
        lo = boxes[:, axis, None] - clearance
        hi = boxes[:, axis + 2, None] + clearance
        p, dd = a[None, :, axis], d[None, :, axis]
        flat = dd == 0
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (lo - p) / np.where(flat, 1.0, dd)
            t2 = (hi - p) / np.where(flat, 1.0, dd)
        inside = (p >= lo) & (p <= hi)
        t_lo = np.maximum(t_lo, np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t1, t2)))
        t_hi = np.minimum(t_hi, np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t1, t2)))
    return np.asarray((t_lo <= t_hi).any(axis=1), dtype=bool)


def boxes_touch_boxes(boxes: np.ndarray, others: np.ndarray, gap: float = 0.0) -> np.ndarray:
    """For each box (m, 4), whether it comes within ``gap`` of any of ``others`` (k, 4)."""
    if len(boxes) == 0 or len(others) == 0:
        return np.zeros(len(boxes), dtype=bool)
    b, o = boxes[:, None, :], others[None, :, :]
    touch = ((b[..., 0] < o[..., 2] + gap) & (o[..., 0] < b[..., 2] + gap)
             & (b[..., 1] < o[..., 3] + gap) & (o[..., 1] < b[..., 3] + gap))
    return np.asarray(touch.any(axis=1), dtype=bool)


class _Raster:
    """Boxes and route lines rasterised at 1 px into a summed-area table, so that how much of
    them a candidate box covers takes four look-ups. Lines are drawn a pixel wider than asked and
    boxes rounded outwards, so the raster errs on the safe side of the exact tests above."""

    def __init__(self, rect, boxes: np.ndarray, segments: np.ndarray | None = None, clearance: float = 0.0) -> None:
        from PIL import Image, ImageDraw

        x, y, w, h = rect
        self.origin = np.array([x, y, x, y])
        img = Image.new("L", (int(np.ceil(w)) + 2, int(np.ceil(h)) + 2), 0)
        draw = ImageDraw.Draw(img)
        width = int(np.ceil(2 * clearance)) + 2
        for (ax, ay), (bx, by) in (segments if segments is not None else np.zeros((0, 2, 2))) - self.origin[:2]:
            draw.line([(ax, ay), (bx, by)], fill=1, width=width)
            for px, py in ((ax, ay), (bx, by)):  # round joints
                draw.ellipse((px - width / 2, py - width / 2, px + width / 2, py + width / 2), fill=1)
        for x0, y0, x1, y1 in np.asarray(boxes).reshape(-1, 4) - self.origin:
            draw.rectangle((np.floor(x0), np.floor(y0), np.ceil(x1), np.ceil(y1)), fill=1)
        grid = np.asarray(img, dtype=np.int64)
        self.sat = np.zeros((grid.shape[0] + 1, grid.shape[1] + 1), dtype=np.int64)
        self.sat[1:, 1:] = grid.cumsum(0).cumsum(1)

    def count(self, boxes: np.ndarray) -> np.ndarray:
        """For each box (m, 4), how many marked pixels it covers."""
        b = boxes - self.origin
        hi_x, hi_y = self.sat.shape[1] - 1, self.sat.shape[0] - 1
        x0 = np.clip(np.floor(b[:, 0]).astype(int), 0, hi_x)
        y0 = np.clip(np.floor(b[:, 1]).astype(int), 0, hi_y)
        x1 = np.clip(np.ceil(b[:, 2]).astype(int) + 1, 0, hi_x)
        y1 = np.clip(np.ceil(b[:, 3]).astype(int) + 1, 0, hi_y)
        s = self.sat
        return s[y1, x1] - s[y0, x1] - s[y1, x0] + s[y0, x0]


# ------------------------------------------------------------------ the pieces' places
def house_row(x: float, y: float, dy: float, houses: int) -> Box:
    """The box of a row of ``houses`` houses centred ``dy`` below a city at (x, y)."""
    half = (HOUSE_STEP * (houses - 1) + HOUSE_SIZE) / 2 + 1
    return x - half, y + dy - HOUSE_SIZE / 2 - 1, x + half, y + dy + HOUSE_SIZE / 2 + 1


def colonist_block(x: float, y: float, offset: np.ndarray, per_row: int) -> Box:
    """The box of a city's colonists: ``per_row`` land colonists from ``offset`` (the first one's
    centre, relative to the city at (x, y)), the sea row under them."""
    x0, y0 = x + offset[0], y + offset[1]
    return (x0 - SEA_RADIUS - 1, y0 - LAND_RADIUS - 1, x0 + COLONIST_STEP * (per_row - 1) + SEA_RADIUS + 1,
            y0 + _SEA_ROW + SEA_RADIUS + 1)


def _markers(pixels: PixelMap) -> np.ndarray:
    """Boxes of the route spots (with a colonist on them) and the cities."""
    out = [(x - SEA_RADIUS - 1, y - SEA_RADIUS - 1, x + SEA_RADIUS + 1, y + SEA_RADIUS + 1)
           for x, y in pixels.spots.values()]
    for c, (x, y) in enumerate(pixels.city):
        r = (ROMA_RADIUS if c == 0 else CITY_RADIUS) + 1
        out.append((x - r, y - r, x + r, y + r))
    return np.array(out, dtype=float)


def _roma_colonists(pixels: PixelMap, segments: np.ndarray, max_players: int, rect) -> np.ndarray:
    """Offset from Roma of its first land colonist: beside Roma on the right, else on the left,
    below or above, the first that covers no other city or route spot and the fewest routes."""
    width = COLONIST_STEP * (max_players - 1)
    reach = ROMA_RADIUS + 4 + SEA_RADIUS
    offsets = np.array([(reach, COLONIST_DY[0]), (-reach - width, COLONIST_DY[0]),
                        (-width / 2, ROMA_RADIUS + 4 + LAND_RADIUS),
                        (-width / 2, -ROMA_RADIUS - 4 - SEA_RADIUS - _SEA_ROW)])
    x, y = pixels.city[0]
    boxes = np.array([colonist_block(x, y, o, max_players) for o in offsets])
    covered = _Raster(rect, _markers(pixels)[np.arange(len(pixels.spots) + len(pixels.city)) != len(pixels.spots)])
    routes = _Raster(rect, np.zeros((0, 4)), segments, 0.0)
    cost = 1000.0 * covered.count(boxes) + routes.count(boxes) + np.arange(len(offsets))  # ties: in order
    return offsets[int(np.argmin(cost))]


def _colonist_places(pixels: PixelMap) -> np.ndarray:
    """Boxes labels avoid where they can: two colonists of each kind beside each city."""
    return np.array([colonist_block(x, y, np.array([COLONIST_DX, COLONIST_DY[0]]), 2) for x, y in pixels.city[1:]])


def _row_places(pixels: PixelMap, max_players: int) -> np.ndarray:
    """(num_cities, 2, 4): every possible place of a city's houses (above, below), up to one per
    player (Roma's: empty boxes)."""
    out = np.zeros((len(pixels.city), 2, 4))
    for c, (x, y) in enumerate(pixels.city):
        if c:
            out[c] = house_row(x, y, HOUSE_DY, max_players), house_row(x, y, -HOUSE_DY, max_players)
    return out


def _overlap_area(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each box (m, 4), its total area of overlap with ``others`` (k, 4)."""
    ix = np.minimum(boxes[:, None, 2], others[None, :, 2]) - np.maximum(boxes[:, None, 0], others[None, :, 0])
    iy = np.minimum(boxes[:, None, 3], others[None, :, 3]) - np.maximum(boxes[:, None, 1], others[None, :, 1])
    return (np.clip(ix, 0, None) * np.clip(iy, 0, None)).sum(axis=1)


# ------------------------------------------------------------------ candidates
def _inside(boxes: np.ndarray, rect: tuple[float, float, float, float]) -> np.ndarray:
    x, y, w, h = rect
    return ((boxes[:, 0] >= x + MAP_PAD) & (boxes[:, 1] >= y + MAP_PAD)
            & (boxes[:, 2] <= x + w - MAP_PAD) & (boxes[:, 3] <= y + h - MAP_PAD))


def _grid(anchor: np.ndarray, w: float, h: float, reach_x: float, reach_y: float, step: float) -> np.ndarray:
    """Candidate boxes (w x h) whose centres lie on a grid around ``anchor``."""
    dx, dy = np.meshgrid(np.arange(-reach_x, reach_x + 1e-9, step), np.arange(-reach_y, reach_y + 1e-9, step))
    cx, cy = anchor[0] + dx.ravel(), anchor[1] + dy.ravel()
    return np.column_stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2])


def _gap_to(boxes: np.ndarray, point: np.ndarray) -> np.ndarray:
    """Distance from ``point`` to the nearest point of each box."""
    gx = np.maximum(np.maximum(boxes[:, 0] - point[0], point[0] - boxes[:, 2]), 0)
    gy = np.maximum(np.maximum(boxes[:, 1] - point[1], point[1] - boxes[:, 3]), 0)
    return np.hypot(gx, gy)


@dataclass
class _Candidates:
    """A city's candidates: name boxes, the row of houses that goes with each, and their costs."""

    names: np.ndarray  # (m, 4)
    rows: np.ndarray  # (m, 4)
    dy: np.ndarray  # (m,) the row's place (HOUSE_DY above, -HOUSE_DY below)
    cost: np.ndarray  # (m,); _BLOCKED or more: not allowed


class _Scene:
    """What every candidate is tested against: the map area, the routes, the markers and Roma's
    colonists (hard), the other pieces' possible places (soft)."""

    def __init__(self, pixels: PixelMap, segments: np.ndarray, roma_block: Box, max_players: int, rect,
                 legend: Box | None) -> None:
        self.pixels = pixels
        self.rect = rect
        self.roma_block = np.array(roma_block)
        self.hard = np.vstack([_markers(pixels), self.roma_block] + ([np.array(legend)] if legend else []))
        self.blocked = _Raster(rect, self.hard, segments, ROUTE_CLEARANCE)
        self.colonists = _Raster(rect, _colonist_places(pixels))
        self.near_routes = _Raster(rect, np.zeros((0, 4)), segments, ROUTE_COMFORT)
        self.rows = _row_places(pixels, max_players)
        # what a row of houses should not cover: route spots (with a colonist), cities, Roma's colonists
        spots = np.array(list(pixels.spots.values()))
        self.row_obstacles = np.vstack([np.column_stack([spots - SEA_RADIUS, spots + SEA_RADIUS]),
                                        _markers(pixels)[len(spots):], self.roma_block])

    def allowed(self, boxes: np.ndarray) -> np.ndarray:
        return _inside(boxes, self.rect) & (self.blocked.count(boxes) == 0)

    def soft_cost(self, boxes: np.ndarray, own: int) -> np.ndarray:
        """How much of other cities' house places, any city's colonist places and the routes'
        surroundings ``boxes`` cover."""
        rows = np.delete(self.rows, own, axis=0).reshape(-1, 4)
        return (_PLACE_COST * (self.colonists.count(boxes) + _overlap_area(boxes, rows))
                + _NEAR_ROUTE_COST * self.near_routes.count(boxes))


def _city_candidates(scene: _Scene, c: int, w: float) -> _Candidates:
    """City ``c``'s name candidates, each with its row of houses above or below the city."""
    pixels = scene.pixels
    anchor = pixels.city[c]
    names = _grid(anchor, w, NAME_HEIGHT, w / 2 + 46, 46, 2.0)
    ok = scene.allowed(names)
    if ok.any():
        names = names[ok]
    centre = (names[:, :2] + names[:, 2:]) / 2
    rel = centre - anchor
    cost = _gap_to(names, anchor)
    cost += np.where(rel[:, 1] > NAME_HEIGHT / 2, 0.0, np.where(rel[:, 1] < -NAME_HEIGHT / 2, 8.0, 4.0))
    cost += 0.15 * np.abs(rel[:, 0]) * (rel[:, 1] > 0)  # below: centred under the city reads best
    others = np.delete(pixels.city, c, axis=0)
    nearest_other = np.sqrt(((centre[:, None, :] - others[None]) ** 2).sum(-1)).min(axis=1)
    cost += 30.0 * (nearest_other < np.hypot(*rel.T))
    cost += scene.soft_cost(names, c) + (0.0 if ok.any() else _BLOCKED)
    if c == 0:  # Roma has no houses
        return _Candidates(names, np.tile([np.nan] * 4, (len(names), 1)), np.zeros(len(names)), cost)
    parts = []
    for dy, extra in ((HOUSE_DY, 0.0), (-HOUSE_DY, _HOUSES_BELOW)):
        row = np.array(house_row(float(anchor[0]), float(anchor[1]), dy, HARD_HOUSES), dtype=float)
        others = np.delete(scene.row_obstacles, len(pixels.spots) + c, axis=0)  # not its own city
        on_spot = boxes_touch_boxes(row[None], others)[0]
        row_cost = extra + _HOUSES_ON_SPOT * on_spot + _BLOCKED * boxes_touch_boxes(names, row[None], LABEL_GAP)
        parts.append((np.tile(row, (len(names), 1)), np.full(len(names), dy), cost + row_cost))
    return _Candidates(np.vstack([names, names]), np.vstack([p[0] for p in parts]),
                       np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))


def _place_cities(cands: list[_Candidates]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each city's name box and row of houses: the most constrained city first, each taking its
    cheapest candidate whose name and row keep clear of the names and rows already taken.
    Returns the name boxes, the rows (NaN for Roma) and the rows' places."""
    cost = [c.cost.copy() for c in cands]
    names, rows = np.zeros((len(cands), 4)), np.full((len(cands), 4), np.nan)
    dy = np.zeros(len(cands))
    todo = set(range(len(cands)))
    while todo:
        c = min(todo, key=lambda i: (int((cost[i] < _BLOCKED).sum()), i))
        k = int(np.argmin(cost[c]))
        names[c], rows[c], dy[c] = cands[c].names[k], cands[c].rows[k], cands[c].dy[k]
        todo.remove(c)
        taken = names[c][None] if np.isnan(rows[c]).any() else np.vstack([names[c], rows[c]])
        for i in todo:
            clash = boxes_touch_boxes(cands[i].names, taken, LABEL_GAP)
            if not np.isnan(cands[i].rows).any():
                clash |= boxes_touch_boxes(cands[i].rows, names[c][None], LABEL_GAP)
            cost[i] = cost[i] + _BLOCKED * clash
    return names, rows, dy


def _place_province(m, q: int, scene: _Scene, placed: np.ndarray) -> np.ndarray:
    """Province ``q``'s box: the allowed candidate nearest the centre of its cities, preferring
    spots nearer its own cities than any other province's."""
    pixels = scene.pixels
    members = [c for c in range(m.num_cities) if m.city_province[c] == q]
    anchor = pixels.city[members].mean(axis=0)
    w = MARKER_SIZE + MARKER_GAP + text_width(province_text(m, q), "italic", LABEL_SIZE) + 2
    boxes = _grid(anchor, w, MARKER_SIZE + 1, 160, 120, 2.0)
    ok = scene.allowed(boxes)
    ok[ok] = ~boxes_touch_boxes(boxes[ok], placed, LABEL_GAP)
    penalty = np.where(ok, 0.0, _BLOCKED)
    if ok.any():
        boxes, penalty = boxes[ok], penalty[ok]
    centre = (boxes[:, :2] + boxes[:, 2:]) / 2
    dist = np.sqrt(((centre[:, None, :] - pixels.city[None, 1:]) ** 2).sum(-1))
    own = np.array([m.city_province[c] == q for c in range(1, m.num_cities)])
    cost = np.hypot(*(centre - anchor).T) + 40.0 * (dist[:, own].min(axis=1) > dist[:, ~own].min(axis=1))
    cost += scene.soft_cost(boxes, 0) + penalty
    return boxes[int(np.argmin(cost))]


@cache
def map_labels(map_name: str) -> MapLabels:
    """The placement of ``map_name``'s labels and pieces (computed once per map)."""
    from ...game import get_game

    game = get_game(map_name)
    m = game.map
    rect = LAYOUTS[map_name].map_rect
    pixels = to_pixels(map_geometry(game), rect, pad=MAP_PAD + 22)
    segments = route_segments(pixels)
    max_players = max(m.players)
    colonist_at = np.tile([COLONIST_DX, COLONIST_DY[0]], (m.num_cities, 1))
    colonist_at[0] = _roma_colonists(pixels, segments, max_players, rect)
    lx, ly, lw, lh = LAYOUTS[map_name].legend_rect
    inside = rect[0] <= lx and lx + lw <= rect[0] + rect[2] and rect[1] <= ly and ly + lh <= rect[1] + rect[3]
    legend: Box | None = (lx, ly, lx + lw, ly + lh) if inside else None  # a legend on the map is an obstacle
    roma_x, roma_y = (float(v) for v in pixels.city[0])
    scene = _Scene(pixels, segments, colonist_block(roma_x, roma_y, colonist_at[0], max_players), max_players, rect,
                   legend)
    widths = [text_width(name, "regular", LABEL_SIZE) + 2 for name in m.city_names]
    city_boxes, rows, house_dy = _place_cities([_city_candidates(scene, c, widths[c]) for c in range(m.num_cities)])
    placed = np.vstack([city_boxes, rows[1:]])
    for q in range(len(m.province_names)):
        placed = np.vstack([placed, _place_province(m, q, scene, placed)[None]])
    return MapLabels(pixels, city_boxes, placed[2 * m.num_cities - 1:], np.vstack([scene.hard, rows[1:]]),
                     segments, house_dy, colonist_at, None if legend is None else np.array(legend))


def conflicts(labels: MapLabels) -> list[str]:
    """What the labels touch: routes, cities, route spots, Roma's colonists, rows of houses, the
    legend, each other, or the map's edge; and whether a legend drawn on the map touches a route
    (empty when the placement is clean)."""
    names = [f"city {i}" for i in range(len(labels.city_boxes))] + \
            [f"province {q}" for q in range(len(labels.province_boxes))]
    boxes = np.vstack([labels.city_boxes, labels.province_boxes])
    out = [f"{names[i]} touches a route" for i in np.flatnonzero(
        boxes_touch_segments(boxes, labels.segments, ROUTE_CLEARANCE))]
    out += [f"{names[i]} touches a city, a route spot or a piece's place" for i in np.flatnonzero(
        boxes_touch_boxes(boxes, labels.obstacles))]
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            if boxes_touch_boxes(boxes[i:i + 1], boxes[j:j + 1], LABEL_GAP)[0]:
                out.append(f"{names[i]} touches {names[j]}")
    out += [f"{names[i]} leaves the map" for i in np.flatnonzero(~_inside(boxes, labels.pixels.rect))]
    if labels.legend is not None and boxes_touch_segments(labels.legend[None], labels.segments, ROUTE_CLEARANCE)[0]:
        out.append("the legend touches a route")
    return out
