"""Observation encoding: one flat float32 vector per (state, observer seat).

The vector holds what a player with perfect memory knows (everything except
the order of the deck), always from the observer's seat: per-player rows are
ordered self first, then the others in turn order, and rows of seats absent in
a smaller game are zero (``seat_present`` tells which rows are real). Board
arrays are padded to the largest map (31 cities, 44 land + 35 sea route
slots, 12 provinces), so every map and player count shares one shape and one
network can serve them all.

The layout is :data:`OBSERVATION_FIELDS` (name, shape, upper bound);
:data:`OBSERVATION_LAYOUT` maps each name to its slice of the flat vector.
Values are raw counts and flags (no scaling), so the vector is exact; every
one-hot block is all zero when the thing it encodes is absent.

Encoding is a compiled (numba) kernel over the flat state array, so building
an observation costs about a microsecond and a batch of them is one call.
Context fields of a decision phase (movement points, goods traded, cards
still to buy, ...) are zero outside the phase they belong to, so the vector
never carries stale context.
"""

from __future__ import annotations

import numpy as np

from . import engine as E
from ._internal.jit import kernel
from .data import MAP_NAMES, components
from .rules.quantities import card_any, card_goods
from .rules.scoring import god_scores

P = E.MAXP
_INF = np.inf

#: (name, shape, upper bound) of every block of the observation, in order.
#: Per-player blocks have MAXP rows: row 0 is the observer, row k the k-th
#: player after the observer in turn order. Lower bounds are all 0.
OBSERVATION_FIELDS: tuple[tuple[str, tuple[int, ...], float], ...] = (
    # -- game
    ("map", (len(MAP_NAMES),), 1),  # one-hot, MAP_NAMES order
    ("intermediate_scoring", (1,), 1),  # the game option is on
    ("turn", (1,), _INF),  # card plays so far
    # -- board
    ("city_good", (E.NC, E.NG), 1),  # one-hot good of each city (Roma: none)
    ("city_houses", (E.NC, P), 1),  # house of seat k in city c
    ("city_colonists", (E.NC, P, 2), 3),  # land / sea colonists of seat k in city c
    ("route_colonist", (E.NR, P), 1),  # colonist of seat k on route r (land 0..43, sea 44..78)
    ("marker_good", (E.NPV, E.NG), 1),  # one-hot good of each province's bonus marker
    ("marker_good_side", (E.NPV,), 1),  # 1: good side up (province can produce), 0: coins side
    # -- players
    ("seat_present", (P,), 1),
    ("start_player", (P,), 1),
    ("praefectus_magnus", (P,), 1),
    ("concordia_card", (P,), 1),
    ("coins", (P,), _INF),
    ("goods", (P, E.NG), 12),
    ("storehouse_colonists", (P, 2), 3),  # land / sea colonists not on the board
    # observer's colonist i (0-2 land, 3-5 sea: the slots move actions name) at location l
    # (city c, or 31 + route r); a row of zeros: that colonist is in the storehouse
    ("own_colonist_slots", (E.NCOL, E.NLOC), 1),
    ("houses_left", (P,), 15),
    ("hand", (P, E.NT), _INF),  # cards in hand, per card type (bound: copies of the type)
    ("discard", (P, E.NT), _INF),  # cards in the discard pile, per card type
    ("top_card", (P, E.NT), 1),  # one-hot visible top card of the discard pile
    ("victory_points", (P, E.NGODS), _INF),  # final-scoring VP now: Vesta..Minerva, Concordia
    ("incoming_goods", (P, E.NG), _INF),  # goods produced but not yet stored (overflow choice)
    ("intermediate_scored", (P,), 1),  # already scored in this intermediate-scoring round
    ("intermediate_score", (P,), _INF),  # VP counted at that scoring (paid out when all are scored)
    # -- cards
    ("display_card", (E.NDISP, E.NT), 1),  # one-hot card type at display position j
    ("display_price", (E.NDISP, E.NG), _INF),  # goods price at j for a Senator (card + position)
    ("display_price_any", (E.NDISP,), 2),  # goods of any kind ('?') also due at j
    ("deck_size", (1,), E.NCARD),
    ("deck_cards", (E.NT,), E.NCARD),  # multiset of card types still in the deck
    # -- decision
    ("deciding_seat", (P,), 1),  # who decides now (overflow choices can be out of turn)
    ("active_seat", (P,), 1),  # whose turn it is
    ("phase", (len(E.PHASE_NAMES),), 1),  # one-hot decision phase, engine.PHASE_NAMES order
    ("action_kind", (E.NK,), 1),  # one-hot action being carried out (any phase but 'play a card')
    ("move_points", (1,), E.NCOL),  # Architectus: movement points left
    ("house_built", (1,), 1),  # Architectus: has built (no more moving)
    ("goods_sold", (E.NG,), 1),  # Mercator: kinds sold
    ("goods_bought", (E.NG,), 1),  # Mercator: kinds bought
    ("colonist_placed", (1,), 1),  # Colonus: placed at least one colonist
    ("buys_left", (1,), 2),  # Senator / Consul: cards still to buy
    ("consul", (1,), 1),  # buying as Consul (card cost only)
    ("bought_positions", (E.NDISP,), 1),  # display positions bought this action
    ("pay_left", (1,), 2),  # goods still to pay for '?'
)


