"""``LLMAgent``: an :class:`~concordia_env.agents.base.Agent` that asks a language model for each move.

The model is any callable ``model(prompt: str) -> str`` the user passes in: a function around their
own client (hosted API, local server, a model in the same process). The package has no network
code and no client of its own.

Each decision: the prompt of :func:`~concordia_env.llm.prompt.make_prompt` is sent; the answer is
read by :func:`~concordia_env.llm.answers.parse_answer`. An answer that names no legal move (or
several) is a *bad answer*: the prompt is sent again with the reason appended
(:meth:`Prompt.retry <concordia_env.llm.prompt.Prompt.retry>`), up to ``attempts`` answers in all.
After ``attempts`` bad answers the **fallback** decides:

* ``"random"`` (default): a uniformly random legal move, from the agent's seeded generator;
* ``"first"``: the legal move with the lowest id;
* ``"heuristic"``: the package's heuristic agent's move;
* ``"raise"``: :class:`LLMAnswerError`, which stops the game (``play_game`` passes it on);
* an :class:`~concordia_env.agents.base.Agent`: that agent's move.

A decision with one legal move is played without asking (``ask_forced=True`` asks anyway). An
exception raised by ``model`` itself (a network error, a quota) is not a bad answer: it propagates,
so a caller's own retry policy sees it. ``stats`` counts decisions, model calls, bad answers and
fallbacks since the agent was made; ``on_exchange``, if given, is called with every
:class:`Exchange` (prompt, answer, the action read or the error) for logging.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..agents.base import Agent, check_mask
from ..decoding import state_from_observation
from ..state import GameState
from .answers import AnswerError
from .prompt import DEFAULT_INSTRUCTION, POSITION_FORMATS, Prompt, make_prompt

#: what may decide after ``attempts`` bad answers (or an Agent)
FALLBACKS = ("random", "first", "heuristic", "raise")


class LLMAnswerError(RuntimeError):
    """The model gave no usable answer in ``attempts`` tries and the fallback is ``"raise"``."""


@dataclass(frozen=True)
class Exchange:
    """One prompt and answer: the ``action`` read from it, or the ``error`` that rejected it."""

    seat: int
    prompt: str
    answer: str
    action: int | None
    error: str | None


@dataclass
class LLMStats:
    """Counts since the agent was made (``reset`` keeps them)."""

    decisions: int = 0  # decisions the agent made
    forced: int = 0  # decisions with one legal move, played without asking
    model_calls: int = 0
    bad_answers: int = 0
    fallbacks: int = 0  # decisions the fallback made


class LLMAgent(Agent):
    """Asks ``model(prompt) -> str`` for every move (see the module doc for the retry and fallback
    policy). ``instruction`` replaces the prompt's default instruction; ``position`` is
    ``"text"`` (default), ``"json"`` or ``"both"``."""

    name = "llm"

    def __init__(self, model: Callable[[str], str], *, attempts: int = 3, fallback: str | Agent = "random",
                 instruction: str = DEFAULT_INSTRUCTION, position: str = "text", ask_forced: bool = False,
                 on_exchange: Callable[[Exchange], Any] | None = None, seed: int = 0, name: str = "llm") -> None:
        if not callable(model):
            raise TypeError(f"model must be a callable model(prompt: str) -> str, got {model!r}")
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            raise ValueError(f"attempts must be a positive int, got {attempts!r}")
        if not isinstance(fallback, Agent) and fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {list(FALLBACKS)} or an Agent, got {fallback!r}")
        if position not in POSITION_FORMATS:
            raise ValueError(f"position must be one of {list(POSITION_FORMATS)}, got {position!r}")
        self.model = model
        self.attempts = attempts
        self.fallback = fallback
        self.instruction = instruction
        self.position = position
        self.ask_forced = ask_forced
        self.on_exchange = on_exchange
        self.name = name
        self.stats = LLMStats()
        self._fallback_agent = self._make_fallback(fallback, seed)
        self.reset(seed)

    @staticmethod
    def _make_fallback(fallback: str | Agent, seed: int) -> Agent | None:
        if isinstance(fallback, Agent):
            return fallback
        if fallback == "heuristic":
            from ..agents.heuristic import HeuristicAgent

            return HeuristicAgent(seed=seed)
        return None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self._fallback_agent is not None:
            self._fallback_agent.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        legal = check_mask(action_mask)
        position = self._position(observation, action_mask, state)
        self.stats.decisions += 1
        if legal.size == 1 and not self.ask_forced:
            self.stats.forced += 1
            return int(legal[0])
        prompt = make_prompt(position, instruction=self.instruction, position=self.position)
        action = self.ask(prompt)
        if action is None:
            action = self._fall_back(observation, action_mask, state, legal, prompt)
        return action

    @staticmethod
    def _position(observation: np.ndarray, action_mask: np.ndarray, state: GameState | None) -> GameState:
        """The position to describe: ``state``, or (the PettingZoo env gives none) the position
        rebuilt from the observation, where the deciding seat is player 0."""
        position = state if state is not None else state_from_observation(np.asarray(observation))
        if not np.array_equal(position.legal_action_mask(), np.asarray(action_mask, dtype=np.int8)):
            raise ValueError("action_mask does not match the position's legal actions (are they from the same step?)")
        return position

    def ask(self, prompt: Prompt) -> int | None:
        """Up to ``attempts`` answers to ``prompt``: the first legal action read, or None."""
        text = prompt.text
        for _ in range(self.attempts):
            answer = self.model(text)
            self.stats.model_calls += 1
            if not isinstance(answer, str):
                raise TypeError(f"model returned {type(answer).__name__}, expected str: model(prompt) -> str")
            try:
                action = prompt.parse(answer)
            except AnswerError as exc:
                self.stats.bad_answers += 1
                self._record(prompt, answer, None, str(exc))
                text = prompt.retry(exc.reason)
                continue
            self._record(prompt, answer, action, None)
            return action
        return None

    def _record(self, prompt: Prompt, answer: str, action: int | None, error: str | None) -> None:
        if self.on_exchange is not None:
            self.on_exchange(Exchange(prompt.seat, prompt.text, answer, action, error))

    def _fall_back(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None,
                   legal: np.ndarray, prompt: Prompt) -> int:
        if self.fallback == "raise":
            raise LLMAnswerError(f"agent {self.name!r} at seat {prompt.seat}: the model gave no legal move in "
                                 f"{self.attempts} answer(s) (fallback='raise')")
        if self._fallback_agent is not None:
            action = int(self._fallback_agent.act(observation, action_mask, state))
        elif self.fallback == "first":
            action = int(legal[0])
        else:
            action = int(legal[self.rng.integers(legal.size)])
        self.stats.fallbacks += 1
        return action
