"""HeuristicAgent: a greedy player that plans one turn ahead with a hand-written position value.

Strategy
--------
The agent values a position for itself (:func:`position_value`) as

* the VP it would score if the game ended now (its cards' gods times houses,
  provinces, goods kinds, colonists, wealth; the Concordia card), plus
* sestertii and goods at ``WEALTH`` points per sestertius: the goods that the
  houses within ``REACH`` movement points of its colonists (and a colonist
  still in the storehouse) need count ``NEEDED`` times their market price,
  other goods ``SURPLUS`` times it, and sestertii beyond ``RICH`` half, plus
* ``HOUSE`` per house built (each house gains VP from every god card bought
  later and produces goods), ``COLONIST`` per colonist on the board (wider
  reach, more Colonus cash, Mars) and ``CARD`` per card owned (more actions,
  more VP later), plus
* ``ACCESS`` for every city next to one of its colonists on a route where it
  has no house yet (a place to build now), and ``ROOM`` while its storehouse
  has a free slot (else production and trade cannot add goods).

When it chooses a card to play (or a card for the Diplomat to copy) it plays
out the rest of its turn for every candidate, taking the best immediate step
each time, and picks the card whose turn ends best. Within a card's action it
takes the step that raises the value most and stops ('done') when none does.
Hence it expands with colonists early (colonists are worth more than their
food and tools), builds where the houses pay under its gods, produces with the
Praefectus where it gains most, buys the cards whose gods pay it most, trades
towards the goods its next builds need, and takes its cards back with the
Tribunus when nothing else improves its position. It does not model the
other players or plan for the end of the game.

It plays from what its seat can see. Given the observation alone it rebuilds the
position with :func:`concordia_env.decoding.state_from_observation` (the deck
order, which is hidden, is filled in); given the true ``state`` too (the
PettingZoo loop, ``play_game``, tournaments) it searches that directly, after
checking that the observation and the mask are that state's deciding seat's,
which skips the rebuild (most of its time per decision). The choice is the same
either way: the two positions differ only in the order of the undrawn deck and
in the numbering of the seats (the rebuilt one puts the observer at seat 0), and
the search never reads the deck (cards bought refill the display only once the
turn is over) and values only the deciding seat. Ties are broken by noise from
a seeded generator, drawn the same way on both paths, so the agent is
deterministic given its seed.
"""

from __future__ import annotations

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.decoding import state_from_observation
from concordia_env.encoding import observation as encode_observation
from concordia_env.rules.quantities import good_price, house_goods
from concordia_env.state import GameState

from .base import Agent, check_mask

WEALTH = 0.15  # points per sestertius of coins or goods
NEEDED = 2.0  # goods the next builds (or a colonist) need count this many times their price
SURPLUS = 0.9  # other goods count a little below their price: sell them to buy what is needed
REACH = 3  # movement points within which a city counts as a next build target
MAX_NEED_BRICK, MAX_NEED = 3, 2  # at most this many of a good count as needed
RICH = 30  # sestertii beyond this are worth half: coins only help once spent
ROOM = 0.6  # a free storehouse slot: without one, neither production nor buying adds goods
HOUSE = 2.0
COLONIST = 1.5
CARD = 1.5
ACCESS = 0.5
DONE_BONUS = 1e-6  # 'done' wins ties: no pointless moves or trades
MAX_TURN_STEPS = 40  # safety bound on the steps of one turn played out

# engine constants as module globals: numba freezes them at compile time
NG, NT, NC, NL, NR, NCOL, NGODS, NUM_ACTIONS = E.NG, E.NT, E.NC, E.NL, E.NR, E.NCOL, E.NGODS, E.NUM_ACTIONS
O_COINS, O_GOODS, O_HAND, O_DISCARD = E.O_COINS, E.O_GOODS, E.O_HAND, E.O_DISCARD
O_HOUSES_LEFT, O_COLONIST, O_HOUSES, O_CITY_GOOD = E.O_HOUSES_LEFT, E.O_COLONIST, E.O_HOUSES, E.O_CITY_GOOD
O_PHASE, O_CURRENT, O_ACTIVE, O_NCITIES = E.O_PHASE, E.O_CURRENT, E.O_ACTIVE, E.O_NCITIES
T_PRICE, T_ROUTE_A, T_ROUTE_B, T_HOUSES = E.T_PRICE, E.T_ROUTE_A, E.T_ROUTE_B, E.T_HOUSES
T_DIST, T_COLONIST_COST = E.T_DIST, E.T_COLONIST_COST
PH_PLAY, PH_OVER, PH_DIPLOMAT, A_DONE = E.PH_PLAY, E.PH_OVER, E.PH_DIPLOMAT, E.A_DONE


