"""The players' own fields: absent seats, sestertii, goods and goods waiting for an overflow
choice, the storehouse, houses left, and intermediate scoring."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import (
    F_COINS,
    F_COLONIST,
    F_DISCARD,
    F_GOODS,
    F_HAND,
    F_HOUSES_LEFT,
    F_INCOMING,
    F_INTER_DONE,
    F_INTER_SCORE,
    F_TOP,
    GROUP,
    MAX_BONUS_GOODS,
    MAX_COINS,
    MAX_SCORE,
    Row,
    declare,
    emit,
)

# ------------------------------------------------------------------ absent seats
C_ABSENT = declare(72, "absent seat", "field '{b:field}': seat {a} is absent ({nplayers} players) but holds {c} "
                   "(must be {d})")


#: the fields of a seat: (field, offset of seat 0, stride per seat, size, neutral value)
_SEAT_FIELDS = (
    (F_COINS, E.O_COINS, 1, 1, 0),
    (F_TOP, E.O_TOP, 1, 1, -1),
    (F_HOUSES_LEFT, E.O_HOUSES_LEFT, 1, 1, 0),
    (F_INTER_DONE, E.O_INTER_DONE, 1, 1, 0),
    (F_INTER_SCORE, E.O_INTER_SCORE, 1, 1, 0),
    (F_GOODS, E.O_GOODS, E.NG, E.NG, 0),
    (F_INCOMING, E.O_INCOMING, E.NG, E.NG, 0),
    (F_HAND, E.O_HAND, E.NT, E.NT, 0),
    (F_DISCARD, E.O_DISCARD, E.NT, E.NT, 0),
    (F_COLONIST, E.O_COLONIST, E.NCOL, E.NCOL, -1),
)


@kernel(group=GROUP, inline="always")
def check_absent_seat(s, out, k, q):
    """An absent seat keeps the neutral values ``initial_state`` gives it (the first value
    that is not is reported, per field)."""
    for field, base, stride, size, neutral in _SEAT_FIELDS:
        off = base + q * stride
        for i in range(size):
            if s[off + i] != neutral:
                k = emit(out, k, C_ABSENT, q, field, s[off + i], neutral, 0)
                break
    return k


# ------------------------------------------------------------------ sestertii, goods, goods waiting
C_COINS = declare(6, "sestertii", "field 'coins': player {a} has {b} sestertii (must be >= 0, and at most "
                  "{max_coins}, a bound no real game reaches)")
C_GOODS = declare(7, "goods", "field 'goods': player {a} has {c} {b:good} (must be >= 0)")
C_INCOMING_NEG = declare(66, "goods waiting", "field 'incoming': player {a} receives {c} {b:good} (must be >= 0)")
C_INCOMING_NONZERO = declare(67, "goods waiting outside a choice", "field 'incoming': player {a} has {c} {b:good} "
                             "waiting in phase {d:phase}; goods wait only for an overflow choice")


def _incoming_max_message(r: Row) -> str:
    extra = f" + {r.e} Praefectus bonus" if r.e else ""
    good = r.names.good(r.b)
    return (f"field 'incoming': player {r.a} receives {r.c} {good}, more than production can bring "
            f"(one per house in a {good} city: {r.d}{extra})")


C_INCOMING_MAX = declare(76, "goods waiting beyond production", _incoming_max_message)


@kernel(group=GROUP, inline="always")
def _incoming_row(w, ph, bonus, owned, city_ok):
    """The violation of ``w`` goods of one kind waiting in phase ``ph`` for a player with
    ``owned`` houses in cities of that good (known when ``city_ok``) and a production bonus
    ``bonus``: (code, d, e) of row (player, good, w, d, e), code -1 when none."""
    if w < 0:
        return C_INCOMING_NEG, 0, 0
    if w > 0 and ph != E.PH_KEEP:
        return C_INCOMING_NONZERO, ph, 0
    # one good per house in a city of that good, plus the active player's bonus
    if w > 0 and city_ok and w > owned + bonus:
        return C_INCOMING_MAX, owned, bonus
    return -1, 0, 0


@kernel(group=GROUP, inline="always")
def check_goods(s, out, k, q, city_ok, own):
    """Player ``q``'s sestertii (never negative, far from int32 overflow), goods and goods
    waiting (bounded by ``own``, houses per player and good, known when ``city_ok``)."""
    if s[E.O_COINS + q] < 0 or s[E.O_COINS + q] > MAX_COINS:
        k = emit(out, k, C_COINS, q, s[E.O_COINS + q], 0, 0, 0)
    ph = s[E.O_PHASE]
    bonus = MAX_BONUS_GOODS if q == s[E.O_ACTIVE] else 0
    for g in range(E.NG):
        v = s[E.O_GOODS + q * E.NG + g]
        if v < 0:
            k = emit(out, k, C_GOODS, q, g, v, 0, 0)
        w = s[E.O_INCOMING + q * E.NG + g]
        owned = own[q * E.NG + g] if city_ok else 0
        code, d, e = _incoming_row(w, ph, bonus, owned, city_ok)
        if code >= 0:
            k = emit(out, k, code, q, g, w, d, e)
    return k


# ------------------------------------------------------------------ the storehouse
def _store_message(r: Row) -> str:
    return (f"field 'goods': player {r.a}'s storehouse holds {r.b} goods + {r.c} colonists = {r.b + r.c}, "
            f"more than its {r.d} slots")


C_STORE = declare(8, "storehouse", _store_message)


@kernel(group=GROUP, inline="always")
def check_storehouse(s, T, out, k, q):
    """Player ``q``'s goods and colonists in the storehouse fit its slots (when no good is negative)."""
    stored = 0
    for g in range(E.NG):
        v = s[E.O_GOODS + q * E.NG + g]
        if v < 0:
            return k
        stored += v
    in_store = 0
    for i in range(E.NCOL):
        if s[E.O_COLONIST + q * E.NCOL + i] == -1:
            in_store += 1
    if stored + in_store > T[E.T_STORE]:
        k = emit(out, k, C_STORE, q, stored, in_store, T[E.T_STORE], 0)
    return k


