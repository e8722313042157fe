"""Rule invariants of a state, and validated loading of saved states.

:func:`check_invariants` lists every way a :class:`~concordia_env.state.GameState`
breaks the rules' invariants (storehouse limits, colonist placement, route
occupancy, houses, card conservation and ownership, city tokens, bonus markers,
the deck's order and the display, the Concordia card, goods waiting for an
overflow choice, absent seats, bounds on the counters the rules leave open,
...), one readable message each, naming the field and the player, city or
route concerned. A state it accepts encodes inside the observation space.

:func:`state_from_document` turns a parsed JSON document (see
``GameState.to_json``) back into a state, rejecting anything malformed,
corrupt or against the rules with a ``ValueError`` that says what is wrong.

The checks themselves run in one numba-compiled function over the flat state
array, because property tests call :func:`check_invariants` after every action
of thousands of games: it writes (code, arguments) rows, and only when there
are violations does Python turn them into messages. The kernel never reads a
field before the checks it depends on have passed, so arbitrary (hostile)
integers are safe to check.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np

from . import engine as E
from .board import deck_card_ids
from .data import GOODS, MAP_NAMES
from .game import Game, get_game
from .jit import kernel

if TYPE_CHECKING:
    from .state import GameState

__all__ = ["check_invariants", "state_from_document", "state_violations"]

# ------------------------------------------------------------- field indices
_FIELD_NAMES = tuple(name for name, _ in E.STATE_FIELDS)
_FI = {name: i for i, name in enumerate(_FIELD_NAMES)}
F_CURRENT = _FI["current"]
F_ACTIVE = _FI["active"]
F_PM = _FI["pm"]
F_CONCORDIA = _FI["concordia"]
F_START = _FI["start_player"]
F_TURN = _FI["turn"]
F_INTERMEDIATE = _FI["intermediate"]
F_KIND = _FI["ctx_kind"]
F_POINTS = _FI["ctx_points"]
F_BUILT = _FI["ctx_built"]
F_SOLD = _FI["ctx_sold"]
F_BOUGHT = _FI["ctx_bought"]
F_PLACED = _FI["ctx_placed"]
F_BUYS_LEFT = _FI["ctx_buys_left"]
F_CONSUL = _FI["ctx_consul"]
F_BOUGHT_POS = _FI["ctx_bought_pos"]
F_PAY_LEFT = _FI["ctx_pay_left"]
F_KEEP_PLAYER = _FI["ctx_keep_player"]
F_COINS = _FI["coins"]
F_GOODS = _FI["goods"]
F_HAND = _FI["hand"]
F_DISCARD = _FI["discard"]
F_TOP = _FI["top"]
F_HOUSES_LEFT = _FI["houses_left"]
F_COLONIST = _FI["colonist"]
F_INCOMING = _FI["incoming"]
F_INTER_DONE = _FI["inter_done"]
F_INTER_SCORE = _FI["inter_score"]

# --------------------------------------------- bounds on fields the rules leave open
# The rules bound most fields (12 storehouse slots, 15 houses, 6 colonists, the cards in the
# box); sestertii, the card-play counter and VP are unbounded ("goods and coins are
# unlimited"). A state must still keep them far from int32 overflow, or a few moves later
# the kernel's arithmetic wraps. No real game comes near these bounds: random play ends
# within about 1,000 card plays and 1,000 sestertii, heuristic play well within. A card play
# gains at most about 100 sestertii (a Mercator selling 12 cloth), so even a game played on
# for MAX_TURN plays from MAX_COINS stays below 1e8, a twentieth of 2**31. Each bound is
# below 2**24, so the float32 observation holds every accepted value exactly.
#: most card plays a game may count (field 'turn')
MAX_TURN = 1_000_000
#: most sestertii a player may hold (field 'coins')
MAX_COINS = 1_000_000
#: most VP an intermediate scoring may have counted (field 'inter_score'). VP grow with money
#: through Vesta only, one Senator per player: (sestertii + goods) // 10 <= 100_009 here; every
#: other god is capped by houses, provinces, goods and colonists (a few hundred VP in all).
MAX_SCORE = 1_000_000
#: goods the active player may receive beyond one per house: the Praefectus bonus (2 with
#: the Praefectus Magnus); bounds field 'incoming' together with the houses of each good
MAX_BONUS_GOODS = 2
#: A loaded state must leave the game room to go on inside the bounds above, or playing on
#: from it would break them: loading refuses a turn counter or sestertii above a tenth of the
#: bound. From there a game stays inside the bounds for 900,000 more card plays, and for at
#: least 9,000 at the highest gain per play: nine times the longest real game. (The
#: intermediate score does not grow in play: it is set once per scoring from the VP then.)
LOAD_LIMITS = {"turn": MAX_TURN // 10, "coins": MAX_COINS // 10}
_LIMIT_OF_INVARIANTS = {"turn": MAX_TURN, "coins": MAX_COINS}

# ------------------------------------------------- auxiliary table (per map)
_AUX_FIELDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("players_ok", (E.MAXP + 1,)),  # 1 if that many players may play this map
    ("num_cities", ()), ("num_provinces", ()), ("num_land", ()), ("num_sea", ()),
    ("letter", (E.NC,)),  # letter index of each city, -1 for Roma and padding
    ("letter_used", (4,)),
    ("tokens", (4, E.NG)),  # city tokens per letter and good
    ("deck_ok", (E.MAXP + 1, E.NCARD)),  # card id belongs to the decks used by n players
    ("deck_len", (E.MAXP + 1,)),
    ("start_hand", (E.NT,)),  # starting cards per type
    ("tribunus", ()), ("senator", ()),  # card types that are never bought or lost
    ("diplomat", (E.NT,)),  # 1 for Diplomat card types
    ("max_any", ()),  # most '?' under one display position
    ("card_deck", (E.NCARD,)),  # deck (0 for I, 1 for II, ...) of each card id
)
_AUX_LAYOUT: dict[str, tuple[int, tuple[int, ...], int]] = {}
_off = 0
for _name, _shape in _AUX_FIELDS:
    _size = int(np.prod(_shape)) if _shape else 1
    _AUX_LAYOUT[_name] = (_off, _shape, _size)
    _off += _size
AUX_SIZE = _off
X_PLAYERS_OK = _AUX_LAYOUT["players_ok"][0]
X_NCITIES = _AUX_LAYOUT["num_cities"][0]
X_NPROV = _AUX_LAYOUT["num_provinces"][0]
X_NLAND = _AUX_LAYOUT["num_land"][0]
X_NSEA = _AUX_LAYOUT["num_sea"][0]
X_LETTER = _AUX_LAYOUT["letter"][0]
X_LETTER_USED = _AUX_LAYOUT["letter_used"][0]
X_TOKENS = _AUX_LAYOUT["tokens"][0]
X_DECK_OK = _AUX_LAYOUT["deck_ok"][0]
X_DECK_LEN = _AUX_LAYOUT["deck_len"][0]
X_START = _AUX_LAYOUT["start_hand"][0]
X_TRIB = _AUX_LAYOUT["tribunus"][0]
X_SEN = _AUX_LAYOUT["senator"][0]
X_DIPLOMAT = _AUX_LAYOUT["diplomat"][0]
X_MAX_ANY = _AUX_LAYOUT["max_any"][0]
X_CARD_DECK = _AUX_LAYOUT["card_deck"][0]
NLETTERS = 4

# ------------------------------------------------------------ violation codes
MAXERR = 64  # rows kept; the kernel still counts the ones beyond
(C_NPLAYERS, C_NCITIES, C_NPROV, C_PHASE, C_SCALAR, C_CURRENT, C_COINS, C_GOODS, C_STORE,
 C_HAND_NEG, C_DISCARD_NEG, C_TOP_RANGE, C_TOP_EMPTY, C_TOP_MISSING, C_TRIB_COUNT, C_TRIB_HAND,
 C_SEN_COUNT, C_HOUSES_LEFT, C_COL_BAD, C_COL_CITY_KIND, C_COL_ROUTE_KIND, C_COL_NO_HOUSE,
 C_COL_OCC, C_ROUTE_TWO, C_ROUTE_OCC_EMPTY, C_ROUTE_PAD, C_ROUTE_OCC_RANGE, C_COL_NONE,
 C_HOUSE_BITS, C_HOUSE_ROMA, C_HOUSE_PAD, C_CARDS_TOTAL, C_CARDS_TYPE, C_CITY_GOOD_RANGE,
 C_CITY_GOOD_PAD, C_CITY_TOKENS, C_MARKER_GOOD, C_MARKER_ACTIVE, C_MARKER_PAD, C_DECK_LEN,
 C_DECK_POS, C_DECK_CARD, C_DECK_DUP, C_DECK_PAD, C_DISPLAY_CARD, C_DISPLAY_UNDRAWN,
 C_DISPLAY_DUP, C_DISPLAY_GAP, C_DISPLAY_NOT_FULL, C_DISPLAY_BOUGHT, C_CONC_HOUSES,
 C_CONC_CARDS, C_CONC_UNEARNED, C_OVER_NO_CONC, C_OVER_ACTIVE, C_CTX_KIND, C_MERC_BOTH,
 C_MERC_KINDS, C_ARCH_POINTS, C_BUY_COUNT, C_CONSUL_FLAG, C_PAY_LEFT, C_ACTIVE_TOP,
 C_TRIB_DISCARD, C_COPY_SOURCE, C_KEEP, C_INCOMING_NEG, C_INCOMING_NONZERO, C_INTER_OFF,
 C_INTER_DONE, C_INTER_SCORE, C_INTER_RESET, C_ABSENT, C_PLAYER_RANGE, C_CARDS_START, C_DECK_ORDER,
 C_INCOMING_MAX, C_INCOMING_RESOLVED) = range(78)


# Explicit signatures: one compiled version each, whatever int types the call sites pass
# (otherwise numba compiles a specialization per call-site type mix, slowing the first call).
@kernel("int64(int32[:, ::1], int64, int64, int64, int64, int64, int64, int64)", exact=True)
def _e(out, k, code, a, b, c, d, e):
    if k < MAXERR:
        out[k, 0] = code
        out[k, 1] = a
        out[k, 2] = b
        out[k, 3] = c
        out[k, 4] = d
        out[k, 5] = e
    return k + 1


@kernel("int64(int64)", exact=True)
def _popcount(x):
    # bounded loop: a negative (corrupt) value must not spin forever
    n = 0
    for i in range(32):
        n += (x >> i) & 1
    return n


@kernel("int64(int32[:, ::1], int64, int32[::1], int64, int64, int64, int64)", exact=True)
def _range(out, k, s, off, field, lo, hi):
    v = s[off]
    if v < lo or v > hi:
        k = _e(out, k, C_SCALAR, field, v, lo, hi, 0)
    return k


@kernel("int32[::1], int32[::1], int32[::1], int32[:, ::1]")
def _check(s, T, X, out):  # noqa: C901
    """Write one row per violated invariant into ``out``; return how many there are."""
    k = 0
    n = s[E.O_NPLAYERS]
    if n < 0 or n > E.MAXP or X[X_PLAYERS_OK + n] == 0:
        return _e(out, k, C_NPLAYERS, n, 0, 0, 0, 0)
    nc = s[E.O_NCITIES]
    if nc != X[X_NCITIES]:
        k = _e(out, k, C_NCITIES, nc, X[X_NCITIES], 0, 0, 0)
    npv = s[E.O_NPROV]
    if npv != X[X_NPROV]:
        k = _e(out, k, C_NPROV, npv, X[X_NPROV], 0, 0, 0)
    ph = s[E.O_PHASE]
    if ph < 0 or ph > E.PH_OVER:
        k = _e(out, k, C_PHASE, ph, 0, 0, 0, 0)
    if k > 0:
        return k
    nland = X[X_NLAND]
    nsea = X[X_NSEA]
    store = T[E.T_STORE]
    nhouses = T[E.T_HOUSES]

    # ---------------------------------------------------------- scalars
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
    p = s[E.O_ACTIVE]
    act_ok = 0 <= p < n
    conc = s[E.O_CONCORDIA]
    conc_ok = -1 <= conc < n
    kind = s[E.O_KIND]
    kind_ok = 0 <= kind < E.NK
    x = s[E.O_KEEP_PLAYER]

    if ph == E.PH_OVER:
        expected = -1
    elif ph == E.PH_KEEP:
        expected = x
    else:
        expected = p
    if s[E.O_CURRENT] != expected:
        k = _e(out, k, C_CURRENT, s[E.O_CURRENT], expected, ph, 0, 0)

    # ---------------------------------------------------------- cities, houses
    built = np.zeros(E.MAXP, np.int64)
    city_ok = True
    for c in range(E.NC):
        g = s[E.O_CITY_GOOD + c]
        if c == 0 or c >= nc:
            if g != -1:
                k = _e(out, k, C_CITY_GOOD_PAD, c, g, 0, 0, 0)
                city_ok = False
        elif g < 0 or g >= E.NG:
            k = _e(out, k, C_CITY_GOOD_RANGE, c, g, 0, 0, 0)
            city_ok = False
        h = s[E.O_HOUSES + c]
        if c == 0:
            if h != 0:
                k = _e(out, k, C_HOUSE_ROMA, h, 0, 0, 0, 0)
        elif c >= nc:
            if h != 0:
                k = _e(out, k, C_HOUSE_PAD, c, h, 0, 0, 0)
        elif h < 0 or (h >> n) != 0:
            k = _e(out, k, C_HOUSE_BITS, c, h, n, 0, 0)
        else:
            for q in range(n):
                if (h >> q) & 1:
                    built[q] += 1
    if city_ok:
        counts = np.zeros((NLETTERS, E.NG), np.int64)
        for c in range(1, nc):
            counts[X[X_LETTER + c], s[E.O_CITY_GOOD + c]] += 1
        for L in range(NLETTERS):
            if X[X_LETTER_USED + L]:
                for g in range(E.NG):
                    want = X[X_TOKENS + L * E.NG + g]
                    if counts[L, g] != want:
                        k = _e(out, k, C_CITY_TOKENS, L, g, counts[L, g], want, 0)
    # houses of each player in cities of each good: what a production can bring them
    own = np.zeros((E.MAXP, E.NG), np.int64)
    if city_ok:
        for c in range(1, nc):
            h = s[E.O_HOUSES + c]
            if h > 0 and (h >> n) == 0:
                for q in range(n):
                    if (h >> q) & 1:
                        own[q, s[E.O_CITY_GOOD + c]] += 1
    for q in range(E.NPV):
        mg = s[E.O_MARKER_GOOD + q]
        ma = s[E.O_MARKER_ACTIVE + q]
        if q >= npv:
            if mg != -1 or ma != 0:
                k = _e(out, k, C_MARKER_PAD, q, mg, ma, 0, 0)
            continue
        if ma != 0 and ma != 1:
            k = _e(out, k, C_MARKER_ACTIVE, q, ma, 0, 0, 0)
        if city_ok:
            best = -1
            for c in range(1, nc):
                if T[E.T_CITY_PROV + c] == q and s[E.O_CITY_GOOD + c] > best:
                    best = s[E.O_CITY_GOOD + c]
            if mg != best:
                k = _e(out, k, C_MARKER_GOOD, q, mg, best, 0, 0)

    # ---------------------------------------------------------- players
    occ_count = np.zeros(E.NR, np.int64)
    occ_mask = np.zeros(E.NR, np.int64)  # bitmask of players with a colonist there
    cards_ok = True
    held = np.zeros(E.NT, np.int64)
    any_no_houses = -1
    for q in range(E.MAXP):
        if q >= n:
            # an absent seat keeps the neutral values initial_state gives it
            if s[E.O_COINS + q] != 0:
                k = _e(out, k, C_ABSENT, q, F_COINS, s[E.O_COINS + q], 0, 0)
            if s[E.O_TOP + q] != -1:
                k = _e(out, k, C_ABSENT, q, F_TOP, s[E.O_TOP + q], -1, 0)
            if s[E.O_HOUSES_LEFT + q] != 0:
                k = _e(out, k, C_ABSENT, q, F_HOUSES_LEFT, s[E.O_HOUSES_LEFT + q], 0, 0)
            if s[E.O_INTER_DONE + q] != 0:
                k = _e(out, k, C_ABSENT, q, F_INTER_DONE, s[E.O_INTER_DONE + q], 0, 0)
            if s[E.O_INTER_SCORE + q] != 0:
                k = _e(out, k, C_ABSENT, q, F_INTER_SCORE, s[E.O_INTER_SCORE + q], 0, 0)
            for g in range(E.NG):
                if s[E.O_GOODS + q * E.NG + g] != 0:
                    k = _e(out, k, C_ABSENT, q, F_GOODS, s[E.O_GOODS + q * E.NG + g], 0, 0)
                    break
            for g in range(E.NG):
                if s[E.O_INCOMING + q * E.NG + g] != 0:
                    k = _e(out, k, C_ABSENT, q, F_INCOMING, s[E.O_INCOMING + q * E.NG + g], 0, 0)
                    break
            for t in range(E.NT):
                if s[E.O_HAND + q * E.NT + t] != 0:
                    k = _e(out, k, C_ABSENT, q, F_HAND, s[E.O_HAND + q * E.NT + t], 0, 0)
                    break
            for t in range(E.NT):
                if s[E.O_DISCARD + q * E.NT + t] != 0:
                    k = _e(out, k, C_ABSENT, q, F_DISCARD, s[E.O_DISCARD + q * E.NT + t], 0, 0)
                    break
            for i in range(E.NCOL):
                if s[E.O_COLONIST + q * E.NCOL + i] != -1:
                    k = _e(out, k, C_ABSENT, q, F_COLONIST, s[E.O_COLONIST + q * E.NCOL + i], -1, 0)
                    break
            continue

        # coins: never negative, and far from int32 overflow (MAX_COINS)
        if s[E.O_COINS + q] < 0 or s[E.O_COINS + q] > MAX_COINS:
            k = _e(out, k, C_COINS, q, s[E.O_COINS + q], 0, 0, 0)
        stored = 0
        goods_ok = True
        for g in range(E.NG):
            v = s[E.O_GOODS + q * E.NG + g]
            if v < 0:
                k = _e(out, k, C_GOODS, q, g, v, 0, 0)
                goods_ok = False
            stored += v
            w = s[E.O_INCOMING + q * E.NG + g]
            if w < 0:
                k = _e(out, k, C_INCOMING_NEG, q, g, w, 0, 0)
            elif w > 0 and ph != E.PH_KEEP:
                k = _e(out, k, C_INCOMING_NONZERO, q, g, w, ph, 0)
            elif w > 0 and city_ok:
                # one good per house in a city of that good, plus the active player's bonus
                bonus = MAX_BONUS_GOODS if q == p else 0
                if w > own[q, g] + bonus:
                    k = _e(out, k, C_INCOMING_MAX, q, g, w, own[q, g], bonus)
        # colonists
        in_store = 0
        on_board_land = 0
        on_board_sea = 0
        for i in range(E.NCOL):
            loc = s[E.O_COLONIST + q * E.NCOL + i]
            land = i < 3
            if loc == -1:
                in_store += 1
                continue
            if land:
                on_board_land += 1
            else:
                on_board_sea += 1
            if 0 <= loc < nc:
                touched = T[E.T_CITY_LAND + loc] if land else T[E.T_CITY_SEA + loc]
                if touched == 0:
                    k = _e(out, k, C_COL_CITY_KIND, q, i, loc, 0, 0)
                if loc > 0 and not (s[E.O_HOUSES + loc] >> q) & 1:
                    k = _e(out, k, C_COL_NO_HOUSE, q, i, loc, 0, 0)
            elif E.NC <= loc < E.NC + E.NR:
                r = loc - E.NC
                if (land and r >= nland) or (not land and (r < E.NL or r >= E.NL + nsea)):
                    k = _e(out, k, C_COL_ROUTE_KIND, q, i, r, 0, 0)
                occ_count[r] += 1
                occ_mask[r] |= 1 << q
                if s[E.O_ROUTE_OCC + r] != q:
                    k = _e(out, k, C_COL_OCC, q, i, r, s[E.O_ROUTE_OCC + r], 0)
            else:
                k = _e(out, k, C_COL_BAD, q, i, loc, 0, 0)
        if on_board_land == 0:
            k = _e(out, k, C_COL_NONE, q, 0, 0, 0, 0)
        if on_board_sea == 0:
            k = _e(out, k, C_COL_NONE, q, 1, 0, 0, 0)
        if goods_ok and stored + in_store > store:
            k = _e(out, k, C_STORE, q, stored, in_store, store, 0)
        # houses
        hl = s[E.O_HOUSES_LEFT + q]
        if hl < 0 or hl > nhouses:
            k = _e(out, k, C_PLAYER_RANGE, F_HOUSES_LEFT, q, hl, 0, nhouses)
        elif hl + built[q] != nhouses:
            k = _e(out, k, C_HOUSES_LEFT, q, hl, built[q], nhouses, 0)
        if hl == 0:
            any_no_houses = q
        # cards
        ndisc = 0
        for t in range(E.NT):
            a = s[E.O_HAND + q * E.NT + t]
            b = s[E.O_DISCARD + q * E.NT + t]
            if a < 0:
                k = _e(out, k, C_HAND_NEG, q, t, a, 0, 0)
                cards_ok = False
            if b < 0:
                k = _e(out, k, C_DISCARD_NEG, q, t, b, 0, 0)
                cards_ok = False
            held[t] += a + b
            ndisc += b
            # cards never leave a player: each keeps their own starting cards (Tribunus and
            # Senator have their own exactly-one checks below)
            if a >= 0 and b >= 0 and t != X[X_TRIB] and t != X[X_SEN] and a + b < X[X_START + t]:
                k = _e(out, k, C_CARDS_START, q, t, a + b, X[X_START + t], 0)
        top = s[E.O_TOP + q]
        if top < -1 or top >= E.NT:
            k = _e(out, k, C_TOP_RANGE, q, top, 0, 0, 0)
        elif top == -1:
            if ndisc > 0:
                k = _e(out, k, C_TOP_MISSING, q, ndisc, 0, 0, 0)
        elif s[E.O_DISCARD + q * E.NT + top] <= 0:
            k = _e(out, k, C_TOP_EMPTY, q, top, 0, 0, 0)
        tr = X[X_TRIB]
        ntrib = s[E.O_HAND + q * E.NT + tr] + s[E.O_DISCARD + q * E.NT + tr]
        if ntrib != 1:
            k = _e(out, k, C_TRIB_COUNT, q, ntrib, 0, 0, 0)
        elif s[E.O_HAND + q * E.NT + tr] != 1:
            k = _e(out, k, C_TRIB_HAND, q, 0, 0, 0, 0)
        se = X[X_SEN]
        nsen = s[E.O_HAND + q * E.NT + se] + s[E.O_DISCARD + q * E.NT + se]
        if nsen != 1:
            k = _e(out, k, C_SEN_COUNT, q, nsen, 0, 0, 0)
        # intermediate scoring
        dn = s[E.O_INTER_DONE + q]
        sc = s[E.O_INTER_SCORE + q]
        if s[E.O_INTERMEDIATE] == 0:
            if dn != 0 or sc != 0:
                k = _e(out, k, C_INTER_OFF, q, dn, sc, 0, 0)
        elif dn != 0 and dn != 1:
            k = _e(out, k, C_INTER_DONE, q, dn, 0, 0, 0)
        elif sc < 0 or sc > MAX_SCORE or (sc > 0 and dn == 0):
            k = _e(out, k, C_INTER_SCORE, q, sc, dn, 0, 0)
    if s[E.O_INTERMEDIATE] == 1:
        all_done = True
        any_score = False
        for q in range(n):
            if s[E.O_INTER_DONE + q] != 1:
                all_done = False
            if s[E.O_INTER_SCORE + q] != 0:
                any_score = True
        if all_done and any_score:
            k = _e(out, k, C_INTER_RESET, 0, 0, 0, 0, 0)

    # ---------------------------------------------------------- routes
    for r in range(E.NR):
        o = s[E.O_ROUTE_OCC + r]
        exists = r < nland or (E.NL <= r < E.NL + nsea)
        if not exists:
            if o != -1:
                k = _e(out, k, C_ROUTE_PAD, r, o, 0, 0, 0)
            continue
        if o < -1 or o >= n:
            k = _e(out, k, C_ROUTE_OCC_RANGE, r, o, 0, 0, 0)
        elif o >= 0 and not (occ_mask[r] >> o) & 1:
            k = _e(out, k, C_ROUTE_OCC_EMPTY, r, o, 0, 0, 0)
        if occ_count[r] > 1:
            k = _e(out, k, C_ROUTE_TWO, r, occ_count[r], 0, 0, 0)

    # ---------------------------------------------------------- deck, display, cards
    dlen = s[E.O_DECK_LEN]
    dpos = s[E.O_DECK_POS]
    want_len = X[X_DECK_LEN + n]
    deck_ok = True
    if dlen != want_len:
        k = _e(out, k, C_DECK_LEN, dlen, want_len, n, 0, 0)
        deck_ok = False
    lo = E.NDISP if want_len > E.NDISP else want_len
    if dpos < lo or dpos > want_len:
        k = _e(out, k, C_DECK_POS, dpos, lo, want_len, 0, 0)
        deck_ok = False
    pos_of = np.full(E.NCARD, -1, np.int64)
    prev_pos = -1  # last valid position still to draw
    for i in range(E.NCARD):
        cid = s[E.O_DECK + i]
        if i >= want_len:
            if cid != -1:
                k = _e(out, k, C_DECK_PAD, i, cid, 0, 0, 0)
            continue
        if cid < 0 or cid >= E.NCARD or X[X_DECK_OK + n * E.NCARD + cid] == 0:
            k = _e(out, k, C_DECK_CARD, i, cid, n, 0, 0)
            deck_ok = False
        elif pos_of[cid] >= 0:
            k = _e(out, k, C_DECK_DUP, i, cid, pos_of[cid], 0, 0)
            deck_ok = False
        else:
            pos_of[cid] = i
            # cards still to draw come in stacking order: deck I on top, then II, ...
            # cards still to draw come in stacking order: deck I on top, then II, ... (not a
            # stricter "the undrawn cards are the bottom of the stack": scenario.set_display
            # lays out puzzle displays with cards taken from anywhere in the deck)
            if i >= dpos:
                if prev_pos >= 0 and X[X_CARD_DECK + cid] < X[X_CARD_DECK + s[E.O_DECK + prev_pos]]:
                    k = _e(out, k, C_DECK_ORDER, i, cid, prev_pos, s[E.O_DECK + prev_pos], 0)
                prev_pos = i
    buying = ph == E.PH_BUY or ph == E.PH_PAY
    bought_pos = s[E.O_BOUGHT_POS] if buying else 0
    shown = 0
    gap = -1
    seen = np.zeros(E.NCARD, np.int64)
    display_ok = True
    for j in range(E.NDISP):
        cid = s[E.O_DISPLAY + j]
        was_bought = (bought_pos >> j) & 1
        if cid == -1:
            if not was_bought and gap < 0:
                gap = j
            continue
        if was_bought:
            k = _e(out, k, C_DISPLAY_BOUGHT, j, cid, 0, 0, 0)
        if cid < 0 or cid >= E.NCARD:
            k = _e(out, k, C_DISPLAY_CARD, j, cid, 0, 0, 0)
            display_ok = False
            continue
        if gap >= 0:
            k = _e(out, k, C_DISPLAY_GAP, gap, j, 0, 0, 0)
            gap = E.NDISP  # report one gap only
        if seen[cid]:
            k = _e(out, k, C_DISPLAY_DUP, j, cid, 0, 0, 0)
            display_ok = False
        seen[cid] = 1
        shown += 1
        if deck_ok and (pos_of[cid] < 0 or pos_of[cid] >= dpos):
            k = _e(out, k, C_DISPLAY_UNDRAWN, j, cid, dpos, 0, 0)
            display_ok = False
    if deck_ok and not buying and shown < E.NDISP and dpos < dlen:
        k = _e(out, k, C_DISPLAY_NOT_FULL, shown, dlen - dpos, 0, 0, 0)
    if deck_ok and display_ok and cards_ok:
        # every card in a hand or discard pile is a starting card or was bought
        want = np.zeros(E.NT, np.int64)
        nbought = 0
        for t in range(E.NT):
            want[t] = n * X[X_START + t]
        for i in range(dpos):
            cid = s[E.O_DECK + i]
            if not seen[cid]:
                want[T[E.T_CARD_TYPE + cid]] += 1
                nbought += 1
        tot_have = 0
        tot_want = 0
        for t in range(E.NT):
            tot_have += held[t]
            tot_want += want[t]
        if tot_have != tot_want:
            k = _e(out, k, C_CARDS_TOTAL, tot_have, tot_want, nbought, 0, 0)
        else:
            for t in range(E.NT):
                if held[t] != want[t]:
                    k = _e(out, k, C_CARDS_TYPE, t, held[t], want[t], 0, 0)

    # ---------------------------------------------------------- the Concordia card
    exhausted = deck_ok and dpos == dlen and shown == 0 and not buying
    if conc_ok:
        if conc == -1:
            if any_no_houses >= 0:
                k = _e(out, k, C_CONC_HOUSES, any_no_houses, 0, 0, 0, 0)
            if exhausted:
                k = _e(out, k, C_CONC_CARDS, 0, 0, 0, 0, 0)
            if ph == E.PH_OVER:
                k = _e(out, k, C_OVER_NO_CONC, 0, 0, 0, 0, 0)
        elif deck_ok and not (s[E.O_HOUSES_LEFT + conc] == 0 or (dpos == dlen and shown == 0)):
            k = _e(out, k, C_CONC_UNEARNED, conc, 0, 0, 0, 0)
        if ph == E.PH_OVER and conc >= 0 and act_ok and p != (conc + n - 1) % n:
            k = _e(out, k, C_OVER_ACTIVE, p, (conc + n - 1) % n, conc, 0, 0)

    # ---------------------------------------------------------- the action in progress
    if ph != E.PH_PLAY and ph != E.PH_OVER and kind_ok and act_ok:
        kind_fits = True
        if ph == E.PH_TRIBUNUS:
            kind_fits = kind == E.K_TRIBUNUS
        elif ph == E.PH_ARCHITECTUS:
            kind_fits = kind == E.K_ARCHITECTUS
        elif ph == E.PH_PRAEFECTUS:
            kind_fits = kind == E.K_PRAEFECTUS
        elif ph == E.PH_MERCATOR:
            kind_fits = kind == E.K_MERCATOR3 or kind == E.K_MERCATOR5
        elif ph == E.PH_COLONUS:
            kind_fits = kind == E.K_COLONUS
        elif ph == E.PH_DIPLOMAT:
            kind_fits = kind == E.K_DIPLOMAT
        elif ph == E.PH_BUY:
            kind_fits = kind == E.K_SENATOR or kind == E.K_CONSUL
        elif ph == E.PH_PAY:
            kind_fits = kind == E.K_SENATOR
        elif ph == E.PH_KEEP:
            # a specialist produces one kind of good, which never leaves a choice
            kind_fits = kind == E.K_PRAEFECTUS
        if not kind_fits:
            k = _e(out, k, C_CTX_KIND, kind, ph, 0, 0, 0)
        elif ph == E.PH_TRIBUNUS:
            for t in range(E.NT):
                if s[E.O_DISCARD + p * E.NT + t] != 0:
                    k = _e(out, k, C_TRIB_DISCARD, p, 0, 0, 0, 0)
                    break
        else:
            # the active player has just played this action's card, or a Diplomat copying it
            top = s[E.O_TOP + p]
            if 0 <= top < E.NT:
                if X[X_DIPLOMAT + top]:
                    if ph != E.PH_DIPLOMAT:
                        found = False
                        for q in range(n):
                            tq = s[E.O_TOP + q]
                            if q != p and 0 <= tq < E.NT and T[E.T_TYPE_KIND + tq] == kind:
                                found = True
                        if not found:
                            k = _e(out, k, C_COPY_SOURCE, p, kind, 0, 0, 0)
                elif T[E.T_TYPE_KIND + top] != kind:
                    k = _e(out, k, C_ACTIVE_TOP, p, top, kind, 0, 0)
            elif top == -1:
                k = _e(out, k, C_ACTIVE_TOP, p, top, kind, 0, 0)
        if kind_fits:
            if ph == E.PH_MERCATOR:
                sold = s[E.O_SOLD]
                bought = s[E.O_BOUGHT]
                if 0 <= sold < (1 << E.NG) and 0 <= bought < (1 << E.NG):
                    if sold & bought:
                        k = _e(out, k, C_MERC_BOTH, sold, bought, 0, 0, 0)
                    if _popcount(sold | bought) > 2:
                        k = _e(out, k, C_MERC_KINDS, sold, bought, 0, 0, 0)
            elif ph == E.PH_ARCHITECTUS:
                onb = 0
                for i in range(E.NCOL):
                    if s[E.O_COLONIST + p * E.NCOL + i] >= 0:
                        onb += 1
                if s[E.O_POINTS] > onb:
                    k = _e(out, k, C_ARCH_POINTS, s[E.O_POINTS], onb, 0, 0, 0)
            elif ph == E.PH_BUY or ph == E.PH_PAY:
                consul = 1 if kind == E.K_CONSUL else 0
                if s[E.O_CONSUL] != consul:
                    k = _e(out, k, C_CONSUL_FLAG, s[E.O_CONSUL], kind, 0, 0, 0)
                total = 1 if consul else 2
                nb = _popcount(s[E.O_BOUGHT_POS] & ((1 << E.NDISP) - 1))
                if nb + s[E.O_BUYS_LEFT] != total:
                    k = _e(out, k, C_BUY_COUNT, nb, s[E.O_BUYS_LEFT], total, 0, 0)
                if ph == E.PH_PAY and s[E.O_PAY_LEFT] < 1:
                    k = _e(out, k, C_PAY_LEFT, s[E.O_PAY_LEFT], 0, 0, 0, 0)
    if ph == E.PH_KEEP and 0 <= x < n:
        total = 0
        kinds = 0
        for g in range(E.NG):
            v = s[E.O_INCOMING + x * E.NG + g]
            total += v
            if v > 0:
                kinds += 1
        free = E.free_slots(s, T, x)
        if not (kinds >= 2 and 0 < free < total):
            k = _e(out, k, C_KEEP, x, total, kinds, free, 0)
        # goods are stored in turn order from the active player: those before x have none waiting
        if act_ok:
            for o in range(n):
                q = (p + o) % n
                if q == x:
                    break
                for g in range(E.NG):
                    if s[E.O_INCOMING + q * E.NG + g] != 0:
                        k = _e(out, k, C_INCOMING_RESOLVED, q, x, p, 0, 0)
                        break
    elif ph == E.PH_KEEP and x == -1:
        k = _e(out, k, C_KEEP, x, 0, 0, 0, 0)
    return k



@kernel()
def _compiled_kernel_stamp():
    return KERNEL_STAMP


KERNEL_STAMP = E.KERNEL_STAMP
E.refresh_stale_kernels(_compiled_kernel_stamp, KERNEL_STAMP, _check)


# ------------------------------------------------------------- per-map tables
@cache
def _aux(map_name: str) -> np.ndarray:
    game = get_game(map_name)
    m, comp = game.map, game.components
    X = np.zeros(AUX_SIZE, dtype=np.int32)

    def put(name, value):
        E.put_field(X, _AUX_LAYOUT, name, value)

    put("players_ok", [int(n in m.players) for n in range(E.MAXP + 1)])
    put("num_cities", m.num_cities)
    put("num_provinces", len(m.province_names))
    put("num_land", len(m.land_routes))
    put("num_sea", len(m.sea_routes))
    letters = sorted(comp.city_tokens)
    if len(letters) > NLETTERS:
        raise ValueError(f"components list {len(letters)} city letters, validation expects at most {NLETTERS}")
    put("letter", [letters.index(m.city_letters[c]) if 0 < c < m.num_cities else -1 for c in range(E.NC)])
    put("letter_used", [int(L in m.letters) for L in letters] + [0] * (NLETTERS - len(letters)))
    tok = np.zeros((NLETTERS, E.NG), dtype=np.int32)
    for i, L in enumerate(letters):
        tok[i] = comp.city_tokens[L]
    put("tokens", tok)
    ids = deck_card_ids(comp)
    ok = np.zeros((E.MAXP + 1, E.NCARD), dtype=np.int32)
    lens = np.zeros(E.MAXP + 1, dtype=np.int32)
    for n, decks in comp.decks_per_player_count.items():
        if 0 <= n <= E.MAXP:
            for d in decks:
                ok[n, ids[d]] = 1
            lens[n] = sum(len(ids[d]) for d in decks)
    put("deck_ok", ok)
    put("deck_len", lens)
    # setup stacks the decks a player count uses in order, deck I on top: the deck of each
    # card lets the kernel check the order of the cards still to draw
    card_deck = np.full(E.NCARD, -1, dtype=np.int32)
    for i, cids in enumerate(ids.values()):
        card_deck[cids] = i
    put("card_deck", card_deck)
    start = np.zeros(E.NT, dtype=np.int32)
    for t in comp.starting_hand:
        start[t] += 1
    put("start_hand", start)
    actions = [t.action for t in comp.card_types]
    put("tribunus", actions.index("tribunus"))
    put("senator", actions.index("senator"))
    put("diplomat", [int(a == "diplomat") for a in actions])
    put("max_any", max(n_any for _, n_any in comp.display_costs))
    return X


# ------------------------------------------------------------------ messages
def _describer(game: Game, s: np.ndarray):  # noqa: C901
    m = game.map
    n_land, n_sea = len(m.land_routes), len(m.sea_routes)
    letters = sorted(game.components.city_tokens)
    ctypes = game.components.card_types

    def city(c):
        c = int(c)
        return f"city {c} ({m.city_names[c]})" if 0 <= c < m.num_cities else f"city {c} (not on the {m.name} map)"

    def route(r):
        r = int(r)
        if 0 <= r < n_land or E.NL <= r < E.NL + n_sea:
            return f"{'land' if r < E.NL else 'sea'} route {r} {game.route_name(r)}"
        return f"route {r} (not a route of the {m.name} map)"

    def good(g):
        return GOODS[g] if 0 <= g < E.NG else f"good {g}"

    def ctype(t):
        return f"{ctypes[t].name} (type {t})" if 0 <= t < E.NT else f"card type {t}"

    def phase(ph):
        return f"'{E.PHASE_NAMES[ph]}' ({ph})" if 0 <= ph < len(E.PHASE_NAMES) else f"{ph}"

    def kindname(kd):
        from .actions import KIND_NAMES
        if 0 <= kd < len(KIND_NAMES):
            return KIND_NAMES[kd]
        return "Diplomat" if kd == E.K_DIPLOMAT else f"kind {kd}"

    def card(cid):
        if 0 <= cid < E.NCARD:
            return f"card {cid} ({ctypes[int(game.tables[E.T_CARD_TYPE + cid])].name})"
        return f"card id {cid}"

    deck_names = list(game.components.decks)

    def deck_name(i):
        return deck_names[i] if 0 <= i < len(deck_names) else f"#{i}"

    def c_deck(cid):
        return int(_aux(game.name)[X_CARD_DECK + cid]) if 0 <= cid < E.NCARD else -1

    def bits(x, names):
        return "{" + ", ".join(names(i) for i in range(32) if (int(x) >> i) & 1) + "}"

    def describe(row) -> str:  # noqa: C901
        code, a, b, c, d, e = (int(v) for v in row)
        slot = lambda i: f"{'land' if i < 3 else 'sea'} colonist {i % 3 + 1} (slot {i})"  # noqa: E731
        if code == C_NPLAYERS:
            return (f"field 'num_players': {a} players cannot play the {m.name} map "
                    f"(allowed: {list(m.players)})")
        if code == C_NCITIES:
            return f"field 'num_cities' is {a}, the {m.name} map has {b} (Roma included)"
        if code == C_NPROV:
            return f"field 'num_provinces' is {a}, the {m.name} map has {b}"
        if code == C_PHASE:
            return f"field 'phase' is {a}, not a phase (0..{E.PH_OVER})"
        if code == C_SCALAR:
            why = " (a bound no real game reaches)" if a == F_TURN else ""
            return f"field '{_FIELD_NAMES[a]}' is {b}, outside the allowed range {c}..{d}{why}"
        if code == C_PLAYER_RANGE:
            return f"field '{_FIELD_NAMES[a]}': player {b} has {c}, outside the allowed range {d}..{e}"
        if code == C_CURRENT:
            why = ("the game is over" if c == E.PH_OVER else
                   "the owner of the overflowing storehouse (ctx_keep_player) decides" if c == E.PH_KEEP
                   else "the active player decides")
            return f"field 'current' is {a} but should be {b} in phase {phase(c)}: {why}"
        if code == C_COINS:
            return (f"field 'coins': player {a} has {b} sestertii (must be >= 0, and at most {MAX_COINS}, "
                    "a bound no real game reaches)")
        if code == C_GOODS:
            return f"field 'goods': player {a} has {c} {good(b)} (must be >= 0)"
        if code == C_STORE:
            return (f"field 'goods': player {a}'s storehouse holds {b} goods + {c} colonists = {b + c}, "
                    f"more than its {d} slots")
        if code == C_HAND_NEG:
            return f"field 'hand': player {a} holds {c} of {ctype(b)} (must be >= 0)"
        if code == C_DISCARD_NEG:
            return f"field 'discard': player {a}'s discard pile holds {c} of {ctype(b)} (must be >= 0)"
        if code == C_TOP_RANGE:
            return f"field 'top': player {a} has top card {b}, not a card type (-1..{E.NT - 1})"
        if code == C_TOP_EMPTY:
            return f"field 'top': player {a}'s top card is {ctype(b)} but the discard pile holds none"
        if code == C_TOP_MISSING:
            return f"field 'top': player {a}'s discard pile holds {b} cards but top is -1 (empty)"
        if code == C_TRIB_COUNT:
            return f"fields 'hand'/'discard': player {a} has {b} Tribunus cards (exactly 1)"
        if code == C_TRIB_HAND:
            return (f"fields 'hand'/'discard': player {a}'s Tribunus is on the discard pile "
                    "(playing it takes it back at once)")
        if code == C_SEN_COUNT:
            return f"fields 'hand'/'discard': player {a} has {b} Senator cards (exactly 1)"
        if code == C_HOUSES_LEFT:
            return (f"field 'houses_left': player {a} has {b} houses left and {c} built "
                    f"(must total {d})")
        if code == C_COL_BAD:
            return (f"field 'colonist': player {a}'s {slot(b)} is at location {c}, neither the "
                    f"storehouse (-1), a city (0..{m.num_cities - 1}) nor a route ({E.NC}..{E.NC + E.NR - 1})")
        if code == C_COL_CITY_KIND:
            return (f"field 'colonist': player {a}'s {slot(b)} stands in {city(c)}, which no "
                    f"{'land' if b < 3 else 'sea'} route touches")
        if code == C_COL_ROUTE_KIND:
            return (f"field 'colonist': player {a}'s {slot(b)} stands on {route(c)}, not a "
                    f"{'land' if b < 3 else 'sea'} route of the {m.name} map")
        if code == C_COL_NO_HOUSE:
            return f"field 'colonist': player {a}'s {slot(b)} stands in {city(c)} where player {a} has no house"
        if code == C_COL_OCC:
            return (f"field 'route_occ': player {a}'s {slot(b)} stands on {route(c)} but route_occ "
                    f"there is {d}")
        if code == C_ROUTE_TWO:
            return f"field 'colonist': {b} colonists stand on {route(a)} (a route holds at most one)"
        if code == C_ROUTE_OCC_EMPTY:
            return f"field 'route_occ': {route(a)} is marked as held by player {b}, who has no colonist there"
        if code == C_ROUTE_PAD:
            return f"field 'route_occ': index {a} is no route of the {m.name} map but holds {b} (must be -1)"
        if code == C_ROUTE_OCC_RANGE:
            return f"field 'route_occ': {route(a)} holds {b}, not a player or -1"
        if code == C_COL_NONE:
            return (f"field 'colonist': player {a} has no {'land' if b == 0 else 'sea'} colonist on the "
                    "board (one starts in Roma and colonists never return to the storehouse)")
        if code == C_HOUSE_BITS:
            return f"field 'houses': {city(a)} has bitmask {b}, with bits of players who do not exist ({c} players)"
        if code == C_HOUSE_ROMA:
            return f"field 'houses': Roma (city 0) has houses (bitmask {a}); no house may stand in Roma"
        if code == C_HOUSE_PAD:
            return f"field 'houses': index {a} is no city of the {m.name} map but has houses (bitmask {b})"
        if code == C_CARDS_TOTAL:
            return (f"fields 'hand'/'discard': cards not conserved: {a} cards in hands and discard piles, "
                    f"expected {b} (7 per player + {c} bought from the display)")
        if code == C_CARDS_TYPE:
            return (f"fields 'hand'/'discard': cards not conserved: players hold {b} of {ctype(a)}, "
                    f"expected {c} (starting hands + cards bought)")
        if code == C_CITY_GOOD_RANGE:
            return f"field 'city_good': {city(a)} produces {b}, not a good (0..{E.NG - 1})"
        if code == C_CITY_GOOD_PAD:
            what = "Roma produces nothing" if a == 0 else f"index {a} is no city of the {m.name} map"
            return f"field 'city_good': {what} but holds {b} (must be -1)"
        if code == C_CITY_TOKENS:
            return (f"field 'city_good': cities of letter {letters[a]} hold {c} {good(b)} tokens, "
                    f"the components have {d}")
        if code == C_MARKER_GOOD:
            return (f"field 'marker_good': province {a} ({m.province_names[a]}) has a {good(b)} marker, "
                    f"its most valuable good is {good(c)}")
        if code == C_MARKER_ACTIVE:
            return f"field 'marker_active': province {a} ({m.province_names[a]}) has {b} (0 or 1)"
        if code == C_MARKER_PAD:
            return (f"fields 'marker_good'/'marker_active': index {a} is no province of the {m.name} map "
                    f"but holds {b}/{c} (must be -1/0)")
        if code == C_DECK_LEN:
            return f"field 'deck_len' is {a}, {c} players use {b} cards"
        if code == C_DECK_POS:
            return f"field 'deck_pos' is {a}, outside {b}..{c}"
        if code == C_DECK_CARD:
            return f"field 'deck': position {a} holds {card(b)}, not a card of the decks {c} players use"
        if code == C_DECK_DUP:
            return f"field 'deck': position {a} holds {card(b)}, already at position {c}"
        if code == C_DECK_PAD:
            return f"field 'deck': position {a} lies past deck_len but holds {b} (must be -1)"
        if code == C_DISPLAY_CARD:
            return f"field 'display': position {a} holds {b}, not a card id (-1..{E.NCARD - 1})"
        if code == C_DISPLAY_UNDRAWN:
            return f"field 'display': position {a} holds {card(b)}, which is not among deck[:deck_pos={c}]"
        if code == C_DISPLAY_DUP:
            return f"field 'display': position {a} holds {card(b)} a second time"
        if code == C_DISPLAY_GAP:
            return f"field 'display': position {a} is empty but position {b} holds a card (cards slide left)"
        if code == C_DISPLAY_NOT_FULL:
            return f"field 'display': only {a} cards shown while the deck still holds {b} (refill to 7)"
        if code == C_DISPLAY_BOUGHT:
            return f"field 'display': position {a} was bought this turn (ctx_bought_pos) but shows {card(b)}"
        if code == C_CONC_HOUSES:
            return f"field 'concordia': player {a} has built all houses but nobody holds the Concordia card"
        if code == C_CONC_CARDS:
            return "field 'concordia': deck and display are empty but nobody holds the Concordia card"
        if code == C_CONC_UNEARNED:
            return (f"field 'concordia': player {a} holds the Concordia card with houses left while "
                    "cards remain to buy")
        if code == C_OVER_NO_CONC:
            return "field 'concordia': the game is over but nobody holds the Concordia card"
        if code == C_OVER_ACTIVE:
            return (f"field 'active': the game ended after the turn of player {b} (before Concordia "
                    f"holder {c}) but active is {a}")
        if code == C_CTX_KIND:
            return f"field 'ctx_kind': action {kindname(a)} ({a}) cannot be under way in phase {phase(b)}"
        if code == C_MERC_BOTH:
            return (f"fields 'ctx_sold'/'ctx_bought': goods {bits(a & b, good)} both sold and bought "
                    "in one Mercator")
        if code == C_MERC_KINDS:
            return (f"fields 'ctx_sold'/'ctx_bought': Mercator traded {bits(a | b, good)}, "
                    "more than 2 kinds of goods")
        if code == C_ARCH_POINTS:
            return f"field 'ctx_points': {a} movement points left but only {b} colonists on the board"
        if code == C_BUY_COUNT:
            return (f"fields 'ctx_bought_pos'/'ctx_buys_left': {a} cards bought + {b} buys left, "
                    f"should total {c}")
        if code == C_CONSUL_FLAG:
            return f"field 'ctx_consul' is {a} during {kindname(b)}"
        if code == C_PAY_LEFT:
            return f"field 'ctx_pay_left' is {a} while paying '?' goods (must be >= 1)"
        if code == C_ACTIVE_TOP:
            shown = "an empty discard pile" if b == -1 else ctype(b)
            return (f"field 'top': active player {a} shows {shown}, neither the card of the "
                    f"{kindname(c)} action under way nor a Diplomat")
        if code == C_TRIB_DISCARD:
            return f"field 'discard': player {a} is carrying out the Tribunus but has cards on the discard pile"
        if code == C_COPY_SOURCE:
            return (f"field 'top': player {a}'s Diplomat carries out {kindname(b)}, but no other "
                    "player's discard pile shows it")
        if code == C_KEEP:
            if a < 0:
                return "field 'ctx_keep_player' is -1 while a storehouse overflow is being resolved"
            return (f"field 'incoming': player {a} must choose goods to keep but receives {b} goods of "
                    f"{c} kinds with {d} free slots (needs >= 2 kinds and 0 < free slots < goods)")
        if code == C_INCOMING_NEG:
            return f"field 'incoming': player {a} receives {c} {good(b)} (must be >= 0)"
        if code == C_INCOMING_NONZERO:
            return (f"field 'incoming': player {a} has {c} {good(b)} waiting in phase {phase(d)}; "
                    "goods wait only for an overflow choice")
        if code == C_INTER_OFF:
            return (f"fields 'inter_done'/'inter_score': player {a} has {b}/{c} but intermediate "
                    "scoring is off")
        if code == C_INTER_DONE:
            return f"field 'inter_done': player {a} has {b} (0 or 1)"
        if code == C_INTER_SCORE:
            return (f"field 'inter_score': player {a} has {b} with inter_done {c} (0..{MAX_SCORE}, "
                    "and 0 until scored)")
        if code == C_CARDS_START:
            return (f"fields 'hand'/'discard': player {a} has {c} of {ctype(b)} but started with {d} "
                    "(cards never leave their player)")
        if code == C_DECK_ORDER:
            return (f"field 'deck': position {a} still to draw holds {card(b)} of deck {deck_name(c_deck(b))}, "
                    f"below {card(d)} of deck {deck_name(c_deck(d))} at position {c} (the decks are stacked "
                    "I on top, then II, ...)")
        if code == C_INCOMING_MAX:
            extra = f" + {e} Praefectus bonus" if e else ""
            return (f"field 'incoming': player {a} receives {c} {good(b)}, more than production can bring "
                    f"(one per house in a {good(b)} city: {d}{extra})")
        if code == C_INCOMING_RESOLVED:
            return (f"field 'incoming': player {a} still has goods waiting though production is stored in "
                    f"turn order from active player {c} and player {b} is choosing now")
        if code == C_INTER_RESET:
            return "field 'inter_score': every player was scored but the scores were not reset to 0"
        if code == C_ABSENT:
            return (f"field '{_FIELD_NAMES[b]}': seat {a} is absent ({int(s[E.O_NPLAYERS])} players) "
                    f"but holds {c} (must be {d})")
        return f"violation {code} {(a, b, c, d, e)}"

    return describe


# ------------------------------------------------------------------ API
def state_violations(game: Game, s: np.ndarray) -> list[str]:
    """Rule-invariant violations of flat state array ``s`` on ``game``'s map (see :func:`check_invariants`)."""
    if s.dtype != np.int32 or s.shape != (E.STATE_SIZE,):
        return [f"state array must be int32 of shape ({E.STATE_SIZE},), got {s.dtype} {s.shape}"]
    out = np.zeros((MAXERR, 6), dtype=np.int32)
    k = int(_check(s, game.tables, _aux(game.name), out))
    if k == 0:
        return []
    describe = _describer(game, s)
    msgs = [describe(out[i]) for i in range(min(k, MAXERR))]
    if k > MAXERR:
        msgs.append(f"... and {k - MAXERR} more violations")
    return msgs


