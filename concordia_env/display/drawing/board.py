"""The map: its static layer (drawn once per map and size) and the pieces of a state on top.

Static: the map's ground, the routes (land brown and solid, sea blue and dashed), the spots
where colonists stand on them, Roma's star, the city and province names and the legend. Per
state: the cities' goods (drawn per state because the setup deals them), the provinces' bonus
markers, the houses (squares in the owner's colour in a row above the city, or below it) and
the colonists (circles on land, triangles at sea; on their route's spot, or beside their city,
land row above sea row). Where names, rows of houses and Roma's colonists go is decided once
per map by :mod:`.labels`.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from ... import engine as E
from ...data import GOODS
from .canvas import Canvas, blend, coin_sprite, good_sprite, rgb, sprite, text_width
from .geometry import province_text
from .labels import MapLabels, map_labels
from .style import (
    CITY_RADIUS,
    COLONIST_DY,
    COLONIST_STEP,
    FAINT,
    HOUSE_SIZE,
    HOUSE_STEP,
    INK,
    LABEL_SIZE,
    LAND_COLOUR,
    LAND_RADIUS,
    LAND_WIDTH,
    LAYOUTS,
    MAP_EDGE,
    MAP_FILL,
    MARKER_SIZE,
    PLAYER_COLOURS,
    ROMA_COLOUR,
    ROMA_EDGE,
    ROMA_RADIUS,
    SEA_COLOUR,
    SEA_DASH,
    SEA_RADIUS,
    SEA_WIDTH,
)

_ROUTE_SS = 3  # the routes are drawn this many times larger, then reduced (anti-aliasing)


def _dashes(points: np.ndarray, on: float, off: float) -> list[np.ndarray]:
    """The dashes of a dashed polyline: pieces ``on`` long with ``off`` between them."""
    seg = np.diff(points, axis=0)
    length = np.concatenate([[0.0], np.cumsum(np.hypot(seg[:, 0], seg[:, 1]))])
    total = float(length[-1])
    n = max(1, int(round((total + off) / (on + off))))
    period = (total + off) / n  # stretch the pattern so the line starts and ends with a dash
    dash = period * on / (on + off)
    out = []
    for i in range(n):
        s = np.linspace(i * period, min(i * period + dash, total), 6)
        out.append(np.column_stack([np.interp(s, length, points[:, 0]), np.interp(s, length, points[:, 1])]))
    return out


def _draw_routes(image: Image.Image, labels: MapLabels, k: float) -> None:
    """Routes and route spots, supersampled then reduced, onto ``image`` (the map's rectangle)."""
    x, y, w, h = labels.pixels.rect
    box = (round(x * k), round(y * k), round((x + w) * k), round((y + h) * k))
    big_k = k * _ROUTE_SS
    big = Image.new("RGB", ((box[2] - box[0]) * _ROUTE_SS, (box[3] - box[1]) * _ROUTE_SS), rgb(MAP_FILL))
    draw = ImageDraw.Draw(big)
    ox, oy = box[0] * _ROUTE_SS, box[1] * _ROUTE_SS

    def pts(line: np.ndarray) -> list[tuple[float, float]]:
        return [(float(px * big_k - ox), float(py * big_k - oy)) for px, py in line]

    land = blend(LAND_COLOUR, MAP_FILL, 0.85)
    sea = blend(SEA_COLOUR, MAP_FILL, 0.85)
    for line in labels.pixels.sea:
        for dash in _dashes(line, *SEA_DASH):
            draw.line(pts(dash), fill=sea, width=max(1, round(SEA_WIDTH * big_k)), joint="curve")
    for line in labels.pixels.land:
        draw.line(pts(line), fill=land, width=max(1, round(LAND_WIDTH * big_k)), joint="curve")
    r = 2.2 * big_k
    for sx, sy in labels.pixels.spots.values():
        cx, cy = sx * big_k - ox, sy * big_k - oy
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=rgb("#8a8a8a"))
    image.paste(big.reduce(_ROUTE_SS), box[:2])


def draw_static_map(canvas: Canvas, map_name: str) -> None:
    """The map's static layer: ground, routes, spots, Roma, names, legend."""
    from ...game import get_game

    labels = map_labels(map_name)
    m = get_game(map_name).map
    x, y, w, h = labels.pixels.rect
    canvas.rect((x, y, x + w, y + h), MAP_FILL, MAP_EDGE, 1.0, radius=8)
    _draw_routes(canvas.image, labels, canvas.k)
    canvas.rect((x, y, x + w, y + h), None, MAP_EDGE, 1.0, radius=8)
    canvas.paste(sprite("star", ROMA_COLOUR, 2 * ROMA_RADIUS, canvas.k, outline=ROMA_EDGE), tuple(labels.pixels.city[0]))
    for c, (x0, y0, x1, y1) in enumerate(labels.city_boxes):
        canvas.text(((x0 + x1) / 2, (y0 + y1) / 2), m.city_names[c], LABEL_SIZE, INK, anchor="mm")
    for q in range(len(labels.province_boxes)):
        y0, y1 = labels.province_boxes[q, 1], labels.province_boxes[q, 3]
        canvas.text((labels.province_text_x(q), (y0 + y1) / 2), province_text(m, q), LABEL_SIZE, FAINT,
                    style="italic", anchor="lm")
    layout = LAYOUTS[map_name]
    _draw_legend(canvas, layout.legend_rect, any_good=layout.display_columns == 1)


_LEGEND_TEXT = 11.0
_LEGEND_LINE = 18.0