def _layout():
    out, off = {}, 0
    for name, shape, _ in OBSERVATION_FIELDS:
        size = int(np.prod(shape))
        out[name] = slice(off, off + size)
        off += size
    return out, off


#: name -> slice of the flat observation vector.
OBSERVATION_LAYOUT, OBSERVATION_SIZE = _layout()


def _o(name: str) -> int:
    return OBSERVATION_LAYOUT[name].start


# offsets as module globals: numba freezes them as compile-time constants
X_MAP, X_INTER, X_TURN = _o("map"), _o("intermediate_scoring"), _o("turn")
X_CITY_GOOD, X_CITY_HOUSES, X_CITY_COL = _o("city_good"), _o("city_houses"), _o("city_colonists")
X_ROUTE, X_MARKER, X_MARKER_SIDE = _o("route_colonist"), _o("marker_good"), _o("marker_good_side")
X_PRESENT, X_START, X_PM, X_CONC = _o("seat_present"), _o("start_player"), _o("praefectus_magnus"), _o("concordia_card")
X_COINS, X_GOODS, X_STORE_COL, X_HOUSES_LEFT = _o("coins"), _o("goods"), _o("storehouse_colonists"), _o("houses_left")
X_SLOTS = _o("own_colonist_slots")
X_HAND, X_DISCARD, X_TOP, X_VP = _o("hand"), _o("discard"), _o("top_card"), _o("victory_points")
X_INCOMING, X_INTER_DONE, X_INTER_SCORE = _o("incoming_goods"), _o("intermediate_scored"), _o("intermediate_score")
X_DISP, X_DISP_PRICE, X_DISP_ANY = _o("display_card"), _o("display_price"), _o("display_price_any")
X_DECK_SIZE, X_DECK_CARDS = _o("deck_size"), _o("deck_cards")
X_DECIDING, X_ACTIVE, X_PHASE, X_KIND = _o("deciding_seat"), _o("active_seat"), _o("phase"), _o("action_kind")
X_POINTS, X_BUILT, X_SOLD, X_BOUGHT = _o("move_points"), _o("house_built"), _o("goods_sold"), _o("goods_bought")
X_PLACED, X_BUYS, X_CONSUL, X_BOUGHT_POS, X_PAY = (
    _o("colonist_placed"), _o("buys_left"), _o("consul"), _o("bought_positions"), _o("pay_left"))


# engine offsets as plain module globals (numba freezes them at compile time)
O_NPLAYERS, O_PHASE, O_INTERMEDIATE, O_TURN = E.O_NPLAYERS, E.O_PHASE, E.O_INTERMEDIATE, E.O_TURN
O_NCITIES, O_NPROV, O_CITY_GOOD, O_MARKER_GOOD = E.O_NCITIES, E.O_NPROV, E.O_CITY_GOOD, E.O_MARKER_GOOD
O_MARKER_ACTIVE, O_HOUSES, O_COLONIST, O_START = E.O_MARKER_ACTIVE, E.O_HOUSES, E.O_COLONIST, E.O_START
O_PM, O_CONCORDIA, O_COINS, O_HOUSES_LEFT = E.O_PM, E.O_CONCORDIA, E.O_COINS, E.O_HOUSES_LEFT
O_INTER_DONE, O_GOODS, O_INCOMING, O_HAND = E.O_INTER_DONE, E.O_GOODS, E.O_INCOMING, E.O_HAND
O_INTER_SCORE = E.O_INTER_SCORE
O_DISCARD, O_TOP, O_DISPLAY, O_DECK_LEN = E.O_DISCARD, E.O_TOP, E.O_DISPLAY, E.O_DECK_LEN
O_DECK_POS, O_DECK, O_CURRENT, O_ACTIVE = E.O_DECK_POS, E.O_DECK, E.O_CURRENT, E.O_ACTIVE
O_KIND, O_POINTS, O_BUILT, O_SOLD, O_BOUGHT = E.O_KIND, E.O_POINTS, E.O_BUILT, E.O_SOLD, E.O_BOUGHT
O_PLACED, O_BUYS_LEFT, O_CONSUL, O_BOUGHT_POS = E.O_PLACED, E.O_BUYS_LEFT, E.O_CONSUL, E.O_BOUGHT_POS
O_PAY_LEFT = E.O_PAY_LEFT


