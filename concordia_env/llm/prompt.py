"""A decision as a prompt for a language model: the position, the seat, a short instruction and the
legal moves numbered 1..N.

The prompt is plain text (:data:`PROMPT_TEMPLATE`)::

    You are playing the board game Concordia (Italia map, 2 players) as player 1 (P1).
    Win the game: have the most victory points (VP) when it ends. ...

    The position:
    Concordia — Italia, 2 players, card play 1, player 1 to decide: play a card
    ...                                  (str(state): the board, every player, the display)

    Player 1 (P1) decides now: play a card.
    Legal moves:
    1. play Tribunus
    2. play Architectus
    ...
    Answer with the number of one move, from 1 to 6, and nothing else.

The moves are the state's legal actions in id order, named by ``GameState.action_to_string``;
``position="json"`` puts the seat's observation as JSON in board terms
(:func:`concordia_env.display.structs.position_struct`) in place of the text, ``"both"`` gives both.
Neither shows anything hidden (the deck's order). :meth:`Prompt.parse` reads an answer back
(:mod:`concordia_env.llm.answers`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..display.structs import position_struct
from ..state import GameState
from .answers import parse_answer

#: what the model is asked to do, before the position (``LLMAgent(instruction=...)`` replaces it)
DEFAULT_INSTRUCTION = ("Win the game: have the most victory points (VP) when it ends. "
                       "Choose one of the legal moves listed after the position.")
#: how the position may be shown
POSITION_FORMATS = ("text", "json", "both")

PROMPT_TEMPLATE = """You are playing the board game Concordia ({map} map, {players} players) as player {seat} (P{seat}).
{instruction}

The position:
{position}

Player {seat} (P{seat}) decides now: {decision}.
Legal moves:
{moves}
Answer with the number of one move, from 1 to {count}, and nothing else."""

#: what a retry adds after the prompt once an answer was not accepted
RETRY_TEMPLATE = """

Your previous answer was not accepted: {reason}.
Answer with the number of one move, from 1 to {count}, and nothing else."""


@dataclass(frozen=True)
class Prompt:
    """One decision put to a model: the ``text`` to send, the deciding ``seat``, and the legal
    ``actions`` (ids, in the order numbered 1..N) with their ``names``."""

    text: str
    seat: int
    actions: tuple[int, ...]
    names: tuple[str, ...]

    def parse(self, answer: str) -> int:
        """The action id ``answer`` names (:func:`~concordia_env.llm.answers.parse_answer`);
        :class:`~concordia_env.llm.answers.AnswerError` when it names none or several."""
        return parse_answer(answer, self.actions, self.names)

    def retry(self, reason: str) -> str:
        """The text to send again after an answer that was not accepted for ``reason``."""
        return self.text + RETRY_TEMPLATE.format(reason=reason, count=len(self.actions))


def _position_text(state: GameState, seat: int, position: str) -> str:
    if position == "text":
        return str(state)
    doc = json.dumps(position_struct(state, seat), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if position == "json":
        return doc
    return f"{state}\n\nThe same position as JSON:\n{doc}"


def make_prompt(state: GameState, *, instruction: str = DEFAULT_INSTRUCTION, position: str = "text") -> Prompt:
    """The prompt for the decision of ``state``'s deciding player (see the module doc).
    ``ValueError`` when the game is over or ``position`` is not one of :data:`POSITION_FORMATS`."""
    if position not in POSITION_FORMATS:
        raise ValueError(f"position must be one of {list(POSITION_FORMATS)}, got {position!r}")
    if state.is_terminal():
        raise ValueError("the game is over: there is no decision to prompt for")
    seat = state.current_player
    actions = tuple(state.legal_actions())
    names = tuple(state.action_to_string(a) for a in actions)
    text = PROMPT_TEMPLATE.format(
        map=state.map_name.capitalize(), players=state.num_players, seat=seat, instruction=instruction.strip(),
        position=_position_text(state, seat, position), decision=state.phase_name,
        moves="\n".join(f"{i}. {name}" for i, name in enumerate(names, 1)), count=len(actions))
    return Prompt(text, seat, actions, names)
