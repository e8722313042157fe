"""The rules kernel: legal-action masks and state transitions over flat int32 arrays.

Everything here is compiled with numba (defined with :func:`concordia_env.jit.kernel`, which
decides where compiled code is cached) and works on two arrays:

* ``s``: the mutable game state, one flat ``int32`` array whose named fields
  are listed in :data:`STATE_FIELDS` (offsets ``O_*``);
* ``T``: the static tables of one map and the components, one flat ``int32``
  array laid out by :data:`TABLE_FIELDS` (offsets ``T_*``), built by
  :mod:`concordia_env.board`.

The layout is padded to the largest board (31 cities with Roma, 44 land and 35
sea routes, 12 provinces, 5 players), so one compiled kernel serves both maps
and every player count; padded routes are unreachable and padded cities hold
nothing. The kernel trusts its input: legality is checked by the Python layer
(:class:`concordia_env.state.GameState`) before :func:`step` is called.

Layout and kernel share this module on purpose: numba's on-disk cache is keyed
on this file, so a layout change always recompiles the kernel.
"""

from __future__ import annotations

import zlib

import numpy as np

from .jit import kernel

# ----------------------------------------------------------------- sizes
MAXP = 5  # players
NG = 5  # goods: brick, food, tools, wine, cloth
NT = 17  # card types (see data/components.json "card_types", same order)
NK = 14  # action kinds: 13 copyable + the Diplomat
NC = 31  # cities incl. Roma (index 0)
NL = 44  # land routes (indices 0..NL-1)
NS = 35  # sea routes (indices NL..NR-1)
NR = NL + NS
NPV = 12  # provinces
NCARD = 30  # purchasable cards
NDISP = 7  # display positions
NCOL = 6  # colonists per player: 0..2 land, 3..5 sea
NLOC = NC + NR  # colonist locations: city c, or NC + route r
UNREACHABLE = 99
NGODS = 7  # score breakdown: Vesta, Jupiter, Saturnus, Mercurius, Mars, Minerva, Concordia

# ----------------------------------------------------------- action kinds
K_TRIBUNUS, K_ARCHITECTUS, K_PRAEFECTUS, K_MERCATOR3, K_MERCATOR5, K_COLONUS = 0, 1, 2, 3, 4, 5
K_SENATOR, K_CONSUL = 6, 7
K_SPECIALIST = 8  # 8..12: Mason, Farmer, Smith, Vintner, Weaver (good = kind - 8)
K_DIPLOMAT = 13
NCOPY = 13  # kinds a Diplomat can copy

# ------------------------------------------------------------------ phases
PH_PLAY = 0  # choose a card to play
PH_TRIBUNUS = 1  # Tribunus: may place one colonist in Roma
PH_ARCHITECTUS = 2  # move colonists, then build houses
PH_PRAEFECTUS = 3  # produce in a province, or cash bonus
PH_MERCATOR = 4  # sell/buy goods, at most two kinds
PH_COLONUS = 5  # place colonists, or cash
PH_DIPLOMAT = 6  # choose the card to copy
PH_BUY = 7  # Senator/Consul: choose a display position
PH_PAY = 8  # Senator: pay a '?' with a good
PH_KEEP = 9  # storehouse overflow: the owner chooses a good to keep
PH_OVER = 10  # game over
PHASE_NAMES = (
    "play a card", "Tribunus: colonist to Roma", "Architectus", "Praefectus",
    "Mercator", "Colonus", "Diplomat: choose card to copy", "buy cards",
    "pay '?' with a good", "storehouse full: keep goods", "game over",
)

# ----------------------------------------------------------------- actions
A_PLAY = 0  # + card type (NT)
A_DONE = A_PLAY + NT  # 1: end the current card's action
A_COPY = A_DONE + 1  # + kind (NCOPY): Diplomat copies
A_MOVE = A_COPY + NCOPY  # land colonist i to land route r: i*NL + r; sea: 3*NL + (i-3)*NS + (r-NL)
NMOVE = 3 * NL + 3 * NS
A_BUILD = A_MOVE + NMOVE  # + city (NC)
A_PRODUCE = A_BUILD + NC  # + province (NPV)
A_CASH = A_PRODUCE + NPV  # 1: Praefectus cash bonus
A_SELL = A_CASH + 1  # + good
A_BUYGOOD = A_SELL + NG  # + good
A_PLACE = A_BUYGOOD + NG  # + kind*NC + city (kind 0 land, 1 sea)
A_COLONUS_CASH = A_PLACE + 2 * NC  # 1
A_BUYCARD = A_COLONUS_CASH + 1  # + display position
A_PAY = A_BUYCARD + NDISP  # + good
A_KEEP = A_PAY + NG  # + good
NUM_ACTIONS = A_KEEP + NG

