"""Fast baselines: the heuristic searches the true state when it is given one.

Given ``state`` (as ``play_game``, tournaments and the PettingZoo loop can
pass it) the heuristic skips rebuilding the position from the observation, and
chooses exactly what the observation path chooses, from the same random
numbers: checked on every decision of a dozen games over all six (map,
players) combinations. It still refuses a state that does not match the
observation or the mask, and neither it (given the state) nor MCTS ever goes
through the observation rebuild.
"""

from __future__ import annotations

import numpy as np
import pytest

from concordia_env import decoding
from concordia_env.agents import heuristic as H
from concordia_env.agents import make_agent
from concordia_env.agents.base import Agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent, deck_blocks, resample_deck
from concordia_env.arena.records import play_game
from concordia_env.encoding import observation
from concordia_env.state import GameState, new_game

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]


class BothPaths(Agent):
    """Plays the state path and checks, decision by decision, that the observation path
    (a twin agent with the same seed) chooses the same action and draws the same noise."""

    name = "heuristic"

    def __init__(self) -> None:
        self.fast, self.slow = HeuristicAgent(), HeuristicAgent()
        self.decisions = 0

    def reset(self, seed: int | None = None) -> None:
        self.fast.reset(seed)
        self.slow.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        assert state is not None
        a = self.fast.act(observation, action_mask, state)
        assert self.slow.act(observation, action_mask) == a, f"paths differ at {state!r}"
        assert self.fast.rng.bit_generator.state == self.slow.rng.bit_generator.state
        self.decisions += int(np.count_nonzero(action_mask) > 1)
        return a


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_state_path_chooses_what_the_observation_path_chooses(map_name, n):
    """Heuristic self-play (every seat checked) and the heuristic against random players
    (odd positions: overflowing storehouses, cards nobody buys): about 500 decisions with a
    choice per combination, 3,000 in all."""
    decisions = 0
    for game in range(2):
        both = BothPaths()
        seats = [both] * n if game == 0 else [both] + [make_agent("random") for _ in range(n - 1)]
        record = play_game(map_name, n, 100 + game, seats)
        assert not record["result"]["truncated"]
        decisions += both.decisions
    assert decisions >= 300


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 5)])
def test_heuristic_never_reads_the_deck_order(map_name, n):
    """The one thing an observation cannot rebuild is the order of the undrawn cards: re-dealing
    them changes no choice (cards bought refill the display only after the turn it plans)."""
    rng = np.random.default_rng(0)
    st = new_game(map_name, n, 7)
    blocks, checked = deck_blocks(st), 0
    while not st.is_terminal():
        mask = st.legal_action_mask()
        if np.count_nonzero(mask) > 1:
            noise = rng.random(len(mask)) * 1e-9
            a = H.choose(st.s, st.game.tables, mask, noise)
            for seed in range(3):
                s = st.s.copy()
                resample_deck(s, blocks, np.random.default_rng(seed))
                assert H.choose(s, st.game.tables, mask, noise) == a
            checked += 1
        st.apply(int(rng.choice(np.flatnonzero(mask))))
    assert checked > 100


def test_state_path_refuses_a_state_that_does_not_match():
    st = new_game("imperium", 4, 3)
    while np.count_nonzero(st.legal_action_mask()) < 3:
        st.apply(st.legal_actions()[0])
    seat, mask = st.current_player, st.legal_action_mask()
    obs = observation(st, seat)
    agent = HeuristicAgent()
    fewer = mask.copy()
    fewer[np.flatnonzero(mask)[0]] = 0
    with pytest.raises(ValueError, match="action_mask does not match"):
        agent.act(obs, fewer, st)
    with pytest.raises(ValueError, match="observation does not match state"):
        agent.act(observation(st, (seat + 1) % 4), mask, st)  # another seat's view
    later = st.clone()
    later.apply(later.legal_actions()[0])
    with pytest.raises(ValueError, match="observation does not match state"):
        agent.act(observation(later, later.current_player), mask, st)  # a view of another step


def test_state_path_and_mcts_never_rebuild_the_position(monkeypatch):
    """Given the state, neither the heuristic nor MCTS (priors and leaf values are compiled
    kernels over the state arrays) goes through the observation rebuild."""

    def refuse(obs):
        raise AssertionError("state_from_observation called")

    monkeypatch.setattr(decoding, "state_from_observation", refuse)
    monkeypatch.setattr(H, "state_from_observation", refuse)
    record = play_game("italia", 2, 4, [HeuristicAgent(), MCTSAgent(iterations=20)], max_turns=30)
    assert len(record["actions"]) > 50
    st = new_game("italia", 2, 4)
    with pytest.raises(AssertionError, match="state_from_observation"):  # the observation path does
        HeuristicAgent().act(observation(st, st.current_player), st.legal_action_mask())
