"""Colours and the page layout of the picture, in design pixels (the 1280x800 frame).

The colours are those of the replay viewer (``concordia_env/display/viewer/template.html``), which reads
the player, goods, route and marker colours from here, so the two drawings agree.
"""

from __future__ import annotations

from dataclasses import dataclass

Rect = tuple[float, float, float, float]

PLAYER_COLOURS: tuple[str, ...] = ("#e41a1c", "#1f5fd6", "#1a9e3a", "#ff8c00", "#9b30c8")
"""Colour of players 0..4: red, blue, green, orange, purple."""

GOOD_COLOURS: tuple[str, ...] = ("#b8612f", "#f3d34a", "#9aa3ab", "#8e2a4f", "#a8dcf0")
"""Colour of each good, in ``GOODS`` order: brick, food, tools, wine, cloth."""

DARK_GOODS: tuple[int, ...] = (0, 3)
"""Goods whose colour needs a white initial (brick, wine)."""

GOD_COLOURS: dict[str, str] = {"Vesta": "#f2c14e", "Jupiter": "#c9d6df", "Saturnus": "#b7d9a8",
                               "Mercurius": "#f6b48f", "Mars": "#e99a9a", "Minerva": "#c3b1e1",
                               "Concordia": "#9ec9f0"}
"""Background of a card (by its god) and of each column of the VP by god, as in the viewer."""

LAND_COLOUR = "#8b5a2b"
SEA_COLOUR = "#3b7dd8"
ROMA_COLOUR = "#ffd700"
ROMA_EDGE = "#6b5200"
COIN_FACE, COIN_EDGE = "#fff3b8", "#8a6d00"
INK = "#1d1b16"
FAINT = "#6f6a5e"
PAGE = "#faf8f2"
MAP_FILL, MAP_EDGE = "#fbf8ee", "#d8d2c0"
PANEL_FILL, PANEL_EDGE = "#f6f6f4", "#c8c8c8"
CURRENT_FILL = "#fff6cc"
CARD_FILL, CARD_EDGE = "#f7f1e1", "#7a6a4a"
BADGE_COLOURS: dict[str, str] = {"decide": "#444444", "pm": "#b8901a", "concordia": "#4f79b3",
                                 "start": "#2f7d6d", "winner": "#2e7d32", "turn": "#8a8a8a"}

SIZE: tuple[int, int] = (1280, 800)
"""Width and height of the frame at scale 1 (``render_rgb``'s default ``dpi=80``)."""



@dataclass(frozen=True)
class Layout:
    """Rectangles (x, y, width, height, design px) of the parts of one map's frame.

    Imperium is wide: the display is a row of cards under the map. Italia (north up) is tall: the
    display is a column of cards beside the map, which gets the whole height."""

    map_rect: Rect
    display_rect: Rect
    display_columns: int  # cards side by side (7: one row; 1: one column)
    legend_rect: Rect


TITLE_XY = (12.0, 17.0)
PANEL_RECT: Rect = (848.0, 4.0, 428.0, 792.0)
LAYOUTS: dict[str, Layout] = {
    "imperium": Layout((4.0, 32.0, 838.0, 520.0), (4.0, 582.0, 838.0, 214.0), 7, (12.0, 558.0, 830.0, 18.0)),
    "italia": Layout((4.0, 32.0, 716.0, 764.0), (726.0, 32.0, 116.0, 764.0), 1, (16.0, 684.0, 236.0, 108.0)),
}
PANEL_GAP = 5.0
PANEL_MAX_BLOCK = 210.0  # a player's block never gets taller than this, however few the players

# Pieces on the map (design pixels).
CITY_RADIUS = 9.0
ROMA_RADIUS = 15.0
HOUSE_SIZE = 12.0
HOUSE_STEP = 14.0
HOUSE_DY = -19.0  # centre of the row of houses above a city
COLONIST_DX = 15.0  # first colonist beside a city, then one every COLONIST_STEP
COLONIST_STEP = 12.0
COLONIST_DY = (-6.0, 7.0)  # land row, sea row
LAND_RADIUS = 5.0
SEA_RADIUS = 6.5
MARKER_SIZE = 13.0  # a province's bonus marker
LABEL_SIZE = 11  # font size of city and province names
LAND_WIDTH, SEA_WIDTH = 2.2, 1.8
SEA_DASH = (6.0, 4.0)