@kernel()
def _build_needs(s, T, p, need):  # noqa: C901
    """Goods for the next builds and colonists into ``need``; returns the number of cities
    next to ``p``'s colonists on routes (buildable now, if affordable)."""
    need[:] = 0
    access = 0
    reach_mask = 0  # cities within REACH movement points of a colonist, not built by p
    for i in range(NCOL):
        loc = s[O_COLONIST + p * NCOL + i]
        if loc < 0:
            continue
        lo, hi = (0, NL) if i < 3 else (NL, NR)
        for r in range(lo, hi):
            if T[T_DIST + loc * NR + r] > REACH:
                continue
            for c in (T[T_ROUTE_A + r], T[T_ROUTE_B + r]):
                if c > 0 and c < s[O_NCITIES] and not (s[O_HOUSES + c] >> p) & 1:
                    reach_mask |= 1 << c
                    if loc == NC + r:
                        access += 1
    if s[O_HOUSES_LEFT + p] == 0:
        return 0
    for c in range(1, s[O_NCITIES]):
        if (reach_mask >> c) & 1:
            g = s[O_CITY_GOOD + c]
            for h in range(NG):
                need[h] += house_goods(T, g, h)
    for h in range(NG):  # stock for a few builds, not for every city in reach
        cap = MAX_NEED_BRICK if h == 0 else MAX_NEED
        if need[h] > cap:
            need[h] = cap
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] < 0:  # a colonist left to place costs food and tools
            for h in range(NG):
                need[h] += T[T_COLONIST_COST + h]
            break
    return access


@kernel()
def position_value(s, T, p, vp):
    """How good the position is for player ``p`` (see the module docstring); ``vp`` is scratch (NGODS)."""
    v = float(E.score_player(s, T, np.int64(p), vp))  # int64 as from Python: one compiled version
    if s[O_PHASE] == PH_OVER:
        return v
    need = np.zeros(NG, np.int64)
    access = _build_needs(s, T, p, need)
    coins = s[O_COINS + p]
    wealth = float(coins) if coins <= RICH else RICH + 0.5 * (coins - RICH)
    for g in range(NG):
        have = s[O_GOODS + p * NG + g]
        useful = have if have < need[g] else need[g]
        wealth += good_price(T, g) * (NEEDED * useful + SURPLUS * (have - useful))
    on_board = 0
    for i in range(NCOL):
        if s[O_COLONIST + p * NCOL + i] >= 0:
            on_board += 1
    cards = 0
    for t in range(NT):
        cards += s[O_HAND + p * NT + t] + s[O_DISCARD + p * NT + t]
    built = T[T_HOUSES] - s[O_HOUSES_LEFT + p]
    room = ROOM if E.free_slots(s, T, p) > 0 else 0.0
    return (v + WEALTH * wealth + HOUSE * built + COLONIST * on_board + CARD * cards
            + ACCESS * access + room)


@kernel()
def _turn_goes_on(s, p):
    ph = s[O_PHASE]
    return ph != PH_OVER and ph != PH_PLAY and s[O_ACTIVE] == p and s[O_CURRENT] == p


@kernel()
def step_values(s, T, mask, p, out, tmp, tmask, vp):
    """``out[a]``: the value for ``p`` right after each legal action ``a`` (-inf for illegal ones)."""
    for a in range(NUM_ACTIONS):
        out[a] = -np.inf
        if mask[a]:
            for i in range(s.shape[0]):  # not tmp[:] = s: its shape checks cost seconds of compiling
                tmp[i] = s[i]
            E.step(tmp, T, tmask, a)
            out[a] = position_value(tmp, T, p, vp)
            if a == A_DONE:
                out[a] += DONE_BONUS


@kernel()
def _argmax_noisy(values, noise):
    best = -1
    bv = -np.inf
    for a in range(values.shape[0]):
        if values[a] == -np.inf:
            continue
        x = values[a] + noise[a]
        if best < 0 or x > bv:
            best = a
            bv = x
    return best


