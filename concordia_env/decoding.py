"""From an observation back to a game state: what an observation-only agent can rebuild.

An observation holds everything a player with perfect memory knows except the
order of the deck (see :mod:`concordia_env.encoding`). :func:`state_from_observation`
builds a :class:`GameState` that agrees with it: encoding the rebuilt state
from seat 0 gives the same observation back, and its legal actions are the
observer's legal actions. Seats are renumbered so the observer is player 0 and
the others follow in turn order (the observation's own row order).

What cannot be known is filled in consistently rather than guessed at random:

* the deck: its cards (by type) are known, their order is not. The rebuilt deck
  keeps the physical stacking (deck I on top of II, and so on) and takes the
  cards of each stack in id order;
* which of several identical cards (same type and cost) is which;
* the slot order of the other players' colonists (only the observer's own
  slots matter for its move actions; the rebuilt state lists them in order).

So a rebuilt state is exact for everything within the observer's turn; what
comes out of the deck later is one possible future.
"""

from __future__ import annotations

import numpy as np

from . import engine as E
from .board import stacked_decks
from .data import MAP_NAMES
from .encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT, OBSERVATION_SIZE, observation_bounds, unpack
from .game import get_game, initial_state
from .rules.quantities import card_goods
from .state import GameState
from .validation import MAX_COINS, MAX_SCORE, MAX_TURN, state_violations

#: per-player state field <- observation block holding the same numbers
_PLAYER_ROWS = (("coins", "coins"), ("goods", "goods"), ("hand", "hand"), ("discard", "discard"),
                ("houses_left", "houses_left"), ("incoming", "incoming_goods"),
                ("inter_done", "intermediate_scored"), ("inter_score", "intermediate_score"))


def _argmax_or(row: np.ndarray, empty: int = -1) -> int:
    return int(np.argmax(row)) if row.any() else empty


def _bits(flags: np.ndarray) -> int:
    return int(sum(1 << i for i, f in enumerate(flags) if f))


#: blocks the observation space leaves unbounded, bounded as check_invariants bounds the state
#: fields behind them (VP: a player's VP per god stay below the intermediate-score bound)
_OPEN_BOUNDS = {"turn": MAX_TURN, "coins": MAX_COINS, "intermediate_score": MAX_SCORE,
                "victory_points": MAX_SCORE}
_SEAT_FIRST = frozenset(name for name, shape, _ in OBSERVATION_FIELDS
                        if shape[0] == E.MAXP and not name.startswith("own_"))


def _upper_bounds() -> np.ndarray:
    """The observation space's upper bounds (the same for every map: both share the card set),
    with the open ones closed by :data:`_OPEN_BOUNDS`."""
    high = observation_bounds(get_game(MAP_NAMES[0]).tables)[1].astype(np.float64)
    for name, bound in _OPEN_BOUNDS.items():
        high[OBSERVATION_LAYOUT[name]] = bound
    assert np.isfinite(high).all(), "an observation block is left unbounded"
    return high


_HIGH: np.ndarray | None = None


def _where(name: str, index: tuple[int, ...]) -> str:
    """Where ``index`` of block ``name`` is, in a player's words."""
    if name == "city_colonists":
        c, k, sea = index
        return f"{'sea' if sea else 'land'} colonists of seat {k} in city {c}"
    rest = f" [{', '.join(map(str, index[1:]))}]" if len(index) > 1 else ""
    if name in _SEAT_FIRST:
        return f"seat {index[0]}{rest}"
    if name.startswith("city_"):
        return f"city {index[0]}{rest}"
    if name.startswith("display_"):
        return f"display position {index[0] + 1}{rest}"
    return f"index {list(index)}"