# ------------------------------------------------------------ state layout
STATE_FIELDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("num_players", ()), ("current", ()), ("active", ()), ("phase", ()),
    ("pm", ()), ("concordia", ()), ("start_player", ()), ("turn", ()),
    ("intermediate", ()), ("num_cities", ()), ("num_provinces", ()),
    ("deck_pos", ()), ("deck_len", ()),
    ("ctx_kind", ()), ("ctx_points", ()), ("ctx_built", ()), ("ctx_sold", ()),
    ("ctx_bought", ()), ("ctx_placed", ()), ("ctx_buys_left", ()), ("ctx_consul", ()),
    ("ctx_bought_pos", ()), ("ctx_pay_left", ()), ("ctx_keep_player", ()),
    ("coins", (MAXP,)), ("goods", (MAXP, NG)), ("hand", (MAXP, NT)),
    ("discard", (MAXP, NT)), ("top", (MAXP,)), ("houses_left", (MAXP,)),
    ("colonist", (MAXP, NCOL)), ("incoming", (MAXP, NG)),
    ("inter_done", (MAXP,)), ("inter_score", (MAXP,)),
    ("city_good", (NC,)), ("houses", (NC,)), ("route_occ", (NR,)),
    ("marker_good", (NPV,)), ("marker_active", (NPV,)),
    ("display", (NDISP,)), ("deck", (NCARD,)),
)

TABLE_FIELDS: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("num_cities", ()), ("num_provinces", ()), ("storehouse", ()), ("free_cards", ()),
    ("colonus_base", ()), ("concordia_vp", ()), ("houses", ()),
    ("city_prov", (NC,)), ("city_land", (NC,)), ("city_sea", (NC,)),
    ("route_a", (NR,)), ("route_b", (NR,)), ("dist", (NLOC, NR)),
    ("price", (NG,)), ("marker_coins", (NG,)), ("house_coins", (NG,)),
    ("house_goods", (NG, NG)), ("colonist_cost", (NG,)),
    ("display_fixed", (NDISP, NG)), ("display_any", (NDISP,)),
    ("type_kind", (NT,)), ("type_god", (NT,)), ("type_vp", (NT,)), ("type_good", (NT,)),
    ("kind_merc", (NK,)), ("payout", (2,)),
    ("card_type", (NCARD,)), ("card_cost", (NCARD, NG)),
)


def _offsets(fields):
    off, out = 0, {}
    for name, shape in fields:
        size = int(np.prod(shape)) if shape else 1
        out[name] = (off, shape, size)
        off += size
    return out, off


STATE_LAYOUT, STATE_SIZE = _offsets(STATE_FIELDS)
TABLE_LAYOUT, TABLE_SIZE = _offsets(TABLE_FIELDS)

def source_stamp(path: str, base: int = 0) -> int:
    """CRC-32 of a source file, combined with ``base`` (the stamp of what that file builds on)."""
    with open(path, "rb") as f:
        return zlib.crc32(f.read(), base)


# numba's on-disk cache is keyed on a function's own source file only, but a
# cached kernel carries compiled copies of every kernel it calls and every
# offset it reads. Kernels in other modules (encoding, validation, vector)
# therefore compile in this stamp of the engine's source and recompile when it
# no longer matches, so an engine change never leaves them running old code.
KERNEL_STAMP = source_stamp(__file__)


def refresh_stale_kernels(compiled_stamp, expected: int, *kernels) -> None:
    """Recompile ``kernels`` (and ``compiled_stamp``) if ``compiled_stamp()``, a kernel
    of their module returning its stamp as compiled, no longer returns ``expected``."""
    if compiled_stamp() != expected:
        for k in (compiled_stamp, *kernels):
            k.recompile()


