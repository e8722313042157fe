"""The flat action space: one table of id ranges, and readable names for every id.

One integer action space serves both maps and every player count (ids of
routes, cities or provinces a map does not have are never legal, and
:func:`describe` names them as such, e.g. "(no such city on Italia)").
A turn is a sequence of atomic decisions: play a card, then that card's
decisions, then 'done' where the rules allow stopping.

=========================  =====================  ==============================================
ids                        name                   meaning
=========================  =====================  ==============================================
0 – 16                     play                   play a card of type t from hand (17 card types)
17                         done                   end the current card's action
18 – 30                    copy                   Diplomat: carry out action kind k (13 kinds)
31 – 267                   move                   Architectus: move colonist (land 1-3 / sea 1-3)
                                                  to a route; cost = shortest path in points
268 – 298                  build                  Architectus: build a house in city c
299 – 310                  produce                Praefectus: produce in province q
311                        cash bonus             Praefectus: take the coins of flipped markers
312 – 316                  sell                   Mercator: sell 1 good g
317 – 321                  buy good               Mercator: buy 1 good g
322 – 383                  place colonist         Colonus/Tribunus: new land (322+c) or sea
                                                  (353+c) colonist in city c (Roma = 0)
384                        colonus cash           Colonus: 5 + 1 per colonist on the board (components.json)
385 – 391                  buy card               Senator/Consul: buy the card at display position
392 – 396                  pay                    Senator: pay a '?' with good g
397 – 401                  keep                   storehouse full: keep 1 good g (owner decides)
=========================  =====================  ==============================================

The table is checked against the kernel's constants by the tests.
"""

from __future__ import annotations

from collections.abc import Callable

from . import engine as E
from .rules import architectus, colonus, diplomat, mercator, play, praefectus, senator, storehouse, turn
from .rules.names import KIND_NAMES

__all__ = ["ACTION_TABLE", "KIND_NAMES", "NAMERS", "action_range", "describe"]

#: (first id, last id inclusive, short name) of every action range.
ACTION_TABLE: tuple[tuple[int, int, str], ...] = (
    (E.A_PLAY, E.A_DONE - 1, "play"),
    (E.A_DONE, E.A_DONE, "done"),
    (E.A_COPY, E.A_MOVE - 1, "copy"),
    (E.A_MOVE, E.A_BUILD - 1, "move"),
    (E.A_BUILD, E.A_PRODUCE - 1, "build"),
    (E.A_PRODUCE, E.A_CASH - 1, "produce"),
    (E.A_CASH, E.A_CASH, "cash bonus"),
    (E.A_SELL, E.A_BUYGOOD - 1, "sell"),
    (E.A_BUYGOOD, E.A_PLACE - 1, "buy good"),
    (E.A_PLACE, E.A_COLONUS_CASH - 1, "place colonist"),
    (E.A_COLONUS_CASH, E.A_COLONUS_CASH, "colonus cash"),
    (E.A_BUYCARD, E.A_PAY - 1, "buy card"),
    (E.A_PAY, E.A_KEEP - 1, "pay"),
    (E.A_KEEP, E.NUM_ACTIONS - 1, "keep"),
)

#: the family that names each action range: ``namer(state, action)`` gives the text
NAMERS: dict[str, Callable[[object, int], str]] = {
    "play": play.name_play,
    "done": turn.name_done,
    "copy": diplomat.name_copy,
    "move": architectus.name_move,
    "build": architectus.name_build,
    "produce": praefectus.name_produce,
    "cash bonus": praefectus.name_cash,
    "sell": mercator.name_sell,
    "buy good": mercator.name_buy,
    "place colonist": colonus.name_place,
    "colonus cash": colonus.name_cash,
    "buy card": senator.name_buy_card,
    "pay": senator.name_pay,
    "keep": storehouse.name_keep,
}


def action_range(action: int) -> str:
    """Short name of the range ``action`` falls in (e.g. "move")."""
    for lo, hi, name in ACTION_TABLE:
        if lo <= action <= hi:
            return name
    raise ValueError(f"action {action} is outside 0..{E.NUM_ACTIONS - 1}")


def describe(state, action: int) -> str:
    """Readable description of ``action`` in ``state`` (costs are those the state would charge)."""
    return NAMERS[action_range(action)](state, action)
