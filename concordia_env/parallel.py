"""The PettingZoo parallel form of the env: ``concordia_env.parallel_env(...)``.

::

    import concordia_env

    env = concordia_env.parallel_env(map_name="italia", num_players=2)
    observations, infos = env.reset(seed=0)
    while env.agents:
        actions = {agent: policy(observations[agent]) for agent in env.agents}
        observations, rewards, terminations, truncations, infos = env.step(actions)

Concordia is a turn-based game: at every step exactly one seat decides (the one whose
``action_mask`` is not all zero, :attr:`ConcordiaParallelEnv.deciding_agent`). So the parallel
form is the AEC env (:class:`concordia_env.env.raw_env`, same arguments, same observations,
rewards, seeds and ``illegal_action`` modes) stepped once per parallel step:

* ``reset`` and ``step`` return an observation and an info for every seat in ``agents``;
* ``step(actions)`` applies ``actions[deciding_agent]`` and ignores the other seats' entries,
  which may be anything or absent (PettingZoo's ``parallel_api_test`` sends action 0 for a
  seat whose mask is all zero). ``ValueError`` when the deciding seat has no entry or an entry
  names no agent of the game; the game is then unchanged;
* rewards are 0 until the step that ends the game, which pays every seat its final reward and
  terminates (or, at ``max_turns``, truncates) every seat; ``agents`` is then empty and the
  infos hold the outcome (``vp``, ``rank``, ``vp_breakdown``, ``winner``, ``turns``).

PettingZoo's ``aec_to_parallel`` does not apply: it expects every agent to act once per cycle in
a fixed order, and a Concordia seat makes several decisions per turn (and a storehouse overflow
is decided out of turn). Importing ``concordia_env`` registers this form with PettingZoo as
``pettingzoo.make("parallel", "concordia/concordia_v0", ...)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import ParallelEnv

from .env import raw_env

__all__ = ["ConcordiaParallelEnv", "parallel_env"]


class ConcordiaParallelEnv(ParallelEnv, EzPickle):
    """The turn-based parallel form of :class:`~concordia_env.env.raw_env`; see the module docstring.

    Keyword arguments are :class:`~concordia_env.env.raw_env`'s."""

    def __init__(self, **kwargs: Any) -> None:
        EzPickle.__init__(self, **kwargs)
        self.aec_env = raw_env(**kwargs)
        self.metadata = dict(self.aec_env.metadata)
        self.possible_agents = self.aec_env.possible_agents[:]
        self.agents: list[str] = []
        self.render_mode = self.aec_env.render_mode
        #: the global state's Box (:meth:`state`), the AEC env's
        self.state_space = self.aec_env.state_space

    def observation_space(self, agent: str) -> spaces.Space:
        return self.aec_env.observation_space(agent)

    def action_space(self, agent: str) -> spaces.Space:
        return self.aec_env.action_space(agent)

    @property
    def deciding_agent(self) -> str | None:
        """The seat whose action the next :meth:`step` applies (None once the game is over)."""
        return self.aec_env.agent_selection if self.agents else None

    def reset(self, seed: int | None = None,
              options: dict | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """A new game: ``seed`` as the AEC env's ``reset`` (exactly ``new_game(..., seed=seed)``)."""
        self.aec_env.reset(seed=seed, options=options)
        self.agents = self.possible_agents[:]
        return self._observations(), self._infos()

    def step(self, actions: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float], dict[str, bool],
                                                      dict[str, bool], dict[str, dict[str, Any]]]:
        """Apply the deciding seat's entry of ``actions``; see the module docstring."""
        if not self.agents:
            raise RuntimeError("the game is over (or not started): call reset() first")
        unknown = sorted(map(str, set(actions) - set(self.possible_agents)))
        if unknown:
            raise ValueError(f"actions name agents this game does not have: {unknown}; "
                             f"its agents are {self.possible_agents}")
        agent = self.aec_env.agent_selection
        if agent not in actions:
            raise ValueError(f"actions has no entry for {agent!r}, the seat that decides now")
        self.aec_env.step(actions[agent])
        env = self.aec_env
        agents = self.agents
        observations, infos = self._observations(), self._infos()
        rewards = {a: float(env.rewards[a]) for a in agents}
        terminations = {a: bool(env.terminations[a]) for a in agents}
        truncations = {a: bool(env.truncations[a]) for a in agents}
        if any(terminations.values()) or any(truncations.values()):
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, Any]:
        return {a: self.aec_env.observe(a) for a in self.agents}

    def _infos(self) -> dict[str, dict[str, Any]]:
        return {a: dict(self.aec_env.infos[a]) for a in self.agents}

    def state(self) -> np.ndarray:
        """The global state (the AEC env's :meth:`~concordia_env.env.raw_env.state`)."""
        return self.aec_env.state()

    def render(self) -> Any:
        return self.aec_env.render()

    def close(self) -> None:
        self.aec_env.close()


def parallel_env(**kwargs: Any) -> ConcordiaParallelEnv:
    """The parallel form of ``concordia_env.env(**kwargs)`` (keyword arguments of :class:`~concordia_env.env.raw_env`)."""
    return ConcordiaParallelEnv(**kwargs)
