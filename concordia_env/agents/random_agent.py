"""RandomAgent: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from concordia_env.state import GameState

from .base import Agent, check_mask


class RandomAgent(Agent):
    """Picks uniformly among the legal actions with its own ``numpy`` generator.

    The same seed gives the same choices for the same sequence of masks."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        return int(legal[self.rng.integers(legal.size)])