def _check_vector(obs: np.ndarray) -> np.ndarray:
    """``obs`` as an array, once every value is a whole number inside the observation space:
    checked on the raw values, so nothing later converts, indexes or loops over an absurd one."""
    global _HIGH
    obs = np.asarray(obs)
    if obs.shape != (OBSERVATION_SIZE,):
        raise ValueError(f"observation must have shape ({OBSERVATION_SIZE},), got {obs.shape}")
    if not np.issubdtype(obs.dtype, np.number) or np.iscomplexobj(obs):
        raise ValueError(f"observation must hold numbers, got dtype {obs.dtype}")
    if not np.isfinite(obs).all() or (obs < 0).any() or (obs != np.round(obs)).any():
        raise ValueError("observation must hold non-negative whole numbers (is it scaled or corrupt?)")
    if _HIGH is None:
        _HIGH = _upper_bounds()
    over = np.flatnonzero(obs > _HIGH)
    if over.size:
        i = int(over[0])
        name, shape, _ = next(f for f in OBSERVATION_FIELDS if OBSERVATION_LAYOUT[f[0]].start <= i
                              < OBSERVATION_LAYOUT[f[0]].stop)
        index = tuple(int(x) for x in np.unravel_index(i - OBSERVATION_LAYOUT[name].start, shape))
        kind = " (a flag or one-hot block: 0 or 1)" if _HIGH[i] == 1 else ""
        more = f" (and {over.size - 1} more value(s) out of bounds)" if over.size > 1 else ""
        raise ValueError(f"observation's '{name}' block holds {float(obs[i]):g} at {_where(name, index)}, "
                         f"above its bound {_HIGH[i]:g}{kind}: not the observation of a legal state{more}")
    return obs


def state_from_observation(obs: np.ndarray) -> GameState:
    """A :class:`GameState`, with the observer as player 0, that agrees with observation ``obs``.

    ``ValueError`` if ``obs`` is not a well-formed observation vector."""
    o = unpack(_check_vector(obs).astype(np.int64))
    if o["map"].sum() != 1:
        raise ValueError("observation's 'map' block is not one-hot")
    game = get_game(MAP_NAMES[int(np.argmax(o["map"]))])
    n = int(o["seat_present"].sum())
    if n < 2 or not o["seat_present"][:n].all():
        raise ValueError(f"observation's 'seat_present' block is malformed: {o['seat_present'].tolist()}")
    T = game.tables
    s = initial_state(game, n, 0, bool(o["intermediate_scoring"][0]))

    def put(name, value):
        E.field_view(s, name)[...] = value

    phase = _argmax_or(o["phase"])
    put("phase", phase)
    put("turn", o["turn"][0])
    put("start_player", _argmax_or(o["start_player"][:n]))
    put("pm", _argmax_or(o["praefectus_magnus"][:n]))
    put("concordia", _argmax_or(o["concordia_card"][:n]))
    put("current", _argmax_or(o["deciding_seat"][:n]))
    # once the game is over the active seat is not encoded; the game ended after the turn of
    # the player before the Concordia card's holder, so that is who was active
    if phase == E.PH_OVER:
        put("active", (_argmax_or(o["concordia_card"][:n]) - 1) % n)
    else:
        put("active", max(_argmax_or(o["active_seat"][:n]), 0))
    _put_board(s, game, o, n)
    _put_players(s, game, o, n)
    _put_context(s, o, phase, n)
    _rebuild_deck(s, T, game, n, o)
    # an observation whose blocks contradict each other (houses left against houses shown, ...)
    # rebuilds a state against the rules: refuse it before the engine computes legal actions on it
    violations = state_violations(game, s)
    if violations:
        raise ValueError("observation does not describe a legal state: " + "; ".join(violations))
    return GameState(game, s)


def _put_board(s: np.ndarray, game, o: dict, n: int) -> None:
    """City goods, houses, colonists on routes and province markers."""
    nc, npv = game.map.num_cities, len(game.map.province_names)
    city_good = E.field_view(s, "city_good")
    for c in range(1, nc):
        city_good[c] = _argmax_or(o["city_good"][c])
    houses = E.field_view(s, "houses")
    houses[:] = 0
    for c in range(1, nc):
        houses[c] = _bits(o["city_houses"][c, :n])
    route_occ = E.field_view(s, "route_occ")
    route_occ[:] = -1
    for r in range(E.NR):
        route_occ[r] = _argmax_or(o["route_colonist"][r, :n])
    for q in range(npv):
        E.field_view(s, "marker_good")[q] = _argmax_or(o["marker_good"][q])
        E.field_view(s, "marker_active")[q] = o["marker_good_side"][q]


