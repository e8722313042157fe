"""The entry kernel: every subject's checks, in the order the package docstring explains."""

from __future__ import annotations

import numpy as np

from .. import engine as E
from .._internal.jit import kernel
from ..game import Game
from .base import GROUP, MAXERR
from .board import check_cities, check_markers, check_tokens, count_own
from .cards import check_conservation, check_player_cards
from .colonists import check_colonists, check_routes, clear_routes
from .concordia import check_concordia
from .context import check_action, check_keep
from .deck import check_deck, check_display, check_display_full
from .players import (
    check_absent_seat,
    check_goods,
    check_houses_left,
    check_intermediate,
    check_scores_reset,
    check_storehouse,
)
from .scalars import check_current, check_header, check_scalars
from .tables import NLETTERS, aux

# ------------------------------------------------------------------ scratch
# The caller passes one int64 array (the kernels allocate nothing), cut into the counts the
# checks share; each is set up by the checker that fills it.
_SCRATCH_LAYOUT = (
    ("built", E.MAXP),  # houses built per player
    ("own", E.MAXP * E.NG),  # houses per player in cities of each good
    ("counts", NLETTERS * E.NG),  # cities per letter and good
    ("occ_count", E.NR),  # colonists per route
    ("occ_mask", E.NR),  # bitmask of the players with a colonist there
    ("held", E.NT),  # cards per type in hands and discard piles
    ("pos_of", E.NCARD),  # deck position per card id
    ("seen", E.NCARD),  # 1 per card id on the display
    ("want", E.NT),  # cards per type the players should hold
)
_AT = {}
_off = 0
for _name, _size in _SCRATCH_LAYOUT:
    _AT[_name] = _off
    _off += _size
#: length of the scratch array :func:`check` needs
SCRATCH_SIZE = _off
S_BUILT, S_OWN, S_COUNTS = _AT["built"], _AT["own"], _AT["counts"]
S_OCC_COUNT, S_OCC_MASK, S_HELD = _AT["occ_count"], _AT["occ_mask"], _AT["held"]
S_POS_OF, S_SEEN, S_WANT = _AT["pos_of"], _AT["seen"], _AT["want"]


# ------------------------------------------------------------------ the seats
@kernel(group=GROUP)
def _check_seats(s, T, X, out, k, city_ok, scratch):
    """Every seat: an absent one is neutral, a player's fields, colonists and cards are checked
    one player after the other. Returns ``(k, cards_ok, no_houses)``: ``cards_ok`` when no card
    count is negative, ``no_houses`` the last player with no house left (-1: none)."""
    n = s[E.O_NPLAYERS]
    built = scratch[S_BUILT:S_BUILT + E.MAXP]
    own = scratch[S_OWN:S_OWN + E.MAXP * E.NG]
    occ_count = scratch[S_OCC_COUNT:S_OCC_COUNT + E.NR]
    occ_mask = scratch[S_OCC_MASK:S_OCC_MASK + E.NR]
    held = scratch[S_HELD:S_HELD + E.NT]
    clear_routes(occ_count, occ_mask)
    held[:] = 0
    cards_ok = True
    no_houses = -1
    for q in range(E.MAXP):
        if q >= n:
            k = check_absent_seat(s, out, k, q)
            continue
        k = check_goods(s, out, k, q, city_ok, own)
        k = check_colonists(s, T, X, out, k, q, occ_count, occ_mask)
        k = check_storehouse(s, T, out, k, q)
        k = check_houses_left(s, T, out, k, q, built)
        if s[E.O_HOUSES_LEFT + q] == 0:
            no_houses = q
        k, ok = check_player_cards(s, X, out, k, q, held)
        cards_ok = cards_ok and ok
        k = check_intermediate(s, out, k, q)
    return k, cards_ok, no_houses


# ------------------------------------------------------------------ the whole state
@kernel(group=GROUP)
def _check_cards(s, T, X, out, k, cards_ok, scratch):
    """The deck, the display and the conservation of cards. Returns ``(k, deck_ok, shown)``."""
    pos_of = scratch[S_POS_OF:S_POS_OF + E.NCARD]
    seen = scratch[S_SEEN:S_SEEN + E.NCARD]
    k, deck_ok = check_deck(s, X, out, k, pos_of)
    k, display_ok, shown = check_display(s, out, k, deck_ok, pos_of, seen)
    k = check_display_full(s, out, k, deck_ok, shown)
    if deck_ok and display_ok and cards_ok:
        held = scratch[S_HELD:S_HELD + E.NT]
        k = check_conservation(s, T, X, out, k, held, seen, scratch[S_WANT:S_WANT + E.NT])
    return k, deck_ok, shown


@kernel("int32[::1], int32[::1], int32[::1], int32[:, ::1], int64[::1]", group=GROUP)
def check(s, T, X, out, scratch):
    """Write one row (code, a, b, c, d, e) per violated invariant into ``out`` (the first
    :data:`MAXERR`); return how many there are.

    ``T`` is the game's tables, ``X`` the map's :func:`~concordia_env.invariants.tables.aux`
    table, ``scratch`` an int64 array of :data:`SCRATCH_SIZE`."""
    k = check_header(s, X, out)
    if k > 0:
        return k
    k = check_scalars(s, X, out, k)
    k = check_current(s, out, k)
    k, city_ok = check_cities(s, out, k, scratch[S_BUILT:S_BUILT + E.MAXP])
    if city_ok:
        k = check_tokens(s, X, out, k, scratch[S_COUNTS:S_COUNTS + NLETTERS * E.NG])
        count_own(s, scratch[S_OWN:S_OWN + E.MAXP * E.NG])
    k = check_markers(s, T, out, k, city_ok)
    k, cards_ok, no_houses = _check_seats(s, T, X, out, k, city_ok, scratch)
    k = check_scores_reset(s, out, k)
    k = check_routes(s, X, out, k, scratch[S_OCC_COUNT:S_OCC_COUNT + E.NR], scratch[S_OCC_MASK:S_OCC_MASK + E.NR])
    k, deck_ok, shown = _check_cards(s, T, X, out, k, cards_ok, scratch)
    k = check_concordia(s, out, k, deck_ok, shown, no_houses)
    k = check_action(s, T, X, out, k)
    return check_keep(s, T, out, k)


#: the scratch of :func:`find_violations`, shared: a kernel holds the GIL (none of the package
#: releases it) and its scratch means nothing once it returns, so calls never overlap on it;
#: one allocation less per call (most calls find nothing: the allocation would cost a fifth)
_SCRATCH = np.empty(SCRATCH_SIZE, dtype=np.int64)
_NO_ROWS = np.empty((0, 6), dtype=np.int32)
_NO_ROWS.flags.writeable = False


def find_violations(game: Game, s: np.ndarray) -> tuple[np.ndarray, int]:
    """The violation rows of state ``s`` (int32, ``STATE_SIZE``) on ``game`` (at most
    :data:`MAXERR`, one per line: code, a, b, c, d, e) and how many violations there are."""
    out = np.empty((MAXERR, 6), dtype=np.int32)
    k = int(check(s, game.tables, aux(game.name), out, _SCRATCH))
    return (out[:min(k, MAXERR)] if k else _NO_ROWS), k



