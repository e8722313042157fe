"""A position and an action as JSON-ready dicts in board terms, for programs that read games as data
(OpenSpiel's ``to_struct`` / ``to_json``, prompts for a language model).

Everything is named as the board names it (cities, provinces, goods, cards, gods) with the raw ids
beside the names (``"city": "Roma", "city_id": 0``), so a reader can go either way. Seats are ints
(0..n-1). Lists are in a fixed order (by id, or by seat) and only ints, strings, bools and None
appear, so the same position always gives the same dict and ``json.dumps(..., sort_keys=True)`` the
same text.

**Nothing hidden appears.** The only hidden information in Concordia is the order of the undrawn
cards: the deck is given as its size and its content by card type (what any player can count), never
its order. Everything else is public: every card bought (hands and discard piles are known to a
player who remembers), goods, coins, pieces, the display. :func:`position_struct` with an
``observer`` follows the package's observation vector (:mod:`concordia_env.encoding`) in one more
respect: colonists of one kind are interchangeable, so another player's colonists are listed by
place, while the observer's own are listed by slot (``"slot": 1`` is "land colonist 1" of the move
names). Without an observer every player's colonists are listed by slot (the information state's
view, where slots are public).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import board
from .. import engine as E
from ..actions import action_range, describe
from ..data import GOODS
from ..rules.names import KIND_NAMES
from ..rules.pieces import owns_house
from ..state import GOD_COLUMNS, GameState

#: ``"kind"`` of a colonist slot: 0-2 land, 3-5 sea
_SLOT_KINDS = ("land",) * 3 + ("sea",) * 3


# ---------------------------------------------------------------- small pieces

def goods_dict(amounts: Any) -> dict[str, int]:
    """Amounts per good by good name, every good present (``{"brick": 1, "food": 0, ...}``)."""
    return {GOODS[g]: int(amounts[g]) for g in range(E.NG)}


def card_type_struct(state: GameState, t: int) -> dict[str, Any]:
    """A card type: ``{"card": "Farmer", "card_type_id": 9, "god": "Minerva"}``."""
    kind = state.game.components.card_types[int(t)]
    return {"card": kind.name, "card_type_id": int(t), "god": kind.god}


def _cards(state: GameState, counts: Any) -> list[dict[str, Any]]:
    """Cards per type as a list by type id, with counts (types with none left out)."""
    return [{**card_type_struct(state, t), "count": int(n)} for t, n in enumerate(counts) if n]


def place_struct(state: GameState, loc: int) -> dict[str, Any]:
    """Where a colonist stands: a city, a route (with its two cities) or the storehouse."""
    m = state.game.map
    if loc < 0:
        return {"where": "storehouse"}
    if loc < E.NC:
        return {"where": "city", "city": m.city_names[loc], "city_id": int(loc)}
    return {"where": "route", **route_struct(state, loc - E.NC)}


def route_struct(state: GameState, r: int) -> dict[str, Any]:
    """A route: its name, id, kind and the cities at its ends."""
    m, T = state.game.map, state.game.tables
    kind = "land" if r < E.NL else "sea"
    on_map = r < len(m.land_routes) if r < E.NL else r - E.NL < len(m.sea_routes)
    if not on_map:  # one action space serves both maps: the route exists only on the other one
        return {"route": None, "route_id": int(r), "route_kind": kind}
    a, b = int(T[E.T_ROUTE_A + r]), int(T[E.T_ROUTE_B + r])
    return {"route": state.game.route_name(r), "route_id": int(r), "route_kind": kind,
            "cities": [m.city_names[a], m.city_names[b]], "city_ids": [a, b]}


def city_struct(state: GameState, c: int) -> dict[str, Any]:
    """A city by name and id (``"city": None`` for an id the map lacks)."""
    m = state.game.map
    return {"city": m.city_names[c] if 0 <= c < m.num_cities else None, "city_id": int(c)}


def good_struct(g: int) -> dict[str, Any]:
    return {"good": GOODS[g], "good_id": int(g)}


# ---------------------------------------------------------------- the board

def _provinces(state: GameState) -> list[dict[str, Any]]:
    m = state.game.map
    marker, active = state.field("marker_good"), state.field("marker_active")
    out = []
    for q, name in enumerate(m.province_names):
        ids = [c for c in range(m.num_cities) if m.city_province[c] == q]
        out.append({"province": name, "province_id": q, "numeral": m.province_numerals[q],
                    "bonus_marker": GOODS[int(marker[q])], "good_side_up": bool(active[q]),
                    "cities": [m.city_names[c] for c in ids], "city_ids": ids})
    return out


def _cities(state: GameState) -> list[dict[str, Any]]:
    m, goods = state.game.map, state.field("city_good")
    out = []
    for c in range(m.num_cities):
        q = int(m.city_province[c])
        out.append({"city": m.city_names[c], "city_id": c,
                    "province": m.province_names[q] if q >= 0 else None, "province_id": q if q >= 0 else None,
                    "good": GOODS[int(goods[c])] if goods[c] >= 0 else None,
                    "houses": [p for p in range(state.num_players) if owns_house(state.s, c, p)]})
    return out


def _occupied_routes(state: GameState) -> list[dict[str, Any]]:
    """The routes with a colonist on them, by route id (a route holds at most one)."""
    occ = state.field("route_occ")
    return [{**route_struct(state, r), "colonist_of": int(occ[r])} for r in range(E.NR) if occ[r] >= 0]


# ---------------------------------------------------------------- the players

def _colonists(state: GameState, p: int, by_slot: bool) -> list[dict[str, Any]]:
    """Player ``p``'s six colonists: by slot, or (another player seen by an observer) by place,
    in a fixed order (land first, then by place) that reveals no slot."""
    col = state.field("colonist")[p]
    if by_slot:
        return [{"kind": _SLOT_KINDS[i], "slot": i % 3 + 1, **place_struct(state, int(col[i]))} for i in range(E.NCOL)]
    order = sorted(range(E.NCOL), key=lambda i: (i >= 3, int(col[i])))
    return [{"kind": _SLOT_KINDS[i], **place_struct(state, int(col[i]))} for i in order]


def _player(state: GameState, p: int, vp: Any, by_slot: bool) -> dict[str, Any]:
    T = state.game.tables
    top = int(state.field("top")[p])
    out = {
        "seat": p,
        "coins": int(state.field("coins")[p]),
        "goods": goods_dict(state.field("goods")[p]),
        "storehouse": {"slots": int(T[E.T_STORE]), "used": int(T[E.T_STORE]) - int(E.free_slots(state.s, T, p))},
        "houses_left": int(state.field("houses_left")[p]),
        "hand": _cards(state, state.field("hand")[p]),
        "discard": _cards(state, state.field("discard")[p]),
        "discard_top": card_type_struct(state, top) if top >= 0 else None,
        "colonists": _colonists(state, p, by_slot),
        "victory_points": {**{god: int(v) for god, v in zip(GOD_COLUMNS, vp)}, "total": int(vp.sum())},
        "praefectus_magnus": int(state.field("pm")) == p,
        "concordia_card": int(state.field("concordia")) == p,
        "start_player": int(state.field("start_player")) == p,
    }
    incoming = state.field("incoming")[p]
    if incoming.any():  # goods produced but not yet stored: the owner is choosing what to keep
        out["incoming_goods"] = goods_dict(incoming)
    if int(state.field("intermediate")):
        out["intermediate_scored"] = bool(state.field("inter_done")[p])
        out["intermediate_score"] = int(state.field("inter_score")[p])
    return out


# ---------------------------------------------------------------- the cards

def _display(state: GameState) -> list[dict[str, Any]]:
    """The display with the Senator's price of each card (card cost plus the position's extras)."""
    T = state.game.tables
    out = []
    for j, cid in enumerate(state.field("display")):
        if cid < 0:
            continue
        goods, n_any = board.display_price(T, j, int(cid))
        out.append({"position": j + 1, "display_index": j, "card_id": int(cid),
                    **card_type_struct(state, int(T[E.T_CARD_TYPE + cid])),
                    "price": {**goods_dict(goods), "any": int(n_any)}})
    return out


def _deck(state: GameState) -> dict[str, Any]:
    """The undrawn cards as a count per card type: what anyone can count, never their order."""
    T = state.game.tables
    pos, end = int(state.field("deck_pos")), int(state.field("deck_len"))
    counts = [0] * E.NT
    for cid in state.field("deck")[pos:end]:
        counts[int(T[E.T_CARD_TYPE + cid])] += 1
    return {"cards_left": end - pos, "cards": _cards(state, counts)}


# ---------------------------------------------------------------- the decision

def _decision(state: GameState) -> dict[str, Any] | None:
    """Who decides what now, and the context of the card being carried out (None once over)."""
    if state.is_terminal():
        return None
    ph, s = state.phase, state.s
    out: dict[str, Any] = {"player": state.current_player, "active_player": state.active_player,
                           "phase": state.phase_name, "phase_id": ph}
    if ph == E.PH_PLAY:
        return out
    out["action"] = KIND_NAMES[int(s[E.O_KIND])]
    if ph == E.PH_ARCHITECTUS:
        out.update(movement_points_left=int(s[E.O_POINTS]), has_built=bool(s[E.O_BUILT]))
    elif ph == E.PH_MERCATOR:
        out.update(goods_sold=[GOODS[g] for g in range(E.NG) if (int(s[E.O_SOLD]) >> g) & 1],
                   goods_bought=[GOODS[g] for g in range(E.NG) if (int(s[E.O_BOUGHT]) >> g) & 1])
    elif ph == E.PH_COLONUS:
        out["has_placed"] = bool(s[E.O_PLACED])
    elif ph in (E.PH_BUY, E.PH_PAY):
        out.update(cards_to_buy=int(s[E.O_BUYS_LEFT]), consul=bool(s[E.O_CONSUL]),
                   positions_bought=[j + 1 for j in range(E.NDISP) if (int(s[E.O_BOUGHT_POS]) >> j) & 1])
        if ph == E.PH_PAY:
            out["goods_to_pay"] = int(s[E.O_PAY_LEFT])
    return out


def _result(state: GameState) -> dict[str, Any] | None:
    if not state.is_terminal():
        return None
    return {"scores": state.scores(), "ranking": state.ranking(), "winner": state.winner()}


def position_struct(state: GameState, observer: int | None = None) -> dict[str, Any]:
    """The position as a JSON-ready dict (see the module doc): the game, the board, the players,
    the display, the deck's size and content, who decides what, and the result once over.
    ``observer`` (a seat) lists the other players' colonists by place only and adds
    ``"observing_player"``."""
    n = state.num_players
    if observer is not None:
        if isinstance(observer, (bool, np.bool_)) or not isinstance(observer, (int, np.integer)) \
                or not 0 <= observer < n:
            raise ValueError(f"observer must be a seat 0..{n - 1} or None, got {observer!r}")
        observer = int(observer)
    vp = state.score_breakdown()
    out: dict[str, Any] = {
        "map": state.map_name,
        "players": n,
        "intermediate_scoring": bool(state.field("intermediate")),
        "card_plays": int(state.field("turn")),
        "game_over": state.is_terminal(),
        "decision": _decision(state),
        "provinces": _provinces(state),
        "cities": _cities(state),
        "routes_occupied": _occupied_routes(state),
        "seats": [_player(state, p, vp[p], observer is None or p == observer) for p in range(n)],
        "display": _display(state),
        "deck": _deck(state),
        "result": _result(state),
    }
    if observer is not None:
        out["observing_player"] = observer
    return out


# ---------------------------------------------------------------- actions

def _move_fields(state: GameState, a: int) -> dict[str, Any]:
    slot, r = (int(x) for x in E.decode_move(a))
    loc = int(state.s[E.O_COLONIST + state.active_player * E.NCOL + slot])
    return {"colonist": {"kind": _SLOT_KINDS[slot], "slot": slot % 3 + 1, **place_struct(state, loc)},
            **route_struct(state, r)}


def _build_fields(state: GameState, a: int) -> dict[str, Any]:
    c = a - E.A_BUILD
    good = int(state.s[E.O_CITY_GOOD + c]) if 0 < c < state.game.map.num_cities else -1
    return {**city_struct(state, c), "good": GOODS[good] if good >= 0 else None}


def _produce_fields(state: GameState, a: int) -> dict[str, Any]:
    q = a - E.A_PRODUCE
    names = state.game.map.province_names
    return {"province": names[q] if q < len(names) else None, "province_id": q}


def _place_fields(state: GameState, a: int) -> dict[str, Any]:
    i = a - E.A_PLACE
    return {"colonist_kind": "land" if i < E.NC else "sea", **city_struct(state, i % E.NC)}


def _buy_card_fields(state: GameState, a: int) -> dict[str, Any]:
    j = a - E.A_BUYCARD
    cid = int(state.s[E.O_DISPLAY + j])
    card = {"card_id": cid, **card_type_struct(state, int(state.game.tables[E.T_CARD_TYPE + cid]))} if cid >= 0 else {}
    return {"position": j + 1, "display_index": j, **card}


#: what an action of each family names, in board terms (ids beside the names); the families not
#: here (done, cash bonus, colonus cash) name nothing more than their type
_FIELDS: dict[str, Any] = {
    "play": lambda state, a: card_type_struct(state, a - E.A_PLAY),
    "copy": lambda state, a: {"copies": KIND_NAMES[a - E.A_COPY], "kind_id": a - E.A_COPY},
    "move": _move_fields,
    "build": _build_fields,
    "produce": _produce_fields,
    "sell": lambda state, a: good_struct(a - E.A_SELL),
    "buy good": lambda state, a: good_struct(a - E.A_BUYGOOD),
    "place colonist": _place_fields,
    "buy card": _buy_card_fields,
    "pay": lambda state, a: good_struct(a - E.A_PAY),
    "keep": lambda state, a: good_struct(a - E.A_KEEP),
}


def action_struct(state: GameState, action: int) -> dict[str, Any]:
    """An action id as a dict: ``id``, its family (``type``, as in :data:`concordia_env.actions.ACTION_TABLE`),
    its readable ``name`` (``GameState.action_to_string``) and what it names in board terms, e.g.
    ``{"id": 270, "type": "build", "name": "Architectus: build in ...", "city": "Verona", "city_id": 2,
    "good": "brick"}``. Any id 0..401 is described, legal now or not."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) \
            or not 0 <= action < E.NUM_ACTIONS:
        raise ValueError(f"action must be an int 0..{E.NUM_ACTIONS - 1}, got {action!r}")
    action = int(action)
    family = action_range(action)
    fields = _FIELDS[family](state, action) if family in _FIELDS else {}
    return {"id": action, "type": family, "name": describe(state, action), **fields}
