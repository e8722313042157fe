"""The agent interface and the spec strings that name agents on the command line.

A spec is a registered name optionally followed by ``:key=value`` options,
e.g. ``random``, ``heuristic``, ``mcts:ms=500``, ``mcts:iterations=200:rollout=random``,
``policy:path=model.zip``. Values are parsed as int, then float, else kept as text.

``ppo`` plays the policy released for the game's map (numpy weights shipped with the
package: no torch needed). ``az`` (a network guiding a search, e.g. ``az:simulations=100``) and
``net`` (the network alone) play the network released for the game's map, or ``az:net=STEM``
/ ``net:net=STEM`` a network file pair (numpy, no torch, no pickle). ``policy:path=FILE`` plays a saved policy: a numpy policy
pair's ``.npz``, or a stable-baselines3 ``.zip``, which needs torch and is loaded with
pickle, so it runs code from the file: play only model files you trust.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from concordia_env.state import GameState


class Agent(abc.ABC):
    """One player. Subclasses implement :meth:`act`; :meth:`reset` is called before every game."""

    #: the spec that built the agent (what tables and records call it)
    name: str = "agent"

    def reset(self, seed: int | None = None) -> None:
        """Forget the last game; ``seed`` (if given) reseeds ``self.rng``, the generator behind
        every random choice the agent makes (numpy's, not torch's or Python's global one, so
        a game replays whatever else runs in the process)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    @abc.abstractmethod
    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        """The action (an id with ``action_mask[id] == 1``) for the deciding seat."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def check_mask(action_mask: np.ndarray) -> np.ndarray:
    """Indices of the legal actions; ``ValueError`` if the mask allows nothing (not this seat's decision)."""
    legal = np.flatnonzero(np.asarray(action_mask))
    if legal.size == 0:
        raise ValueError("action_mask allows no action: this seat is not deciding now")
    return legal


def sample_softmax(legal: np.ndarray, scores: np.ndarray, rng: np.random.Generator) -> int:
    """One of ``legal`` drawn with probability ``softmax(scores)`` (scores of the legal actions only,
    i.e. the masked distribution), from a single ``rng.random()`` so a seed replays the draw."""
    p = np.exp(scores - scores.max())
    cdf = np.cumsum(p)
    return int(legal[min(int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right")), legal.size - 1)])


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"mcts:ms=500"`` -> ``("mcts", {"ms": 500})``; ``ValueError`` on a malformed spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string like 'random' or 'mcts:ms=500', got {spec!r}")
    name, *opts = spec.strip().split(":")
    kwargs: dict[str, Any] = {}
    for opt in opts:
        key, eq, val = opt.partition("=")
        if not eq or not key or not val:
            raise ValueError(f"agent spec {spec!r}: option {opt!r} is not key=value")
        kwargs[key] = _value(val)
    return name, kwargs


#: every agent a spec can name: where its constructor lives (``module:attribute`` in this
#: package), or the constructor itself. A module is imported only when its agent is made, so
#: ``import agents`` stays light (the policy agent imports torch to read a .zip) and nothing here
#: imports an agent.
AGENTS: dict[str, str | Callable[..., Agent]] = {
    "random": "random_agent:RandomAgent",
    "heuristic": "heuristic:HeuristicAgent",
    "mcts": "mcts:MCTSAgent",
    "policy": "policy:PolicyAgent",
    "ppo": "policy:released_policy",
    "az": "az:AZAgent",
    "net": "az:NetAgent",
    "turn": "turn:TurnAgent",
}
AGENT_NAMES = tuple(AGENTS)


def agent_factory(name: str) -> Callable[..., Agent]:
    """The constructor of the built-in agent ``name`` (imports its module now);
    ``ValueError`` naming the known agents for an unknown name."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(sorted(AGENTS))}")
    target = AGENTS[name]
    if callable(target):
        return target
    module, attribute = target.split(":")
    factory: Callable[..., Agent] = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
    return factory


def make_agent(spec: str, seed: int = 0) -> Agent:
    """Build the agent a spec names, seeded with ``seed``.

    ``ValueError`` names the known agents for an unknown name, and the bad
    option for options the agent does not take."""
    name, kwargs = parse_spec(spec)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}; known: {', '.join(sorted(AGENTS))}")
    try:
        agent = agent_factory(name)(seed=seed, **kwargs)
    except TypeError as exc:
        raise ValueError(f"agent spec {spec!r}: {exc}") from None
    agent.name = spec.strip()
    return agent
