"""Reading a model's answer back as one of the legal moves of a prompt.

:func:`parse_answer` is tolerant of how models write: case, spaces, quotes, Markdown emphasis,
a trailing full stop, ``->`` for ``→`` and ``-`` for ``–`` are all ignored, and extra words are
allowed around the move. It tries, in order, and takes the first rule that finds something:

1. the whole answer is a move's name (``play Architectus``);
2. the whole answer is one number, maybe with a word before it (``3``, ``#3``, ``move 3.``,
   ``Answer: 3``): the move with that number in the list, 1..N (a bare number is never read as
   an action id, so ``0`` is refused rather than taken for the action with id 0);
3. the whole answer is an action id (``id 17``, ``action id: 17``), which must be legal;
4. a number at the start followed by a name (``3. play Architectus``): the number decides, and
   a name that contradicts it makes the answer ambiguous;
5. the name of exactly one legal move appears in the answer (a name inside a longer one that
   also appears does not count: ``play Mercator (3)`` is not ``play Mercator``);
6. exactly one number appears in the answer after a word such as ``move``, ``option`` or
   ``answer``, or, failing that, exactly one number appears at all: a move number as in rule 2.

Anything else (no move, several moves, a number out of range, an id that is not legal) raises
:class:`AnswerError`, whose ``reason`` says what was wrong in words a model can act on (the
:class:`~concordia_env.llm.agent.LLMAgent` sends it back with its retry).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import engine as E

#: characters models wrap answers in
_WRAPPERS = "\"'`*_"
#: words that may come before a move's number
_NUMBER_WORDS = r"(?:move|option|choice|number|answer|action|pick|play|no\.?|#)"
_BARE_NUMBER = re.compile(rf"^(?:(?:final\s+)?{_NUMBER_WORDS}\s*(?:is\s*)?[:#=]?\s*)?#?\(?(\d+)\)?[.):]?$")
_BARE_ID = re.compile(r"^(?:action\s*)?id\s*[:#=]?\s*(\d+)$")
_LEADING_NUMBER = re.compile(r"^#?\(?(\d+)\s*[.):\-]\s+(.+)$")
_TAGGED_NUMBER = re.compile(rf"\b{_NUMBER_WORDS}\s*(?:is\s*)?[:#=]?\s*#?(\d+)\b")
_ANY_NUMBER = re.compile(r"\d+")


class AnswerError(ValueError):
    """An answer that names no legal move, or several; ``reason`` says which, for a retry."""

    def __init__(self, answer: str, reason: str) -> None:
        shown = answer if len(answer) <= 80 else answer[:77] + "..."
        super().__init__(f"answer {shown!r}: {reason}")
        self.answer = answer
        self.reason = reason


def normalize(text: str) -> str:
    """Case, spacing, quotes, Markdown emphasis and arrow/dash spelling folded away."""
    text = text.replace("→", "->").replace("–", "-").replace("—", "-").casefold()
    text = " ".join(text.split())
    return text.strip(_WRAPPERS + " ").rstrip(".!").strip(_WRAPPERS + " ")


def _number(n: int, actions: Sequence[int], answer: str) -> int:
    """A move number 1..N (rule 2)."""
    if 1 <= n <= len(actions):
        return actions[n - 1]
    raise AnswerError(answer, f"{n} is not a move number from 1 to {len(actions)}")


def _action_id(n: int, actions: Sequence[int], answer: str) -> int:
    if n in actions:
        return n
    what = "is not legal now" if 0 <= n < E.NUM_ACTIONS else f"is not an action id (0-{E.NUM_ACTIONS - 1})"
    raise AnswerError(answer, f"action id {n} {what}; answer with a move number from 1 to {len(actions)}")


def _names_in(text: str, names: Sequence[str]) -> list[int]:
    """Indices of the names found in ``text``, less those only found inside a longer found name."""
    found = [i for i, name in enumerate(names) if name and name in text]
    return [i for i in found if not any(j != i and names[i] in names[j] for j in found)]


def _ambiguous(answer: str, names: Sequence[str], picks: Sequence[int]) -> AnswerError:
    listed = "; ".join(repr(names[i]) for i in picks[:4])
    return AnswerError(answer, f"it names {len(picks)} moves ({listed}); give exactly one")


def _one_number(numbers: list[str]) -> int | None:
    distinct = sorted({int(n) for n in numbers})
    return distinct[0] if len(distinct) == 1 else None


def parse_answer(answer: str, actions: Sequence[int], names: Sequence[str]) -> int:
    """The action id among ``actions`` (numbered 1..N in this order, named ``names``) that
    ``answer`` gives, by the rules of the module doc; :class:`AnswerError` otherwise."""
    if not isinstance(answer, str):
        raise TypeError(f"an answer is a str, got {type(answer).__name__}")
    if len(actions) != len(names) or not actions:
        raise ValueError(f"need as many names as actions, and at least one; got {len(actions)} and {len(names)}")
    text, folded = normalize(answer), [normalize(n) for n in names]
    if not text:
        raise AnswerError(answer, f"it is empty; answer with a move number from 1 to {len(actions)}")
    if text in folded:
        return actions[folded.index(text)]
    if match := _BARE_NUMBER.match(text):
        return _number(int(match[1]), actions, answer)
    if match := _BARE_ID.match(text):
        return _action_id(int(match[1]), actions, answer)
    if match := _LEADING_NUMBER.match(text):
        action = _number(int(match[1]), actions, answer)
        named = _names_in(match[2], folded)
        if named and actions[named[0]] != action or len(named) > 1:
            raise _ambiguous(answer, names, sorted({actions.index(action), *named}))
        return action
    return _loose(answer, text, actions, names, folded)


def _loose(answer: str, text: str, actions: Sequence[int], names: Sequence[str], folded: Sequence[str]) -> int:
    """Rules 5 and 6: a name, or a single number, somewhere in a longer answer."""
    named = _names_in(text, folded)
    if len(named) == 1:
        return actions[named[0]]
    if named:
        raise _ambiguous(answer, names, named)
    for numbers in (_TAGGED_NUMBER.findall(text), _ANY_NUMBER.findall(text)):
        n = _one_number(numbers)
        if n is not None:
            return _number(n, actions, answer)
        if numbers:
            raise AnswerError(answer, f"it has several numbers ({', '.join(sorted(set(numbers), key=int))}); "
                                      f"give exactly one move number from 1 to {len(actions)}")
    raise AnswerError(answer, f"it names no legal move; answer with a move number from 1 to {len(actions)}")
