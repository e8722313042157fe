"""Agents of a module outside the package, named as ``tiny_agents:Class`` by tests/test_own_agents.py
(which puts this folder on ``sys.path``), as a user's own module would be."""

from __future__ import annotations

import numpy as np

from concordia_env.agents.base import Agent, check_mask


class Offset(Agent):
    """The legal action ``offset`` places up from the lowest (wrapping), or a random one with ``offset=-1``."""

    def __init__(self, seed: int = 0, offset: int = 0) -> None:
        self.offset = offset
        self.built_with_seed = seed
        self.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state=None) -> int:
        legal = check_mask(action_mask)
        if self.offset < 0:
            return int(legal[self.rng.integers(legal.size)])
        return int(legal[self.offset % legal.size])


class IllegalAt(Offset):
    """Plays like ``Offset`` but answers an illegal id at its decision ``at`` of every game."""

    def __init__(self, seed: int = 0, at: int = 2) -> None:
        super().__init__(seed)
        self.at = at

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.decisions = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state=None) -> int:
        self.decisions += 1
        if self.decisions - 1 == self.at:
            return int(np.flatnonzero(np.asarray(action_mask) == 0)[0])
        return super().act(observation, action_mask, state)


class Unfinished(Agent):
    """An Agent subclass without ``act``: abstract, refused."""


class NotAnAgent:
    """A class that is not an Agent."""

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed


def offset_agent(seed: int = 0) -> Offset:
    """A function, not a class: refused (a spec names a class)."""
    return Offset(seed)
