"""Draw a game state as a picture (matplotlib), e.g. for videos of games or ``render_mode="rgb_array"``.

:func:`render_rgb` returns an ``(H, W, 3)`` uint8 array whose shape depends only
on ``dpi`` (1280x800 at the default 80), never on the map, the player count or
the moment of the game, so the frames of any game stack into one video.
:func:`draw_state` draws onto a :class:`matplotlib.figure.Figure` you own.

The picture shows the map (north up; cities coloured by their good, land routes
brown and solid, sea routes blue and dashed, provinces with their bonus marker,
houses as squares and colonists as circles (land) or triangles (sea) in player
colours), a panel per player, the card display with prices, and a title line.

Only the object-oriented matplotlib API is used (no pyplot): no global figure
state and no GUI backend, so it works headless and in several threads. The
package does not import this module, so matplotlib is needed only to draw.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch, Rectangle

from . import engine as E
from .board import display_price
from .data import GOODS

PLAYER_COLOURS: tuple[str, ...] = ("#e41a1c", "#1f5fd6", "#1a9e3a", "#ff8c00", "#9b30c8")
"""Colour of players 0..4: red, blue, green, orange, purple."""

GOOD_COLOURS: tuple[str, ...] = ("#b8612f", "#f3d34a", "#9aa3ab", "#8e2a4f", "#a8dcf0")
"""Colour of each good, in ``GOODS`` order: brick, food, tools, wine, cloth."""

GOOD_LETTERS: tuple[str, ...] = tuple(g[0].upper() for g in GOODS)

FIGSIZE: tuple[float, float] = (16.0, 10.0)
"""Figure size in inches: 1280x800 pixels at the default dpi of 80."""

_LAND_COLOUR = "#8b5a2b"
_SEA_COLOUR = "#3b7dd8"
_ROMA_COLOUR = "#ffd700"
_FAINT = "#6f6f6f"
_COIN_FACE, _COIN_EDGE = "#fff3b8", "#8a6d00"
_DARK_GOODS = (0, 3)  # brick and wine need white letters

# Both board scans are about 4560x3200 px and maps.json normalises their
# coordinates to [0, 1] on each axis, so x is stretched back to keep the shapes.
_BOARD_ASPECT = 1.425
# The Italia board lays Italy on its side to fit a landscape board; turning it
# by this angle puts north up (least-squares fit of 19 cities to their real
# longitude/latitude). The Imperium board already has north up.
_NORTH_UP_TURN_DEG = {"italia": -49.0}

# Figure-fraction rectangles, fixed so that all frames look alike. Inside the
# panel and the display, data units are pixels at 80 dpi (scaled at other dpi).
_MAP_RECT = (0.004, 0.19, 0.68, 0.765)
_DISPLAY_RECT = (0.004, 0.004, 0.68, 0.182)
_PANEL_RECT = (0.689, 0.004, 0.307, 0.95)
_REF_DPI = 80
_BLOCK_H = 125.0  # height of one player's block in the panel; five and the legend fit


@dataclass(frozen=True)
class _Geometry:
    """Plot coordinates of one map (north up, equal scale on both axes)."""

    city: np.ndarray  # (num_cities, 2)
    route_point: dict[int, tuple[float, float]]  # route id -> where its colonist stands
    land_lines: list[np.ndarray]
    sea_lines: list[np.ndarray]
    lo: np.ndarray  # bounding box of cities and routes
    hi: np.ndarray


# Caches keyed by map name (and scale or dpi): the maps never change, and
# recomputing per frame would cost more than the drawing itself.
_GEOMETRY: dict[str, _Geometry] = {}
_LABELS: dict[tuple[str, float], list[tuple[float, float]]] = {}
_BACKGROUND: dict[tuple[str, int], np.ndarray] = {}


def _geometry(game) -> _Geometry:
    m = game.map
    geo = _GEOMETRY.get(m.name)
    if geo is not None:
        return geo
    turn = math.radians(_NORTH_UP_TURN_DEG.get(m.name, 0.0))
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])

    def to_plot(xy) -> np.ndarray:
        # Board y points down (image rows); the plot's y points north.
        p = np.asarray(xy, dtype=float).reshape(-1, 2) * np.array([_BOARD_ASPECT, -1.0])
        return p @ rot.T

    city = to_plot(m.city_xy)
    point: dict[int, tuple[float, float]] = {}
    land_lines: list[np.ndarray] = []
    sea_lines: list[np.ndarray] = []
    t = np.linspace(0.0, 1.0, 17)[:, None]
    for rid, a, b in game.routes:
        spots = m.land_route_xy if rid < E.NL else m.sea_route_xy
        j = rid if rid < E.NL else rid - E.NL
        pa, pb = city[a], city[b]
        mid = to_plot(spots[j])[0] if j < len(spots) else (pa + pb) / 2
        # Routes on the board bend around coasts and mountains; a quadratic
        # Bezier through the colonist's spot keeps that spot on the drawn route.
        ctrl = 2 * mid - (pa + pb) / 2
        curve = (1 - t) ** 2 * pa + 2 * t * (1 - t) * ctrl + t ** 2 * pb
        (land_lines if rid < E.NL else sea_lines).append(curve)
        point[rid] = (float(mid[0]), float(mid[1]))
    every = np.vstack([city, *land_lines, *sea_lines])
    geo = _Geometry(city, point, land_lines, sea_lines, every.min(axis=0), every.max(axis=0))
    _GEOMETRY[m.name] = geo
    return geo


def _province_text(m, q: int) -> str:
    return f"{m.province_numerals[q]} {m.province_names[q]}"


def _text_width_pt(text: str, size: float) -> float:
    return 0.58 * size * len(text)  # DejaVu Sans averages a bit over half an em per character


def _province_labels(game, geo: _Geometry, pt: float, xlim, ylim) -> list[tuple[float, float]]:
    """Left-centre anchor of each province label, near its cities where it hides least.

    Fixed per map and scale, so labels never jump between frames. Greedy: each
    label takes the spot near its cities' centre that overlaps least with city
    markers, names, house and colonist places, route spots, route lines and the
    labels placed before it."""
    m = game.map
    key = (m.name, round(pt, 9))
    if key in _LABELS:
        return _LABELS[key]
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
        w = (12 + _text_width_pt(_province_text(m, q), 7.5)) * pt
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
    _LABELS[key] = out
    return out


def _card_price(state, j: int, cid: int) -> tuple[list[int], int]:
    """Goods (one good index per unit) and the number of '?' to buy display position ``j``."""
    cost, n_any = display_price(state.game.tables, j, cid)
    return [k for k in range(E.NG) for _ in range(int(cost[k]))], n_any


def _title(state) -> str:
    head = (f"Concordia — {state.game.map.name.capitalize()}, {state.num_players} players, "
            f"turn {int(state.field('turn'))}")
    if state.is_terminal():
        w = state.winner()
        return f"{head}   ·   GAME OVER: player {w} wins with {state.scores()[w]} VP"
    return f"{head}   ·   player {state.current_player} to decide: {state.phase_name}"


# Matplotlib draws a Line2D far faster than a scatter or a Text, so uniform
# markers and the goods' initials (mathtext markers) go through ax.plot.
def _marks(ax, xs, ys, marker: str, size: float, face, edge="black", lw: float = 0.8, z: float = 2) -> None:
    """Markers of one colour; ``size`` is an area in pt² as for scatter."""
    ax.plot(xs, ys, ls="none", marker=marker, ms=math.sqrt(size), mfc=face, mec=edge, mew=lw, zorder=z)


def _letters(ax, xs, ys, goods, size: float, z: float) -> None:
    """Initials of ``goods`` (good indices) centred on (xs, ys)."""
    xs, ys, goods = np.asarray(xs, float), np.asarray(ys, float), np.asarray(goods)
    for k in range(E.NG):
        sel = goods == k
        if sel.any():
            colour = "white" if k in _DARK_GOODS else "black"
            _marks(ax, xs[sel], ys[sel], f"$\\mathbf{{{GOOD_LETTERS[k]}}}$", size, colour, colour, 0, z)


def _tokens(ax, xs, ys, goods, size: float, letter_size: float, marker: str = "s", z: float = 2) -> None:
    """Goods as squares (or ``marker``) in their colours with their initials."""
    if len(xs):
        ax.scatter(xs, ys, s=size, marker=marker, c=[GOOD_COLOURS[k] for k in goods], edgecolors="black",
                   linewidths=0.8, zorder=z)
        _letters(ax, xs, ys, goods, letter_size, z + 0.5)


# ------------------------------------------------------------------ map
def _draw_map(state, ax, static: bool, dynamic: bool) -> None:  # noqa: C901
    g, m = state.game, state.game.map
    geo = _geometry(g)
    n = state.num_players
    ax.set_axis_off()

    # Equal scale, with limits fixed here rather than at draw time so that
    # offsets in points can be turned into data units up front.
    fig_w, fig_h = ax.figure.get_size_inches()
    box_w, box_h = _MAP_RECT[2] * fig_w, _MAP_RECT[3] * fig_h
    span = geo.hi - geo.lo
    pad = 0.025 * span.max()
    scale = min(box_w / (span[0] + 2 * pad), box_h / (span[1] + 2 * pad))  # inches per data unit
    centre = (geo.lo + geo.hi) / 2
    xlim = (centre[0] - box_w / scale / 2, centre[0] + box_w / scale / 2)
    ylim = (centre[1] - box_h / scale / 2, centre[1] + box_h / scale / 2)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    pt = 1.0 / 72.0 / scale  # one typographic point in data units
    labels = _province_labels(g, geo, pt, xlim, ylim)
    xy = geo.city

    if static:
        ax.add_collection(LineCollection(geo.land_lines, colors=_LAND_COLOUR, linewidths=1.7, alpha=0.8,
                                         zorder=1))
        ax.add_collection(LineCollection(geo.sea_lines, colors=_SEA_COLOUR, linewidths=1.4, alpha=0.8,
                                         linestyles=(0, (4, 2.5)), zorder=1))
        spots = np.array(list(geo.route_point.values()))
        _marks(ax, spots[:, 0], spots[:, 1], "o", 5, "#777777", "none", 0, 2)
        for q, (lx, ly) in enumerate(labels):
            ax.text(lx + 12 * pt, ly, _province_text(m, q), fontsize=7.5, color=_FAINT, style="italic",
                    ha="left", va="center", zorder=3)
        _marks(ax, xy[0, 0], xy[0, 1], "*", 460, _ROMA_COLOUR, "#6b5200", 1.0, 4)
        for c in range(m.num_cities):
            ax.text(xy[c, 0], xy[c, 1] - 7.5 * pt, m.city_names[c], fontsize=7, ha="center", va="top",
                    color="#111111", zorder=5)
    if not dynamic:
        return

    # Provinces' bonus markers: good side up shows the good, coins side up a coin.
    active, marker = state.field("marker_active"), state.field("marker_good")
    good_side: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
    coin_side: tuple[list[Any], list[Any]] = ([], [])
    for q, (lx, ly) in enumerate(labels):
        if int(marker[q]) < 0:
            continue
        if active[q]:
            good_side[0].append(lx + 4.5 * pt)
            good_side[1].append(ly)
            good_side[2].append(int(marker[q]))
        else:
            coin_side[0].append(lx + 4.5 * pt)
            coin_side[1].append(ly)
    _tokens(ax, *good_side, 75, 22, z=3)
    if coin_side[0]:
        _marks(ax, *coin_side, "o", 75, _COIN_FACE, _COIN_EDGE, 1.0, 3)
        _marks(ax, *coin_side, "$\\$$", 22, _COIN_EDGE, _COIN_EDGE, 0, 3.5)

    # Cities, filled with their good's colour and its initial (Roma's star is static).
    city_good = state.field("city_good")[:m.num_cities]
    has = np.flatnonzero(city_good >= 0)
    _tokens(ax, xy[has, 0], xy[has, 1], city_good[has], 150, 30, marker="o", z=4)

    # Houses: a row of small squares above the city.
    houses = state.field("houses")
    hx, hy, hc = [], [], []
    for c in range(m.num_cities):
        owners = [p for p in range(n) if (int(houses[c]) >> p) & 1]
        for k, p in enumerate(owners):
            hx.append(xy[c, 0] + (k - (len(owners) - 1) / 2) * 7.2 * pt)
            hy.append(xy[c, 1] + 10.5 * pt)
            hc.append(PLAYER_COLOURS[p])
    if hx:
        ax.scatter(hx, hy, s=40, marker="s", c=hc, edgecolors="black", linewidths=0.7, zorder=6)

    # Colonists: on a route at its spot; in a city to its right, land row above sea row.
    col = state.field("colonist")
    in_city: dict[tuple[int, bool], list[int]] = {}
    pts: dict[bool, tuple[list, list, list]] = {True: ([], [], []), False: ([], [], [])}
    for p in range(n):
        for i in range(E.NCOL):
            loc, land = int(col[p, i]), i < 3
            if loc < 0:
                continue
            if loc < E.NC:
                in_city.setdefault((loc, land), []).append(p)
            elif loc - E.NC in geo.route_point:
                x, y = geo.route_point[loc - E.NC]
                pts[land][0].append(x)
                pts[land][1].append(y)
                pts[land][2].append(PLAYER_COLOURS[p])
    for (c, land), owners in in_city.items():
        for k, p in enumerate(owners):
            pts[land][0].append(xy[c, 0] + (12 + 8.5 * k) * pt)
            pts[land][1].append(xy[c, 1] + (4 if land else -4.5) * pt)
            pts[land][2].append(PLAYER_COLOURS[p])
    for land, (xs, ys, cs) in pts.items():
        if xs:
            ax.scatter(xs, ys, s=56 if land else 72, marker="o" if land else "^", c=cs,
                       edgecolors="black", linewidths=0.8, zorder=7)


# ------------------------------------------------------------------ players
def _pixel_axes(fig, rect):
    """Axes whose data units are pixels at 80 dpi, for hand-made layouts."""
    ax = fig.add_axes(rect)
    ax.set_xlim(0, rect[2] * FIGSIZE[0] * _REF_DPI)
    ax.set_ylim(0, rect[3] * FIGSIZE[1] * _REF_DPI)
    ax.set_axis_off()
    return ax


def _draw_players(state, ax, static: bool, dynamic: bool) -> None:
    width, height = ax.get_xlim()[1], ax.get_ylim()[1]
    if static:
        _draw_legend(ax, height - 4 - 5 * _BLOCK_H - 6)
    if not dynamic:
        return
    n = state.num_players
    coins, goods = state.field("coins"), state.field("goods")
    houses_left, col, hand = state.field("houses_left"), state.field("colonist"), state.field("hand")
    pm, conc = int(state.field("pm")), int(state.field("concordia"))
    current = state.current_player
    scores = state.scores()
    slots = state.game.components.storehouse_slots
    rank = {p: r for r, p in enumerate(state.ranking())} if state.is_terminal() else {}

    tok_x, tok_y, tok_g = [], [], []
    for p in range(n):
        top = height - 4 - p * _BLOCK_H
        is_current = p == current
        ax.add_patch(FancyBboxPatch((4, top - _BLOCK_H + 5), width - 8, _BLOCK_H - 8,
                                    boxstyle="round,pad=0,rounding_size=8",
                                    fc="#fff6cc" if is_current else "#f3f3f3",
                                    ec=PLAYER_COLOURS[p] if is_current else "#c8c8c8",
                                    lw=3 if is_current else 0.8, zorder=0))
        y1 = top - 24
        ax.add_patch(Rectangle((14, y1 - 11), 26, 22, fc=PLAYER_COLOURS[p], ec="black", lw=0.8, zorder=1))
        label = f"Player {p}"
        if is_current:
            label += "  ◀ to decide"
        elif rank:
            label += "  ★ winner" if rank[p] == 0 else f"  #{rank[p] + 1}"
        ax.text(50, y1, label, fontsize=11, fontweight="bold", va="center")
        bx = width - 14
        for text, colour, holder in (("Concordia", "#4f79b3", conc), ("Praefectus Magnus", "#b8901a", pm)):
            if p == holder:
                ax.text(bx, y1, text, fontsize=7.5, ha="right", va="center", color="white", fontweight="bold",
                        bbox=dict(boxstyle="round,pad=0.3", fc=colour, ec="none"))
                bx -= 14 + _text_width_pt(text, 7.5) * _REF_DPI / 72

        y2 = top - 60
        stored_l = sum(1 for i in range(3) if col[p, i] < 0)
        stored_s = sum(1 for i in range(3, 6) if col[p, i] < 0)
        used = int(goods[p].sum()) + stored_l + stored_s
        ax.text(14, y2, f"{scores[p]} VP", fontsize=15, fontweight="bold", va="center")
        ax.text(92, y2, f"{int(coins[p])} sestertii\n{int(hand[p].sum())} cards in hand", fontsize=9.5,
                va="center", linespacing=1.35)
        ax.text(230, y2, f"{int(houses_left[p])} houses left\nstorehouse {used}/{slots}"
                + (" (full)" if used >= slots else ""), fontsize=9.5, va="center", linespacing=1.35)

        # Storehouse contents: goods as coloured squares with counts, then stored colonists.
        y3 = top - 98
        for k in range(E.NG):
            x = 14 + 46 * k
            tok_x.append(x + 9)
            tok_y.append(y3)
            tok_g.append(k)
            v = int(goods[p, k])
            ax.text(x + 22, y3, str(v), fontsize=10.5, va="center", fontweight="bold" if v else "normal",
                    color="black" if v else "#a0a0a0")
        x = 14 + 46 * E.NG
        _marks(ax, [x + 14], [y3], "o", 60, PLAYER_COLOURS[p])
        _marks(ax, [x + 68], [y3 + 1], "^", 80, PLAYER_COLOURS[p])
        ax.text(x + 24, y3, f"×{stored_l}", fontsize=10, va="center")
        ax.text(x + 78, y3, f"×{stored_s}", fontsize=10, va="center")
    _tokens(ax, tok_x, tok_y, tok_g, 170, 45, z=1)


def _draw_legend(ax, y: float) -> None:
    """Key to the symbols, below the player blocks."""
    ax.text(14, y - 10, "Goods:", fontsize=8.5, va="center", color="#333333")
    xs = [62 + 64 * k for k in range(E.NG)]
    for x, name in zip(xs, GOODS):
        ax.text(x + 11, y - 10, name, fontsize=8.5, va="center")
    _tokens(ax, xs, [y - 10] * E.NG, list(range(E.NG)), 95, 18, marker="o")
    y2 = y - 32
    ax.plot([14, 40], [y2, y2], color=_LAND_COLOUR, lw=1.7)
    ax.text(45, y2, "land route", fontsize=8.5, va="center")
    ax.plot([112, 138], [y2, y2], color=_SEA_COLOUR, lw=1.4, ls=(0, (4, 2.5)))
    ax.text(143, y2, "sea route", fontsize=8.5, va="center")
    _marks(ax, [210], [y2], "o", 56, "white")
    _marks(ax, [226], [y2 + 1], "^", 72, "white")
    ax.text(236, y2, "land/sea colonist", fontsize=8.5, va="center")
    _marks(ax, [348], [y2], "s", 40, "white", lw=0.7)
    ax.text(356, y2, "house", fontsize=8.5, va="center")
    y3 = y - 54
    ax.text(14, y3, "Province bonus:", fontsize=8.5, va="center", color="#333333")
    _tokens(ax, [112], [y3], [3], 75, 22)
    ax.text(122, y3, "good side up", fontsize=8.5, va="center")
    _marks(ax, [214], [y3], "o", 75, _COIN_FACE, _COIN_EDGE, 1.0)
    _marks(ax, [214], [y3], "$\\$$", 22, _COIN_EDGE, _COIN_EDGE, 0, 3)
    ax.text(224, y3, "coins side up (taken)", fontsize=8.5, va="center")


# ------------------------------------------------------------------ display
def _draw_display(state, ax, static: bool, dynamic: bool) -> None:
    g = state.game
    width, height = ax.get_xlim()[1], ax.get_ylim()[1]
    gap = 6.0
    w = (width - 8 - gap * (E.NDISP - 1)) / E.NDISP
    if static:
        ax.text(4, height - 9, "Card display  (price = card + position; ? = any good)", fontsize=9.5,
                fontweight="bold", va="center")
    if not dynamic:
        return
    display = state.field("display")
    left = int(state.field("deck_len")) - int(state.field("deck_pos"))
    ax.text(width - 4, height - 9, f"deck: {left} cards left", fontsize=9.5, fontweight="bold",
            ha="right", va="center")
    tok_x, tok_g, any_x = [], [], []
    for j in range(E.NDISP):
        x0 = 4 + j * (w + gap)
        cid = int(display[j])
        empty = cid < 0
        ax.add_patch(FancyBboxPatch((x0, 4), w, height - 26, boxstyle="round,pad=0,rounding_size=6",
                                    fc="white" if empty else "#f7f1e1", ec="#a0a0a0" if empty else "#7a6a4a",
                                    lw=0.8 if empty else 1.2, ls="--" if empty else "-", zorder=0))
        if empty:
            ax.text(x0 + w / 2, 60, f"{j + 1}: empty", fontsize=9, color="#a0a0a0", ha="center", va="center")
            continue
        ax.text(x0 + 7, height - 33, str(j + 1), fontsize=8, color=_FAINT, va="center")
        ctype = g.components.card_types[int(g.tables[E.T_CARD_TYPE + cid])]
        ax.text(x0 + w / 2, 92, ctype.name.replace(" (", "\n("), fontsize=10, fontweight="bold",
                ha="center", va="center", linespacing=1.05)
        ax.text(x0 + w / 2, 60, ctype.god, fontsize=8, style="italic", color="#6b5b3a",
                ha="center", va="center")
        units, n_any = _card_price(state, j, cid)
        count = len(units) + n_any
        step = min(21.0, (w - 12) / max(count, 1))
        sx = x0 + w / 2 - step * (count - 1) / 2
        tok_x += [sx + i * step for i in range(len(units))]
        tok_g += units
        any_x += [sx + (len(units) + i) * step for i in range(n_any)]
    _tokens(ax, tok_x, [26] * len(tok_x), tok_g, 190, 50)
    if any_x:
        _marks(ax, any_x, [26] * len(any_x), "s", 190, "white", lw=0.7)
        _marks(ax, any_x, [26] * len(any_x), "$\\mathbf{?}$", 50, "black", "black", 0, 3)


# ------------------------------------------------------------------ API
def _draw(state, fig: Figure, static: bool, dynamic: bool) -> None:
    """The static layer (same for every state of a map) and/or the dynamic one."""
    fig.clear()
    if dynamic:
        fig.text(0.006, 0.978, _title(state), fontsize=14, fontweight="bold", va="center")
    _draw_map(state, fig.add_axes(_MAP_RECT), static, dynamic)
    _draw_display(state, _pixel_axes(fig, _DISPLAY_RECT), static, dynamic)
    _draw_players(state, _pixel_axes(fig, _PANEL_RECT), static, dynamic)


def draw_state(state, fig: Figure) -> None:
    """Draw ``state`` (a :class:`~concordia_env.state.GameState`) onto ``fig``, clearing it first.

    The layout is in figure fractions, but fonts and markers are sized for
    :data:`FIGSIZE` (16x10 inches); other sizes work but look crowded or sparse."""
    fig.set_facecolor("white")
    _draw(state, fig, static=True, dynamic=True)


def _rgba(state, dpi: int, static: bool, dynamic: bool, facecolor) -> np.ndarray:
    fig = Figure(figsize=FIGSIZE, dpi=dpi, facecolor=facecolor)
    canvas = FigureCanvasAgg(fig)
    _draw(state, fig, static, dynamic)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())


def render_rgb(state, dpi: int = 80) -> np.ndarray:
    """``state`` as an ``(H, W, 3)`` uint8 RGB array (800x1280 at the default ``dpi``).

    The shape depends only on ``dpi``, never on the state, so all frames of any
    game stack into one video. Each call draws on its own figure, so calls may
    run in several threads."""
    # The static layer (routes, names, legend) is most of the drawing work and
    # never changes on a map, so it is drawn once per map and dpi and only the
    # state is drawn on top, on a transparent figure (Agg's RGBA is straight alpha).
    key = (state.game.map.name, int(dpi))
    background = _BACKGROUND.get(key)
    if background is None:
        background = _rgba(state, dpi, True, False, "white")[..., :3].astype(np.uint16)
        _BACKGROUND[key] = background
    top = _rgba(state, dpi, False, True, (1.0, 1.0, 1.0, 0.0)).astype(np.uint16)
    alpha = top[..., 3:]
    out = (top[..., :3] * alpha + background * (255 - alpha) + 127) // 255
    return out.astype(np.uint8)