def _legend_items(k: float, any_good: bool) -> list[tuple[float, list[tuple[Image.Image | None, float, float]], str]]:
    """The legend's entries: (icon width, [(sprite or None for a line, dx, dy)], text); with
    ``any_good``, also the '?' of the display's prices (where the display has no room to say)."""
    items: list[tuple[float, list[tuple[Image.Image | None, float, float]], str]] = []
    for g, name in enumerate(GOODS):
        items.append((14.0, [(good_sprite(g, 14, k, "circle"), 7, 0)], name))
    items.append((24.0, [(None, 0, 0)], "land route"))
    items.append((24.0, [(None, 1, 0)], "sea route"))
    items.append((12.0, [(sprite("square", "#ffffff", HOUSE_SIZE, k), 6, 0)], "house"))
    items.append((26.0, [(sprite("circle", "#ffffff", 2 * LAND_RADIUS, k), 5, 0),
                         (sprite("triangle", "#ffffff", 2 * SEA_RADIUS, k), 19, -1)], "land/sea colonist"))
    items.append((30.0, [(good_sprite(3, MARKER_SIZE, k), 7, 0), (coin_sprite(MARKER_SIZE, k), 23, 0)],
                  "bonus / taken"))
    if any_good:
        items.append((14.0, [(sprite("square", "#ffffff", 14, k, "?"), 7, 0)], "price: any good"))
    return items


def _draw_legend(canvas: Canvas, rect: tuple[float, float, float, float], any_good: bool) -> None:
    """Key to the symbols, flowing in lines through ``rect`` (laid out with the text widths at
    scale 1, so that the lines break in the same places at every size)."""
    x0, y0, w, _h = rect
    x, yy = x0, y0 + _LEGEND_LINE / 2
    for icon_w, icons, text in _legend_items(canvas.k, any_good):
        text_w = text_width(text, "regular", round(_LEGEND_TEXT))
        if x > x0 and x + icon_w + 5 + text_w > x0 + w:
            x, yy = x0, yy + _LEGEND_LINE
        for spr, dx, dy in icons:
            if spr is not None:
                canvas.paste(spr, (x + dx, yy + dy))
            elif dx == 0:
                canvas.line([(x, yy), (x + icon_w, yy)], LAND_COLOUR, LAND_WIDTH)
            else:
                for a, b in ((0.0, 6.0), (10.0, 16.0), (20.0, 24.0)):
                    canvas.line([(x + a, yy), (x + b, yy)], SEA_COLOUR, SEA_WIDTH)
        canvas.text((x + icon_w + 5, yy), text, _LEGEND_TEXT)
        x += icon_w + 5 + text_w + 11


def house_centres(state) -> list[tuple[int, int, float, float]]:
    """(city, player, x, y) of every house of ``state``, in design px."""
    labels = map_labels(state.game.map.name)
    houses = state.field("houses")
    out = []
    for c in range(1, state.game.map.num_cities):
        owners = [p for p in range(state.num_players) if (int(houses[c]) >> p) & 1]
        cx, cy = labels.pixels.city[c]
        for i, p in enumerate(owners):
            out.append((c, p, float(cx + (i - (len(owners) - 1) / 2) * HOUSE_STEP), float(cy + labels.house_dy[c])))
    return out


def colonist_centres(state) -> list[tuple[int, bool, float, float]]:
    """(player, on land, x, y) of every colonist on the board, in design px."""
    labels = map_labels(state.game.map.name)
    col = state.field("colonist")
    in_city: dict[tuple[int, bool], int] = {}
    out = []
    for p in range(state.num_players):
        for i in range(E.NCOL):
            loc, land = int(col[p, i]), i < 3
            if loc < 0:
                continue
            if loc < E.NC:
                k = in_city.get((loc, land), 0)
                in_city[(loc, land)] = k + 1
                cx, cy = labels.pixels.city[loc]
                dx, dy = labels.colonist_at[loc]
                out.append((p, land, float(cx + dx + COLONIST_STEP * k),
                            float(cy + dy + (0.0 if land else COLONIST_DY[1] - COLONIST_DY[0]))))
            elif loc - E.NC in labels.pixels.spots:
                sx, sy = labels.pixels.spots[loc - E.NC]
                out.append((p, land, sx, sy))
    return out


def draw_pieces(canvas: Canvas, state) -> None:
    """The state's part of the map: cities' goods, bonus markers, houses and colonists."""
    k = canvas.k
    labels = map_labels(state.game.map.name)
    city_good = state.field("city_good")
    for c in range(1, state.game.map.num_cities):
        if int(city_good[c]) >= 0:
            canvas.paste(good_sprite(int(city_good[c]), 2 * CITY_RADIUS, k, "circle"), tuple(labels.pixels.city[c]))
    marker, active = state.field("marker_good"), state.field("marker_active")
    for q in range(len(labels.province_boxes)):
        if int(marker[q]) < 0:
            continue
        spr = good_sprite(int(marker[q]), MARKER_SIZE, k) if active[q] else coin_sprite(MARKER_SIZE, k)
        canvas.paste(spr, labels.marker_centre(q))
    for _c, p, x, y in house_centres(state):
        canvas.paste(sprite("square", PLAYER_COLOURS[p], HOUSE_SIZE, k), (x, y))
    for p, land, x, y in colonist_centres(state):
        if land:
            canvas.paste(sprite("circle", PLAYER_COLOURS[p], 2 * LAND_RADIUS, k), (x, y))
        else:
            canvas.paste(sprite("triangle", PLAYER_COLOURS[p], 2 * SEA_RADIUS, k), (x, y - 1))