# ------------------------------------------------------------------ houses left
C_PLAYER_RANGE = declare(73, "player field range", "field '{a:field}': player {b} has {c}, outside the allowed "
                         "range {d}..{e}")
C_HOUSES_LEFT = declare(17, "houses left", "field 'houses_left': player {a} has {b} houses left and {c} built "
                        "(must total {d})")


@kernel(group=GROUP, inline="always")
def check_houses_left(s, T, out, k, q, built):
    """Player ``q``'s houses left and houses built (``built``) make up the houses of the game."""
    nhouses = T[E.T_HOUSES]
    hl = s[E.O_HOUSES_LEFT + q]
    if hl < 0 or hl > nhouses:
        k = emit(out, k, C_PLAYER_RANGE, F_HOUSES_LEFT, q, hl, 0, nhouses)
    elif hl + built[q] != nhouses:
        k = emit(out, k, C_HOUSES_LEFT, q, hl, built[q], nhouses, 0)
    return k


# ------------------------------------------------------------------ intermediate scoring
C_INTER_OFF = declare(68, "intermediate scoring off", "fields 'inter_done'/'inter_score': player {a} has {b}/{c} "
                      "but intermediate scoring is off")
C_INTER_DONE = declare(69, "intermediate scoring done", "field 'inter_done': player {a} has {b} (0 or 1)")
C_INTER_SCORE = declare(70, "intermediate score", "field 'inter_score': player {a} has {b} with inter_done {c} "
                        "(0..{max_score}, and 0 until scored)")
C_INTER_RESET = declare(71, "intermediate scores reset", "field 'inter_score': every player was scored but the "
                        "scores were not reset to 0")


@kernel(group=GROUP, inline="always")
def check_intermediate(s, out, k, q):
    """Player ``q``'s intermediate scoring: 0/0 when it is off, else done 0 or 1 and a bounded score."""
    dn = s[E.O_INTER_DONE + q]
    sc = s[E.O_INTER_SCORE + q]
    if s[E.O_INTERMEDIATE] == 0:
        if dn != 0 or sc != 0:
            k = emit(out, k, C_INTER_OFF, q, dn, sc, 0, 0)
    elif dn != 0 and dn != 1:
        k = emit(out, k, C_INTER_DONE, q, dn, 0, 0, 0)
    elif sc < 0 or sc > MAX_SCORE or (sc > 0 and dn == 0):
        k = emit(out, k, C_INTER_SCORE, q, sc, dn, 0, 0)
    return k


@kernel(group=GROUP, inline="always")
def check_scores_reset(s, out, k):
    """Once every player was scored, the scores are reset (after every player's checks)."""
    if s[E.O_INTERMEDIATE] == 1:
        all_done = True
        any_score = False
        for q in range(s[E.O_NPLAYERS]):
            if s[E.O_INTER_DONE + q] != 1:
                all_done = False
            if s[E.O_INTER_SCORE + q] != 0:
                any_score = True
        if all_done and any_score:
            k = emit(out, k, C_INTER_RESET, 0, 0, 0, 0, 0)
    return k