def _put_players(s: np.ndarray, game, o: dict, n: int) -> None:
    """Each seat's counters, cards and colonists (the observer's by slot, the others' by place)."""
    nc = game.map.num_cities
    col = E.field_view(s, "colonist")
    col[:] = -1
    for k in range(n):
        for field, block in _PLAYER_ROWS:
            E.field_view(s, field)[k] = o[block][k]
        E.field_view(s, "top")[k] = _argmax_or(o["top_card"][k])
        if k == 0:
            for i in range(E.NCOL):
                col[0, i] = _argmax_or(o["own_colonist_slots"][i])
            continue
        for sea in (0, 1):
            locs = [c for c in range(nc) for _ in range(o["city_colonists"][c, k, sea])]
            lo, hi = (E.NL, E.NR) if sea else (0, E.NL)
            locs += [E.NC + r for r in range(lo, hi) if o["route_colonist"][r, k]]
            if len(locs) > 3:
                raise ValueError(f"observation shows {len(locs)} {'sea' if sea else 'land'} colonists of seat {k}")
            col[k, 3 * sea:3 * sea + len(locs)] = locs


def _put_context(s: np.ndarray, o: dict, phase: int, n: int) -> None:
    """The decision context (zero outside its phase, as in the encoder)."""
    def put(name, value):
        E.field_view(s, name)[...] = value

    if phase not in (E.PH_PLAY, E.PH_OVER, -1):
        put("ctx_kind", _argmax_or(o["action_kind"], 0))
    put("ctx_points", o["move_points"][0])
    put("ctx_built", o["house_built"][0])
    put("ctx_sold", _bits(o["goods_sold"]))
    put("ctx_bought", _bits(o["goods_bought"]))
    put("ctx_placed", o["colonist_placed"][0])
    put("ctx_buys_left", o["buys_left"][0])
    put("ctx_consul", o["consul"][0])
    put("ctx_bought_pos", _bits(o["bought_positions"]))
    put("ctx_pay_left", o["pay_left"][0])
    put("ctx_keep_player", _argmax_or(o["deciding_seat"][:n]) if phase == E.PH_KEEP else -1)


def _rebuild_deck(s: np.ndarray, T: np.ndarray, game, n: int, o: dict) -> None:
    """Display and deck card ids consistent with the observed types, costs and deck stacking."""
    blocks = stacked_decks(game.components, n)
    card_type = T[E.T_CARD_TYPE:E.T_CARD_TYPE + E.NCARD]
    used: set[int] = set()
    display = E.field_view(s, "display")
    display[:] = -1
    all_ids = [cid for b in blocks for cid in b]
    for j in range(E.NDISP):
        t = _argmax_or(o["display_card"][j])
        if t < 0:
            continue
        price = o["display_price"][j]
        match = [cid for cid in all_ids if cid not in used and card_type[cid] == t
                 and all(card_goods(T, cid, j, 0, g) == price[g] for g in range(E.NG))]
        if not match:
            raise ValueError(f"observation shows a card at display position {j + 1} that no card matches")
        display[j] = match[0]
        used.add(match[0])
    # the remaining deck is the bottom of the stack: whole later blocks plus part of one block
    want = o["deck_cards"].copy()
    remaining: list[int] = []
    for block in reversed(blocks):
        if want.sum() == 0:
            break
        take = [cid for cid in block if cid not in used and want[card_type[cid]] > 0]
        for cid in take:
            want[card_type[cid]] -= 1
        remaining = take + remaining
        used.update(take)
    if want.sum() != 0:
        raise ValueError("observation's 'deck_cards' do not fit the cards of this game")
    drawn = [cid for cid in all_ids if cid not in used] + [cid for cid in display if cid >= 0]
    deck = E.field_view(s, "deck")
    deck[:] = -1
    deck[:len(drawn)] = drawn
    deck[len(drawn):len(drawn) + len(remaining)] = remaining
    E.field_view(s, "deck_len")[()] = len(all_ids)
    E.field_view(s, "deck_pos")[()] = len(drawn)