def check_invariants(state) -> list[str]:
    """Every rule invariant ``state`` breaks, one readable message each (empty when all hold).

    Messages name the field and the player, city or route concerned, e.g.
    ``"field 'coins': player 2 has -3 sestertii (must be >= 0)"``. Costs a few
    microseconds when the state is fine."""
    return state_violations(state.game, state.s)


_TOP_KEYS = ("format", "version", "map")
_MAX_LISTED = 10  # unknown or missing field names listed in one message


def _short(value: Any) -> str:
    """A short description of a (hostile) JSON value for a message, at a cost independent of
    its size: containers by length (repr of a deeply nested one overflows the recursion limit),
    huge ints by bit length (str of one over 4300 digits raises), other values cut to 40."""
    if isinstance(value, (list, dict)):
        return f"of length {len(value)}"
    if type(value) is int and not -2**63 <= value < 2**63:
        return f"of {value.bit_length()} bits"
    if isinstance(value, str):
        return repr(value[:40])
    return repr(value)[:40]


def _listed(names: list[str]) -> str:
    more = len(names) - _MAX_LISTED
    return ", ".join(names[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _shape_problems(name: str, value: Any, shape: tuple[int, ...], path: str, out: list, flat: list) -> None:
    """Check that ``value`` is a nested list of ints of ``shape``; append ints to ``flat``."""
    if not shape:
        if type(value) is not int:  # bool, float, str, None, list ... are all wrong
            out.append(f"field '{name}'{path} must be an int, got {type(value).__name__} {_short(value)}")
        elif not -2**31 <= value < 2**31:
            out.append(f"field '{name}'{path} = {_short(value)} does not fit a 32-bit int")
        else:
            flat.append(value)
            return
        flat.append(0)
        return
    if not isinstance(value, list):
        out.append(f"field '{name}'{path} must be a list of length {shape[0]}, got {type(value).__name__}")
        return
    if len(value) != shape[0]:
        out.append(f"field '{name}'{path} must have length {shape[0]} (shape {list(shape)}), got {len(value)}")
        return
    for i, v in enumerate(value):
        _shape_problems(name, v, shape[1:], f"{path}[{i}]", out, flat)
        if len(out) > 20:
            return


def state_from_document(doc: Any) -> GameState:
    """Build a :class:`~concordia_env.state.GameState` from a parsed ``to_json`` document.

    Raises ``ValueError`` listing what is wrong: not an object, wrong format or
    version, unknown map, missing or unknown fields, wrong shapes, non-int
    values, rule-invariant violations (see :func:`check_invariants`), a turn
    counter or sestertii above :data:`LOAD_LIMITS` (too close to the bounds to
    play on), or a running game in which the player to move has no legal action."""
    from .state import STATE_FORMAT, STATE_VERSION, GameState

    def fail(problems: list[str]) -> None:
        raise ValueError("invalid Concordia state: " + "; ".join(problems))

    if not isinstance(doc, dict):
        fail([f"expected a JSON object, got {type(doc).__name__}"])
    problems: list[str] = []
    fmt = doc.get("format")
    if type(fmt) is not str or fmt != STATE_FORMAT:
        problems.append(f"'format' must be {STATE_FORMAT!r}, got {_short(fmt)}")
    version = doc.get("version")
    if type(version) is not int or version != STATE_VERSION:
        problems.append(f"'version' must be {STATE_VERSION}, got {_short(version)}")
    map_name = doc.get("map")
    if not isinstance(map_name, str) or map_name not in MAP_NAMES:
        problems.append(f"'map' must be one of {list(MAP_NAMES)}, got {_short(map_name)}")
    missing = [name for name in _FIELD_NAMES if name not in doc]
    if missing:
        problems.append(f"missing field(s): {_listed(missing)}")
    unknown = [str(key)[:40] for key in doc if key not in _FI and key not in _TOP_KEYS]
    if unknown:
        problems.append(f"unknown field(s): {_listed(sorted(unknown))}")
    flat: list[int] = []
    for name, shape in E.STATE_FIELDS:
        if name in doc:
            _shape_problems(name, doc[name], shape, "", problems, flat)
    if problems:
        fail(problems)
    s = np.asarray(flat, dtype=np.int32)
    game = get_game(map_name)
    violations = state_violations(game, s)
    for name, limit in LOAD_LIMITS.items():
        # only where the invariants hold: past them the kernel's own message says it
        top = int(E.field_view(s, name).max())
        if limit < top <= _LIMIT_OF_INVARIANTS[name]:
            violations.append(f"field '{name}' holds {top}, above {limit}, the most a loaded state may "
                              f"hold (a tenth of the bound {_LIMIT_OF_INVARIANTS[name]}, so play can go on)")
    if violations:
        fail(violations)
    state = GameState(game, s)
    if not state.is_terminal() and not state.legal_actions():
        fail([f"player {state.current_player} has no legal action in phase '{state.phase_name}' "
              "of a running game"])
    return state
