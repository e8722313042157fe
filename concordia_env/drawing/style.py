"""Moved: this is :mod:`concordia_env.display.drawing.style` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.style`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.style import (
    BADGE_COLOURS,
    CARD_EDGE,
    CARD_FILL,
    CITY_RADIUS,
    COIN_EDGE,
    COIN_FACE,
    COLONIST_DX,
    COLONIST_DY,
    COLONIST_STEP,
    CURRENT_FILL,
    DARK_GOODS,
    FAINT,
    GOD_COLOURS,
    GOOD_COLOURS,
    HOUSE_DY,
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
    PAGE,
    PANEL_EDGE,
    PANEL_FILL,
    PANEL_GAP,
    PANEL_MAX_BLOCK,
    PANEL_RECT,
    PLAYER_COLOURS,
    ROMA_COLOUR,
    ROMA_EDGE,
    ROMA_RADIUS,
    SEA_COLOUR,
    SEA_DASH,
    SEA_RADIUS,
    SEA_WIDTH,
    SIZE,
    TITLE_XY,
    Layout,
    Rect,
)

__all__ = [
    "BADGE_COLOURS", "CARD_EDGE", "CARD_FILL", "CITY_RADIUS", "COIN_EDGE", "COIN_FACE", "COLONIST_DX",
    "COLONIST_DY", "COLONIST_STEP", "CURRENT_FILL", "DARK_GOODS", "FAINT", "GOD_COLOURS", "GOOD_COLOURS",
    "HOUSE_DY", "HOUSE_SIZE", "HOUSE_STEP", "INK", "LABEL_SIZE", "LAND_COLOUR", "LAND_RADIUS", "LAND_WIDTH",
    "LAYOUTS", "Layout", "MAP_EDGE", "MAP_FILL", "MARKER_SIZE", "PAGE", "PANEL_EDGE", "PANEL_FILL",
    "PANEL_GAP", "PANEL_MAX_BLOCK", "PANEL_RECT", "PLAYER_COLOURS", "ROMA_COLOUR", "ROMA_EDGE",
    "ROMA_RADIUS", "Rect", "SEA_COLOUR", "SEA_DASH", "SEA_RADIUS", "SEA_WIDTH", "SIZE", "TITLE_XY",
]
