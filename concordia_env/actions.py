"""The flat action space: one table of id ranges, and readable names for every id.

One integer action space serves both maps and every player count (ids of
routes, cities or provinces a map does not have are simply never legal).
A turn is a sequence of atomic decisions: play a card, then that card's
decisions, then 'done' where the rules allow stopping.

=========================  =====================  ==============================================
ids                        name                   meaning
=========================  =====================  ==============================================
0 – 16                     play                   play a card of type t from hand (17 card types)
17                         done                   end the current card's action
18 – 30                    copy                   Diplomat: carry out action kind k (13 kinds)
31 – 267                   move                   Architectus: move colonist (land 1-3 / sea 1-3)
                                                  to a route; cost = shortest path in points
268 – 298                  build                  Architectus: build a house in city c
299 – 310                  produce                Praefectus: produce in province q
311                        cash bonus             Praefectus: take the coins of flipped markers
312 – 316                  sell                   Mercator: sell 1 good g
317 – 321                  buy good               Mercator: buy 1 good g
322 – 383                  place colonist         Colonus/Tribunus: new land (322+c) or sea
                                                  (353+c) colonist in city c (Roma = 0)
384                        colonus cash           Colonus: 5 + 1 per colonist on the board (components.json)
385 – 391                  buy card               Senator/Consul: buy the card at display position
392 – 396                  pay                    Senator: pay a '?' with good g
397 – 401                  keep                   storehouse full: keep 1 good g (owner decides)
=========================  =====================  ==============================================

The table is checked against the kernel's constants by the tests.
"""

from __future__ import annotations

from . import engine as E
from .data import GOODS
from .rules import quantities as Q
from .rules.pieces import colonists_on_board, house_count

KIND_NAMES = (
    "Tribunus", "Architectus", "Praefectus", "Mercator (3)", "Mercator (5)", "Colonus",
    "Senator", "Consul", "Mason", "Farmer", "Smith", "Vintner", "Weaver", "Diplomat",
)

#: (first id, last id inclusive, short name) of every action range.
ACTION_TABLE: tuple[tuple[int, int, str], ...] = (
    (E.A_PLAY, E.A_DONE - 1, "play"),
    (E.A_DONE, E.A_DONE, "done"),
    (E.A_COPY, E.A_MOVE - 1, "copy"),
    (E.A_MOVE, E.A_BUILD - 1, "move"),
    (E.A_BUILD, E.A_PRODUCE - 1, "build"),
    (E.A_PRODUCE, E.A_CASH - 1, "produce"),
    (E.A_CASH, E.A_CASH, "cash bonus"),
    (E.A_SELL, E.A_BUYGOOD - 1, "sell"),
    (E.A_BUYGOOD, E.A_PLACE - 1, "buy good"),
    (E.A_PLACE, E.A_COLONUS_CASH - 1, "place colonist"),
    (E.A_COLONUS_CASH, E.A_COLONUS_CASH, "colonus cash"),
    (E.A_BUYCARD, E.A_PAY - 1, "buy card"),
    (E.A_PAY, E.A_KEEP - 1, "pay"),
    (E.A_KEEP, E.NUM_ACTIONS - 1, "keep"),
)


def action_range(action: int) -> str:
    """Short name of the range ``action`` falls in (e.g. "move")."""
    for lo, hi, name in ACTION_TABLE:
        if lo <= action <= hi:
            return name
    raise ValueError(f"action {action} is outside 0..{E.NUM_ACTIONS - 1}")


def _card_name(state, kind_or_type: int, is_type: bool) -> str:
    if is_type:
        return state.game.components.card_types[kind_or_type].name
    return KIND_NAMES[kind_or_type]


