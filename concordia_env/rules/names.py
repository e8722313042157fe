"""What the families' action names share: the action kinds' names, the decision context, and
names of cities and goods. The names themselves live with their families (``name_*``)."""

from __future__ import annotations

from ..data import GOODS
from .layout import NG, O_ACTIVE, O_KIND, O_PHASE, PH_PLAY

KIND_NAMES = (
    "Tribunus", "Architectus", "Praefectus", "Mercator (3)", "Mercator (5)", "Colonus",
    "Senator", "Consul", "Mason", "Farmer", "Smith", "Vintner", "Weaver", "Diplomat",
)


def context(state) -> str:
    """The name of the action kind being carried out ('' while a card is being chosen)."""
    s = state.s
    return KIND_NAMES[int(s[O_KIND])] if s[O_PHASE] != PH_PLAY else ""


def active(state) -> int:
    """The player whose turn it is."""
    return int(state.s[O_ACTIVE])


def city_name(state, c: int) -> str:
    m = state.game.map
    return m.city_names[c] if c < m.num_cities else f"city {c}"


def off_map(state, what: str) -> str:
    """The note on the name of an action for a ``what`` (route, city, province) the state's map
    lacks: one action space serves both maps, so such ids exist but are never legal there."""
    return f" (no such {what} on {state.game.map.name.capitalize()})"


def has_city(state, c: int) -> bool:
    """Whether city ``c`` exists on the state's map (Roma included)."""
    return 0 <= c < state.game.map.num_cities


def card_type_name(state, t: int) -> str:
    return state.game.components.card_types[t].name


def goods_list(amount) -> list[str]:
    """Good names repeated by ``amount(g)`` for each good ``g`` (a price, in reading order)."""
    return [GOODS[g] for g in range(NG) for _ in range(int(amount(g)))]