# Offsets as plain module globals: numba freezes them as compile-time constants.
O_NPLAYERS = STATE_LAYOUT["num_players"][0]
O_CURRENT = STATE_LAYOUT["current"][0]
O_ACTIVE = STATE_LAYOUT["active"][0]
O_PHASE = STATE_LAYOUT["phase"][0]
O_PM = STATE_LAYOUT["pm"][0]
O_CONCORDIA = STATE_LAYOUT["concordia"][0]
O_START = STATE_LAYOUT["start_player"][0]
O_TURN = STATE_LAYOUT["turn"][0]
O_INTERMEDIATE = STATE_LAYOUT["intermediate"][0]
O_NCITIES = STATE_LAYOUT["num_cities"][0]
O_NPROV = STATE_LAYOUT["num_provinces"][0]
O_DECK_POS = STATE_LAYOUT["deck_pos"][0]
O_DECK_LEN = STATE_LAYOUT["deck_len"][0]
O_KIND = STATE_LAYOUT["ctx_kind"][0]
O_POINTS = STATE_LAYOUT["ctx_points"][0]
O_BUILT = STATE_LAYOUT["ctx_built"][0]
O_SOLD = STATE_LAYOUT["ctx_sold"][0]
O_BOUGHT = STATE_LAYOUT["ctx_bought"][0]
O_PLACED = STATE_LAYOUT["ctx_placed"][0]
O_BUYS_LEFT = STATE_LAYOUT["ctx_buys_left"][0]
O_CONSUL = STATE_LAYOUT["ctx_consul"][0]
O_BOUGHT_POS = STATE_LAYOUT["ctx_bought_pos"][0]
O_PAY_LEFT = STATE_LAYOUT["ctx_pay_left"][0]
O_KEEP_PLAYER = STATE_LAYOUT["ctx_keep_player"][0]
O_COINS = STATE_LAYOUT["coins"][0]
O_GOODS = STATE_LAYOUT["goods"][0]
O_HAND = STATE_LAYOUT["hand"][0]
O_DISCARD = STATE_LAYOUT["discard"][0]
O_TOP = STATE_LAYOUT["top"][0]
O_HOUSES_LEFT = STATE_LAYOUT["houses_left"][0]
O_COLONIST = STATE_LAYOUT["colonist"][0]
O_INCOMING = STATE_LAYOUT["incoming"][0]
O_INTER_DONE = STATE_LAYOUT["inter_done"][0]
O_INTER_SCORE = STATE_LAYOUT["inter_score"][0]
O_CITY_GOOD = STATE_LAYOUT["city_good"][0]
O_HOUSES = STATE_LAYOUT["houses"][0]
O_ROUTE_OCC = STATE_LAYOUT["route_occ"][0]
O_MARKER_GOOD = STATE_LAYOUT["marker_good"][0]
O_MARKER_ACTIVE = STATE_LAYOUT["marker_active"][0]
O_DISPLAY = STATE_LAYOUT["display"][0]
O_DECK = STATE_LAYOUT["deck"][0]

T_NCITIES = TABLE_LAYOUT["num_cities"][0]
T_NPROV = TABLE_LAYOUT["num_provinces"][0]
T_STORE = TABLE_LAYOUT["storehouse"][0]
T_FREE_CARDS = TABLE_LAYOUT["free_cards"][0]
T_COLONUS_BASE = TABLE_LAYOUT["colonus_base"][0]
T_CONCORDIA_VP = TABLE_LAYOUT["concordia_vp"][0]
T_HOUSES = TABLE_LAYOUT["houses"][0]
T_CITY_PROV = TABLE_LAYOUT["city_prov"][0]
T_CITY_LAND = TABLE_LAYOUT["city_land"][0]
T_CITY_SEA = TABLE_LAYOUT["city_sea"][0]
T_ROUTE_A = TABLE_LAYOUT["route_a"][0]
T_ROUTE_B = TABLE_LAYOUT["route_b"][0]
T_DIST = TABLE_LAYOUT["dist"][0]
T_PRICE = TABLE_LAYOUT["price"][0]
T_MARKER_COINS = TABLE_LAYOUT["marker_coins"][0]
T_HOUSE_COINS = TABLE_LAYOUT["house_coins"][0]
T_HOUSE_GOODS = TABLE_LAYOUT["house_goods"][0]
T_COLONIST_COST = TABLE_LAYOUT["colonist_cost"][0]
T_DISPLAY_FIXED = TABLE_LAYOUT["display_fixed"][0]
T_DISPLAY_ANY = TABLE_LAYOUT["display_any"][0]
T_TYPE_KIND = TABLE_LAYOUT["type_kind"][0]
T_TYPE_GOD = TABLE_LAYOUT["type_god"][0]
T_TYPE_VP = TABLE_LAYOUT["type_vp"][0]
T_TYPE_GOOD = TABLE_LAYOUT["type_good"][0]
T_KIND_MERC = TABLE_LAYOUT["kind_merc"][0]
T_PAYOUT = TABLE_LAYOUT["payout"][0]
T_CARD_TYPE = TABLE_LAYOUT["card_type"][0]
T_CARD_COST = TABLE_LAYOUT["card_cost"][0]

