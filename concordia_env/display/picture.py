"""Draw a game state as a picture, e.g. for videos of games or ``render_mode="rgb_array"``.

:func:`render_rgb` returns an ``(H, W, 3)`` uint8 array whose shape depends only on ``dpi``
(1280x800 at the default 80), never on the map, the player count or the moment of the game, so
the frames of any game stack into one video. :func:`render_image` gives the same picture as a
Pillow image, :func:`save_png` writes it (atomically), and :func:`draw_state` shows it on a
matplotlib figure (``render_mode="human"``).

The picture shows the map north up (cities in their good's colour with its initial, land routes
brown and solid, sea routes blue and dashed, province names with their bonus marker, houses as
squares above their city and colonists as circles on land, triangles at sea, all in player
colours), a block per player (VP now and by god, sestertii, houses left, storehouse, goods,
colonists waiting, the hand by card coloured by god, the discard pile with its top card first
and outlined, badges for the player to decide, the start player, the Praefectus Magnus and the
Concordia card, and each player's place in turn order), the card display with each position's
Senator price and the cards left in the deck, a legend and a title line. The content and the
colours are those of the replay viewer (``concordia replay --html``).

It is drawn with Pillow (a core dependency) in DejaVu Sans, whose files the package ships: the
static part of each map (ground, routes, names, legend) once per map and size, the state on top
per frame; see :mod:`concordia_env.display.drawing`. Nothing here imports matplotlib, which is only
in the ``plot`` extra: :func:`draw_state` draws on a figure its caller made. Calls may run in
several threads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

# The private names below are what the replay viewer (concordia_env/display/viewer/snapshots.py) reads
# from here: the map geometry, its own province label places and the colours.
from .drawing.frame import STATIC_DRAWS, clear_cache
from .drawing.frame import frame_size as _frame_size
from .drawing.frame import render_image as _render_image
from .drawing.geometry import legacy_province_labels as _province_labels  # noqa: F401
from .drawing.geometry import map_geometry as _geometry  # noqa: F401
from .drawing.style import COIN_EDGE as _COIN_EDGE  # noqa: F401
from .drawing.style import COIN_FACE as _COIN_FACE  # noqa: F401
from .drawing.style import GOD_COLOURS, GOOD_COLOURS, PLAYER_COLOURS
from .drawing.style import LAND_COLOUR as _LAND_COLOUR  # noqa: F401
from .drawing.style import ROMA_COLOUR as _ROMA_COLOUR  # noqa: F401
from .drawing.style import SEA_COLOUR as _SEA_COLOUR  # noqa: F401

__all__ = ["DEFAULT_DPI", "FIGSIZE", "GOD_COLOURS", "GOOD_COLOURS", "MAX_DPI", "MIN_DPI", "PLAYER_COLOURS",
           "STATIC_DRAWS", "clear_cache", "draw_state", "frame_size", "render_image", "render_rgb", "save_png"]

FIGSIZE: tuple[float, float] = (16.0, 10.0)
"""The picture's size in inches at ``dpi``: 1280x800 pixels at the default dpi of 80."""
DEFAULT_DPI = 80
MIN_DPI, MAX_DPI = 40, 320
"""The dpi :func:`render_rgb` accepts: 640x400 to 5120x3200 pixels."""


def _scale(dpi: Any) -> float:
    """Design pixels (the 1280x800 frame) to image pixels, from ``dpi``; ValueError if out of range."""
    if isinstance(dpi, bool) or not isinstance(dpi, (int, np.integer)) or not MIN_DPI <= int(dpi) <= MAX_DPI:
        raise ValueError(f"dpi must be an integer from {MIN_DPI} to {MAX_DPI} (the default {DEFAULT_DPI} gives "
                         f"1280x800 pixels); got {dpi!r}")
    return int(dpi) / DEFAULT_DPI


def frame_size(dpi: int = DEFAULT_DPI) -> tuple[int, int]:
    """(width, height) in pixels of the picture at ``dpi`` (1280x800 at the default)."""
    return _frame_size(_scale(dpi))


def _check_state(state: Any, caller: str) -> None:
    from ..state import GameState

    if not isinstance(state, GameState):
        raise TypeError(f"{caller} draws a concordia_env GameState; got {type(state).__name__}")


def render_image(state, dpi: int = DEFAULT_DPI) -> Image.Image:
    """``state`` (a :class:`~concordia_env.state.GameState`) as a Pillow RGB image of
    ``16 * dpi`` x ``10 * dpi`` pixels (1280x800 at the default)."""
    k = _scale(dpi)
    _check_state(state, "render_image")
    return _render_image(state, k)


def render_rgb(state, dpi: int = DEFAULT_DPI) -> np.ndarray:
    """``state`` as an ``(10 * dpi, 16 * dpi, 3)`` uint8 RGB array (800x1280 at the default ``dpi``).

    The shape depends only on ``dpi``, never on the state; equal states give identical arrays.
    ``ValueError`` if ``dpi`` is not an integer from :data:`MIN_DPI` to :data:`MAX_DPI`."""
    return np.array(render_image(state, dpi))


def save_png(state, path: str | Path, dpi: int = DEFAULT_DPI) -> Path:
    """Write the picture of ``state`` to ``path`` as a PNG (atomically); returns the path."""
    import io

    from .._internal.files import write_bytes_atomic

    buf = io.BytesIO()
    render_image(state, dpi).save(buf, format="PNG", optimize=True)
    path = Path(path)
    write_bytes_atomic(path, buf.getvalue())
    return path


def draw_state(state, fig) -> None:
    """Show the picture of ``state`` on the matplotlib figure ``fig``, clearing it first.

    The picture fills the figure (one axes, no frame), drawn at the figure's own resolution
    (its width in pixels / 16, within :data:`MIN_DPI`..:data:`MAX_DPI`): at :data:`FIGSIZE` and
    80 dpi the figure shows exactly :func:`render_rgb`'s pixels."""
    _check_state(state, "draw_state")
    width_px = fig.get_figwidth() * fig.dpi
    dpi = int(min(MAX_DPI, max(MIN_DPI, round(width_px / FIGSIZE[0]))))
    fig.clear()
    fig.set_facecolor("white")
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    ax.imshow(render_rgb(state, dpi), interpolation="nearest", aspect="equal")
