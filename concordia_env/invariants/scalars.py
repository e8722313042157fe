"""The header (player count, map size, phase: checked first, every other check indexes by
them) and the scalar fields: each within its range, and the player to move."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import (
    F_ACTIVE,
    F_BOUGHT,
    F_BOUGHT_POS,
    F_BUILT,
    F_BUYS_LEFT,
    F_CONCORDIA,
    F_CONSUL,
    F_INTERMEDIATE,
    F_KEEP_PLAYER,
    F_KIND,
    F_PAY_LEFT,
    F_PLACED,
    F_PM,
    F_POINTS,
    F_SOLD,
    F_START,
    F_TURN,
    GROUP,
    MAX_TURN,
    Row,
    declare,
    emit,
)
from .tables import X_MAX_ANY, X_NCITIES, X_NPROV, X_PLAYERS_OK

# ------------------------------------------------------------------ the header
C_NPLAYERS = declare(0, "players", "field 'num_players': {a} players cannot play the {map} map "
                     "(allowed: {players})")
C_NCITIES = declare(1, "cities", "field 'num_cities' is {a}, the {map} map has {b} (Roma included)")
C_NPROV = declare(2, "provinces", "field 'num_provinces' is {a}, the {map} map has {b}")
C_PHASE = declare(3, "phase", "field 'phase' is {a}, not a phase (0..{last_phase})")


@kernel(group=GROUP, inline="always")
def check_header(s, X, out):
    """The violations of the header fields; when there is any, nothing else may be checked."""
    n = s[E.O_NPLAYERS]
    if n < 0 or n > E.MAXP or X[X_PLAYERS_OK + n] == 0:
        return emit(out, 0, C_NPLAYERS, n, 0, 0, 0, 0)
    k = 0
    nc = s[E.O_NCITIES]
    if nc != X[X_NCITIES]:
        k = emit(out, k, C_NCITIES, nc, X[X_NCITIES], 0, 0, 0)
    npv = s[E.O_NPROV]
    if npv != X[X_NPROV]:
        k = emit(out, k, C_NPROV, npv, X[X_NPROV], 0, 0, 0)
    ph = s[E.O_PHASE]
    if ph < 0 or ph > E.PH_OVER:
        k = emit(out, k, C_PHASE, ph, 0, 0, 0, 0)
    return k


# ------------------------------------------------------------------ scalar ranges
def _scalar_message(r: Row) -> str:
    why = " (a bound no real game reaches)" if r.a == F_TURN else ""
    return f"field '{r.names.field(r.a)}' is {r.b}, outside the allowed range {r.c}..{r.d}{why}"


C_SCALAR = declare(4, "scalar range", _scalar_message)


@kernel("int64(int32[:, ::1], int64, int32[::1], int64, int64, int64, int64)", exact=True, group=GROUP)
def _range(out, k, s, off, field, lo, hi):
    v = s[off]
    if v < lo or v > hi:
        k = emit(out, k, C_SCALAR, field, v, lo, hi, 0)
    return k


@kernel(group=GROUP)
def check_scalars(s, X, out, k):
    """Every scalar field of the state and of the decision context within its range."""
    n = s[E.O_NPLAYERS]
    k = _range(out, k, s, E.O_ACTIVE, F_ACTIVE, 0, n - 1)
    k = _range(out, k, s, E.O_PM, F_PM, 0, n - 1)
    k = _range(out, k, s, E.O_CONCORDIA, F_CONCORDIA, -1, n - 1)
    k = _range(out, k, s, E.O_START, F_START, 0, n - 1)
    k = _range(out, k, s, E.O_TURN, F_TURN, 0, MAX_TURN)
    k = _range(out, k, s, E.O_INTERMEDIATE, F_INTERMEDIATE, 0, 1)
    k = _range(out, k, s, E.O_KIND, F_KIND, 0, E.NK - 1)
    k = _range(out, k, s, E.O_POINTS, F_POINTS, 0, E.NCOL)
    k = _range(out, k, s, E.O_BUILT, F_BUILT, 0, 1)
    k = _range(out, k, s, E.O_SOLD, F_SOLD, 0, (1 << E.NG) - 1)
    k = _range(out, k, s, E.O_BOUGHT, F_BOUGHT, 0, (1 << E.NG) - 1)
    k = _range(out, k, s, E.O_PLACED, F_PLACED, 0, 1)
    k = _range(out, k, s, E.O_BUYS_LEFT, F_BUYS_LEFT, 0, 2)
    k = _range(out, k, s, E.O_CONSUL, F_CONSUL, 0, 1)
    k = _range(out, k, s, E.O_BOUGHT_POS, F_BOUGHT_POS, 0, (1 << E.NDISP) - 1)
    k = _range(out, k, s, E.O_PAY_LEFT, F_PAY_LEFT, 0, X[X_MAX_ANY])
    k = _range(out, k, s, E.O_KEEP_PLAYER, F_KEEP_PLAYER, -1, n - 1)
    return k


# ------------------------------------------------------------------ the player to move
def _current_message(r: Row) -> str:
    why = ("the game is over" if r.c == E.PH_OVER else
           "the owner of the overflowing storehouse (ctx_keep_player) decides" if r.c == E.PH_KEEP
           else "the active player decides")
    return f"field 'current' is {r.a} but should be {r.b} in phase {r.names.phase(r.c)}: {why}"


C_CURRENT = declare(5, "player to move", _current_message)


@kernel(group=GROUP, inline="always")
def check_current(s, out, k):
    ph = s[E.O_PHASE]
    if ph == E.PH_OVER:
        expected = -1
    elif ph == E.PH_KEEP:
        expected = s[E.O_KEEP_PLAYER]
    else:
        expected = s[E.O_ACTIVE]
    if s[E.O_CURRENT] != expected:
        k = emit(out, k, C_CURRENT, s[E.O_CURRENT], expected, ph, 0, 0)
    return k



