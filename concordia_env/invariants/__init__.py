"""The rule invariants of a flat state array, each declared once beside its check.

Every invariant is declared with :func:`~.base.declare`: its violation code (a constant the
kernels compile in, ``C_*``), a short name and its message, a template of the five integers
the check writes in its violation row (see :mod:`.messages`). The declaration sits right
above the small kernel that checks it, one module per subject:

==============  ===================================================================================
``scalars``     the header (player count, map size, phase), scalar ranges, the player to move
``board``       the cities' goods and houses, city tokens, bonus markers
``players``     absent seats, sestertii, goods and goods waiting, storehouse, houses left,
                intermediate scoring
``colonists``   where each colonist stands, who holds each route
``cards``       hands, discard piles and their top card, conservation of cards
``deck``        the deck and the display
``concordia``   the Concordia card and the end of the game
``context``     the action under way and its counters, the overflow choice
==============  ===================================================================================

``base`` holds the registry, the violation row writer :func:`~.base.emit` and the bounds,
``tables`` the per-map auxiliary table ``X``, ``messages`` the formatting of rows, and
``entry`` the kernel :func:`check` that runs every subject's checks and its Python wrapper
:func:`find_violations` (it passes a scratch array: the kernels allocate nothing).

The larger checkers called once per state are kernels of their own; the small ones, those
called once per seat and the checks inside a loop are compiled inline into their caller
(``inline="always"``): property tests call :func:`check` after every action of thousands of
games, and a call between kernels costs reference counting for each array it passes. For
the same reason the checks inside a loop (per city, per good) are plain functions of
integers returning the violation's code or row, and the loop writes it. (Compiling every
checker inline runs a few percent faster and takes almost twice as long to compile.)

Order of the checks: hostile integers never index out of bounds
--------------------------------------------------------------
A state to check may hold any int32 anywhere (a loaded file, a fuzzing test), and numba does
not check bounds, so no check indexes by a field before the checks it depends on passed:

1. the header, first and alone: ``num_players`` is a player count of the map (it bounds
   every loop over seats and indexes ``X``), ``num_cities`` and ``num_provinces`` are the
   map's, ``phase`` is a phase. On any violation :func:`check` stops there, and every later
   checker may read these four fields as they are;
2. the scalar ranges and the player to move: report only. The scalars used as indices later
   (``active``, ``concordia``, ``ctx_kind``, ``ctx_keep_player``) are range-checked again
   where they are used (``0 <= active < num_players`` ...), and what uses them is skipped
   when they are out of range;
3. the cities, which yield ``city_ok`` (every city's good is a good, padding -1): city
   tokens, the houses per player and good (``own``) and the bonus markers' goods index by
   the goods only when it holds; the houses per player (``built``) count valid bitmasks only;
4. the seats, one after the other: an absent seat is neutral; a player's sestertii, goods
   and goods waiting (bounded by ``own`` only when ``city_ok``), colonists (a location
   indexes only when it is a city or a route: they count the colonists per route),
   storehouse, houses left (against ``built``), cards (yielding ``cards_ok``: no count
   negative; the top card indexes only when it is a card type) and intermediate scoring;
5. the routes, against the colonists counted on them;
6. the deck, which yields ``deck_ok`` (length and position right, every card id valid and
   once): the display compares with the deck positions only when it holds, and yields
   ``display_ok`` (card ids, once each, drawn from the deck);
7. the conservation of cards, only when ``deck_ok``, ``display_ok`` and ``cards_ok``;
8. the Concordia card (when ``concordia`` is in range; what depends on the deck only when
   ``deck_ok``), the action under way (when ``active`` and ``ctx_kind`` are in range) and
   the overflow choice (when ``ctx_keep_player`` is in range).

Rows come in this order, and within a step in the order of the seats, cities, routes or
positions checked; the messages keep it.
"""

from __future__ import annotations

