"""az over whole turns (``az:turns=K``): the root's moves are the decision's candidate turns, the
tree's statistics add up, the chosen turn is played out without searching again, and bad options
are refused."""

from __future__ import annotations

import numpy as np
import pytest
from test_az import advanced
from test_board_features import feature_net

from concordia_env import encoding
from concordia_env import engine as E
from concordia_env.agents.az import AZAgent
from concordia_env.agents.base import make_agent
from concordia_env.arena.records import play_game
from concordia_env.turns import TurnGenerator

CASES = [("italia", 2, 0, 40), ("imperium", 4, 1, 90), ("italia", 3, 2, 0)]


@pytest.mark.parametrize("map_name, players, seed, moves", CASES)
def test_the_root_s_moves_are_the_decision_s_candidate_turns(map_name: str, players: int, seed: int,
                                                             moves: int) -> None:
    st = advanced(map_name, players, seed, moves)
    agent = AZAgent(seed=seed, net="v1", simulations=60, turns=8)
    result = agent.search(st.clone())
    gen = TurnGenerator(map_name, 8)
    n = gen.generate(st.s, st.game.tables)
    turns, tree = agent._turn_tree, agent._tree
    assert turns.count[0] == n >= 2
    for k in range(n):
        assert turns.sequence(0, k) == list(gen.sequence(k))
    # priors: the softmax of the heuristic's values of the candidates' ends
    expected = np.exp(gen.values[:n] - gen.values[:n].max())
    assert np.allclose(tree.prior[0, :n], expected / expected.sum())
    assert tree.prior[0, n:].sum() == 0
    # every simulation went through one child of the root, and each child is its candidate's end
    ks, rows = tree.children(0)
    assert tree.visits[0] == 60 == tree.visits[rows].sum()
    for k, row in zip(ks.tolist(), rows.tolist()):
        end = gen.states[k]
        assert tree.player[row] == (-1 if end[E.O_PHASE] == E.PH_OVER else end[E.O_CURRENT])
    # the move is the first action of the most visited candidate; visits are counted at first actions
    best = ks[np.argmax(tree.visits[rows])]
    assert result.action == gen.sequence(int(best))[0]
    assert result.visits.sum() == 60
    for a in np.flatnonzero(result.visits):
        assert result.visits[a] == sum(int(tree.visits[r]) for k, r in zip(ks, rows) if gen.sequence(int(k))[0] == a)


def test_the_same_seed_makes_the_same_search_and_another_seed_another_sample() -> None:
    st = advanced("italia", 2, 4, 30)
    a = AZAgent(seed=7, net="v2", simulations=80, turns=16).search(st.clone())
    b = AZAgent(seed=7, net="v2", simulations=80, turns=16).search(st.clone())
    assert a.action == b.action and np.array_equal(a.visits, b.visits) and np.array_equal(a.value, b.value)
    assert 0.0 < a.value.sum() <= 1.0 + 1e-9


def test_the_chosen_turn_is_played_out_without_searching_again() -> None:
    st = advanced("italia", 2, 5, 20)
    agent = AZAgent(seed=0, net="v2", simulations=40, turns=16)
    searches = []
    search = agent.search
    agent.search = lambda state: searches.append(1) or search(state)  # type: ignore[method-assign]
    player = st.current_player
    first = agent.act(encoding.observation(st, st.current_player), st.legal_action_mask(), st)
    plan = [a for _, a in agent._plan]
    played = [first]
    st.apply(first)
    while agent._plan:
        a = agent.act(encoding.observation(st, st.current_player), st.legal_action_mask(), st)
        played.append(a)
        st.apply(a)
    assert len(searches) == 1 and played[1:] == plan and len(played) >= 2
    assert st.current_player != player  # the whole turn was played: play has passed on


def test_a_game_between_turn_searchers_and_others_ends_and_replays() -> None:
    def game() -> dict:
        agents = [make_agent("az:net=v2:simulations=20:turns=8"), make_agent("mcts:iterations=20")]
        return play_game("italia", 2, 11, agents, max_turns=120)

    a, b = game(), game()
    assert a["actions"] == b["actions"] and a["result"] == b["result"]
    assert len(a["actions"]) > 100


@pytest.mark.parametrize("options, message", [
    (":turns=-1", "turns must be an int from 0"),
    (":turns=403", "turns must be an int from 0"),
    (":turns=1.5", "turns must be an int from 0"),
    (":turns=8:compiled=0", "turns needs the compiled search"),
    (":turns=8:prior_mix=0.5", "turns needs the compiled search"),
])
def test_bad_turn_options_are_refused(options: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_agent("az:net=v2" + options)


def test_a_network_with_board_features_cannot_search_whole_turns() -> None:
    with pytest.raises(ValueError, match="az:turns needs a network over the observation alone"):
        AZAgent(net=feature_net(), simulations=5, turns=4).search(advanced("italia", 2, 0, 10))


def test_a_time_budget_grows_the_candidate_store_with_the_tree() -> None:
    st = advanced("italia", 2, 6, 30)
    agent = AZAgent(seed=0, net="v1", ms=60, turns=8)
    result = agent.search(st.clone())
    tree, turns = agent._tree, agent._turn_tree
    assert agent.last_iterations == tree.visits[0] == result.visits.sum() >= 1
    assert turns is not None and turns.count.size >= tree.capacity >= tree.size[0]
    assert result.action in np.flatnonzero(st.legal_action_mask())
