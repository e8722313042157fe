"""Moved: this is :mod:`concordia_env.display.viewer.snapshots` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.viewer.snapshots`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.viewer.snapshots import (
    GOD_COLUMNS,
    GOODS,
    MAP_MAX_HEIGHT,
    MAP_WIDTH,
    VIEW_FORMAT,
    VIEW_VERSION,
    FrameLayout,
    GameState,
    display_price,
    frame_layout,
    frame_vector,
    frames,
    layout_for,
    replay_data,
    static_view,
)

__all__ = [
    "FrameLayout", "GOD_COLUMNS", "GOODS", "GameState", "MAP_MAX_HEIGHT", "MAP_WIDTH", "VIEW_FORMAT",
    "VIEW_VERSION", "display_price", "frame_layout", "frame_vector", "frames", "layout_for", "replay_data",
    "static_view",
]
