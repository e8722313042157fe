"""Plain-text rendering in 80 columns: a state (``str(state)``), one player's status block, the score
table, and a game as one line per turn (:class:`TurnPrinter`).

Players are written ``P0`` … ``P4`` wherever a line names several of them (the owners of a city's
houses: ``Sirmium [brick] houses P0 P3``), so a list of owners never reads as a count. Every line
is at most :data:`WIDTH` characters: lists are packed item by item (:func:`pack`), never cut inside
a city or card name unless one item alone is wider than a line.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import TextIO

from .. import board
from .. import engine as E
from ..data import GOODS
from ..rules.pieces import owns_house

#: the terminal width every rendered line fits in
WIDTH = 80
#: the score table's column titles: the gods (cut to 8 letters) and the Concordia card
SCORE_COLUMNS: tuple[str, ...] = ("Vesta", "Jupiter", "Saturnus", "Mercur.", "Mars", "Minerva", "Concord.")


# ---------------------------------------------------------------- layout helpers
def pack(items: Iterable[str], width: int = WIDTH, first: str = "", indent: str = "    ",
         sep: str = "; ") -> list[str]:
    """``first`` followed by ``items`` joined by ``sep``, as lines of at most ``width`` characters
    continued with ``indent``. Items are kept whole (a line breaks between two items); only an item
    wider than a whole line is wrapped at its spaces."""
    lines: list[str] = []
    line = first
    fresh = True  # nothing but the line's lead-in yet
    for item in items:
        piece = item if fresh else sep + item
        if len(line) + len(piece) <= width:
            line += piece
            fresh = False
            continue
        if not fresh:
            lines.append(line.rstrip())
            line = indent
        if len(line) + len(item) <= width:
            line += item
        else:  # one item wider than a line: wrap it at its spaces
            parts = textwrap.wrap(item, width, initial_indent=line, subsequent_indent=indent,
                                  break_on_hyphens=False) or [line]
            lines.extend(parts[:-1])
            line = parts[-1]
        fresh = False
    lines.append(line.rstrip())
    return lines


def wrap(text: str, width: int = WIDTH, indent: str = "    ") -> list[str]:
    """One line of prose as lines of at most ``width`` characters, continued with ``indent``."""
    return textwrap.wrap(text, width, subsequent_indent=indent, break_on_hyphens=False) or [""]


def player_tag(p: int) -> str:
    """How a line that names several players writes player ``p``: ``P0`` … ``P4``."""
    return f"P{p}"


def house_owners(state, c: int) -> list[int]:
    """The players with a house in city ``c``."""
    return [p for p in range(state.num_players) if owns_house(state.s, c, p)]


def owners_text(state, c: int) -> str:
    """The owners of city ``c``'s houses, e.g. ``P0 P3`` ('' when there are none)."""
    return " ".join(player_tag(p) for p in house_owners(state, c))


def goods_text(amounts: Sequence[int], joiner: str = ", ") -> str:
    """Amounts per good as ``1 brick, 2 food`` (goods with none left out; '' when all are 0)."""
    return joiner.join(f"{int(v)} {GOODS[k]}" for k, v in enumerate(amounts) if v)


def colonist_place(state, loc: int) -> str:
    """Where a colonist stands: ``storehouse``, a city, or a route ``(A–B)``."""
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


# ---------------------------------------------------------------- the board
def card_label(name: str, god: str) -> str:
    """A card as lists show it, with its god: ``Farmer (Minerva)``, ``Mercator (3, Mercurius)``;
    a name that already says its god (``Diplomat (Jupiter)``) is left as it is."""
    if god in name:
        return name
    if name.endswith(")"):
        return f"{name[:-1]}, {god})"
    return f"{name} ({god})"


def _card_names(state) -> list[str]:
    """Every card type's label (:func:`card_label`), by type."""
    return [card_label(t.name, t.god) for t in state.game.components.card_types]