# god indices used by T_TYPE_GOD and the score breakdown
GOD_VESTA, GOD_JUPITER, GOD_SATURNUS, GOD_MERCURIUS, GOD_MARS, GOD_MINERVA = 0, 1, 2, 3, 4, 5


def put_field(arr: np.ndarray, layout: dict, name: str, value) -> None:
    """Write ``value`` (any array-like of the field's shape) into the named field of a flat array."""
    off, _, size = layout[name]
    arr[off:off + size] = np.asarray(value, dtype=np.int32).reshape(-1)


def field_view(s: np.ndarray, name: str) -> np.ndarray:
    """A read-write numpy view of the named field of state array ``s`` (0-d for scalars)."""
    off, shape, size = STATE_LAYOUT[name]
    return s[off:off + size].reshape(shape)


def move_action(colonist: int, route: int) -> int:
    """Action id of moving colonist slot ``colonist`` (0-2 land, 3-5 sea) to ``route``."""
    if colonist < 3:
        return A_MOVE + colonist * NL + route
    return A_MOVE + 3 * NL + (colonist - 3) * NS + (route - NL)


def decode_move(action: int) -> tuple[int, int]:
    """Inverse of :func:`move_action`: (colonist slot, route)."""
    i = action - A_MOVE
    if i < 3 * NL:
        return i // NL, i % NL
    i -= 3 * NL
    return 3 + i // NS, NL + i % NS


# ================================================================= kernel
@kernel(inline="always")
def free_slots(s, T, p):
    used = 0
    for g in range(NG):
        used += s[O_GOODS + p * NG + g]
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] < 0:
            used += 1
    return T[T_STORE] - used


@kernel(inline="always")
def _colonists_on_board(s, p):
    n = 0
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] >= 0:
            n += 1
    return n


@kernel(inline="always")
def _house_count(s, c):
    h = s[O_HOUSES + c]
    n = 0
    while h:
        n += h & 1
        h >>= 1
    return n


@kernel()
def can_build(s, T, p, c):
    """Whether player ``p`` can afford and may place a house in city ``c`` (ignoring reach)."""
    if c <= 0 or c >= s[O_NCITIES]:
        return False
    if (s[O_HOUSES + c] >> p) & 1:
        return False
    if s[O_HOUSES_LEFT + p] <= 0:
        return False
    g = s[O_CITY_GOOD + c]
    coins = T[T_HOUSE_COINS + g] * (_house_count(s, c) + 1)
    if s[O_COINS + p] < coins:
        return False
    for h in range(NG):
        if s[O_GOODS + p * NG + h] < T[T_HOUSE_GOODS + g * NG + h]:
            return False
    return True


@kernel(inline="always")
def _has_colonist_in_store(s, p, kind):
    for i in range(3 * kind, 3 * kind + 3):
        if s[O_COLONIST + p * NCOL + i] < 0:
            return True
    return False


@kernel(inline="always")
def _can_pay_colonist(s, T, p):
    for g in range(NG):
        if s[O_GOODS + p * NG + g] < T[T_COLONIST_COST + g]:
            return False
    return True


@kernel()
def _copy_available(s, T, p):
    n = s[O_NPLAYERS]
    for q in range(n):
        if q != p:
            t = s[O_TOP + q]
            if t >= 0 and T[T_TYPE_KIND + t] != K_DIPLOMAT:
                return True
    return False