# inlined into its one caller: compiled alone it would carry its own copy of the whole engine
@kernel(inline="always")
def finish_turn(s, T, mask, p, noise, vals, tmp, tmask, vp):
    """Play the rest of ``p``'s turn in place, taking the best immediate step each time."""
    steps = 0
    while _turn_goes_on(s, p) and steps < MAX_TURN_STEPS:
        step_values(s, T, mask, p, vals, tmp, tmask, vp)
        E.step(s, T, mask, _argmax_noisy(vals, noise))
        steps += 1


@kernel(inline="always")  # like finish_turn
def turn_values(s, T, mask, p, noise, out):
    """``out[a]``: the value for ``p`` after legal action ``a`` and the greedy rest of the turn."""
    buf = np.empty_like(s)
    bmask = np.empty_like(mask)
    vals = np.empty(NUM_ACTIONS, np.float64)
    tmp = np.empty_like(s)
    tmask = np.empty_like(mask)
    vp = np.zeros(NGODS, np.int32)
    for a in range(NUM_ACTIONS):
        out[a] = -np.inf
        if not mask[a]:
            continue
        for i in range(s.shape[0]):  # like step_values
            buf[i] = s[i]
        E.step(buf, T, bmask, a)
        finish_turn(buf, T, bmask, p, noise, vals, tmp, tmask, vp)
        out[a] = position_value(buf, T, p, vp)


@kernel("int32[::1], int32[::1], int8[::1], float64[::1]")
def choose(s, T, mask, noise):
    """The heuristic's action for the deciding player of state ``s`` (legal ``mask``)."""
    p = s[O_CURRENT]
    vals = np.empty(NUM_ACTIONS, np.float64)
    ph = s[O_PHASE]
    if ph == PH_PLAY or ph == PH_DIPLOMAT:
        turn_values(s, T, mask, p, noise, vals)
    else:
        tmp = np.empty_like(s)
        tmask = np.empty_like(mask)
        vp = np.zeros(NGODS, np.int32)
        step_values(s, T, mask, p, vals, tmp, tmask, vp)
    return _argmax_noisy(vals, noise)





class HeuristicAgent(Agent):
    """The greedy one-turn planner described in the module docstring.

    Plays exactly as it would for a seat of the PettingZoo env: ``state``, when
    given, only saves rebuilding the position from the observation."""

    name = "heuristic"

    def __init__(self, seed: int = 0) -> None:
        self.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        if legal.size == 1:
            return int(legal[0])
        mask = np.asarray(action_mask, dtype=np.int8)
        return self.act_in(self.position(observation, mask, state), mask)

    def act_in(self, position: GameState, mask: np.ndarray) -> int:
        """The action in ``position`` already checked against ``mask`` (int8) by :meth:`position`."""
        # tiny noise below any real value difference: breaks exact ties by the seed
        noise = self.rng.random(E.NUM_ACTIONS) * 1e-9
        return int(choose(position.s, position.game.tables, mask, noise))

    @staticmethod
    def position(observation: np.ndarray, mask: np.ndarray, state: GameState | None) -> GameState:
        """The position an agent decides in: the caller's ``state`` once checked against the
        observation and the mask (fast), else rebuilt from the observation (what a seat sees)."""
        if state is None:
            return HeuristicAgent._position(observation, mask)
        return HeuristicAgent._checked(state, observation, mask)

    @staticmethod
    def _position(observation: np.ndarray, mask: np.ndarray) -> GameState:
        """The position rebuilt from the observation, checked against the mask."""
        rebuilt = state_from_observation(observation)
        if not np.array_equal(rebuilt.legal_action_mask(), mask):
            raise ValueError("action_mask does not match the observation (are they from the same seat and step?)")
        return rebuilt

    @staticmethod
    def _checked(state: GameState, observation: np.ndarray, mask: np.ndarray) -> GameState:
        """``state`` itself, once the observation and the mask are its deciding seat's (a few
        microseconds: one compiled encoding and two array comparisons)."""
        if not np.array_equal(state.legal_action_mask(), mask):
            raise ValueError("action_mask does not match state's legal actions (are they from the same step?)")
        seat = state.current_player
        if seat < 0 or not np.array_equal(np.asarray(observation), encode_observation(state, seat)):
            raise ValueError("observation does not match state: it is not the deciding seat's view of this "
                             "step (are they from the same seat and step?)")
        return state
