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

Agents from outside the package (:mod:`concordia_env.agents.external`): ``module:Class`` names an
:class:`Agent` subclass to import (``mypkg.bots:MyBot:depth=3``), a name registered in the
``concordia_env.agents`` entry-point group is built like a built-in, and ``bot:manifest=FILE``
(:mod:`concordia_env.agents.bot`) plays a program in any language over a JSON-lines protocol.
Importing a module runs its code, so a spec read from a file (a record, a config) is made with
``allow_import=False``, which refuses ``module:Class`` without importing anything.
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from concordia_env.state import GameState


class AgentError(RuntimeError):
    """An agent failed at a decision: it chose an illegal action, or (a bot) crashed, hung, answered
    late or answered what is not an action. The message names the agent, the seat and what was
    wrong; a tournament records the game as a forfeit by that seat (:func:`~concordia_env.arena.records.play_game`)."""


class Agent(abc.ABC):
    """One player. Subclasses implement :meth:`act`; :meth:`reset` is called before every game and
    :meth:`close` after it."""

    #: the spec that built the agent (what tables and records call it)
    name: str = "agent"

    def reset(self, seed: int | None = None) -> None:
        """Forget the last game; ``seed`` (if given) reseeds ``self.rng``, the generator behind
        every random choice the agent makes (numpy's, not torch's or Python's global one, so
        a game replays whatever else runs in the process)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def close(self) -> None:  # noqa: B027 - a hook: most agents hold nothing to release
        """Release what the agent holds for the game (a bot's process); called when a game ends,
        however it ends. The agent may play another game after the next :meth:`reset`."""

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
    """``"mcts:ms=500"`` -> ``("mcts", {"ms": 500})``; ``"mypkg.bots:MyBot:depth=3"`` ->
    ``("mypkg.bots:MyBot", {"depth": 3})`` (a name that is not a built-in agent followed by a part
    without ``=`` is ``module:attribute``); ``ValueError`` on a malformed spec. Imports nothing."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string like 'random' or 'mcts:ms=500', got {spec!r}")
    name, *opts = spec.strip().split(":")
    if name not in AGENTS and opts and "=" not in opts[0]:
        name, opts = f"{name}:{opts[0]}", opts[1:]
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
    "bot": "bot:BotAgent",
}
AGENT_NAMES = tuple(AGENTS)


def agent_factory(name: str, allow_import: bool = True) -> Callable[..., Agent]:
    """The constructor of the agent ``name``: a built-in (its module imported now), a
    ``module:Class`` (imported now, only with ``allow_import``) or an entry point of the
    ``concordia_env.agents`` group. ``ValueError`` naming the known agents for an unknown name."""
    if name in AGENTS:
        target = AGENTS[name]
        if callable(target):
            return target
        module, attribute = target.split(":")
        factory: Callable[..., Agent] = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
        return factory
    from .external import entry_point_class, import_agent_class, known_agents

    if ":" in name:
        return import_agent_class(name, allow_import)
    found = entry_point_class(name)
    if found is None:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(known_agents())}, or MODULE:CLASS")
    return found


def make_agent(spec: str, seed: int = 0, *, allow_import: bool = True) -> Agent:
    """Build the agent a spec names, seeded with ``seed``.

    ``ValueError`` names the known agents for an unknown name, and the bad option for options the
    agent does not take. ``allow_import=False`` (for specs read from a file: records, configs)
    refuses a ``module:Class`` spec before importing anything; built-in and entry-point agents
    are made either way."""
    name, kwargs = parse_spec(spec)
    try:
        factory = agent_factory(name, allow_import)
    except ValueError as exc:
        raise ValueError(f"agent spec {spec.strip()!r}: {exc}") from None
    try:
        agent = factory(seed=seed, **kwargs)
    except TypeError as exc:
        raise ValueError(f"agent spec {spec!r}: {exc}") from None
    agent.name = spec.strip()
    return agent
