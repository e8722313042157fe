"""Questions about the pieces on the board and in a player's storehouse."""

from __future__ import annotations

from . import rule
from .layout import NCOL, NG, O_CITY_GOOD, O_COLONIST, O_GOODS, O_HOUSES, O_NCITIES, T_STORE


@rule(inline="always")
def free_slots(s, T, p):
    """Free storehouse slots of player ``p``: each good and each colonist waiting there fills one."""
    used = 0
    for g in range(NG):
        used += s[O_GOODS + p * NG + g]
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] < 0:
            used += 1
    return T[T_STORE] - used


@rule(inline="always")
def colonists_on_board(s, p):
    """Colonists of player ``p`` on the board (in cities or on routes)."""
    n = 0
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] >= 0:
            n += 1
    return n


@rule(inline="always")
def owns_house(s, c, p):
    """Whether player ``p`` has a house in city ``c`` (one bit per player)."""
    return (s[O_HOUSES + c] >> p) & 1 != 0


@rule(inline="always")
def house_count(s, c):
    """Houses in city ``c``, all players together."""
    h = s[O_HOUSES + c]
    n = 0
    while h:
        n += h & 1
        h >>= 1
    return n


@rule(inline="always")
def houses_of_good(s, p, g):
    """Houses of player ``p`` in cities producing good ``g`` (what a specialist produces)."""
    made = 0
    for c in range(1, s[O_NCITIES]):
        if s[O_CITY_GOOD + c] == g and owns_house(s, c, p):
            made += 1
    return made


@rule(inline="always")
def has_colonist_in_store(s, p, kind):
    """Whether player ``p`` has a colonist of ``kind`` (0 land, 1 sea) waiting in the storehouse."""
    for i in range(3 * kind, 3 * kind + 3):
        if s[O_COLONIST + p * NCOL + i] < 0:
            return True
    return False
