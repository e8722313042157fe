"""Moved: this is :mod:`concordia_env.display.drawing.labels` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.labels`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.labels import (
    CITY_RADIUS,
    COLONIST_DX,
    COLONIST_DY,
    COLONIST_STEP,
    HARD_HOUSES,
    HOUSE_DY,
    HOUSE_SIZE,
    HOUSE_STEP,
    LABEL_GAP,
    LABEL_SIZE,
    LAND_RADIUS,
    LAYOUTS,
    MAP_PAD,
    MARKER_GAP,
    MARKER_SIZE,
    NAME_HEIGHT,
    ROMA_RADIUS,
    ROUTE_CLEARANCE,
    ROUTE_COMFORT,
    SEA_RADIUS,
    Box,
    MapLabels,
    PixelMap,
    boxes_touch_boxes,
    boxes_touch_segments,
    colonist_block,
    conflicts,
    house_row,
    map_geometry,
    map_labels,
    province_text,
    route_segments,
    text_width,
    to_pixels,
)

__all__ = [
    "Box", "CITY_RADIUS", "COLONIST_DX", "COLONIST_DY", "COLONIST_STEP", "HARD_HOUSES", "HOUSE_DY",
    "HOUSE_SIZE", "HOUSE_STEP", "LABEL_GAP", "LABEL_SIZE", "LAND_RADIUS", "LAYOUTS", "MAP_PAD", "MARKER_GAP",
    "MARKER_SIZE", "MapLabels", "NAME_HEIGHT", "PixelMap", "ROMA_RADIUS", "ROUTE_CLEARANCE", "ROUTE_COMFORT",
    "SEA_RADIUS", "boxes_touch_boxes", "boxes_touch_segments", "colonist_block", "conflicts", "house_row",
    "map_geometry", "map_labels", "province_text", "route_segments", "text_width", "to_pixels",
]
