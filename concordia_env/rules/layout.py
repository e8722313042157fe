"""The layout of the rules kernel's two flat int32 arrays, and the numbering of everything in them.

* ``s``: the mutable game state, one flat ``int32`` array whose named fields are listed in
  :data:`STATE_FIELDS` (offsets ``O_*``);
* ``T``: the static tables of one map and the components, one flat ``int32`` array laid out
  by :data:`TABLE_FIELDS` (offsets ``T_*``), built by :mod:`concordia_env.board`.

The layout is padded to the largest board (31 cities with Roma, 44 land and 35 sea routes,
12 provinces, 5 players), so one compiled kernel serves both maps and every player count;
padded routes are unreachable and padded cities hold nothing. Offsets are plain module
globals because numba freezes globals as compile-time constants.
"""

from __future__ import annotations

import numpy as np

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
    ("colonus_base", ()), ("colonus_per", ()), ("concordia_vp", ()), ("houses", ()),
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
T_COLONUS_PER = TABLE_LAYOUT["colonus_per"][0]
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
