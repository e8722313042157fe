"""Plain-text rendering: a state (``str(state)``) and a game as one line per turn (:class:`TurnPrinter`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from . import board
from . import engine as E
from .data import GOODS


def _colonist_place(state, loc: int) -> str:
    if loc < 0:
        return "storehouse"
    if loc < E.NC:
        return state.game.map.city_names[loc]
    return state.game.route_name(loc - E.NC)


def price_text(game, position: int, card_id: int) -> str:
    """The Senator's price of the card at display ``position`` (0-based): card cost plus the
    position's extra goods, e.g. "1 brick + 1 cloth + 1 any"."""
    cost, n_any = board.display_price(game.tables, position, card_id)
    parts = [f"{int(v)} {GOODS[k]}" for k, v in enumerate(cost) if v]
    if n_any:
        parts.append(f"{n_any} any")
    return " + ".join(parts) or "free"


def state_to_text(state) -> str:
    """A readable multi-line description: board by province, players, display, scores."""
    g, m = state.game, state.game.map
    n = state.num_players
    lines = [f"Concordia — {m.name.capitalize()}, {n} players, turn {int(state.field('turn'))}, "
             + ("game over" if state.is_terminal()
                else f"player {state.current_player} to decide: {state.phase_name}")]
    goods = state.field("city_good")
    houses = state.field("houses")
    active = state.field("marker_active")
    marker = state.field("marker_good")
    for q, prov in enumerate(m.province_names):
        cities = []
        for c in range(m.num_cities):
            if m.city_province[c] != q:
                continue
            owners = [str(p) for p in range(n) if (int(houses[c]) >> p) & 1]
            cities.append(f"{m.city_names[c]} [{GOODS[goods[c]]}]" + (f" houses {','.join(owners)}" if owners else ""))
        side = "good" if active[q] else "coins"
        lines.append(f"  {m.province_numerals[q]:>4} {prov} (bonus {GOODS[marker[q]]}, {side} side): " + "; ".join(cities))
    breakdown = state.score_breakdown()
    names = [t.name for t in g.components.card_types]
    pm, conc = int(state.field("pm")), int(state.field("concordia"))
    for p in range(n):
        tags = (" [Praefectus Magnus]" if p == pm else "") + (" [Concordia]" if p == conc else "")
        held = ", ".join(f"{c}x {names[t]}" if c > 1 else names[t]
                         for t, c in enumerate(state.field("hand")[p]) if c)
        top = int(state.field("top")[p])
        cols = ", ".join(("L" if i < 3 else "S") + ":" + _colonist_place(state, int(loc))
                         for i, loc in enumerate(state.field("colonist")[p]) if loc >= 0)
        store = ", ".join(f"{int(v)} {GOODS[k]}" for k, v in enumerate(state.field("goods")[p]) if v)
        lines.append(f"Player {p}{tags}: {int(state.field('coins')[p])} sestertii; goods {store or 'none'}; "
                     f"houses left {int(state.field('houses_left')[p])}; VP now {int(breakdown[p].sum())}")
        lines.append(f"    hand: {held}; discard top: {names[top] if top >= 0 else '-'}")
        lines.append(f"    colonists: {cols}")
    left = int(state.field("deck_len")) - int(state.field("deck_pos"))
    lines.append(f"Display ({left} cards in the deck):")
    for j, cid in enumerate(state.field("display")):
        if cid >= 0:
            lines.append(f"    {j + 1}: {names[int(g.tables[E.T_CARD_TYPE + cid])]:<19} price {price_text(g, j, int(cid))}")
    return "\n".join(lines)


class TurnPrinter:
    """A per-action callback ``(state before the action, deciding seat, action)`` that prints one
    line per turn (``Turn   3, player 1: play Praefectus; Praefectus: produce in ...``), naming
    each player's agent when ``names`` is given; call :meth:`flush` after the last action."""

    def __init__(self, names: Sequence[str] | None = None, out: TextIO | None = None) -> None:
        self.names = list(names) if names is not None else None
        self.out = out if out is not None else sys.stdout
        self.lines: list[str] = []
        self.player: int | None = None
        self.turn = 0

    def __call__(self, state, seat: int, action: int) -> None:
        # a new turn starts when the active player changes, or with a card play after other actions
        if self.player is None:
            self.player = state.active_player
        elif state.active_player != self.player or (state.phase == 0 and self.lines):
            self.flush()
            self.player = state.active_player
            self.turn += 1
        text = state.action_to_string(action)
        if seat != state.active_player:  # a storehouse-overflow choice by another player
            text = f"[player {seat}] {text}"
        self.lines.append(text)

    def flush(self) -> None:
        if self.lines:
            p = self.player if self.player is not None else -1  # lines exist only after __call__ set it
            who = f"player {p}" + (f" ({self.names[p]})" if self.names is not None else "")
            print(f"Turn {self.turn:3d}, {who}: " + "; ".join(self.lines), file=self.out)
        self.lines.clear()
