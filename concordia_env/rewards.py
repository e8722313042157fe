"""End-of-game rewards for every seat, and the outcome summary put in ``infos``.

Shared by the AEC env (:mod:`concordia_env.env`) and the batched env
(:mod:`concordia_env.vector`) so both pay exactly the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .state import GOD_COLUMNS, GameState

#: reward modes: "win" +1 winner, -1/(n-1) others (sums to 0); "rank" linear from
#: +1 (first) to -1 (last); "vp" (own VP - mean VP) / 50.
REWARD_MODES = ("win", "rank", "vp")
VP_SCALE = 50.0


def check_reward_mode(reward: str) -> str:
    if reward not in REWARD_MODES:
        raise ValueError(f"reward must be one of {', '.join(map(repr, REWARD_MODES))}; got {reward!r}")
    return reward


def seat_rewards(state: GameState, mode: str) -> np.ndarray:
    """Reward per seat (absolute seat order) of a finished game.

    Ties in VP are broken as in the rules (see :meth:`GameState.ranking`), so
    "win" and "rank" always give distinct places."""
    return rewards_of(state.scores(), state.ranking(), mode)


def rewards_of(scores: Sequence[int], ranking: Sequence[int], mode: str) -> np.ndarray:
    """:func:`seat_rewards` from a game's VP per seat and its ranking (seats first to last), as a
    finished game's result holds them (:class:`~concordia_env.arena.game_result.GameResult`)."""
    n = len(scores)
    out = np.zeros(n)
    if mode == "vp":
        vp = np.asarray(scores, np.float64)
        return (vp - vp.mean()) / VP_SCALE
    if mode == "win":
        out[:] = -1.0 / (n - 1)
        out[ranking[0]] = 1.0
    else:
        for place, p in enumerate(ranking):
            out[p] = 1.0 - 2.0 * place / (n - 1)
    return out


def outcome_infos(state: GameState, agent_names: list[str]) -> list[dict[str, Any]]:
    """Per seat: VP, place (1 = first, after tie-break), the per-god VP breakdown and the winner's name."""
    breakdown = state.score_breakdown()
    ranking = state.ranking()
    winner = agent_names[ranking[0]]
    return [{
        "vp": int(breakdown[p].sum()),
        "rank": ranking.index(p) + 1,
        "vp_breakdown": {god: int(v) for god, v in zip(GOD_COLUMNS, breakdown[p])},
        "winner": winner,
        "turns": int(state.field("turn")),
    } for p in range(state.num_players)]
