"""Games end: search agents value finishing a won game, and no agent pair stalls.

MCTS once played on to the 2,000-card-play cap against the ``ppo`` policy,
hundreds of VP ahead: its leaf values (win shares) were all but 1 whatever it
did, and its card-choice priors (one-step heuristic values) favoured the cards
that pay sestertii at once, so it farmed sestertii for Vesta. Now a truncated
game is scored as final scoring would score it, a lead counts double once the
end is fixed, and the priors at a card choice are the heuristic's turn values.
Small versions of the measurements in the module docstring of
:mod:`concordia_env.agents.mcts`: seeded games of the pairs that can stall end
well before the cap, and MCTS ends a game from a position where it used to stall.
"""

from __future__ import annotations

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env import scenario as sc
from concordia_env.agents import make_agent
from concordia_env.agents.mcts import MCTSAgent, end_is_fixed, leaf_value, random_result
from concordia_env.arena.records import agent_seed, play_game
from concordia_env.encoding import observation
from concordia_env.state import GameState, new_game

STALLED = (
    '{"format":"concordia-env/state","version":1,"map":"italia","num_players":2,"current":0,"active":0,'
    '"phase":0,"pm":0,"concordia":-1,"start_player":0,"turn":150,"intermediate":0,"num_cities":26,'
    '"num_provinces":11,"deck_pos":13,"deck_len":15,"ctx_kind":4,"ctx_points":0,"ctx_built":0,'
    '"ctx_sold":0,"ctx_bought":0,"ctx_placed":0,"ctx_buys_left":0,"ctx_consul":0,"ctx_bought_pos":36,'
    '"ctx_pay_left":0,"ctx_keep_player":-1,"coins":[146,127,0,0,0],"goods":[[3,2,2,2,2],[5,0,0,4,2],[0,0,'
    '0,0,0],[0,0,0,0,0],[0,0,0,0,0]],"hand":[[1,1,3,1,0,0,1,0,1,1,0,0,0,0,0,0,0],[1,0,2,0,0,1,1,0,0,0,0,'
    '0,1,0,0,0,0],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,'
    '0,0,0,0,0,0,0,0,0,0]],"discard":[[0,0,0,0,2,0,0,0,0,0,0,0,0,0,0,0,0],[0,1,0,1,0,0,0,0,1,0,0,0,0,0,0,'
    '0,0],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],[0,0,0,0,0,0,0,0,0,0,0,'
    '0,0,0,0,0,0]],"top":[4,8,-1,-1,-1],"houses_left":[10,14,0,0,0],"colonist":[[39,0,0,75,90,0],[37,45,'
    '0,0,0,-1],[-1,-1,-1,-1,-1,-1],[-1,-1,-1,-1,-1,-1],[-1,-1,-1,-1,-1,-1]],"incoming":[[0,0,0,0,0],[0,0,'
    '0,0,0],[0,0,0,0,0],[0,0,0,0,0],[0,0,0,0,0]],"inter_done":[0,0,0,0,0],"inter_score":[0,0,0,0,0],'
    '"city_good":[-1,1,4,1,2,3,0,0,0,2,1,0,2,1,0,2,3,4,1,0,0,1,3,2,4,3,-1,-1,-1,-1,-1],"houses":[0,0,0,0,'
    '0,0,0,0,0,0,0,1,2,0,0,1,0,0,1,1,0,1,0,0,0,0,0,0,0,0,0],"route_occ":[-1,-1,-1,-1,-1,-1,1,-1,0,-1,-1,'
    '-1,-1,-1,1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,0,'
    '-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,0,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,'
    '-1],"marker_good":[4,3,0,2,1,3,2,4,0,3,4,-1],"marker_active":[1,0,1,1,1,1,1,0,1,1,1,0],"display":[7,'
    '0,6,9,8,14,12],"deck":[7,0,3,1,4,5,2,6,9,10,8,14,12,11,13,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,'
    '-1]}'
)
"""A position (2-player Italia, turn 150) where MCTS, 31 VP ahead, used to stall: with
50 to 1,000 iterations it played Mercator and the Tribunus for 300 more card plays and more,
buying nothing and building nothing, while the ``ppo`` policy did not end the game either."""


def _values(state: GameState, max_turns: int = 2000, end_stake: float = 1.0) -> np.ndarray:
    out = np.zeros(E.MAXP)
    leaf_value(state.s, state.game.tables, 8.0, max_turns, end_stake, out)
    return out[:state.num_players]


# ---------------------------------------------------------------- pairs that could stall
@pytest.mark.parametrize("map_name,n,specs,seeds", [
    ("italia", 2, ("mcts:iterations=50", "ppo"), (8, 18)),  # the seeds that reached the cap at 200 and 1,000
    ("imperium", 3, ("mcts:iterations=50", "ppo", "ppo"), (1,)),
    ("italia", 2, ("mcts:iterations=50", "mcts:iterations=50"), (3,)),
])
def test_search_agents_finish_their_games(map_name, n, specs, seeds):
    for seed in seeds:
        record = play_game(map_name, n, seed, [make_agent(s) for s in specs], max_turns=400)
        result = record["result"]
        assert not result["truncated"] and result["winner"] is not None, (specs, seed, result)