@kernel("int32[::1], int32[::1], int8[::1]")
def legal_mask(s, T, mask):  # noqa: C901
    """Fill ``mask`` (int8, NUM_ACTIONS) with the legal actions; return how many there are."""
    mask[:] = 0
    ph = s[O_PHASE]
    p = s[O_ACTIVE]
    if ph == PH_OVER:
        return 0
    if ph == PH_PLAY:
        for t in range(NT):
            if s[O_HAND + p * NT + t] > 0:
                if T[T_TYPE_KIND + t] == K_DIPLOMAT and not _copy_available(s, T, p):
                    continue
                mask[A_PLAY + t] = 1
    elif ph == PH_TRIBUNUS or ph == PH_COLONUS:
        if _can_pay_colonist(s, T, p):
            for kind in range(2):
                if not _has_colonist_in_store(s, p, kind):
                    continue
                if ph == PH_TRIBUNUS:
                    mask[A_PLACE + kind * NC] = 1
                    continue
                for c in range(s[O_NCITIES]):
                    if c != 0 and not (s[O_HOUSES + c] >> p) & 1:
                        continue
                    ok = T[T_CITY_LAND + c] if kind == 0 else T[T_CITY_SEA + c]
                    if ok:
                        mask[A_PLACE + kind * NC + c] = 1
        if ph == PH_COLONUS and s[O_PLACED] == 0:
            mask[A_COLONUS_CASH] = 1
        mask[A_DONE] = 1
    elif ph == PH_ARCHITECTUS:
        pts = s[O_POINTS]
        base = O_COLONIST + p * NCOL
        if s[O_BUILT] == 0 and pts > 0:
            for i in range(NCOL):
                loc = s[base + i]
                if loc < 0:
                    continue
                if loc < NC:
                    # colonists of one kind in one city are interchangeable: only the first moves
                    dup = False
                    k0 = (i // 3) * 3
                    for j in range(k0, i):
                        if s[base + j] == loc:
                            dup = True
                    if dup:
                        continue
                if i < 3:
                    lo, hi, a0 = 0, NL, A_MOVE + i * NL
                else:
                    lo, hi, a0 = NL, NR, A_MOVE + 3 * NL + (i - 3) * NS - NL
                drow = T_DIST + loc * NR
                for r in range(lo, hi):
                    if T[drow + r] <= pts and s[O_ROUTE_OCC + r] < 0:
                        mask[a0 + r] = 1
        for i in range(NCOL):
            loc = s[base + i]
            if loc >= NC:
                r = loc - NC
                for c in (T[T_ROUTE_A + r], T[T_ROUTE_B + r]):
                    if can_build(s, T, p, c):
                        mask[A_BUILD + c] = 1
        mask[A_DONE] = 1
    elif ph == PH_PRAEFECTUS:
        for q in range(s[O_NPROV]):
            if s[O_MARKER_ACTIVE + q]:
                mask[A_PRODUCE + q] = 1
        mask[A_CASH] = 1
    elif ph == PH_MERCATOR:
        sold = s[O_SOLD]
        bought = s[O_BOUGHT]
        used = sold | bought
        nkinds = 0
        for g in range(NG):
            nkinds += (used >> g) & 1
        free = free_slots(s, T, p)
        for g in range(NG):
            bit = 1 << g
            new_kind_ok = (used & bit) != 0 or nkinds < 2
            if not new_kind_ok:
                continue
            if not (bought & bit) and s[O_GOODS + p * NG + g] > 0:
                mask[A_SELL + g] = 1
            if not (sold & bit) and free > 0 and s[O_COINS + p] >= T[T_PRICE + g]:
                mask[A_BUYGOOD + g] = 1
        mask[A_DONE] = 1
    elif ph == PH_DIPLOMAT:
        for q in range(s[O_NPLAYERS]):
            if q != p:
                t = s[O_TOP + q]
                if t >= 0:
                    k = T[T_TYPE_KIND + t]
                    if k != K_DIPLOMAT:
                        mask[A_COPY + k] = 1
    elif ph == PH_BUY:
        if s[O_BUYS_LEFT] > 0:
            consul = s[O_CONSUL]
            for j in range(NDISP):
                cid = s[O_DISPLAY + j]
                if cid < 0 or (s[O_BOUGHT_POS] >> j) & 1:
                    continue
                spare = 0
                ok = True
                for g in range(NG):
                    need = T[T_CARD_COST + cid * NG + g]
                    if not consul:
                        need += T[T_DISPLAY_FIXED + j * NG + g]
                    have = s[O_GOODS + p * NG + g]
                    if have < need:
                        ok = False
                        break
                    spare += have - need
                if ok and (consul or spare >= T[T_DISPLAY_ANY + j]):
                    mask[A_BUYCARD + j] = 1
        mask[A_DONE] = 1
    elif ph == PH_PAY:
        for g in range(NG):
            if s[O_GOODS + p * NG + g] > 0:
                mask[A_PAY + g] = 1
    elif ph == PH_KEEP:
        x = s[O_KEEP_PLAYER]
        for g in range(NG):
            if s[O_INCOMING + x * NG + g] > 0:
                mask[A_KEEP + g] = 1
    n = 0
    for a in range(NUM_ACTIONS):
        n += mask[a]
    return n


@kernel("int32[::1], int32[::1], int64, int32[::1]")
def score_player(s, T, p, out):  # noqa: C901
    """Final-scoring VP of player ``p`` per god into ``out`` (NGODS); returns the total."""
    out[:] = 0
    nc = s[O_NCITIES]
    wealth = s[O_COINS + p]
    for g in range(NG):
        wealth += s[O_GOODS + p * NG + g] * T[T_PRICE + g]
    houses_nonbrick = 0
    prov_mask = 0
    goods_mask = 0
    per_good = np.zeros(NG, np.int64)
    for c in range(1, nc):
        if (s[O_HOUSES + c] >> p) & 1:
            g = s[O_CITY_GOOD + c]
            per_good[g] += 1
            goods_mask |= 1 << g
            prov_mask |= 1 << T[T_CITY_PROV + c]
            if g != 0:
                houses_nonbrick += 1
    nprov = 0
    while prov_mask:
        nprov += prov_mask & 1
        prov_mask >>= 1
    ngoods = 0
    while goods_mask:
        ngoods += goods_mask & 1
        goods_mask >>= 1
    on_board = _colonists_on_board(s, p)
    for t in range(NT):
        cnt = s[O_HAND + p * NT + t] + s[O_DISCARD + p * NT + t]
        if cnt == 0:
            continue
        god = T[T_TYPE_GOD + t]
        if god == GOD_VESTA:
            out[0] += cnt * (wealth // 10)
        elif god == GOD_JUPITER:
            out[1] += cnt * houses_nonbrick
        elif god == GOD_SATURNUS:
            out[2] += cnt * nprov
        elif god == GOD_MERCURIUS:
            out[3] += cnt * 2 * ngoods
        elif god == GOD_MARS:
            out[4] += cnt * 2 * on_board
        else:
            out[5] += cnt * T[T_TYPE_VP + t] * per_good[T[T_TYPE_GOOD + t]]
    if s[O_CONCORDIA] == p:
        out[6] = T[T_CONCORDIA_VP]
    total = 0
    for i in range(NGODS):
        total += out[i]
    return total


@kernel()
def _intermediate_scoring(s, T, p):
    if s[O_INTER_DONE + p] != 0:
        return
    buf = np.zeros(NGODS, np.int32)
    s[O_INTER_SCORE + p] = score_player(s, T, np.int64(p), buf)  # int64 as from Python: one compiled version
    s[O_INTER_DONE + p] = 1
    n = s[O_NPLAYERS]
    for q in range(n):
        if s[O_INTER_DONE + q] == 0:
            return
    # everybody has been scored: pay by place (ties share the place), then reset
    for q in range(n):
        place = 0
        for r in range(n):
            if s[O_INTER_SCORE + r] > s[O_INTER_SCORE + q]:
                place += 1
        if place < 2:
            s[O_COINS + q] += T[T_PAYOUT + place]
    for q in range(n):
        s[O_INTER_SCORE + q] = 0


@kernel()
def _end_turn(s):
    n = s[O_NPLAYERS]
    nxt = (s[O_ACTIVE] + 1) % n
    if s[O_CONCORDIA] >= 0 and nxt == s[O_CONCORDIA]:
        s[O_PHASE] = PH_OVER
        s[O_CURRENT] = -1
        return
    s[O_ACTIVE] = nxt
    s[O_CURRENT] = nxt
    s[O_PHASE] = PH_PLAY
    s[O_TURN] += 1


@kernel()
def _resolve_production(s, T):
    """Move incoming goods into storehouses, from the active player on in turn order.

    Returns False when a player must choose what to keep (phase PH_KEEP)."""
    n = s[O_NPLAYERS]
    for o in range(n):
        x = (s[O_ACTIVE] + o) % n
        base = O_INCOMING + x * NG
        total = 0
        kinds = 0
        for g in range(NG):
            total += s[base + g]
            if s[base + g] > 0:
                kinds += 1
        if total == 0:
            continue
        free = free_slots(s, T, x)
        if total <= free or kinds == 1 or free == 0:
            for g in range(NG):
                take = s[base + g] if s[base + g] < free else free
                s[O_GOODS + x * NG + g] += take
                free -= take
                s[base + g] = 0
            continue
        s[O_PHASE] = PH_KEEP
        s[O_KEEP_PLAYER] = x
        s[O_CURRENT] = x
        return False
    return True


@kernel()
def _finish_production(s, T):
    if _resolve_production(s, T):
        _end_turn(s)


@kernel()
def _start_kind(s, T, k):
    p = s[O_ACTIVE]
    s[O_KIND] = k
    if k == K_TRIBUNUS:
        base_d = O_DISCARD + p * NT
        taken = 0
        for t in range(NT):
            taken += s[base_d + t]
            s[O_HAND + p * NT + t] += s[base_d + t]
            s[base_d + t] = 0
        s[O_TOP + p] = -1
        if taken > T[T_FREE_CARDS]:
            s[O_COINS + p] += taken - T[T_FREE_CARDS]
        if s[O_INTERMEDIATE]:
            _intermediate_scoring(s, T, p)
        s[O_PHASE] = PH_TRIBUNUS
    elif k == K_ARCHITECTUS:
        s[O_POINTS] = _colonists_on_board(s, p)
        s[O_BUILT] = 0
        s[O_PHASE] = PH_ARCHITECTUS
    elif k == K_PRAEFECTUS:
        s[O_PHASE] = PH_PRAEFECTUS
    elif k == K_MERCATOR3 or k == K_MERCATOR5:
        s[O_COINS + p] += T[T_KIND_MERC + k]
        s[O_SOLD] = 0
        s[O_BOUGHT] = 0
        s[O_PHASE] = PH_MERCATOR
    elif k == K_COLONUS:
        s[O_PLACED] = 0
        s[O_PHASE] = PH_COLONUS
    elif k == K_SENATOR or k == K_CONSUL:
        s[O_BUYS_LEFT] = 2 if k == K_SENATOR else 1
        s[O_CONSUL] = 1 if k == K_CONSUL else 0
        s[O_BOUGHT_POS] = 0
        s[O_PHASE] = PH_BUY
    elif k == K_DIPLOMAT:
        s[O_PHASE] = PH_DIPLOMAT
    else:
        g = k - K_SPECIALIST
        made = 0
        for c in range(1, s[O_NCITIES]):
            if s[O_CITY_GOOD + c] == g and (s[O_HOUSES + c] >> p) & 1:
                made += 1
        s[O_INCOMING + p * NG + g] += made
        _finish_production(s, T)


@kernel()
def _finish_buying(s, T):
    p = s[O_ACTIVE]
    if s[O_BOUGHT_POS] != 0:
        k = 0
        for j in range(NDISP):
            cid = s[O_DISPLAY + j]
            if cid >= 0:
                s[O_DISPLAY + k] = cid
                k += 1
        while k < NDISP and s[O_DECK_POS] < s[O_DECK_LEN]:
            s[O_DISPLAY + k] = s[O_DECK + s[O_DECK_POS]]
            s[O_DECK_POS] += 1
            k += 1
        for j in range(k, NDISP):
            s[O_DISPLAY + j] = -1
        if k == 0 and s[O_CONCORDIA] < 0:
            s[O_CONCORDIA] = p
    _end_turn(s)


@kernel()
def _apply(s, T, a):  # noqa: C901
    ph = s[O_PHASE]
    p = s[O_ACTIVE]
    if a == A_DONE:
        if ph == PH_BUY:
            _finish_buying(s, T)
        else:
            _end_turn(s)
    elif a < A_DONE:
        t = a - A_PLAY
        s[O_HAND + p * NT + t] -= 1
        s[O_DISCARD + p * NT + t] += 1
        s[O_TOP + p] = t
        _start_kind(s, T, np.int64(T[T_TYPE_KIND + t]))  # int64 as for the Diplomat's copy below
    elif a < A_MOVE:
        _start_kind(s, T, a - A_COPY)
    elif a < A_BUILD:
        i = a - A_MOVE
        if i < 3 * NL:
            slot = i // NL
            r = i % NL
        else:
            i -= 3 * NL
            slot = 3 + i // NS
            r = NL + i % NS
        idx = O_COLONIST + p * NCOL + slot
        loc = s[idx]
        s[O_POINTS] -= T[T_DIST + loc * NR + r]
        if loc >= NC:
            s[O_ROUTE_OCC + loc - NC] = -1
        s[O_ROUTE_OCC + r] = p
        s[idx] = NC + r
    elif a < A_PRODUCE:
        c = a - A_BUILD
        g = s[O_CITY_GOOD + c]
        s[O_COINS + p] -= T[T_HOUSE_COINS + g] * (_house_count(s, c) + 1)
        for h in range(NG):
            s[O_GOODS + p * NG + h] -= T[T_HOUSE_GOODS + g * NG + h]
        s[O_HOUSES + c] |= 1 << p
        s[O_HOUSES_LEFT + p] -= 1
        s[O_BUILT] = 1
        if s[O_HOUSES_LEFT + p] == 0 and s[O_CONCORDIA] < 0:
            s[O_CONCORDIA] = p
    elif a < A_CASH:
        q = a - A_PRODUCE
        g = s[O_MARKER_GOOD + q]
        bonus = 1
        if s[O_PM] == p:
            bonus = 2
            s[O_PM] = (p - 1 + s[O_NPLAYERS]) % s[O_NPLAYERS]
        s[O_INCOMING + p * NG + g] += bonus
        s[O_MARKER_ACTIVE + q] = 0
        for c in range(1, s[O_NCITIES]):
            if T[T_CITY_PROV + c] == q:
                h = s[O_HOUSES + c]
                cg = s[O_CITY_GOOD + c]
                for x in range(s[O_NPLAYERS]):
                    if (h >> x) & 1:
                        s[O_INCOMING + x * NG + cg] += 1
        _finish_production(s, T)
    elif a == A_CASH:
        for q in range(s[O_NPROV]):
            if s[O_MARKER_ACTIVE + q] == 0:
                s[O_COINS + p] += T[T_MARKER_COINS + s[O_MARKER_GOOD + q]]
                s[O_MARKER_ACTIVE + q] = 1
        _end_turn(s)
    elif a < A_BUYGOOD:
        g = a - A_SELL
        s[O_GOODS + p * NG + g] -= 1
        s[O_COINS + p] += T[T_PRICE + g]
        s[O_SOLD] |= 1 << g
    elif a < A_PLACE:
        g = a - A_BUYGOOD
        s[O_GOODS + p * NG + g] += 1
        s[O_COINS + p] -= T[T_PRICE + g]
        s[O_BOUGHT] |= 1 << g
    elif a < A_COLONUS_CASH:
        i = a - A_PLACE
        kind = i // NC
        c = i % NC
        for g in range(NG):
            s[O_GOODS + p * NG + g] -= T[T_COLONIST_COST + g]
        for slot in range(3 * kind, 3 * kind + 3):
            if s[O_COLONIST + p * NCOL + slot] < 0:
                s[O_COLONIST + p * NCOL + slot] = c
                break
        s[O_PLACED] = 1
        if ph == PH_TRIBUNUS:
            _end_turn(s)
    elif a == A_COLONUS_CASH:
        s[O_COINS + p] += T[T_COLONUS_BASE] + _colonists_on_board(s, p)
        _end_turn(s)
    elif a < A_PAY:
        j = a - A_BUYCARD
        cid = s[O_DISPLAY + j]
        for g in range(NG):
            need = T[T_CARD_COST + cid * NG + g]
            if s[O_CONSUL] == 0:
                need += T[T_DISPLAY_FIXED + j * NG + g]
            s[O_GOODS + p * NG + g] -= need
        s[O_HAND + p * NT + T[T_CARD_TYPE + cid]] += 1
        s[O_DISPLAY + j] = -1
        s[O_BOUGHT_POS] |= 1 << j
        s[O_BUYS_LEFT] -= 1
        n_any = 0 if s[O_CONSUL] else T[T_DISPLAY_ANY + j]
        if n_any > 0:
            s[O_PAY_LEFT] = n_any
            s[O_PHASE] = PH_PAY
        elif s[O_BUYS_LEFT] == 0:
            _finish_buying(s, T)
    elif a < A_KEEP:
        g = a - A_PAY
        s[O_GOODS + p * NG + g] -= 1
        s[O_PAY_LEFT] -= 1
        if s[O_PAY_LEFT] == 0:
            s[O_PHASE] = PH_BUY
            if s[O_BUYS_LEFT] == 0:
                _finish_buying(s, T)
    else:
        g = a - A_KEEP
        x = s[O_KEEP_PLAYER]
        s[O_GOODS + x * NG + g] += 1
        s[O_INCOMING + x * NG + g] -= 1
        if free_slots(s, T, x) == 0:
            for h in range(NG):
                s[O_INCOMING + x * NG + h] = 0
        _finish_production(s, T)


@kernel("int32[::1], int32[::1], int8[::1], int64")
def step(s, T, mask, a):
    """Apply legal action ``a``; then end actions whose only option is 'done'.

    Leaves ``mask`` holding the legal actions of the new state and returns their count."""
    while True:
        _apply(s, T, a)
        n = legal_mask(s, T, mask)
        if n == 1 and mask[A_DONE] == 1:
            # through the variable: passing the constant A_DONE would make numba compile
            # _apply a second time, specialised for that literal value
            a = A_DONE
            continue
        return n


@kernel("int32[::1], int32[::1], int8[::1], int64, int64", group="rollout")
def random_playout(s, T, mask, seed, max_steps):
    """Play uniformly random legal actions until the game ends (or ``max_steps``).

    Uses numba's own generator seeded with ``seed``; returns the number of actions."""
    np.random.seed(seed)
    legal_mask(s, T, mask)
    count = 0
    idx = np.empty(NUM_ACTIONS, np.int64)
    while s[O_PHASE] != PH_OVER and count < max_steps:
        m = 0
        for a in range(NUM_ACTIONS):
            if mask[a]:
                idx[m] = a
                m += 1
        a = idx[np.random.randint(0, m)]
        step(s, T, mask, a)
        count += 1
    return count