def _province_lines(state, width: int) -> list[str]:
    m = state.game.map
    goods, active, marker = state.field("city_good"), state.field("marker_active"), state.field("marker_good")
    lines = []
    for q, prov in enumerate(m.province_names):
        cities = []
        for c in range(m.num_cities):
            if m.city_province[c] == q:
                owners = owners_text(state, c)
                cities.append(f"{m.city_names[c]} [{GOODS[goods[c]]}]" + (f" houses {owners}" if owners else ""))
        side = "" if active[q] else ": coin side"  # a marker on its coin side waits for a cash bonus
        head = f"  {m.province_numerals[q]:>4} {prov} (bonus {GOODS[marker[q]]}{side}): "
        lines += pack(cities, width, first=head, indent=" " * 7)
    return lines


def _hand_items(state, p: int) -> list[str]:
    """Player ``p``'s hand and discard top as items for :func:`pack` with ``sep=" "``
    (``["Tribunus,", "2x Praefectus;", "discard top: Farmer"]``), so no card name is split."""
    names = _card_names(state)
    cards = [f"{c}x {names[t]}" if c > 1 else names[t] for t, c in enumerate(state.field("hand")[p]) if c]
    top = int(state.field("top")[p])
    items = [card + "," for card in cards[:-1]] + [(cards[-1] if cards else "no cards") + ";"]
    return items + [f"discard top: {names[top] if top >= 0 else '-'}"]


def _colonists_text(state, p: int) -> str:
    """``land Roma, (Roma–Novaria); sea Roma`` (colonists in the storehouse left out)."""
    col = state.field("colonist")[p]
    parts = []
    for kind, slots in (("land", range(3)), ("sea", range(3, 6))):
        places = [colonist_place(state, int(col[i])) for i in slots if col[i] >= 0]
        if places:
            parts.append(f"{kind} " + ", ".join(places))
    return "; ".join(parts) or "none on the board"


def _player_lines(state, p: int, breakdown, width: int) -> list[str]:
    pm, conc = int(state.field("pm")), int(state.field("concordia"))
    tags = (" [Praefectus Magnus]" if p == pm else "") + (" [Concordia]" if p == conc else "")
    facts = [f"{int(state.field('coins')[p])} sestertii", f"goods {goods_text(state.field('goods')[p]) or 'none'}",
             f"houses left {int(state.field('houses_left')[p])}", f"VP now {int(breakdown[p].sum())}"]
    return (pack(facts, width, first=f"Player {p}{tags}: ")
            + pack(_hand_items(state, p), width, first="    hand: ", indent="      ", sep=" ")
            + pack(_colonists_text(state, p).split("; "), width, first="    colonists: ", indent="      "))


def card_play_text(state) -> str:
    """Where the game is, counted in card plays as the menu's question counts them:
    ``card play 5, player 1 to decide: Architectus`` (the game's 5th card is being chosen or its
    action played), or ``game over after 61 card plays``."""
    plays = card_plays(state)
    if state.is_terminal():
        return f"game over after {plays} card plays"
    return f"card play {plays + 1}, player {state.current_player} to decide: {state.phase_name}"


def card_plays(state) -> int:
    """The card plays finished so far (a card's play ends when its action is done)."""
    return int(state.field("turn"))


def state_to_text(state, width: int = WIDTH) -> str:
    """A readable description in lines of at most ``width`` characters: the board by province
    (each city's good and the owners of its houses), the players, the display with prices."""
    g, m = state.game, state.game.map
    n = state.num_players
    head = f"Concordia — {m.name.capitalize()}, {n} players, " + card_play_text(state)
    lines = wrap(head, width) + _province_lines(state, width)
    breakdown = state.score_breakdown()
    for p in range(n):
        lines += _player_lines(state, p, breakdown, width)
    left = int(state.field("deck_len")) - int(state.field("deck_pos"))
    lines.append(f"Display ({left} cards in the deck):")
    names = _card_names(state)
    for j, cid in enumerate(state.field("display")):
        if cid >= 0:
            lines += wrap(f"    {j + 1}: {names[int(g.tables[E.T_CARD_TYPE + cid])]:<24} "
                          f"price {price_text(g, j, int(cid))}", width, indent=" " * 8)
    return "\n".join(lines)


