"""Moved: this is :mod:`concordia_env.display.menu` now.

The display code (text, menus, the board picture, the replay viewer) is together in
:mod:`concordia_env.display`. For one release this module keeps ``import concordia_env.menu``
working by re-exporting the public names of the new module; import them from there instead. It holds
no code of its own: to patch an attribute (a test's monkeypatch), patch the new module.
"""

from __future__ import annotations

from ._internal.moved import moved as _moved
from .display.menu import (
    COMMANDS,
    GOODS,
    GROUP_KEYS,
    MAX_LINES,
    WIDTH,
    Choice,
    Entry,
    Group,
    Menu,
    Section,
    action_range,
    bonus_goods,
    build_menu,
    card_label,
    card_plays,
    colonist_place,
    context,
    decision_text,
    describe,
    goods_text,
    number_ranges,
    owners_text,
    player_tag,
    production,
    route_text,
    wrap,
)

__all__ = [
    "COMMANDS", "Choice", "Entry", "GOODS", "GROUP_KEYS", "Group", "MAX_LINES", "Menu", "Section", "WIDTH",
    "action_range", "bonus_goods", "build_menu", "card_label", "card_plays", "colonist_place", "context",
    "decision_text", "describe", "goods_text", "number_ranges", "owners_text", "player_tag", "production",
    "route_text", "wrap",
]

_moved("concordia_env.menu", "concordia_env.display.menu")