from .base import (
    MAX_BONUS_GOODS,
    MAX_COINS,
    MAX_SCORE,
    MAX_TURN,
    MAXERR,
    REGISTRY,
    Invariant,
    Row,
    declare,
)
from .board import (
    C_CITY_GOOD_PAD,
    C_CITY_GOOD_RANGE,
    C_CITY_TOKENS,
    C_HOUSE_BITS,
    C_HOUSE_PAD,
    C_HOUSE_ROMA,
    C_MARKER_ACTIVE,
    C_MARKER_GOOD,
    C_MARKER_PAD,
)
from .cards import (
    C_CARDS_START,
    C_CARDS_TOTAL,
    C_CARDS_TYPE,
    C_DISCARD_NEG,
    C_HAND_NEG,
    C_SEN_COUNT,
    C_TOP_EMPTY,
    C_TOP_MISSING,
    C_TOP_RANGE,
    C_TRIB_COUNT,
    C_TRIB_HAND,
)
from .colonists import (
    C_COL_BAD,
    C_COL_CITY_KIND,
    C_COL_NO_HOUSE,
    C_COL_NONE,
    C_COL_OCC,
    C_COL_ROUTE_KIND,
    C_ROUTE_OCC_EMPTY,
    C_ROUTE_OCC_RANGE,
    C_ROUTE_PAD,
    C_ROUTE_TWO,
)
from .concordia import C_CONC_CARDS, C_CONC_HOUSES, C_CONC_UNEARNED, C_OVER_ACTIVE, C_OVER_NO_CONC
from .context import (
    C_ACTIVE_TOP,
    C_ARCH_POINTS,
    C_BUY_COUNT,
    C_CONSUL_FLAG,
    C_COPY_SOURCE,
    C_CTX_KIND,
    C_INCOMING_RESOLVED,
    C_KEEP,
    C_MERC_BOTH,
    C_MERC_KINDS,
    C_PAY_LEFT,
    C_TRIB_DISCARD,
)
from .deck import (
    C_DECK_CARD,
    C_DECK_DUP,
    C_DECK_LEN,
    C_DECK_ORDER,
    C_DECK_PAD,
    C_DECK_POS,
    C_DISPLAY_BOUGHT,
    C_DISPLAY_CARD,
    C_DISPLAY_DUP,
    C_DISPLAY_GAP,
    C_DISPLAY_NOT_FULL,
    C_DISPLAY_UNDRAWN,
)
from .entry import SCRATCH_SIZE, check, find_violations
from .messages import Names, describe_rows
from .players import (
    C_ABSENT,
    C_COINS,
    C_GOODS,
    C_HOUSES_LEFT,
    C_INCOMING_MAX,
    C_INCOMING_NEG,
    C_INCOMING_NONZERO,
    C_INTER_DONE,
    C_INTER_OFF,
    C_INTER_RESET,
    C_INTER_SCORE,
    C_PLAYER_RANGE,
    C_STORE,
)
from .scalars import C_CURRENT, C_NCITIES, C_NPLAYERS, C_NPROV, C_PHASE, C_SCALAR
from .tables import aux

__all__ = [
    "MAXERR", "MAX_BONUS_GOODS", "MAX_COINS", "MAX_SCORE", "MAX_TURN", "REGISTRY", "SCRATCH_SIZE", "find_violations", "Invariant",
    "Names", "Row", "aux", "check", "declare", "describe_rows",
    "C_ABSENT", "C_ACTIVE_TOP", "C_ARCH_POINTS", "C_BUY_COUNT", "C_CARDS_START", "C_CARDS_TOTAL", "C_CARDS_TYPE",
    "C_CITY_GOOD_PAD", "C_CITY_GOOD_RANGE", "C_CITY_TOKENS", "C_COINS", "C_COL_BAD", "C_COL_CITY_KIND", "C_COL_NONE",
    "C_COL_NO_HOUSE", "C_COL_OCC", "C_COL_ROUTE_KIND", "C_CONC_CARDS", "C_CONC_HOUSES", "C_CONC_UNEARNED",
    "C_CONSUL_FLAG", "C_COPY_SOURCE", "C_CTX_KIND", "C_CURRENT", "C_DECK_CARD", "C_DECK_DUP", "C_DECK_LEN",
    "C_DECK_ORDER", "C_DECK_PAD", "C_DECK_POS", "C_DISCARD_NEG", "C_DISPLAY_BOUGHT", "C_DISPLAY_CARD",
    "C_DISPLAY_DUP", "C_DISPLAY_GAP", "C_DISPLAY_NOT_FULL", "C_DISPLAY_UNDRAWN", "C_GOODS", "C_HAND_NEG",
    "C_HOUSES_LEFT", "C_HOUSE_BITS", "C_HOUSE_PAD", "C_HOUSE_ROMA", "C_INCOMING_MAX", "C_INCOMING_NEG",
    "C_INCOMING_NONZERO", "C_INCOMING_RESOLVED", "C_INTER_DONE", "C_INTER_OFF", "C_INTER_RESET", "C_INTER_SCORE",
    "C_KEEP", "C_MARKER_ACTIVE", "C_MARKER_GOOD", "C_MARKER_PAD", "C_MERC_BOTH", "C_MERC_KINDS", "C_NCITIES",
    "C_NPLAYERS", "C_NPROV", "C_OVER_ACTIVE", "C_OVER_NO_CONC", "C_PAY_LEFT", "C_PHASE", "C_PLAYER_RANGE",
    "C_ROUTE_OCC_EMPTY", "C_ROUTE_OCC_RANGE", "C_ROUTE_PAD", "C_ROUTE_TWO", "C_SCALAR", "C_SEN_COUNT", "C_STORE",
    "C_TOP_EMPTY", "C_TOP_MISSING", "C_TOP_RANGE", "C_TRIB_COUNT", "C_TRIB_DISCARD", "C_TRIB_HAND",
]
