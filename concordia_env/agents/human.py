"""The human player at the terminal: ``concordia play`` seats it; a menu of the legal actions
(:func:`concordia_env.display.menu.build_menu`) is printed and a choice read at every decision."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

import numpy as np

from .. import engine as E
from ..display.menu import Menu, build_menu
from ..display.render import WIDTH, state_to_text, status_lines, wrap
from ..state import GameState
from .base import Agent, check_mask

#: the name a human's seat has in game records
HUMAN_NAME = "human"

InputFn = Callable[[str], str]

PLAY_HELP = """\
Type the number of an action to play it: each action keeps its number for the
whole decision, whether or not its group is shown, and through all the steps of
one card's action (a move no longer possible leaves a gap; a new one gets a new
number).
  a, c, d, ...     show a group the menu sums up in one line
  a1, a2, ...      show one part of a group (a colonist's moves of one cost)
  m, menu          show the menu again
  b, board         show the board and the menu again
  h, help          this help
  q, quit, exit    leave the game (offers to save it to continue later with
                   concordia play --resume FILE; with --save it is saved)
  Ctrl-D, Ctrl-C   leave too (saved with --save; Ctrl-C exits with status 130)
Houses are written P0 ... P4 (player 0 ... 4): "Sirmium [brick] houses P0 P3"."""



class QuitGame(Exception):
    """The human asked to leave the game."""



class HumanAgent(Agent):
    """A player at the terminal. At each decision it shows the board (when the decision starts a
    turn, or on ``b``), the legal actions as a grouped, numbered menu
    (:func:`concordia_env.display.menu.build_menu`) and, right above the prompt, the player's own status;
    then it reads a choice. Every line fits ``width`` columns.

    Input comes from ``input_fn`` (``input`` by default) so tests can script it; bad input is
    answered with one line and the same prompt. ``quit`` raises :class:`QuitGame`, end of input
    ``EOFError``."""

    name = HUMAN_NAME

    def __init__(self, input_fn: InputFn = input, out: TextIO | None = None, width: int = WIDTH) -> None:
        self.input_fn = input_fn
        self.out = out
        self.width = width
        self._board_turn: int | None = None  # the card play after which the board was last shown
        # the numbers given during the card's action now, so a number keeps its meaning through its steps
        self._numbers: dict[int, int] = {}
        self._numbers_for: tuple[int, bool] | None = None

    def reset(self, seed: int | None = None) -> None:
        """A new game: its first decision shows the board."""
        super().reset(seed)
        self._board_turn = None
        self._numbers, self._numbers_for = {}, None

    def _menu(self, state: GameState) -> Menu:
        """The decision's menu, numbered on from the earlier steps of the same card's action (the
        choice of a card is a step of its own): an option keeps its number, a new one gets a new
        number."""
        step = (int(state.field("turn")), state.phase == E.PH_PLAY)
        if step != self._numbers_for:
            self._numbers, self._numbers_for = {}, step
        menu = build_menu(state, "you", self.width, numbers=self._numbers)
        self._numbers.update(menu.numbering)
        return menu

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        if state is None:
            raise ValueError("HumanAgent needs the game state to show the board")
        out = self.out or sys.stdout
        legal = check_mask(action_mask).tolist()
        if legal != state.legal_actions():
            raise ValueError("HumanAgent: the action mask is not the legal actions of the state given")
        if len(legal) == 1:  # nothing to decide: don't make the human type it
            print("\n".join(wrap(f"(your only choice) {state.action_to_string(legal[0])}", self.width)), file=out)
            return legal[0]
        menu = self._menu(state)
        turn = int(state.field("turn"))
        self._show(state, menu, out, board=turn != self._board_turn)
        while True:
            try:
                choice = menu.parse(self.input_fn(menu.prompt))
            except ValueError as exc:
                print(exc, file=out)
                continue
            if choice.kind == "action":
                return choice.action
            if choice.kind == "quit":
                raise QuitGame
            if choice.kind == "help":
                print(PLAY_HELP, file=out)
            else:  # "board", "menu" or "view"
                self._show(state, menu, out, board=choice.kind == "board", key=choice.key or None)

    def _show(self, state: GameState, menu: Menu, out: TextIO, board: bool = False, key: str | None = None) -> None:
        """The board (if ``board``), the menu (or its part ``key``) and the player's status."""
        if board:
            print("\n" + state_to_text(state, self.width), file=out)
            self._board_turn = int(state.field("turn"))
        lines = ["", *menu.view(key), "", *status_lines(state, state.current_player, self.width)]
        print("\n".join(lines), file=out)