def describe(state, action: int) -> str:  # noqa: C901
    """Readable description of ``action`` in ``state`` (costs are those the state would charge)."""
    game = state.game
    m = game.map
    s = state.s
    kind = action_range(action)
    p = int(s[E.O_ACTIVE])
    ctx = KIND_NAMES[int(s[E.O_KIND])] if s[E.O_PHASE] != E.PH_PLAY else ""
    if kind == "play":
        return f"play {_card_name(state, action - E.A_PLAY, True)}"
    if kind == "done":
        return f"{ctx}: done" if ctx else "done"
    if kind == "copy":
        return f"Diplomat: copy {KIND_NAMES[action - E.A_COPY]}"
    if kind == "move":
        slot, r = E.decode_move(action)
        loc = int(s[E.O_COLONIST + p * E.NCOL + slot])
        label = "land" if slot < 3 else "sea"
        src = "storehouse" if loc < 0 else (m.city_names[loc] if loc < E.NC else game.route_name(loc - E.NC))
        cost = int(game.tables[E.T_DIST + max(loc, 0) * E.NR + r]) if loc >= 0 else "-"
        return f"Architectus: move {label} colonist {slot % 3 + 1} {src}→{game.route_name(r)}, cost {cost}"
    if kind == "build":
        c = action - E.A_BUILD
        name = m.city_names[c] if c < m.num_cities else f"city {c}"
        good = int(s[E.O_CITY_GOOD + c]) if c < m.num_cities else -1
        if good < 0:
            return f"Architectus: build in {name}"
        coins = int(Q.house_coins(game.tables, good, house_count(s, c)))
        paid = "+".join(GOODS[h] for h in range(E.NG) for _ in range(int(Q.house_goods(game.tables, good, h))))
        return f"Architectus: build in {name} ({GOODS[good]}), cost {coins} sestertii + {paid}"
    if kind == "produce":
        q = action - E.A_PRODUCE
        name = m.province_names[q] if q < len(m.province_names) else f"province {q}"
        good = int(s[E.O_MARKER_GOOD + q])
        bonus = 2 if int(s[E.O_PM]) == p else 1
        extra = " with the Praefectus Magnus" if bonus == 2 else ""
        return f"Praefectus: produce in {name} (bonus {bonus} {GOODS[good] if good >= 0 else '?'}{extra})"
    if kind == "cash bonus":
        coins = sum(int(Q.marker_coins(game.tables, int(s[E.O_MARKER_GOOD + q])))
                    for q in range(int(s[E.O_NPROV])) if s[E.O_MARKER_ACTIVE + q] == 0)
        return f"Praefectus: cash bonus, {coins} sestertii"
    if kind == "sell":
        g = action - E.A_SELL
        return f"Mercator: sell 1 {GOODS[g]} for {int(Q.good_price(game.tables, g))}"
    if kind == "buy good":
        g = action - E.A_BUYGOOD
        return f"Mercator: buy 1 {GOODS[g]} for {int(Q.good_price(game.tables, g))}"
    if kind == "place colonist":
        i = action - E.A_PLACE
        c = i % E.NC
        name = m.city_names[c] if c < m.num_cities else f"city {c}"
        return f"{ctx or 'Colonus'}: new {'land' if i < E.NC else 'sea'} colonist in {name}"
    if kind == "colonus cash":
        return f"Colonus: cash, {int(Q.colonus_cash(game.tables, colonists_on_board(s, p)))} sestertii"
    if kind == "buy card":
        j = action - E.A_BUYCARD
        cid = int(s[E.O_DISPLAY + j])
        if cid < 0:
            return f"{ctx or 'Senator'}: buy card at position {j + 1} (empty)"
        t = int(game.tables[E.T_CARD_TYPE + cid])
        consul = int(s[E.O_CONSUL])
        price = [GOODS[g] for g in range(E.NG) for _ in range(int(Q.card_goods(game.tables, cid, j, consul, g)))]
        price += ["?"] * int(Q.card_any(game.tables, j, consul))
        return f"{ctx or 'Senator'}: buy {_card_name(state, t, True)} at position {j + 1} for {'+'.join(price)}"
    if kind == "pay":
        return f"Senator: pay '?' with 1 {GOODS[action - E.A_PAY]}"
    g = action - E.A_KEEP
    x = int(s[E.O_KEEP_PLAYER])
    return f"player {x}: keep 1 {GOODS[g]}"
