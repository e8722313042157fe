"""The legal moves of a state as the play page offers them: grouped by kind with their text, and
tied to what they act on (a city, a route, a province, a display card, a card in hand) so a click
on the board or a card picks them.

The groups are those of the terminal's menu (:func:`concordia_env.display.menu.build_menu`: cards in hand,
one colonist's moves split by cost, build, produce with what each player would get, sell, buy,
...), so ``concordia play`` and ``concordia serve`` list a decision the same way. Each move also
carries its full name (:func:`concordia_env.actions.describe`, as the records and the log say it)
for the list a click on a shared place shows.
"""

from __future__ import annotations

from typing import Any

from .. import engine as E
from ..actions import action_range
from ..display.menu import build_menu
from ..state import GameState

#: what a click can pick: the board's cities, routes and provinces, the display, the hand
TARGET_KINDS = ("city", "route", "province", "display", "card")


def target_of(action: int) -> tuple[str, int] | None:
    """``(kind, index)`` of the thing ``action`` acts on, one of :data:`TARGET_KINDS` (a city or
    route id of the map, a province, a display position, a card type), or None for actions with
    nothing to click (done, sell, pay, ...)."""
    kind = action_range(action)
    if kind == "move":
        return "route", int(E.decode_move(action)[1])
    if kind == "build":
        return "city", action - E.A_BUILD
    if kind == "place colonist":
        return "city", (action - E.A_PLACE) % E.NC
    if kind == "produce":
        return "province", action - E.A_PRODUCE
    if kind == "buy card":
        return "display", action - E.A_BUYCARD
    if kind == "play":
        return "card", action - E.A_PLAY
    return None


def move_groups(state: GameState) -> tuple[str, list[dict[str, Any]]]:
    """What the deciding player is asked (the menu's title, e.g. ``Player 0 (you): Architectus: 2
    movement points left``) and the legal actions grouped as the terminal's menu groups them:
    ``[{"key", "kind", "title", "noun", "sections": [{"title", "moves": [{"action", "number",
    "text", "full"}]}]}]``. ``kind`` is the action range (``move``, ``build``, ...), a section's
    title is "" unless the group is split (a colonist's moves by cost), ``text`` is the menu
    entry and ``full`` the action's name. ``ValueError`` once the game is over."""
    menu = build_menu(state, "you")
    groups = []
    for g in menu.groups:
        sections = [{"title": s.title,
                     "moves": [{"action": e.action, "number": e.number, "text": e.text,
                                "full": state.action_to_string(e.action)} for e in s.entries]}
                    for s in g.sections]
        groups.append({"key": g.key, "kind": action_range(g.entries[0].action), "title": g.title,
                       "noun": g.noun, "sections": sections})
    return menu.title, groups


def move_targets(state: GameState) -> dict[str, dict[str, list[int]]]:
    """``{kind: {index: [actions]}}`` for every :data:`TARGET_KINDS` kind (indices as strings, as
    JSON keys are): which legal actions a click on each city, route, province, display card or
    card in hand offers."""
    out: dict[str, dict[str, list[int]]] = {kind: {} for kind in TARGET_KINDS}
    for action in state.legal_actions():
        target = target_of(action)
        if target is not None:
            out[target[0]].setdefault(str(target[1]), []).append(int(action))
    return out
