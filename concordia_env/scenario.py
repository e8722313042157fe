"""Exact positions by name, for tests and analysis.

Each setter edits one aspect of a :class:`~concordia_env.state.GameState` in
place, naming things as the board and the cards do (cities, provinces, goods,
card types), validates its arguments (an unknown city, good, card, province or
player raises ``ValueError`` naming it, and leaves the state unchanged) and
finishes by recomputing the cached legal-action mask, so the state can be
played on at once::

    from concordia_env import new_game, scenario as sc

    st = new_game("imperium", 4, seed=0)
    sc.set_city_good(st, "Massilia", "cloth")
    sc.add_house(st, 1, "Aquileia")
    sc.set_goods(st, 0, brick=3, cloth=1)        # exactly these goods
    sc.place_colonist(st, 0, "land", ("Colonia A.", "Novaria"))
    sc.set_turn(st, 0)
    sc.act(st, "play", "Architectus")

The setters keep derived fields right (``houses_left`` with the houses,
``route_occ`` with the colonists, ``top`` with the discard pile) but do not
check the position is reachable in a real game. :func:`action_id` and
:func:`act` name actions the same way.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable, Sequence
from numbers import Integral

from . import engine as E
from .actions import KIND_NAMES
from .board import deck_card_ids
from .data import GOODS

Route = tuple[str, str]
KINDS = ("land", "sea")


# ----------------------------------------------------------- name lookups
def _lookup(what: str, fn, name):
    try:
        return fn(name)
    except (KeyError, ValueError, AttributeError, TypeError):
        raise ValueError(f"unknown {what} {name!r}") from None


def _player(state, p) -> int:
    if isinstance(p, bool) or not isinstance(p, Integral) or not 0 <= int(p) < state.num_players:
        raise ValueError(f"unknown player {p!r}; players are 0..{state.num_players - 1}")
    return int(p)


def _city(state, name: str, roma: bool = True) -> int:
    c = _lookup("city", state.game.map.city_index, name)
    if c == 0 and not roma:
        raise ValueError(f"city {name!r}: Roma holds no house and produces nothing")
    return c


def _good(name: str) -> int:
    return _lookup("good", GOODS.index, name)


def _card_type(state, name: str) -> int:
    return _lookup("card", state.game.components.card_type_index, name)


def _province(state, name: str) -> int:
    return _lookup("province", state.game.map.province_names.index, name)


def _kind(kind: str) -> int:
    return _lookup("colonist kind", KINDS.index, kind)


def _route(state, at: Route, kind: str) -> int:
    a, b = at
    _city(state, a), _city(state, b)
    return _lookup(f"{kind} route", lambda pair: state.game.route_id(*pair, kind=kind), (a, b))


def _location(state, kind: str, at) -> int:
    """Colonist location code of ``at``: None (storehouse), a city name or a (city, city) route."""
    if at is None:
        return -1
    if isinstance(at, str):
        c = _city(state, at)
        touches = state.game.tables[(E.T_CITY_LAND if kind == "land" else E.T_CITY_SEA) + c]
        if not touches:
            raise ValueError(f"a {kind} colonist cannot stand in {at}: no {kind} route touches it")
        return c
    return E.NC + _route(state, at, kind)


def _setter(fn):
    """Validate-then-commit: on any error the state is restored; the legal mask is
    recomputed either way."""
    @functools.wraps(fn)
    def wrapper(state, *args, **kwargs):
        saved = state.s.copy()
        try:
            fn(state, *args, **kwargs)
        except BaseException:
            state.s[:] = saved
            raise
        finally:
            state.refresh()
    return wrapper


def _count(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 0:
        raise ValueError(f"{what} must be a non-negative int, got {n!r}")
    return int(n)


def _check_storehouse(state, p: int) -> None:
    stored = int(state.field("goods")[p].sum()) + int((state.field("colonist")[p] < 0).sum())
    slots = int(state.game.tables[E.T_STORE])
    if stored > slots:
        raise ValueError(f"player {p}'s storehouse would hold {stored} goods and colonists, "
                         f"it has {slots} slots")


# ------------------------------------------------------------------ board
@_setter
def set_city_good(state, city: str, good: str) -> None:
    """Put the token of ``good`` on ``city`` (not Roma). The province's bonus marker
    becomes the one of its most valuable good again, on the same side (override it
    with :func:`set_marker`); the token counts per letter are not kept."""
    c = _city(state, city, roma=False)
    goods, prov = state.field("city_good"), state.game.map.city_province
    goods[c] = _good(good)
    state.field("marker_good")[prov[c]] = max(goods[i] for i in range(len(prov)) if prov[i] == prov[c])


@_setter
def add_house(state, player: int, city: str) -> None:
    """Give ``player`` a house in ``city`` (one of the player's 15 houses)."""
    p, c = _player(state, player), _city(state, city, roma=False)
    houses, left = state.field("houses"), state.field("houses_left")
    if (int(houses[c]) >> p) & 1:
        raise ValueError(f"player {p} already has a house in {city}")
    if left[p] <= 0:
        raise ValueError(f"player {p} has no house left")
    houses[c] |= 1 << p
    left[p] -= 1


@_setter
def set_marker(state, province: str, active: bool, good: str | None = None) -> None:
    """Turn ``province``'s bonus marker to its good side (``active``) or coin side;
    optionally replace it by the marker of ``good``."""
    q = _province(state, province)
    if good is not None:
        state.field("marker_good")[q] = _good(good)
    state.field("marker_active")[q] = int(bool(active))


@_setter
def place_colonist(state, player: int, kind: str, at, slot: int | None = None) -> None:
    """Put one of ``player``'s ``kind`` ("land"/"sea") colonists at ``at``: a city name,
    a ``(city, city)`` route of that kind, or None for the storehouse.

    Without ``slot`` (0..2 within the kind) the first colonist in the storehouse
    moves (for ``at=None``, the last one on the board)."""
    p, k = _player(state, player), _kind(kind)
    col = state.field("colonist")[p]
    if slot is None:
        pool = [i for i in range(3 * k, 3 * k + 3) if (col[i] >= 0) == (at is None)]
        if not pool:
            where = "on the board" if at is None else "in the storehouse"
            raise ValueError(f"player {p} has no {kind} colonist {where}; pass slot=")
        i = pool[-1] if at is None else pool[0]
    else:
        if isinstance(slot, bool) or slot not in (0, 1, 2):
            raise ValueError(f"colonist slot must be 0, 1 or 2, got {slot!r}")
        i = 3 * k + slot
    _put(state, p, i, _location(state, kind, at), at)
    _check_storehouse(state, p)


def _put(state, p: int, i: int, loc: int, at) -> None:
    col, occ = state.field("colonist")[p], state.field("route_occ")
    if loc >= E.NC and occ[loc - E.NC] >= 0 and col[i] != loc:
        raise ValueError(f"route {at} already holds a colonist of player {int(occ[loc - E.NC])}")
    if col[i] >= E.NC:
        occ[col[i] - E.NC] = -1
    col[i] = loc
    if loc >= E.NC:
        occ[loc - E.NC] = p


@_setter
def set_colonists(state, player: int, land: Iterable = (), sea: Iterable = ()) -> None:
    """Place exactly these colonists (cities or routes, up to 3 per kind); the rest go
    to the storehouse."""
    p = _player(state, player)
    places = {"land": list(land), "sea": list(sea)}
    for kind, where in places.items():
        if len(where) > 3:
            raise ValueError(f"player {p} has only 3 {kind} colonists, got {len(where)} places")
        k = KINDS.index(kind)
        for i in range(3 * k, 3 * k + 3):
            _put(state, p, i, -1, None)
    for kind, where in places.items():
        for slot, at in enumerate(where):
            _put(state, p, 3 * KINDS.index(kind) + slot, _location(state, kind, at), at)
    _check_storehouse(state, p)


# ---------------------------------------------------------------- players
@_setter
def set_coins(state, player: int, coins: int) -> None:
    """Set ``player``'s sestertii."""
    state.field("coins")[_player(state, player)] = _count(coins, "coins")


@_setter
def set_goods(state, player: int, **goods: int) -> None:
    """Set ``player``'s stored goods exactly (goods not named become 0)."""
    p = _player(state, player)
    row = [0] * E.NG
    for name, n in goods.items():
        row[_good(name)] = _count(n, f"amount of {name}")
    state.field("goods")[p] = row
    _check_storehouse(state, p)


def goods_of(state, player: int) -> dict[str, int]:
    """``player``'s stored goods by name (zeros included)."""
    return dict(zip(GOODS, (int(v) for v in state.field("goods")[_player(state, player)])))


def _type_counts(state, cards: dict[str, int] | Iterable[str]) -> list[int]:
    row = [0] * E.NT
    items = cards.items() if isinstance(cards, dict) else ((c, 1) for c in cards)
    for name, n in items:
        row[_card_type(state, name)] += _count(n, f"count of {name}")
    return row


@_setter
def set_hand(state, player: int, cards: dict[str, int] | Iterable[str]) -> None:
    """Set ``player``'s hand exactly: ``{card name: count}`` or a list of names."""
    state.field("hand")[_player(state, player)] = _type_counts(state, cards)


@_setter
def set_discard(state, player: int, cards: Sequence[str]) -> None:
    """Set ``player``'s discard pile exactly; the last card named is on top."""
    p = _player(state, player)
    state.field("discard")[p] = _type_counts(state, cards)
    state.field("top")[p] = _card_type(state, cards[-1]) if len(cards) else -1


@_setter
def give_pm(state, player: int) -> None:
    """Hand the Praefectus Magnus to ``player``."""
    state.field("pm")[()] = _player(state, player)


@_setter
def set_concordia(state, player: int | None) -> None:
    """Give the Concordia card to ``player`` (None: nobody has it yet)."""
    state.field("concordia")[()] = -1 if player is None else _player(state, player)


@_setter
def set_turn(state, player: int) -> None:
    """Make it ``player``'s turn to play a card (phase PH_PLAY, no action under way)."""
    p = _player(state, player)
    for name in ("active", "current"):
        state.field(name)[()] = p
    for name, _ in E.STATE_FIELDS:
        if name.startswith("ctx_"):
            state.field(name)[()] = 0
    state.field("ctx_keep_player")[()] = -1
    state.field("incoming")[:] = 0
    state.field("phase")[()] = E.PH_PLAY


# ---------------------------------------------------------------- display
# The deck field always holds every card of the decks the player count uses (decks
# I..N), as setup stacks them: deck[:deck_pos] are drawn (the display first, then the
# cards bought or set aside), deck[deck_pos:deck_len] are still to be drawn, in order.
def _stack(state) -> list[int]:
    comp = state.game.components
    ids = deck_card_ids(comp)
    return [c for d in comp.decks_per_player_count[state.num_players] for c in ids[d]]


def _card_ids(state, cards: Sequence, taken: set[int]) -> list[int]:
    """Card ids for ``cards`` (ids, or type names: the first copy not taken) among the
    decks the player count uses."""
    stack, n = _stack(state), state.num_players
    types = state.game.tables[E.T_CARD_TYPE:E.T_CARD_TYPE + E.NCARD]
    out = []
    for c in cards:
        if isinstance(c, str):
            t = _card_type(state, c)
            free = [i for i in stack if types[i] == t and i not in taken]
            if not free:
                raise ValueError(f"no card {c!r} left in the decks {n} players use")
            cid = free[0]
        elif isinstance(c, Integral) and not isinstance(c, bool) and c in stack and c not in taken:
            cid = int(c)
        else:
            raise ValueError(f"card id {c!r} is repeated or not in the decks {n} players use")
        taken.add(cid)
        out.append(cid)
    return out


def _deck_rest(state) -> list[int]:
    pos, n = int(state.field("deck_pos")), int(state.field("deck_len"))
    return [int(c) for c in state.field("deck")[pos:n]]


def _write_cards(state, display: list[int], rest: list[int]) -> None:
    stack = _stack(state)
    if len(display) > E.NDISP:
        raise ValueError(f"the display holds {E.NDISP} cards, got {len(display)}")
    if len(rest) > len(stack) - E.NDISP:
        raise ValueError(f"at most {len(stack) - E.NDISP} cards can be left in the deck, got {len(rest)}")
    gone = [c for c in stack if c not in display and c not in rest]
    state.field("display")[:] = display + [-1] * (E.NDISP - len(display))
    state.field("deck")[:] = display + gone + rest + [-1] * (E.NCARD - len(stack))
    state.field("deck_pos")[()] = len(stack) - len(rest)
    state.field("deck_len")[()] = len(stack)


@_setter
def set_display(state, cards: Sequence) -> None:
    """Lay out the display from position 1 (card ids, or type names: the first copy
    not in use); fewer than 7 leaves the last positions empty. Chosen cards leave
    the deck; cards displaced from the display count as bought."""
    display = _card_ids(state, cards, set())
    _write_cards(state, display, [c for c in _deck_rest(state) if c not in display])


@_setter
def set_deck(state, cards: Sequence) -> None:
    """Set the cards still to be drawn, first drawn first (ids or type names); the
    other cards not on display count as bought."""
    display = [int(c) for c in state.field("display") if c >= 0]
    _write_cards(state, display, _card_ids(state, cards, set(display)))


def display_names(state) -> list[str | None]:
    """Card type name at each display position (None where empty)."""
    names = [t.name for t in state.game.components.card_types]
    return [names[int(state.game.tables[E.T_CARD_TYPE + c])] if c >= 0 else None
            for c in state.field("display")]


# ---------------------------------------------------------------- actions
def _colonist_at(state, kind: str, at) -> int:
    p = state.active_player
    k, loc = _kind(kind), _location(state, kind, at)
    for i in range(3 * k, 3 * k + 3):
        if state.field("colonist")[p][i] == loc:
            return i
    raise ValueError(f"player {p} has no {kind} colonist at {at!r}")


def action_id(state, name: str, *args) -> int:
    """Action id by name, for the active player:

    ``play card`` · ``done`` · ``copy kind`` (a name of ``actions.KIND_NAMES``) ·
    ``move kind from to`` (a colonist of ``kind`` at ``from``, to the route ``to``) ·
    ``build city`` · ``produce province`` · ``cash`` · ``sell good`` · ``buy good`` ·
    ``place kind city`` · ``colonus cash`` · ``buy card position`` (1..7) ·
    ``pay good`` · ``keep good``.
    """
    table = {
        "play": lambda card: E.A_PLAY + _card_type(state, card),
        "done": lambda: E.A_DONE,
        "copy": lambda kind: E.A_COPY + _lookup("copyable action", KIND_NAMES[:E.NCOPY].index, kind),
        "move": lambda kind, src, dst: E.move_action(_colonist_at(state, kind, src), _route(state, dst, kind)),
        "build": lambda city: E.A_BUILD + _city(state, city),
        "produce": lambda province: E.A_PRODUCE + _province(state, province),
        "cash": lambda: E.A_CASH,
        "sell": lambda good: E.A_SELL + _good(good),
        "buy": lambda good: E.A_BUYGOOD + _good(good),
        "place": lambda kind, city: E.A_PLACE + _kind(kind) * E.NC + _city(state, city),
        "colonus cash": lambda: E.A_COLONUS_CASH,
        "buy card": lambda pos: E.A_BUYCARD + _lookup("display position", range(1, 8).index, pos),
        "pay": lambda good: E.A_PAY + _good(good),
        "keep": lambda good: E.A_KEEP + _good(good),
    }
    fn = _lookup("action", table.__getitem__, name)
    try:
        return fn(*args)
    except TypeError:
        raise ValueError(f"action {name!r} got arguments {args!r}; see scenario.action_id") from None


def act(state, name: str, *args) -> None:
    """Apply the action :func:`action_id` names (raises ``IllegalActionError`` if illegal)."""
    state.apply(action_id(state, name, *args))


def is_legal(state, name: str, *args) -> bool:
    """Whether the action :func:`action_id` names is legal now."""
    return bool(state._mask[action_id(state, name, *args)])


def play_random(state, steps: int, seed: int):
    """Apply up to ``steps`` uniformly random legal actions (``random.Random(seed)``), stopping
    early if the game ends; returns ``state``, changed in place. A quick way to a mid-game position."""
    rng = random.Random(seed)
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply(rng.choice(state.legal_actions()))
    return state
