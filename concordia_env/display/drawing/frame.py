"""A whole frame: the cached static layer of the map and size, with one state drawn on top.

The static layer (page ground, map ground, routes, names, legend) is drawn once per (map,
scale) and kept; each frame copies it and draws only what the state decides. ``STATIC_DRAWS``
counts how often a static layer was drawn, so tests can check the cache is used.
"""

from __future__ import annotations

import threading

from PIL import Image

from .board import draw_pieces, draw_static_map
from .canvas import Canvas
from .panels import draw_display, draw_players, draw_title
from .style import LAYOUTS, PAGE, SIZE

STATIC_DRAWS: dict[tuple[str, float], int] = {}
"""How many times the static layer of each (map, scale) was drawn (once, unless the cache was cleared)."""

_STATIC: dict[tuple[str, float], Image.Image] = {}
_LOCK = threading.Lock()


def frame_size(k: float) -> tuple[int, int]:
    """(width, height) in pixels of a frame at scale ``k``."""
    return round(SIZE[0] * k), round(SIZE[1] * k)


def static_layer(map_name: str, k: float) -> Image.Image:
    """The static layer of ``map_name`` at scale ``k`` (drawn on first use, then cached; do not modify)."""
    key = (map_name, k)
    layer = _STATIC.get(key)
    if layer is None:
        with _LOCK:  # two threads asking at once draw it once
            layer = _STATIC.get(key)
            if layer is None:
                layer = Image.new("RGB", frame_size(k), PAGE)
                draw_static_map(Canvas(layer, k), map_name)
                STATIC_DRAWS[key] = STATIC_DRAWS.get(key, 0) + 1
                _STATIC[key] = layer
    return layer


def clear_cache() -> None:
    """Forget everything drawn or placed so far: the static layers, the label placement, the
    cached sprites, texts, blocks and cards (the next frame starts cold, e.g. for a benchmark)."""
    from . import canvas, labels, panels

    with _LOCK:
        _STATIC.clear()
        for cached in (labels.map_labels, canvas.text_mask, canvas.text_width, canvas.sprite, panels.tag_image,
                       panels._block_ground, panels._card_image):
            cached.cache_clear()


def render_image(state, k: float = 1.0) -> Image.Image:
    """``state`` drawn as a Pillow RGB image of :func:`frame_size` ``(k)``."""
    name = state.game.map.name
    image = static_layer(name, k).copy()
    canvas = Canvas(image, k)
    draw_title(canvas, state)
    draw_pieces(canvas, state)
    draw_display(canvas, state, LAYOUTS[name])
    draw_players(canvas, state)
    return image
