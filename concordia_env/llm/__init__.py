"""Playing Concordia with a language model: prompts, answers, and an agent around any model.

* :mod:`.prompt`: :func:`make_prompt` turns a decision into a :class:`Prompt` (the position as text
  or JSON, the seat, a short instruction, the legal moves numbered 1..N);
* :mod:`.answers`: :func:`parse_answer` reads a model's answer back as one legal action, tolerant of
  case, spacing and extra words; :class:`AnswerError` says why an answer was refused;
* :mod:`.agent`: :class:`LLMAgent`, an agent that asks ``model(prompt: str) -> str`` for each move,
  retries a bad answer with the reason, and falls back to a documented policy after ``attempts``
  bad answers.

There is no network code here: the model is the caller's function around their own client.
docs/llm.md shows how to plug one in.
"""

from __future__ import annotations

from .agent import FALLBACKS, Exchange, LLMAgent, LLMAnswerError, LLMStats
from .answers import AnswerError, normalize, parse_answer
from .prompt import DEFAULT_INSTRUCTION, POSITION_FORMATS, PROMPT_TEMPLATE, RETRY_TEMPLATE, Prompt, make_prompt

__all__ = ["DEFAULT_INSTRUCTION", "FALLBACKS", "POSITION_FORMATS", "PROMPT_TEMPLATE", "RETRY_TEMPLATE", "AnswerError",
           "Exchange", "LLMAgent", "LLMAnswerError", "LLMStats", "Prompt", "make_prompt", "normalize", "parse_answer"]
