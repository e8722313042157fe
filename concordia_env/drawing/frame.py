"""Moved: this is :mod:`concordia_env.display.drawing.frame` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.frame`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.frame import (
    LAYOUTS,
    PAGE,
    SIZE,
    STATIC_DRAWS,
    Canvas,
    clear_cache,
    draw_display,
    draw_pieces,
    draw_players,
    draw_static_map,
    draw_title,
    frame_size,
    render_image,
    static_layer,
)

__all__ = [
    "Canvas", "LAYOUTS", "PAGE", "SIZE", "STATIC_DRAWS", "clear_cache", "draw_display", "draw_pieces",
    "draw_players", "draw_static_map", "draw_title", "frame_size", "render_image", "static_layer",
]
