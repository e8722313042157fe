"""Moved: this is :mod:`concordia_env.display.drawing.geometry` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.geometry`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.geometry import (
    BOARD_ASPECT,
    CURVE_POINTS,
    NORTH_UP_TURN_DEG,
    Geometry,
    PixelMap,
    legacy_province_labels,
    map_geometry,
    province_text,
    to_pixels,
)

__all__ = [
    "BOARD_ASPECT", "CURVE_POINTS", "Geometry", "NORTH_UP_TURN_DEG", "PixelMap", "legacy_province_labels",
    "map_geometry", "province_text", "to_pixels",
]
