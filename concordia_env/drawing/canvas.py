"""Moved: this is :mod:`concordia_env.display.drawing.canvas` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import
concordia_env.drawing.canvas`` working by re-exporting the public names of the new module; import
them from there instead. It holds no code of its own: to patch an attribute (a test's monkeypatch),
patch the new module.
"""

from __future__ import annotations

from ..display.drawing.canvas import (
    COIN_EDGE,
    COIN_FACE,
    DARK_GOODS,
    FONT_FILES,
    GOOD_COLOURS,
    RGB,
    Canvas,
    Font,
    blend,
    coin_sprite,
    font,
    font_dir,
    good_sprite,
    rgb,
    sprite,
    text_mask,
    text_width,
)

__all__ = [
    "COIN_EDGE", "COIN_FACE", "Canvas", "DARK_GOODS", "FONT_FILES", "Font", "GOOD_COLOURS", "RGB", "blend",
    "coin_sprite", "font", "font_dir", "good_sprite", "rgb", "sprite", "text_mask", "text_width",
]
