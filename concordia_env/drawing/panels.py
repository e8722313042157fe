"""Moved: this is :mod:`concordia_env.display.drawing.panels` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.panels`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.panels import (
    BADGE_COLOURS,
    CARD_EDGE,
    CARD_FILL,
    CURRENT_FILL,
    FAINT,
    GOD_COLOURS,
    GOD_COLUMNS,
    INK,
    LAND_RADIUS,
    PAGE,
    PANEL_EDGE,
    PANEL_FILL,
    PANEL_GAP,
    PANEL_MAX_BLOCK,
    PANEL_RECT,
    PLAYER_COLOURS,
    SEA_RADIUS,
    TITLE_XY,
    Canvas,
    Layout,
    blend,
    block_height,
    block_rect,
    card_box,
    display_price,
    draw_display,
    draw_players,
    draw_title,
    font,
    good_sprite,
    rgb,
    sprite,
    tag_image,
    title_text,
)

__all__ = [
    "BADGE_COLOURS", "CARD_EDGE", "CARD_FILL", "CURRENT_FILL", "Canvas", "FAINT", "GOD_COLOURS",
    "GOD_COLUMNS", "INK", "LAND_RADIUS", "Layout", "PAGE", "PANEL_EDGE", "PANEL_FILL", "PANEL_GAP",
    "PANEL_MAX_BLOCK", "PANEL_RECT", "PLAYER_COLOURS", "SEA_RADIUS", "TITLE_XY", "blend", "block_height",
    "block_rect", "card_box", "display_price", "draw_display", "draw_players", "draw_title", "font",
    "good_sprite", "rgb", "sprite", "tag_image", "title_text",
]
