"""Moved: this is :mod:`concordia_env.display.render` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import concordia_env.render``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.moved import moved as _moved
from .display.render import (
    GOODS,
    SCORE_COLUMNS,
    WIDTH,
    TurnPrinter,
    card_label,
    card_play_text,
    card_plays,
    colonist_place,
    goods_text,
    house_owners,
    owners_text,
    owns_house,
    pack,
    player_tag,
    price_text,
    score_table,
    state_to_text,
    status_lines,
    winner_line,
    wrap,
)

__all__ = [
    "GOODS", "SCORE_COLUMNS", "TurnPrinter", "WIDTH", "card_label", "card_play_text", "card_plays",
    "colonist_place", "goods_text", "house_owners", "owners_text", "owns_house", "pack", "player_tag",
    "price_text", "score_table", "state_to_text", "status_lines", "winner_line", "wrap",
]

_moved("concordia_env.render", "concordia_env.display.render")
