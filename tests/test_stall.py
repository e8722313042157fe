"""The stall guard (:mod:`concordia_env.agents.stall`): ``net`` games end, short ones are untouched.

The released ``net`` stops buying cards and building houses late in a game: against itself it
reached the 2,000-card-play cap in every 2-player Italia game. With the guard, the heuristic
moves for it once a long game has had no purchase and no house for ``stall_rounds`` rounds.
"""

from __future__ import annotations

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env.agents.base import Agent, make_agent
from concordia_env.agents.stall import StallGuard, progress_left
from concordia_env.arena.records import play_game
from concordia_env.state import GameState, new_game


def _at(s: np.ndarray, turn: int, houses_built: int = 0) -> np.ndarray:
    """A copy of ``s`` at card play ``turn`` with ``houses_built`` more houses of player 0 built."""
    out = s.copy()
    out[E.O_TURN] = turn
    out[E.O_HOUSES_LEFT] -= houses_built
    return out


def test_progress_left_counts_cards_to_take_and_houses_to_build() -> None:
    # a new 2-player Italia game: 15 cards in the display and the deck, 2 x 15 houses
    assert progress_left(new_game("italia", 2, 0).s) == 15 + 30
    late = new_game("italia", 2, 0).s.copy()
    late[E.O_DISPLAY:E.O_DISPLAY + E.NDISP] = [4, 9, -1, -1, -1, -1, -1]
    late[E.O_DECK_POS] = late[E.O_DECK_LEN] - 1
    late[E.O_HOUSES_LEFT:E.O_HOUSES_LEFT + 2] = [10, 14]
    assert progress_left(late) == 2 + 1 + 24  # 2 cards shown, 1 undrawn, 10 + 14 houses
    s = new_game("imperium", 5, 1).s
    assert progress_left(_at(s, 0, houses_built=3)) == progress_left(s) - 3


def test_the_guard_acts_only_in_a_long_game_without_progress() -> None:
    s = new_game("italia", 2, 0).s  # 2 players: after=100 -> card play 200; rounds=10 -> 20 card plays
    guard = StallGuard()
    assert not guard.stalled(_at(s, 150))  # progress seen first at card play 150
    assert not guard.stalled(_at(s, 169))
    assert not guard.stalled(_at(s, 199))  # 49 card plays without progress, but the game is short
    assert guard.stalled(_at(s, 200))  # long, and nothing since 150
    assert not guard.stalled(_at(s, 201, houses_built=1))  # a house: the policy plays again
    assert not guard.stalled(_at(s, 220, houses_built=1))  # 19 card plays since
    assert guard.stalled(_at(s, 221, houses_built=1))  # 20
    assert not guard.stalled(_at(s, 5))  # an earlier card play: another game, watched afresh
    off = StallGuard(rounds=0)
    assert not any(off.stalled(_at(s, t)) for t in (0, 500, 1999))


def test_bad_guard_options_are_refused() -> None:
    for kwargs, word in [({"after": -1}, "stall_after"), ({"rounds": 1.5}, "stall_rounds"),
                         ({"rounds": True}, "stall_rounds")]:
        with pytest.raises(ValueError, match=word):
            StallGuard(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="stall_rounds must be a whole number >= 0, got -2"):
        make_agent("net:stall_rounds=-2")


def test_net_against_itself_ends_its_games_only_with_the_guard() -> None:
    unguarded = [make_agent("net:stall_rounds=0", seed=k) for k in range(2)]
    record = play_game("italia", 2, 0, unguarded, max_turns=600)
    assert record["result"]["truncated"]  # the policy alone stalls
    guarded = [make_agent("net", seed=k) for k in range(2)]
    record = play_game("italia", 2, 0, guarded, max_turns=600)
    result = record["result"]
    assert not result["truncated"] and result["winner"] is not None and 200 < result["turns"] < 600
    handed = [a.guarded for a in guarded]  # type: ignore[attr-defined]
    assert all(h > 0 for h in handed)


def test_a_game_shorter_than_the_guard_is_the_networks_own() -> None:
    games = []
    for spec in ("net", "net:stall_rounds=0"):
        history: list[int] = []
        agents = [make_agent(spec, seed=1), make_agent("heuristic", seed=2)]
        record = play_game("italia", 2, 4, agents, history=history)
        assert record["result"]["turns"] < 200 and agents[0].guarded == 0  # type: ignore[attr-defined]
        games.append(history)
    assert games[0] == games[1]


class _ObservationOnly(Agent):
    """Plays ``inner`` without the live state: it rebuilds the position from the observation."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        return self.inner.act(observation, action_mask)


def test_the_guard_sees_the_same_from_the_observation() -> None:
    games = []
    for wrap in (False, True):
        history: list[int] = []
        agents: list[Agent] = [make_agent("net", seed=k) for k in range(2)]
        played = [_ObservationOnly(a) for a in agents] if wrap else agents
        play_game("italia", 2, 0, played, history=history)
        assert agents[0].guarded > 0  # type: ignore[attr-defined]
        games.append(history)
    assert games[0] == games[1]
