"""The legal actions of one decision as a short menu for an 80-column terminal.

A decision can have 180 legal actions (an Architectus with six colonists and six movement points).
Listed flat they scroll off any screen, so :func:`build_menu` sorts them into **groups** by what they
do (play a card, move one colonist, build, produce, sell, buy, ...); a colonist's moves are split
further into **sections** by their cost in movement points. Every action keeps one **number** for
the whole decision, so a player may always type it directly, and, given the numbers of the earlier
steps (``build_menu(..., numbers=)``), for the whole of one card's action: a move still possible
after a colonist moved keeps its number, and a new one gets a number not used before. A group's
letter (or a section's ``a2``) only shows that part of the menu.

Each entry says what the choice does in the position at hand: a route names both end cities (their
goods and the owners of their houses, ``P0``…``P4``) and the cities one route further on; a
Praefectus province says the goods you and the others would receive, computed by the rules kernel
itself on a copy of the position (:func:`production`).

Everything here is a pure function of the state: :meth:`Menu.view` gives the lines to print (at most
:data:`~concordia_env.display.render.WIDTH` characters each), :meth:`Menu.parse` turns what the player typed
into a :class:`Choice`. :class:`concordia_env.agents.human.HumanAgent` prints them and reads the input.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import engine as E
from ..actions import action_range, describe
from ..data import GOODS
from ..rules.names import context
from ..rules.praefectus import bonus_goods
from .render import WIDTH, card_label, card_plays, colonist_place, goods_text, owners_text, player_tag, wrap

#: menu lines shown at once below the title: an 80x24 terminal less the title, the player's status
#: block (4-5 lines), a blank line and the prompt
MAX_LINES = 14
#: the letters that name groups: the alphabet less the commands b, h, m, q
GROUP_KEYS = "acdefgijklnoprstuvwxyz"
#: what a player may type besides a number or a group's letter, and the command each word means
COMMANDS: dict[str, str] = {"b": "board", "board": "board", "h": "help", "help": "help", "?": "help",
                            "m": "menu", "menu": "menu", "q": "quit", "quit": "quit", "exit": "quit"}
_NUMBER = 4  # the width of an entry's number column


@dataclass(frozen=True)
class Entry:
    """One legal action: the ``number`` the player types, the action id and what it does."""

    number: int
    action: int
    text: str


@dataclass(frozen=True)
class Section:
    """Part of a group (a colonist's moves of one cost); ``key`` is "" for a group's only section."""

    key: str
    title: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class Group:
    """Actions that do the same kind of thing; ``noun`` counts its entries ("routes", "cards")."""

    key: str
    title: str
    noun: str
    sections: tuple[Section, ...]

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for s in self.sections for e in s.entries)


@dataclass(frozen=True)
class Choice:
    """What the player typed: ``kind`` "action" (with ``action``), "view" (with the ``key`` of a
    group or section to show), or a command: "board", "help", "menu", "quit"."""

    kind: str
    action: int = -1
    key: str = ""


@dataclass(frozen=True)
class Menu:
    """The numbered, grouped legal actions of one decision."""

    title: str
    groups: tuple[Group, ...]
    width: int = WIDTH
    max_lines: int = MAX_LINES

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(e for g in self.groups for e in g.entries)

    def actions(self) -> list[int]:
        """The action ids in menu order."""
        return [e.action for e in self.entries]

    @functools.cached_property
    def numbering(self) -> dict[int, int]:
        """Action id -> its number in this menu (to keep the numbers in the next step's menu)."""
        return {e.action: e.number for e in self.entries}

    @functools.cached_property
    def _by_number(self) -> dict[int, Entry]:
        return {e.number: e for e in self.entries}

    @property
    def numbers_text(self) -> str:
        """The numbers a player may type: ``1-12``, or ``1-3, 7, 9-14`` once some moves of an
        earlier step are gone."""
        return number_ranges(sorted(self._by_number))

    @property
    def keys(self) -> list[str]:
        """What a player may type to see one part of the menu: the letters of the groups of more
        than one entry, and the keys of the sections of groups split into sections (``a1``, ...)."""
        return list(self._parts)

    @functools.cached_property
    def _parts(self) -> dict[str, Group | Section]:
        """The groups of more than one entry and the sections of split groups, by key."""
        parts: dict[str, Group | Section] = {}
        for g in self.groups:
            if len(g.entries) > 1:
                parts[g.key] = g
                parts.update((s.key, s) for s in g.sections if s.key)
        return parts

    @property
    def prompt(self) -> str:
        letters = ", a letter for a group" if self._layout[1] else ""
        return f"Your choice ({self._choices}{letters}; h for help): "

    @property
    def _choices(self) -> str:
        """The numbers to type, as the prompt says them (a long list cut short)."""
        text = self.numbers_text
        return text if len(text) <= 24 else "a number from the list"

    def _allowed(self, lead: str = "") -> str:
        """The numbers to type, as an error says them: ``1 to 12`` (after ``lead``, e.g.
        ``a number from``), or ``a number from the list (1-3, 7, 9-14)`` once earlier steps left
        gaps."""
        numbers = sorted(self._by_number)
        if numbers == list(range(1, len(numbers) + 1)):
            return f"{lead}1 to {len(numbers)}"
        text = self.numbers_text
        return "a number from the list" + (f" ({text})" if len(text) <= 40 else "")

    def view(self, key: str | None = None) -> list[str]:
        """The lines to print: the title and the whole menu as far as it fits in ``max_lines``
        (groups too long to show are one line each: letter, title, count, numbers), or with
        ``key`` the group or section of that key."""
        if key is None:
            return wrap(self.title, self.width) + self._layout[0]
        part = self._parts.get(key)
        if part is None:
            raise ValueError(f"no group {key!r} in this menu")
        if isinstance(part, Section):
            group = next(g for g in self.groups if part in g.sections)
            return wrap(f"{group.title}, {part.title}:", self.width) + self._entry_lines(part.entries)
        lines = self._expanded(part)
        if len(lines) - 1 <= self.max_lines or len(part.sections) == 1:
            return lines
        return lines[:1] + [ln for s in part.sections for ln in self._summary(s.key, s.title, part.noun, s.entries)]

    def parse(self, text: str) -> Choice:
        """What ``text`` asks for; ``ValueError`` with a one-line reason for anything else."""
        word = text.strip().lower()
        if not word:
            raise ValueError(f"type {self._allowed('a number from ')} (h for help)")
        if word in COMMANDS:
            return Choice(COMMANDS[word])
        if word in self._parts:
            return Choice("view", key=word)
        shown = text.strip() if len(text.strip()) <= 20 else text.strip()[:17] + "..."
        if not (word.isascii() and word.lstrip("+-").isdigit()):
            raise ValueError(f"{shown!r} is not a number from the list; type {self._allowed()} (h for help)")
        entry = self._by_number.get(int(word)) if len(word) < 8 else None
        if entry is None:
            raise ValueError(f"{shown} is not in the list; choose {self._allowed()}")
        return Choice("action", action=entry.action)

    # ------------------------------------------------------------ layout
    def _entry_lines(self, entries: Iterable[Entry]) -> list[str]:
        """Entries one a line, or in two or three columns when they are all short enough."""
        cells = [f"{e.number:>{_NUMBER}} {e.text}" for e in entries]
        for ncols in (3, 2):
            colw = self.width // ncols
            if len(cells) > ncols and all(len(c) < colw for c in cells):
                rows = math.ceil(len(cells) / ncols)
                return ["".join(cells[c * rows + r].ljust(colw) for c in range(ncols)
                                if c * rows + r < len(cells)).rstrip() for r in range(rows)]
        return [ln for c in cells for ln in wrap(c, self.width, " " * (_NUMBER + 1))]

    def _expanded(self, group: Group) -> list[str]:
        """A group in full: its title, then its sections' titles and entries."""
        if len(group.entries) == 1:
            return self._entry_lines(group.entries)
        lines = wrap(f"{group.title}:", self.width)
        for s in group.sections:
            if s.title:
                lines.append(f"  {s.title}:")
            lines += self._entry_lines(s.entries)
        return lines

    def _summary(self, key: str, title: str, noun: str, entries: tuple[Entry, ...]) -> list[str]:
        """One line for a group or section: ``   a move land colonist 1 from Roma: 37 routes (1-37)``."""
        span = number_ranges(sorted(e.number for e in entries))
        return wrap(f"{key:>{_NUMBER}} {title}: {len(entries)} {noun} ({span})", self.width, " " * (_NUMBER + 1))

    @functools.cached_property
    def _layout(self) -> tuple[list[str], list[str]]:
        """The top view's lines, and the keys of the groups it shows as one summary line each:
        every group in full if that fits; else the smallest groups in full as long as they fit
        and one summary line for each of the others."""
        full = {g.key: self._expanded(g) for g in self.groups}
        short = {g.key: full[g.key] if len(g.entries) == 1 else self._summary(g.key, g.title, g.noun, g.entries)
                 for g in self.groups}
        shown = dict(full)
        if sum(map(len, full.values())) > self.max_lines:
            shown = dict(short)
            for g in sorted(self.groups, key=lambda g: len(full[g.key]) - len(short[g.key])):
                more = len(full[g.key]) - len(short[g.key])
                if sum(map(len, shown.values())) + more > self.max_lines:
                    break
                shown[g.key] = full[g.key]
        summarized = [g.key for g in self.groups if shown[g.key] is not full[g.key] and len(g.entries) > 1]
        return [ln for g in self.groups for ln in shown[g.key]], summarized


def number_ranges(numbers: list[int]) -> str:
    """Sorted numbers as runs: ``[1, 2, 3, 7, 9, 10]`` -> ``1-3, 7, 9-10``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


# ---------------------------------------------------------------- what each action does
class _Item(NamedTuple):
    """Where one legal action goes in the menu and what it says."""

    group: tuple[int, ...]  # sorts the groups
    title: str
    noun: str
    section: tuple[int, str]  # (sort key, title; "" for none)
    order: tuple  # sorts the entries of a section
    text: str


def _short(state, action: int) -> str:
    """An action's name without the card it belongs to (``Architectus: build in X`` -> ``build in X``):
    the group's title says that."""
    name = describe(state, action)
    return name.partition(": ")[2] or name


def _simple(order: int, title: str, noun: str) -> Callable[[object, int], _Item]:
    """Items of a family whose entries are its plain action names, in action-id order."""
    def item(state, a: int) -> _Item:
        return _Item((order,), title.format(ctx=context(state)), noun, (0, ""), (a,), _short(state, a))
    return item


def _play(state, a: int) -> _Item:
    t = state.game.components.card_types[a - E.A_PLAY]
    return _Item((0,), "cards in your hand", "cards", (0, ""), (a,), card_label(t.name, t.god))


def _buy(state, a: int) -> _Item:
    """A display card to buy, named with its god (``buy Farmer (Minerva) at position 7 for ...``)."""
    cid = int(state.field("display")[a - E.A_BUYCARD])
    t = state.game.components.card_types[int(state.game.tables[E.T_CARD_TYPE + cid])]
    text = _short(state, a).replace(f"buy {t.name} ", f"buy {card_label(t.name, t.god)} ", 1)
    return _Item((11,), f"{context(state)}: buy a card", "cards", (0, ""), (a,), text)


# ------------------------------------------------------------ moves
@functools.cache
def _onward(map_name: str) -> dict[int, tuple[int, ...]]:
    """For each route, the cities one route of the same kind further on from either end."""
    from ..game import get_game

    game = get_game(map_name)
    touching: dict[tuple[bool, int], list[tuple[int, int]]] = {}
    for rid, a, b in game.routes:
        touching.setdefault((rid < E.NL, a), []).append((rid, b))
        touching.setdefault((rid < E.NL, b), []).append((rid, a))
    out = {}
    for rid, a, b in game.routes:
        near = {x for end in (a, b) for other, x in touching[(rid < E.NL, end)] if other != rid} - {a, b}
        out[rid] = tuple(sorted(near, key=lambda c: game.map.city_names[c]))
    return out


def _city_text(state, c: int) -> str:
    """``Massilia [food, houses P1 P2]``; Roma, which produces nothing, as ``Roma``."""
    good = int(state.field("city_good")[c])
    if good < 0:
        return state.game.map.city_names[c]
    owners = owners_text(state, c)
    return f"{state.game.map.city_names[c]} [{GOODS[good]}" + (f", houses {owners}]" if owners else "]")


def route_text(state, r: int) -> str:
    """A route as a move's entry says it: both ends (good, owners of houses) and the cities one
    route further on, e.g. ``Lutetia [wine]–Massilia [food, houses P1]; onward: Burdigala, ...``."""
    T, names = state.game.tables, state.game.map.city_names
    a, b = int(T[E.T_ROUTE_A + r]), int(T[E.T_ROUTE_B + r])
    onward = ", ".join(names[c] for c in _onward(state.game.name)[r])
    return f"{_city_text(state, a)}–{_city_text(state, b)}; onward: {onward or 'nothing'}"


def _move(state, a: int) -> _Item:
    slot, r = E.decode_move(a)
    loc = int(state.field("colonist")[state.current_player][slot])
    cost = int(state.game.tables[E.T_DIST + loc * E.NR + r])
    kind = "land" if slot < 3 else "sea"
    title = f"move {kind} colonist {slot % 3 + 1} from {colonist_place(state, loc)}"
    points = f"{cost} point" + ("" if cost == 1 else "s")
    return _Item((3, slot), title, "routes", (cost, points), (state.game.route_name(r),), route_text(state, r))


# ------------------------------------------------------------ Praefectus
def production(state, province: int) -> tuple[np.ndarray, int]:
    """What producing in ``province`` would give: goods per player (rows) and good, and who holds
    the Praefectus Magnus afterwards.

    The rules kernel produces on a copy of the position whose storehouses are emptied first, so
    every good produced is counted (none is lost to a full storehouse, no choice of what to keep
    interrupts)."""
    trial = state.clone()
    trial.field("goods")[:] = 0
    trial.refresh()
    trial.apply(E.A_PRODUCE + province)
    got = trial.field("goods") + trial.field("incoming")
    return got[:state.num_players].copy(), int(trial.field("pm"))


def _produce(state, a: int) -> _Item:
    p, q = state.current_player, a - E.A_PRODUCE
    got, pm_after = production(state, q)
    free = int(E.free_slots(state.s, state.game.tables, p))
    text = f"{state.game.map.province_names[q]}: you get {goods_text(got[p], ' + ')}"
    if int(got[p].sum()) > free:
        text += f" (room for {free})"
    text += "".join(f"; {player_tag(x)} gets {goods_text(got[x], ' + ')}"
                    for x in range(state.num_players) if x != p and got[x].any())
    title = "Praefectus: produce in a province"
    if int(bonus_goods(state.s, p)) == 2:
        title += f" (with the Praefectus Magnus: 2 bonus goods, then it passes to {player_tag(pm_after)})"
    return _Item((5,), title, "provinces", (0, ""), (a,), text)


#: the menu item of each action range (``actions.ACTION_TABLE`` names)
_ITEMS: dict[str, Callable[[object, int], _Item]] = {
    "play": _play,
    "done": _simple(99, "done", "actions"),
    "copy": _simple(2, "Diplomat: copy an action", "actions"),
    "move": _move,
    "build": _simple(4, "{ctx}: build a house", "cities"),
    "produce": _produce,
    "cash bonus": _simple(6, "Praefectus: cash bonus", "actions"),
    "sell": _simple(7, "{ctx}: sell a good", "goods"),
    "buy good": _simple(8, "{ctx}: buy a good", "goods"),
    "place colonist": _simple(9, "{ctx}: place a new colonist", "cities"),
    "colonus cash": _simple(10, "Colonus: cash", "actions"),
    "buy card": _buy,
    "pay": _simple(12, "Senator: pay a '?' with a good", "goods"),
    "keep": _simple(13, "storehouse full: keep a good", "goods"),
}


# ---------------------------------------------------------------- the decision
def decision_text(state) -> str:
    """What the deciding player is asked, with the numbers that limit it (movement points left,
    cards left to buy, ...)."""
    ph, ctx = state.phase, context(state)
    if ph == E.PH_PLAY:
        return f"play a card (card play {card_plays(state) + 1} of the game)"
    if ph == E.PH_ARCHITECTUS:
        if int(state.field("ctx_built")):
            return "Architectus: a house is built (no more moves); build more or stop"
        points = int(state.field("ctx_points"))
        return f"Architectus: {points} movement point{'' if points == 1 else 's'} left"
    if ph == E.PH_BUY:
        left = int(state.field("ctx_buys_left"))
        return f"{ctx}: buy cards ({left} more at most)"
    if ph == E.PH_PAY:
        return f"Senator: pay {int(state.field('ctx_pay_left'))} '?' with goods"
    if ph == E.PH_KEEP:
        free = int(E.free_slots(state.s, state.game.tables, state.current_player))
        return f"storehouse full: keep goods one by one ({free} slot{'' if free == 1 else 's'} free)"
    if ph == E.PH_MERCATOR:
        return f"{ctx}: sell and buy goods (two kinds at most)"
    if ph == E.PH_PRAEFECTUS:
        return "Praefectus: produce in a province, or take the cash bonus"
    if ph == E.PH_COLONUS:
        return "Colonus: place new colonists, or take the cash"
    return state.phase_name


def build_menu(state, who: str = "", width: int = WIDTH, max_lines: int = MAX_LINES,
               numbers: Mapping[int, int] | None = None) -> Menu:
    """The menu of ``state``'s legal actions for its deciding player (``who`` is added to the
    title, e.g. "you"). ``ValueError`` once the game is over: nothing is left to decide.

    Entries are numbered 1, 2, ... in menu order, except that an action with a number in
    ``numbers`` (action id -> number: those of the earlier steps of the same card's action) keeps
    it, and the new ones are numbered after the highest number there: so a number the player has
    seen never changes its meaning while one card's action goes on."""
    legal = state.legal_actions()
    if not legal:
        raise ValueError("the game is over: there is no decision to make")
    items = sorted(((_ITEMS[action_range(a)](state, a), a) for a in legal),
                   key=lambda ia: (ia[0].group, ia[0].section[0], ia[0].order))
    kept = dict(numbers or {})
    fresh = itertools.count(max(kept.values(), default=0) + 1)
    groups: list[Group] = []
    keys = iter(GROUP_KEYS)
    for gid in dict.fromkeys(it.group for it, _ in items):
        mine = [(it, a) for it, a in items if it.group == gid]
        key = next(keys)
        sections = []
        for sid in dict.fromkeys(it.section for it, _ in mine):
            entries = []
            for it, a in mine:
                if it.section == sid:
                    number = kept[a] if a in kept else next(fresh)
                    entries.append(Entry(number, a, describe(state, a) if len(mine) == 1 else it.text))
            sections.append((sid[1], tuple(entries)))
        split = len(sections) > 1
        groups.append(Group(key, mine[0][0].title, mine[0][0].noun,
                            tuple(Section(f"{key}{k}" if split else "", t, es)
                                  for k, (t, es) in enumerate(sections, 1))))
    p = state.current_player
    title = f"Player {p}" + (f" ({who})" if who else "") + f": {decision_text(state)}"
    return Menu(title, tuple(groups), width, max_lines)
