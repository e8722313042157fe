"""Moved: this is :mod:`concordia_env.display.picture` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import concordia_env.picture``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.moved import moved as _moved
from .display.picture import (
    DEFAULT_DPI,
    FIGSIZE,
    GOD_COLOURS,
    GOOD_COLOURS,
    MAX_DPI,
    MIN_DPI,
    PLAYER_COLOURS,
    STATIC_DRAWS,
    clear_cache,
    draw_state,
    frame_size,
    render_image,
    render_rgb,
    save_png,
)

__all__ = [
    "DEFAULT_DPI", "FIGSIZE", "GOD_COLOURS", "GOOD_COLOURS", "MAX_DPI", "MIN_DPI", "PLAYER_COLOURS",
    "STATIC_DRAWS", "clear_cache", "draw_state", "frame_size", "render_image", "render_rgb", "save_png",
]

_moved("concordia_env.picture", "concordia_env.display.picture")
