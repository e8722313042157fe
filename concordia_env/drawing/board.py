"""Moved: this is :mod:`concordia_env.display.drawing.board` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.board`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.board import (
    CITY_RADIUS,
    COLONIST_DY,
    COLONIST_STEP,
    FAINT,
    GOODS,
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
    Canvas,
    MapLabels,
    blend,
    coin_sprite,
    colonist_centres,
    draw_pieces,
    draw_static_map,
    good_sprite,
    house_centres,
    map_labels,
    province_text,
    rgb,
    sprite,
    text_width,
)

__all__ = [
    "CITY_RADIUS", "COLONIST_DY", "COLONIST_STEP", "Canvas", "FAINT", "GOODS", "HOUSE_SIZE", "HOUSE_STEP",
    "INK", "LABEL_SIZE", "LAND_COLOUR", "LAND_RADIUS", "LAND_WIDTH", "LAYOUTS", "MAP_EDGE", "MAP_FILL",
    "MARKER_SIZE", "MapLabels", "PLAYER_COLOURS", "ROMA_COLOUR", "ROMA_EDGE", "ROMA_RADIUS", "SEA_COLOUR",
    "SEA_DASH", "SEA_RADIUS", "SEA_WIDTH", "blend", "coin_sprite", "colonist_centres", "draw_pieces",
    "draw_static_map", "good_sprite", "house_centres", "map_labels", "province_text", "rgb", "sprite",
    "text_width",
]