def observation_bounds(tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 vectors of the observation space for a map's tables.

    Card counts are bounded by how many cards of a type exist (starting hand
    plus every deck); coins, VP and the turn counter have no rule bound."""
    low = np.zeros(OBSERVATION_SIZE, np.float32)
    high = np.empty(OBSERVATION_SIZE, np.float32)
    for name, _, bound in OBSERVATION_FIELDS:
        high[OBSERVATION_LAYOUT[name]] = bound
    per_type = np.bincount(tables[E.T_CARD_TYPE:E.T_CARD_TYPE + E.NCARD], minlength=E.NT)
    per_type = per_type + np.bincount(np.asarray(components().starting_hand), minlength=E.NT)
    for name in ("hand", "discard"):
        high[OBSERVATION_LAYOUT[name]] = np.tile(per_type, P)
    high[OBSERVATION_LAYOUT["incoming_goods"]] = E.NC + 2  # one per house of a kind, plus the bonus
    high[OBSERVATION_LAYOUT["display_price"]] = 6  # largest card cost plus position extras (checked in tests)
    return low, high


@kernel(inline="always")
def _encode_board(s, out):
    """Cities' goods and the province markers."""
    for c in range(1, s[O_NCITIES]):
        out[X_CITY_GOOD + c * E.NG + s[O_CITY_GOOD + c]] = 1.0
    for q in range(s[O_NPROV]):
        out[X_MARKER + q * E.NG + s[O_MARKER_GOOD + q]] = 1.0
        out[X_MARKER_SIDE + q] = s[O_MARKER_ACTIVE + q]


@kernel(inline="always")
def _encode_pieces(s, p, k, out):
    """Player ``p``'s houses and colonists, in seat-relative row ``k`` (the observer's own
    colonists also by slot, which the move actions name)."""
    for c in range(1, s[O_NCITIES]):
        if (s[O_HOUSES + c] >> p) & 1:
            out[X_CITY_HOUSES + c * P + k] = 1.0
    for i in range(E.NCOL):
        loc = s[O_COLONIST + p * E.NCOL + i]
        sea = 1 if i >= 3 else 0
        if loc < 0:
            out[X_STORE_COL + k * 2 + sea] += 1.0
        elif loc < E.NC:
            out[X_CITY_COL + (loc * P + k) * 2 + sea] += 1.0
        else:
            out[X_ROUTE + (loc - E.NC) * P + k] = 1.0
        if k == 0 and loc >= 0:
            out[X_SLOTS + i * E.NLOC + loc] = 1.0


@kernel(inline="always")
def _encode_player(s, T, p, k, out):
    """Player ``p``'s markers, coins, goods, cards and VP, in seat-relative row ``k``."""
    out[X_PRESENT + k] = 1.0
    out[X_START + k] = 1.0 if s[O_START] == p else 0.0
    out[X_PM + k] = 1.0 if s[O_PM] == p else 0.0
    out[X_CONC + k] = 1.0 if s[O_CONCORDIA] == p else 0.0
    out[X_COINS + k] = s[O_COINS + p]
    out[X_HOUSES_LEFT + k] = s[O_HOUSES_LEFT + p]
    out[X_INTER_DONE + k] = s[O_INTER_DONE + p]
    out[X_INTER_SCORE + k] = s[O_INTER_SCORE + p]
    for g in range(E.NG):
        out[X_GOODS + k * E.NG + g] = s[O_GOODS + p * E.NG + g]
        out[X_INCOMING + k * E.NG + g] = s[O_INCOMING + p * E.NG + g]
    for t in range(E.NT):
        out[X_HAND + k * E.NT + t] = s[O_HAND + p * E.NT + t]
        out[X_DISCARD + k * E.NT + t] = s[O_DISCARD + p * E.NT + t]
    if s[O_TOP + p] >= 0:
        out[X_TOP + k * E.NT + s[O_TOP + p]] = 1.0
    vp = god_scores(s, T, np.int64(p))  # int64 as from score_player: one compiled version
    for i in range(E.NGODS):
        out[X_VP + k * E.NGODS + i] = vp[i]


@kernel(inline="always")
def _encode_cards(s, T, out):
    """The display with the Senator's prices, and what is left in the deck."""
    for j in range(E.NDISP):
        cid = s[O_DISPLAY + j]
        if cid < 0:
            continue
        out[X_DISP + j * E.NT + T[E.T_CARD_TYPE + cid]] = 1.0
        for g in range(E.NG):
            out[X_DISP_PRICE + j * E.NG + g] = card_goods(T, cid, j, 0, g)
        out[X_DISP_ANY + j] = card_any(T, j, 0)
    out[X_DECK_SIZE] = s[O_DECK_LEN] - s[O_DECK_POS]
    for i in range(s[O_DECK_POS], s[O_DECK_LEN]):
        out[X_DECK_CARDS + T[E.T_CARD_TYPE + s[O_DECK + i]]] += 1.0


@kernel(inline="always")
def _encode_action(s, ph, out):
    """The decision context of the action being carried out (phase ``ph``, not PH_PLAY or PH_OVER)."""
    out[X_KIND + s[O_KIND]] = 1.0
    if ph == E.PH_ARCHITECTUS:
        out[X_POINTS] = s[O_POINTS]
        out[X_BUILT] = s[O_BUILT]
    elif ph == E.PH_MERCATOR:
        for g in range(E.NG):
            out[X_SOLD + g] = (s[O_SOLD] >> g) & 1
            out[X_BOUGHT + g] = (s[O_BOUGHT] >> g) & 1
    elif ph == E.PH_COLONUS:
        out[X_PLACED] = s[O_PLACED]
    elif ph == E.PH_BUY or ph == E.PH_PAY:
        out[X_BUYS] = s[O_BUYS_LEFT]
        out[X_CONSUL] = s[O_CONSUL]
        for j in range(E.NDISP):
            out[X_BOUGHT_POS + j] = (s[O_BOUGHT_POS] >> j) & 1
        if ph == E.PH_PAY:
            out[X_PAY] = s[O_PAY_LEFT]


@kernel("int32[::1], int32[::1], int64, int64, float32[::1]")
def encode(s, T, map_id, observer, out):
    """Write the observation of seat ``observer`` of state ``s`` into ``out`` (float32, OBSERVATION_SIZE)."""
    out[:] = 0.0
    n = s[O_NPLAYERS]
    ph = s[O_PHASE]
    out[X_MAP + map_id] = 1.0
    out[X_INTER] = s[O_INTERMEDIATE]
    out[X_TURN] = s[O_TURN]
    _encode_board(s, out)
    for p in range(n):
        k = (p - observer + n) % n  # seat-relative row
        _encode_pieces(s, p, k, out)
        _encode_player(s, T, p, k, out)
    _encode_cards(s, T, out)
    out[X_PHASE + ph] = 1.0
    if ph == E.PH_OVER:
        return
    out[X_DECIDING + (s[O_CURRENT] - observer + n) % n] = 1.0
    out[X_ACTIVE + (s[O_ACTIVE] - observer + n) % n] = 1.0
    if ph != E.PH_PLAY:
        _encode_action(s, ph, out)


@kernel("int32[:, ::1], int32[::1], int64, int64[::1], float32[:, ::1]", group="vector")
def encode_batch(S, T, map_id, observers, out):
    """Row-wise :func:`encode`: observation of seat ``observers[i]`` of state ``S[i]`` into ``out[i]``."""
    for i in range(S.shape[0]):
        encode(S[i], T, map_id, observers[i], out[i])







def map_id(map_name: str) -> int:
    """Index of a map in the observation's ``map`` one-hot."""
    return MAP_NAMES.index(map_name)


def observation(state, observer: int) -> np.ndarray:
    """The observation vector of seat ``observer`` (0..n-1) of a :class:`GameState` (a new array)."""
    n = state.num_players
    if isinstance(observer, bool) or not isinstance(observer, (int, np.integer)) or not 0 <= observer < n:
        raise ValueError(f"observer must be a seat 0..{n - 1}, got {observer!r}")
    out = np.empty(OBSERVATION_SIZE, np.float32)
    encode(state.s, state.game.tables, map_id(state.game.name), int(observer), out)
    return out


def unpack(vector: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation vector (or a batch, last axis) into named blocks of their documented shapes."""
    lead = vector.shape[:-1]
    return {name: vector[..., OBSERVATION_LAYOUT[name]].reshape(lead + shape)
            for name, shape, _ in OBSERVATION_FIELDS}