# ---------------------------------------------------------------- one player, the scores
def status_lines(state, p: int, width: int = WIDTH, who: str = "You") -> list[str]:
    """Player ``p``'s own position in a few lines, for the foot of a decision: sestertii, VP,
    houses, storehouse, hand and colonists (``who`` names the player, e.g. "You")."""
    T = state.game.tables
    pm, conc = int(state.field("pm")), int(state.field("concordia"))
    tags = (" [Praefectus Magnus]" if p == pm else "") + (" [Concordia]" if p == conc else "")
    used = int(T[E.T_STORE]) - int(E.free_slots(state.s, T, p))
    facts = [f"{int(state.field('coins')[p])} sestertii", f"VP now {int(state.score_breakdown()[p].sum())}",
             f"houses left {int(state.field('houses_left')[p])}"]
    goods = goods_text(state.field("goods")[p]) or "none"
    return (pack(facts, width, first=f"{who} ({player_tag(p)}){tags}: ")
            + pack([f"{goods};", f"storehouse {used}/{int(T[E.T_STORE])} slots used"], width, first="  goods: ",
                   indent="    ", sep=" ")
            + pack(_hand_items(state, p), width, first="  hand: ", indent="    ", sep=" ")
            + pack(_colonists_text(state, p).split("; "), width, first="  colonists: ", indent="    "))


def score_table(state, names: Sequence[str] | None = None) -> str:
    """Each player's VP by god and in total (at most 78 characters a line) under "Final scores",
    or "Scores if the game ended now" while the game runs, and once it is over the winner's line
    (:func:`winner_line`, naming each player's agent when ``names`` is given)."""
    table = state.score_breakdown()
    lines = ["Final scores" if state.is_terminal() else "Scores if the game ended now",
             "player" + "".join(f"{c:>9}" for c in SCORE_COLUMNS) + f"{'total':>9}"]
    for p, row in enumerate(table):
        lines.append(f"{p:>6}" + "".join(f"{int(v):>9}" for v in row) + f"{int(row.sum()):>9}")
    winner = winner_line(state, names)
    if winner is not None:
        lines += wrap(winner)
    return "\n".join(lines)


def winner_line(state, names: Sequence[str] | None = None) -> str | None:
    """``Winner: player 1 (heuristic) with 87 VP``, or None while the game runs. Only when the most
    VP are tied does it say the tie-break decided, and with whom it was tied (the rules' tie-break:
    the Praefectus Magnus holder, then whoever would receive it soonest)."""
    w = state.winner()
    if w is None:
        return None
    scores = state.scores()

    def who(p: int) -> str:
        return f"player {p}" + (f" ({names[p]})" if names is not None else "")

    tied = [p for p in range(len(scores)) if p != w and scores[p] == scores[w]]
    if not tied:
        return f"Winner: {who(w)} with {scores[w]} VP"
    return (f"Winner after tie-break: {who(w)} with {scores[w]} VP, tied with {', '.join(map(who, tied))}; "
            "the tie goes to the Praefectus Magnus holder, or whoever would receive it soonest")


class TurnPrinter:
    """A per-action callback ``(state before the action, deciding seat, action)`` that prints one
    line per turn (``Turn   3, player 1: play Praefectus; Praefectus: produce in ...``), naming
    each player's agent when ``names`` is given, wrapped at ``width``; call :meth:`flush` after the
    last action."""

    def __init__(self, names: Sequence[str] | None = None, out: TextIO | None = None, width: int = WIDTH) -> None:
        self.names = list(names) if names is not None else None
        self.out = out if out is not None else sys.stdout
        self.width = width
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
            print("\n".join(pack(self.lines, self.width, first=f"Turn {self.turn:3d}, {who}: ")), file=self.out)
        self.lines.clear()