def test_mcts_ends_a_game_it_used_to_stall():
    state = GameState.from_json("".join(STALLED))
    agents = [MCTSAgent(iterations=50), make_agent("ppo")]
    for seat, agent in enumerate(agents):
        agent.reset(agent_seed(0, seat))
    start = int(state.field("turn"))
    while not state.is_terminal():
        assert int(state.field("turn")) < start + 150, "MCTS did not end a game it leads by far"
        seat = state.current_player
        state.apply(agents[seat].act(observation(state, seat), state.legal_action_mask(), state))
    assert state.winner() == 0


# ---------------------------------------------------------------- truncated games
def _tied_position() -> GameState:
    """Turn 100; both players with the same sestertii and goods, so equal VP: the Praefectus
    Magnus decides. Player 1 holds two specialists more (no VP without houses), so the
    heuristic values player 1's position higher."""
    st = new_game("italia", 2, 0)
    for p in (0, 1):
        sc.set_coins(st, p, 20)
        sc.set_goods(st, p, food=1, tools=1)
    hand = {t.name: int(k) for t, k in zip(st.game.components.card_types, st.field("hand")[1])}
    sc.set_hand(st, 1, {**hand, "Mason": 1, "Farmer": 1})
    st.field("turn")[()] = 100
    return st


def test_a_truncated_game_is_scored_by_vp_and_tie_break():
    st = _tied_position()
    turn = int(st.field("turn"))
    assert st.scores()[0] == st.scores()[1]
    assert _values(st, max_turns=0)[1] > 0.5  # no cap: the heuristic prefers player 1
    for pm in (0, 1):
        sc.give_pm(st, pm)
        assert st.ranking()[0] == pm  # the rules' tie-break
        np.testing.assert_array_equal(_values(st, max_turns=turn, end_stake=0.0), np.eye(2)[pm])
        # not truncated: the softmax of position values, no one-hot outcome
        assert 0 < _values(st, max_turns=turn + 1, end_stake=0.0)[pm] < 1
    # more VP beats the tie-break; a truncated game is over, so the lead counts 1 + end_stake times
    sc.set_coins(st, 0, 30)  # Vesta: one VP more
    assert st.scores()[0] > st.scores()[1] and st.ranking()[0] == 0
    np.testing.assert_allclose(_values(st, max_turns=turn, end_stake=1.0), [1.5, -0.5])
    assert end_is_fixed(st.s, turn) and not end_is_fixed(st.s, turn + 1)
    # a random playout from a truncated position plays nothing and scores it the same way
    out, s = np.zeros(E.MAXP), st.s.copy()
    random_result(s, st.game.tables, st.legal_action_mask(), 5, turn, 0.0, out)
    np.testing.assert_array_equal(s, st.s)
    np.testing.assert_array_equal(out[:2], [1.0, 0.0])


def test_mcts_searches_up_to_the_cap():
    """At the cap every child is a scored leaf; the root is still a decision (an env with no cap)."""
    st = new_game("italia", 2, 4)
    sc.play_random(st, 150, seed=1)
    while len(st.legal_actions()) < 2:
        st.apply(st.legal_actions()[0])
    turn = int(st.field("turn"))
    for cap in (turn, turn + 1):
        agent = MCTSAgent(iterations=40, max_turns=cap)
        a = agent.act(observation(st, st.current_player), st.legal_action_mask(), st)
        assert st.legal_action_mask()[a] == 1 and agent.last_iterations == 40


# ---------------------------------------------------------------- ending when ahead
def _can_end_now(leader: int) -> GameState:
    """Player 0 plays the Senator; the one card left (deck empty) is affordable, and buying it
    takes the Concordia card: the end is fixed. ``leader`` has eight houses, the other none."""
    st = new_game("italia", 2, 0)
    for city in ("Verona", "Genua", "Florentia", "Ravenna", "Neapolis", "Messana", "Ancona", "Aquileia"):
        sc.add_house(st, leader, city)
    sc.set_display(st, ["Farmer"])
    sc.set_deck(st, [])
    sc.set_goods(st, 0, brick=1, food=2, tools=2, wine=1, cloth=1)
    sc.set_turn(st, 0)
    sc.act(st, "play", "Senator")
    return st


def _after(st: GameState, *action) -> GameState:
    nxt = st.clone()
    sc.act(nxt, *action)
    return nxt


@pytest.mark.parametrize("leader", [0, 1])
def test_leaf_value_rewards_the_leader_for_ending(leader):
    st = _can_end_now(leader)
    end, wait = _after(st, "buy card", 1), _after(st, "done")
    assert int(end.field("concordia")) == 0 and int(wait.field("concordia")) == -1
    v_end, v_wait = _values(end), _values(wait)
    assert v_end[leader] > v_wait[leader] + 0.4  # the leader gains by ending now...
    assert v_end[1 - leader] < v_wait[1 - leader] - 0.4  # ...and the other loses by it
    assert abs(v_end.sum() - 1) < 1e-9 and abs(v_wait.sum() - 1) < 1e-9
    # without the stretch, a share already close to 1 hardly moves: no reason to end
    assert abs(_values(end, end_stake=0.0)[leader] - _values(wait, end_stake=0.0)[leader]) < 0.01


def test_mcts_ends_the_game_when_ahead():
    st = _can_end_now(0)
    choice = MCTSAgent(iterations=50).act(observation(st, 0), st.legal_action_mask(), st)
    assert choice == sc.action_id(st, "buy card", 1)
