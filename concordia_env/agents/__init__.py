"""Baseline agents for concordia-env, and the ``concordia`` command.

Every agent has one method, ``act(observation, action_mask, state=None) -> int``:
``observation`` and ``action_mask`` are exactly what the PettingZoo env hands
the deciding seat; ``state`` is the core :class:`concordia_env.GameState`,
which only search agents (:class:`MCTSAgent`) need. ``reset(seed)`` starts a
new game with a fresh seed.

``make_agent("mcts:ms=500", seed=0)`` builds an agent from the spec strings
the command line uses.
"""

from .base import AGENT_NAMES, Agent, make_agent, parse_spec
from .random_agent import RandomAgent

__all__ = ["AGENT_NAMES", "Agent", "RandomAgent", "make_agent", "parse_spec"]
