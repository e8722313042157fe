"""The board: the good each city produces, the houses in the cities, the city tokens of each
letter, and the bonus markers of the provinces."""

from __future__ import annotations

from .. import engine as E
from .._internal.jit import kernel
from .base import GROUP, Row, declare, emit
from .tables import NLETTERS, X_LETTER, X_LETTER_USED, X_TOKENS

# ------------------------------------------------------------------ cities and houses
C_CITY_GOOD_RANGE = declare(33, "city good", "field 'city_good': {a:city} produces {b}, not a good (0..{last_good})")


def _city_good_pad_message(r: Row) -> str:
    m = r.names.map
    what = "Roma produces nothing" if r.a == 0 else f"index {r.a} is no city of the {m.name} map"
    return f"field 'city_good': {what} but holds {r.b} (must be -1)"


C_CITY_GOOD_PAD = declare(34, "city good padding", _city_good_pad_message)
C_HOUSE_BITS = declare(28, "house owners", "field 'houses': {a:city} has bitmask {b}, with bits of players who "
                       "do not exist ({c} players)")
C_HOUSE_ROMA = declare(29, "house in Roma", "field 'houses': Roma (city 0) has houses (bitmask {a}); no house may "
                       "stand in Roma")
C_HOUSE_PAD = declare(30, "house padding", "field 'houses': index {a} is no city of the {map} map but has houses "
                      "(bitmask {b})")


@kernel(group=GROUP, inline="always")
def _city_good_code(c, g, nc):
    """The violation of city ``c`` producing good ``g`` (row: c, g), -1 when none."""
    if c == 0 or c >= nc:
        if g != -1:
            return C_CITY_GOOD_PAD
    elif g < 0 or g >= E.NG:
        return C_CITY_GOOD_RANGE
    return -1


@kernel(group=GROUP, inline="always")
def _houses_row(c, h, nc, n):
    """The violation of the houses (bitmask ``h``) in city ``c``: (code, a, b, c), code -1 when none."""
    if c == 0:
        if h != 0:
            return C_HOUSE_ROMA, h, 0, 0
    elif c >= nc:
        if h != 0:
            return C_HOUSE_PAD, c, h, 0
    elif h < 0 or (h >> n) != 0:
        return C_HOUSE_BITS, c, h, n
    return -1, 0, 0, 0


@kernel(group=GROUP)
def check_cities(s, out, k, built):
    """The cities' goods and houses; fills ``built`` (houses per player). Returns ``(k, city_ok)``:
    ``city_ok`` when every city's good is a good (and padding is -1), so it may index by it."""
    n = s[E.O_NPLAYERS]
    nc = s[E.O_NCITIES]
    built[:] = 0
    city_ok = True
    for c in range(E.NC):
        g = s[E.O_CITY_GOOD + c]
        code = _city_good_code(c, g, nc)
        if code >= 0:
            k = emit(out, k, code, c, g, 0, 0, 0)
            city_ok = False
        h = s[E.O_HOUSES + c]
        code, a, b, d = _houses_row(c, h, nc, n)
        if code >= 0:
            k = emit(out, k, code, a, b, d, 0, 0)
        elif 0 < c < nc:
            for q in range(n):
                if (h >> q) & 1:
                    built[q] += 1
    return k, city_ok


@kernel(group=GROUP, inline="always")
def count_own(s, own):
    """Houses of each player in cities of each good (``own[q * NG + g]``): what a production can
    bring them. Only when ``city_ok``."""
    n = s[E.O_NPLAYERS]
    own[:] = 0
    for c in range(1, s[E.O_NCITIES]):
        h = s[E.O_HOUSES + c]
        if h > 0 and (h >> n) == 0:
            for q in range(n):
                if (h >> q) & 1:
                    own[q * E.NG + s[E.O_CITY_GOOD + c]] += 1


# ------------------------------------------------------------------ city tokens
C_CITY_TOKENS = declare(35, "city tokens", "field 'city_good': cities of letter {a:letter} hold {c} {b:good} tokens, "
                        "the components have {d}")


@kernel(group=GROUP, inline="always")
def check_tokens(s, X, out, k, counts):
    """The goods of the cities of each letter are the components' city tokens. Only when ``city_ok``."""
    counts[:] = 0
    for c in range(1, s[E.O_NCITIES]):
        counts[X[X_LETTER + c] * E.NG + s[E.O_CITY_GOOD + c]] += 1
    for L in range(NLETTERS):
        if X[X_LETTER_USED + L]:
            for g in range(E.NG):
                want = X[X_TOKENS + L * E.NG + g]
                if counts[L * E.NG + g] != want:
                    k = emit(out, k, C_CITY_TOKENS, L, g, counts[L * E.NG + g], want, 0)
    return k


# ------------------------------------------------------------------ bonus markers
C_MARKER_GOOD = declare(36, "marker good", "field 'marker_good': province {a} ({a:province}) has a {b:good} marker, "
                        "its most valuable good is {c:good}")
C_MARKER_ACTIVE = declare(37, "marker active", "field 'marker_active': province {a} ({a:province}) has {b} (0 or 1)")
C_MARKER_PAD = declare(38, "marker padding", "fields 'marker_good'/'marker_active': index {a} is no province of the "
                       "{map} map but holds {b}/{c} (must be -1/0)")


@kernel(group=GROUP, inline="always")
def _best_good(s, T, q):
    """The most valuable good produced in province ``q`` (-1: none). Only when ``city_ok``."""
    best = -1
    for c in range(1, s[E.O_NCITIES]):
        if T[E.T_CITY_PROV + c] == q and s[E.O_CITY_GOOD + c] > best:
            best = s[E.O_CITY_GOOD + c]
    return best


@kernel(group=GROUP)
def check_markers(s, T, out, k, city_ok):
    """Each province's bonus marker: its most valuable good (known when ``city_ok``), 0/1 active."""
    npv = s[E.O_NPROV]
    for q in range(E.NPV):
        mg = s[E.O_MARKER_GOOD + q]
        ma = s[E.O_MARKER_ACTIVE + q]
        if q >= npv:
            if mg != -1 or ma != 0:
                k = emit(out, k, C_MARKER_PAD, q, mg, ma, 0, 0)
            continue
        if ma != 0 and ma != 1:
            k = emit(out, k, C_MARKER_ACTIVE, q, ma, 0, 0, 0)
        if city_ok:
            best = _best_good(s, T, q)
            if mg != best:
                k = emit(out, k, C_MARKER_GOOD, q, mg, best, 0, 0)
    return k



