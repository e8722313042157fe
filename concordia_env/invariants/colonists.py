"""Colonists and routes: where each colonist stands (checked per player, counting the colonists
on each route), then who holds each route."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, declare, emit
from .tables import X_NLAND, X_NSEA

# ------------------------------------------------------------------ colonists (per player)
C_COL_BAD = declare(18, "colonist location", "field 'colonist': player {a}'s {b:slot} is at location {c}, neither "
                    "the storehouse (-1), a city (0..{last_city}) nor a route ({first_route}..{last_route})")
C_COL_CITY_KIND = declare(19, "colonist city", "field 'colonist': player {a}'s {b:slot} stands in {c:city}, which "
                          "no {b:side_of_slot} route touches")
C_COL_ROUTE_KIND = declare(20, "colonist route", "field 'colonist': player {a}'s {b:slot} stands on {c:route}, not "
                           "a {b:side_of_slot} route of the {map} map")
C_COL_NO_HOUSE = declare(21, "colonist without house", "field 'colonist': player {a}'s {b:slot} stands in {c:city} "
                         "where player {a} has no house")
C_COL_OCC = declare(22, "colonist route holder", "field 'route_occ': player {a}'s {b:slot} stands on {c:route} but "
                    "route_occ there is {d}")
C_COL_NONE = declare(27, "colonist on the board", "field 'colonist': player {a} has no {b:side} colonist on the "
                     "board (one starts in Roma and colonists never return to the storehouse)")


@kernel(group=GROUP, inline="always")
def _route_fits(X, i, r):
    """Whether route ``r`` of the map is of the kind (land or sea) of colonist slot ``i``."""
    if i < 3:
        return r < X[X_NLAND]
    return E.NL <= r < E.NL + X[X_NSEA]


@kernel(group=GROUP, inline="always")
def check_colonists(s, T, X, out, k, q, occ_count, occ_mask):
    """Where player ``q``'s colonists stand; counts those on each route in ``occ_count``, and
    marks their players in ``occ_mask`` (set up by :func:`clear_routes`)."""
    nc = s[E.O_NCITIES]
    land = 0
    sea = 0
    for i in range(E.NCOL):
        loc = s[E.O_COLONIST + q * E.NCOL + i]
        if loc == -1:
            continue
        if i < 3:
            land += 1
        else:
            sea += 1
        if 0 <= loc < nc:  # in a city
            if (T[E.T_CITY_LAND + loc] if i < 3 else T[E.T_CITY_SEA + loc]) == 0:
                k = emit(out, k, C_COL_CITY_KIND, q, i, loc, 0, 0)
            if loc > 0 and not (s[E.O_HOUSES + loc] >> q) & 1:
                k = emit(out, k, C_COL_NO_HOUSE, q, i, loc, 0, 0)
        elif E.NC <= loc < E.NC + E.NR:  # on a route
            r = loc - E.NC
            if not _route_fits(X, i, r):
                k = emit(out, k, C_COL_ROUTE_KIND, q, i, r, 0, 0)
            occ_count[r] += 1
            occ_mask[r] |= 1 << q
            if s[E.O_ROUTE_OCC + r] != q:
                k = emit(out, k, C_COL_OCC, q, i, r, s[E.O_ROUTE_OCC + r], 0)
        else:
            k = emit(out, k, C_COL_BAD, q, i, loc, 0, 0)
    if land == 0:
        k = emit(out, k, C_COL_NONE, q, 0, 0, 0, 0)
    if sea == 0:
        k = emit(out, k, C_COL_NONE, q, 1, 0, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def clear_routes(occ_count, occ_mask):
    occ_count[:] = 0
    occ_mask[:] = 0


# ------------------------------------------------------------------ routes
C_ROUTE_TWO = declare(23, "route colonists", "field 'colonist': {b} colonists stand on {a:route} (a route holds at "
                      "most one)")
C_ROUTE_OCC_EMPTY = declare(24, "route holder absent", "field 'route_occ': {a:route} is marked as held by player "
                            "{b}, who has no colonist there")
C_ROUTE_PAD = declare(25, "route padding", "field 'route_occ': index {a} is no route of the {map} map but holds {b} "
                      "(must be -1)")
C_ROUTE_OCC_RANGE = declare(26, "route holder", "field 'route_occ': {a:route} holds {b}, not a player or -1")


@kernel(group=GROUP)
def check_routes(s, X, out, k, occ_count, occ_mask):
    """Each route held by the one player whose colonist stands there (after every player's
    :func:`check_colonists`); padding routes hold -1."""
    n = s[E.O_NPLAYERS]
    nland = X[X_NLAND]
    nsea = X[X_NSEA]
    for r in range(E.NR):
        o = s[E.O_ROUTE_OCC + r]
        if not (r < nland or (E.NL <= r < E.NL + nsea)):
            if o != -1:
                k = emit(out, k, C_ROUTE_PAD, r, o, 0, 0, 0)
            continue
        if o < -1 or o >= n:
            k = emit(out, k, C_ROUTE_OCC_RANGE, r, o, 0, 0, 0)
        elif o >= 0 and not (occ_mask[r] >> o) & 1:
            k = emit(out, k, C_ROUTE_OCC_EMPTY, r, o, 0, 0, 0)
        if occ_count[r] > 1:
            k = emit(out, k, C_ROUTE_TWO, r, occ_count[r], 0, 0, 0)
    return k



