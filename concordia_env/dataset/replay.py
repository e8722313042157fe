"""Replaying a game line through the engine: its final state checked against the stored result, and
per seat the observations, action masks, actions and returns of every decision the seat made.

Observations are :func:`concordia_env.encoding.observation` of the deciding seat in the state it
decided in (what the AEC env shows that seat), masks are :meth:`GameState.legal_action_mask`
(int8 over the 402 action ids). A seat's reward is the env's end-of-game reward
(:func:`concordia_env.rewards.rewards_of`, mode ``"win"``, ``"rank"`` or ``"vp"``) for a finished
game and 0 for a truncated one, as the env pays them; the return of its ``t``-th of ``T`` decisions
is ``reward * gamma ** (T - 1 - t)`` (every reward comes at the end).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arena.game_result import GameResult
from ..encoding import OBSERVATION_SIZE, observation
from ..engine import NUM_ACTIONS
from ..rewards import check_reward_mode, rewards_of
from ..state import GameState, new_game

#: the result fields a replay must reproduce
CHECKED = ("scores", "ranking", "winner", "turns")


@dataclass(frozen=True)
class SeatTrajectory:
    """One seat's decisions in a game, in order (``T`` of them).

    ``observations`` (T, 2378) float32, ``masks`` (T, 402) int8, ``actions`` (T,) int64,
    ``steps`` (T,) int64: each decision's index in the game's action list, ``returns`` (T,) float32;
    ``reward``: the seat's end-of-game reward; ``agent``: the name of the agent in that seat;
    ``final_observation`` (2378,) float32: what the seat sees in the game's last state (the ``T + 1``-th
    observation that episode formats such as Minari's ask for)."""

    seat: int
    agent: str
    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    steps: np.ndarray
    returns: np.ndarray
    reward: float
    final_observation: np.ndarray


@dataclass(frozen=True)
class ReplayedGame:
    """A game of a data set, replayed: ``index`` is its position among the file's games (0-based),
    ``game`` its line, ``seats`` one :class:`SeatTrajectory` per seat (seat order)."""

    index: int
    game: dict[str, Any]
    seats: tuple[SeatTrajectory, ...]

    @property
    def rewards(self) -> np.ndarray:
        """The end-of-game reward per seat."""
        return np.array([t.reward for t in self.seats])


def initial_state(line: Mapping[str, Any]) -> GameState:
    """The state a game line's game starts from (its map, players, seed and scoring variant)."""
    return new_game(line["map"], line["players"], line["seed"], line["intermediate_scoring"])


def _apply(state: GameState, i: int, action: int) -> None:
    try:
        state.apply(action)
    except ValueError as exc:  # IllegalActionError, or an id outside the action space
        raise ValueError(f"action {i} ({action}) is illegal in replay: {exc}") from None


def check_result(line: Mapping[str, Any], state: GameState) -> None:
    """``ValueError`` naming the first difference between a game line's stored result and ``state``,
    its replayed final state. A forfeited game must stop where the forfeiting seat was to decide,
    and is ranked as :mod:`~concordia_env.arena.game_result` ranks forfeits."""
    truncated = bool(line["truncated"])
    if not truncated and not state.is_terminal():
        raise ValueError(f"the game is stored as finished, but after its {len(line['actions'])} actions "
                         f"it is still running")
    if truncated and state.is_terminal():
        raise ValueError("the game is stored as truncated, but its actions finish it")
    forfeit = line.get("forfeit")
    lost = None if forfeit is None else (int(forfeit["seat"]), str(forfeit["reason"]))
    if lost is not None and state.current_player != lost[0]:
        raise ValueError(f"the game is stored as forfeited by seat {lost[0]}, but after its actions seat "
                         f"{state.current_player} is to decide")
    replayed = GameResult.from_state(state, truncated, forfeit=lost).to_json()
    for key in CHECKED:
        if line[key] != replayed[key]:
            raise ValueError(f"stored {key} {line[key]!r}, but the replay gives {replayed[key]!r}")


def replay_line(line: Mapping[str, Any]) -> GameState:
    """Replay a (field-checked) game line and check its stored result; its final state.
    ``ValueError`` names the first illegal action or result mismatch."""
    state = initial_state(line)
    for i, action in enumerate(line["actions"]):
        _apply(state, i, action)
    check_result(line, state)
    return state


def seat_rewards_of(line: Mapping[str, Any], reward: str) -> np.ndarray:
    """The env's end-of-game reward per seat for a game line (0 for every seat of a truncated game)."""
    check_reward_mode(reward)
    if line["truncated"]:
        return np.zeros(line["players"])
    return rewards_of(line["scores"], line["ranking"], reward)


def replay_game(line: Mapping[str, Any], index: int = 0, *, reward: str = "win", gamma: float = 1.0) -> ReplayedGame:
    """Replay a (field-checked) game line, recording every decision by seat (see the module doc);
    ``ValueError`` names the first illegal action or result mismatch."""
    n = line["players"]
    rewards = seat_rewards_of(line, reward)
    obs: list[list[np.ndarray]] = [[] for _ in range(n)]
    masks: list[list[np.ndarray]] = [[] for _ in range(n)]
    steps: list[list[int]] = [[] for _ in range(n)]
    state = initial_state(line)
    for i, action in enumerate(line["actions"]):
        seat = state.current_player
        obs[seat].append(observation(state, seat))
        masks[seat].append(state.legal_action_mask())
        steps[seat].append(i)
        _apply(state, i, action)
    check_result(line, state)
    actions = np.asarray(line["actions"], np.int64)
    seats = tuple(_trajectory(seat, line["agents"][seat], obs[seat], masks[seat], np.asarray(steps[seat], np.int64),
                              actions, float(rewards[seat]), gamma, observation(state, seat)) for seat in range(n))
    return ReplayedGame(index, dict(line), seats)


def _trajectory(seat: int, agent: str, obs: list[np.ndarray], masks: list[np.ndarray], steps: np.ndarray,
                actions: np.ndarray, reward: float, gamma: float, final: np.ndarray) -> SeatTrajectory:
    t = len(steps)
    returns = (reward * float(gamma) ** np.arange(t - 1, -1, -1, dtype=np.float64)).astype(np.float32)
    return SeatTrajectory(
        seat=seat, agent=agent,
        observations=np.stack(obs) if obs else np.zeros((0, OBSERVATION_SIZE), np.float32),
        masks=np.stack(masks).astype(np.int8) if masks else np.zeros((0, NUM_ACTIONS), np.int8),
        actions=actions[steps], steps=steps, returns=returns, reward=reward, final_observation=final)
