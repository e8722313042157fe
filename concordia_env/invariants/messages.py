"""Violation rows into messages: each row is formatted by the message declared with its code.

A template names the row's integers ``{a}`` .. ``{e}``; a format spec turns one into a name
(``{c:city}`` is ``city 3 (Massilia)``): the specs are the methods of :class:`Names`. Templates
also see the map-wide values of :meth:`Names.constants` (``{map}``, ``{last_good}``, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine as E
from ..data import GOODS
from ..game import Game
from .base import FIELD_NAMES, MAX_COINS, MAX_SCORE, REGISTRY, Row
from .tables import X_CARD_DECK, aux


class Names:
    """How a message names the integers of a violation row on ``game`` (state ``s``): each
    method is a format spec of the templates."""

    def __init__(self, game: Game, s: np.ndarray) -> None:
        self.game, self.s, self.map = game, s, game.map
        self.letters = sorted(game.components.city_tokens)
        self.ctypes = game.components.card_types
        self.deck_names = list(game.components.decks)

    def constants(self) -> dict[str, Any]:
        """The values templates may name besides the row's: the map's and the bounds."""
        m = self.map
        return {"map": m.name, "players": list(m.players), "last_city": m.num_cities - 1,
                "nplayers": int(self.s[E.O_NPLAYERS]), "last_good": E.NG - 1, "last_type": E.NT - 1,
                "last_card": E.NCARD - 1, "last_phase": E.PH_OVER, "first_route": E.NC,
                "last_route": E.NC + E.NR - 1, "max_coins": MAX_COINS, "max_score": MAX_SCORE}

    def field(self, f: int) -> str:
        return FIELD_NAMES[f]

    def city(self, c: int) -> str:
        m = self.map
        return f"city {c} ({m.city_names[c]})" if 0 <= c < m.num_cities else f"city {c} (not on the {m.name} map)"

    def route(self, r: int) -> str:
        m = self.map
        if 0 <= r < len(m.land_routes) or E.NL <= r < E.NL + len(m.sea_routes):
            return f"{'land' if r < E.NL else 'sea'} route {r} {self.game.route_name(r)}"
        return f"route {r} (not a route of the {m.name} map)"

    def province(self, q: int) -> str:
        return self.map.province_names[q]

    def letter(self, i: int) -> str:
        return self.letters[i]

    def good(self, g: int) -> str:
        return GOODS[g] if 0 <= g < E.NG else f"good {g}"

    def goods(self, bits: int) -> str:
        """The goods of a bitmask, e.g. ``{brick, wine}``."""
        return "{" + ", ".join(self.good(i) for i in range(32) if (bits >> i) & 1) + "}"

    def ctype(self, t: int) -> str:
        return f"{self.ctypes[t].name} (type {t})" if 0 <= t < E.NT else f"card type {t}"

    def card(self, cid: int) -> str:
        if 0 <= cid < E.NCARD:
            return f"card {cid} ({self.ctypes[int(self.game.tables[E.T_CARD_TYPE + cid])].name})"
        return f"card id {cid}"

    def deck(self, cid: int) -> str:
        """The name of the deck card ``cid`` belongs to."""
        i = int(aux(self.game.name)[X_CARD_DECK + cid]) if 0 <= cid < E.NCARD else -1
        return self.deck_names[i] if 0 <= i < len(self.deck_names) else f"#{i}"

    def phase(self, ph: int) -> str:
        return f"'{E.PHASE_NAMES[ph]}' ({ph})" if 0 <= ph < len(E.PHASE_NAMES) else f"{ph}"

    def kind(self, kd: int) -> str:
        from ..actions import KIND_NAMES

        if 0 <= kd < len(KIND_NAMES):
            return KIND_NAMES[kd]
        return "Diplomat" if kd == E.K_DIPLOMAT else f"kind {kd}"

    def slot(self, i: int) -> str:
        """A colonist slot: ``land colonist 2 (slot 1)``."""
        return f"{self.side_of_slot(i)} colonist {i % 3 + 1} (slot {i})"

    def side_of_slot(self, i: int) -> str:
        return "land" if i < 3 else "sea"

    def side(self, i: int) -> str:
        """0 is land, 1 sea."""
        return "land" if i == 0 else "sea"


class _Named:
    """One integer of a row, as a template formats it: plain, or through a :class:`Names` spec."""

    __slots__ = ("names", "value")

    def __init__(self, value: int, names: Names) -> None:
        self.value, self.names = value, names

    def __format__(self, spec: str) -> str:
        return getattr(self.names, spec)(self.value) if spec else str(self.value)


def describe(names: Names, row: np.ndarray) -> str:
    """The message of violation ``row`` (code, a, b, c, d, e)."""
    code, a, b, c, d, e = (int(v) for v in row)
    inv = REGISTRY.get(code)
    if inv is None:
        return f"violation {code} {(a, b, c, d, e)}"
    if not isinstance(inv.message, str):
        return inv.message(Row(a, b, c, d, e, names))
    args = {key: _Named(v, names) for key, v in zip("abcde", (a, b, c, d, e))}
    return inv.message.format(**args, **names.constants())


def describe_rows(game: Game, s: np.ndarray, rows: np.ndarray) -> list[str]:
    """The messages of the violation ``rows`` found in state ``s`` of ``game``."""
    names = Names(game, s)
    return [describe(names, row) for row in rows]
