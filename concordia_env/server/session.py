"""One game served to the browser: a human at one seat, agents at the others.

:class:`GameSession` holds the live :class:`~concordia_env.state.GameState` and the actions so
far. A move from the page names the action and the *decision number* it answers (the number of
actions applied when the page was drawn): a stale number (another tab moved, or the page was not
reloaded) is refused with HTTP 409, an action that is not legal with 400, and a refused move
changes nothing. After the human's move the agents play their seats on the server until the human
is to decide again (a decision with one legal action is played for the human, as in
``concordia play``), and the game record is saved atomically after every move
(:func:`~concordia_env.arena.records.save_record`): a partial record marked ``unfinished``
until the game ends, so ``concordia serve --resume`` or ``concordia play --resume`` continue it
and ``concordia replay`` shows it.

Agents are reset with :func:`~concordia_env.arena.records.agent_seed` as in
:func:`~concordia_env.arena.records.play_game`, so a seed and the human's moves reproduce a game.
Every public method holds the session's lock: the HTTP server answers requests in threads.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from .. import engine as E
from .._internal.shorten import cut_numbers, short_number
from ..agents.base import Agent
from ..arena.records import AgentError, agent_seed, partial_record, save_record
from ..cli.common import MAX_SEED, short_text
from ..display.viewer.snapshots import frame_vector, layout_for, static_view
from ..encoding import observation
from ..state import GameState, new_game
from .moves import TARGET_KINDS, move_groups, move_targets

#: called with a one-line note for the operator's terminal (a game over, a save that failed)
NoteFn = Callable[[str], None]


class MoveRejected(Exception):
    """A request the session refuses, with the HTTP status to answer (400: bad or illegal, 409:
    stale or out of turn) and a one-line message for the page. The game is unchanged."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Setup:
    """What a game is: map, player count, setup seed, the human's seat, the scoring variant."""

    map_name: str
    players: int
    seed: int
    seat: int
    intermediate_scoring: bool = False


def free_path(path: Path) -> Path:
    """``path`` if nothing is there yet, else the first free ``stem-2.suffix``, ``stem-3.suffix``, ...
    beside it, so a new game never overwrites an earlier game's record."""
    if not path.exists():
        return path
    k = 2
    while (candidate := path.with_name(f"{path.stem}-{k}{path.suffix}")).exists():
        k += 1
    return candidate


def check_page_seed(seed: Any) -> int:
    """A new game's seed from the page: an integer 0..:data:`MAX_SEED` or such a number written
    in ASCII digits; :class:`MoveRejected` (400) naming what was wrong otherwise."""
    if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 19:
        seed = int(seed)
    if not _is_int(seed):
        raise MoveRejected(400, f"'seed' must be an integer 0..{MAX_SEED}, got {shown(seed)}")
    if not 0 <= seed <= MAX_SEED:
        raise MoveRejected(400, f"'seed' must be 0..{MAX_SEED}, got {shown(seed)}")
    return seed


def shown(value: Any) -> str:
    """A value from a request as a message shows it: huge numbers cut, anything else at most 60
    characters (a request may hold a 4,000-character string)."""
    if _is_int(value):
        return short_number(value)
    return cut_numbers(short_text(repr(value), 60))


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _legal_id(state: GameState, action: Any) -> int | None:
    """``action`` as an int if it is a legal action id of ``state`` (numpy ints included), else None."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        return None
    a = int(action)
    return a if 0 <= a < E.NUM_ACTIONS and state.legal_action_mask()[a] else None


class GameSession:
    """A human (seat ``setup.seat``) against ``agents`` (one per seat, None at the human's),
    saved to ``save_path`` after every move; see the module doc.

    ``names`` are the agent names the record gives each seat (the human's is ``"human"``, as
    ``concordia play`` writes it). ``history`` (a verified record's actions) continues a game.
    ``next_save(seed)`` gives the record path of a new game started from the page."""

    def __init__(self, setup: Setup, agents: Sequence[Agent | None], names: Sequence[str], save_path: str | Path,
                 *, next_save: Callable[[int], Path], history: Sequence[int] = (), note: NoteFn | None = None) -> None:
        if len(agents) != setup.players or len(names) != setup.players:
            raise ValueError(f"{setup.players} players need {setup.players} agents and names")
        if agents[setup.seat] is not None or any(a is None for k, a in enumerate(agents) if k != setup.seat):
            raise ValueError(f"the human plays seat {setup.seat}: only that seat has no agent")
        self.lock = threading.RLock()
        self.setup = setup
        self.agents = list(agents)
        self.names = list(names)
        self.save_path = Path(save_path)
        self.next_save = next_save
        self.note: NoteFn = note or (lambda line: None)
        self.game_id = 1
        self.save_error: str | None = None
        self.record: dict[str, Any] = {}
        self._start(history)

    # ------------------------------------------------------------ playing
    def _start(self, history: Sequence[int]) -> None:
        """Set the game up from ``self.setup``, apply ``history``, let the agents play up to the
        human's first decision and save the record."""
        s = self.setup
        self.state: GameState = new_game(s.map_name, s.players, s.seed, s.intermediate_scoring)
        self.layout = layout_for(self.state)
        self.actions: list[int] = []
        self.log: list[dict[str, Any]] = []
        for seat, agent in enumerate(self.agents):
            if agent is not None:
                agent.close()  # the game before this one, if any, ends here (a bot's process with it)
                agent.reset(agent_seed(s.seed, seat))
        for action in history:
            self._apply(int(action))
        self._advance()
        self._save()

    def _apply(self, action: int) -> None:
        """Apply a legal ``action`` for the deciding seat and log it."""
        player = self.state.current_player
        text = self.state.action_to_string(action)
        self.state.apply(action)
        self.actions.append(action)
        self.log.append({"index": len(self.actions) - 1, "player": player, "text": text})

    def _advance(self) -> None:
        """Let the agents play until the human has a real choice (several legal actions) or the game
        is over; the human's forced moves are played on the way."""
        state, seat = self.state, self.setup.seat
        while not state.is_terminal():
            player = state.current_player
            if player == seat:
                legal = state.legal_actions()
                if len(legal) > 1:
                    return
                self._apply(legal[0])
                continue
            agent = self.agents[player]
            assert agent is not None  # checked in __init__: every other seat has an agent
            chosen = agent.act(observation(state, player), state.legal_action_mask(), state)
            action = _legal_id(state, chosen)
            if action is None:
                raise AgentError(f"agent {self.names[player]!r} at seat {player} chose illegal action {chosen!r} "
                                 f"(action #{len(self.actions)} of the game)")
            self._apply(action)
        for agent in self.agents:  # the game is over: what the agents hold for it (a bot's process) ends
            if agent is not None:
                agent.close()

    def _save(self) -> None:
        """Save the record (atomically); a failure is kept in ``save_error`` and noted, and the game
        goes on (the next move tries again)."""
        s = self.setup
        self.record = partial_record(s.map_name, s.players, s.seed, self.names, self.actions,
                                     intermediate_scoring=s.intermediate_scoring)
        try:
            if self.save_path.is_dir():
                raise IsADirectoryError(21, "is a folder")
            save_record(self.record, self.save_path)
        except OSError as exc:
            self.save_error = f"cannot save the game to {self.save_path}: {exc.strerror or exc}"
            self.note(f"warning: {self.save_error}")
            return
        self.save_error = None
        if self.state.is_terminal():
            result = self.record["result"]
            w = result["winner"]
            self.note(f"game {self.game_id} over: player {w} ({self.names[w]}) won with {result['scores'][w]} VP; "
                      f"record in {self.save_path}")

    def play(self, action: Any, decision: Any) -> dict[str, Any]:
        """The human's move ``action`` at decision number ``decision``; the new :meth:`status`.
        :class:`MoveRejected` (the game unchanged) for a malformed, stale, out-of-turn or illegal move."""
        with self.lock:
            if not _is_int(action):
                raise MoveRejected(400, f"'action' must be an integer action id, got {shown(action)}")
            if not _is_int(decision):
                raise MoveRejected(400, f"'decision' must be the integer decision number, got {shown(decision)}")
            now = len(self.actions)
            if decision != now:
                raise MoveRejected(409, f"decision {shown(decision)} is stale: the game is at decision {now} "
                                        "(the page is out of date; it reloads the game)")
            state = self.state
            if state.is_terminal():
                raise MoveRejected(409, "the game is over; start a new game")
            if state.current_player != self.setup.seat:  # pragma: no cover - agents always play up to the human
                raise MoveRejected(409, f"player {state.current_player} is to decide, not you")
            if not 0 <= action < E.NUM_ACTIONS:
                raise MoveRejected(400, f"action {shown(action)} does not exist (action ids run 0..{E.NUM_ACTIONS - 1})")
            if not state.legal_action_mask()[action]:
                raise MoveRejected(400, f"action {action} ({state.action_to_string(action)}) is not legal now "
                                        f"({state.phase_name}); choose one of the moves offered")
            self._apply(action)
            if not self.state.is_terminal():
                # saved before the agents think: stopping the server while they do keeps this move
                self._save()
            try:
                self._advance()
            finally:
                self._save()
            return self.status()

    def new_game(self, seed: Any = None) -> dict[str, Any]:
        """Start a new game with the same map, players, seat and agents, set up from ``seed``
        (an integer 0..:data:`MAX_SEED`, or one written as a string of digits, since the page keeps
        seeds as text; default: the last seed + 1), saved to a new record (``next_save``); the new
        :meth:`status`. :class:`MoveRejected` (400) for any other seed. If the new game cannot be
        set up (its record path, an agent's error), the game before it is kept as it was."""
        with self.lock:
            seed = check_page_seed(self.setup.seed + 1 if seed is None else seed)
            before = (self.setup, self.save_path, self.game_id, self.state, self.layout, self.actions, self.log,
                      self.record, self.save_error)
            try:
                self.save_path = self.next_save(seed)
                self.setup = replace(self.setup, seed=seed)
                self.game_id += 1
                self._start(())
            except BaseException:
                (self.setup, self.save_path, self.game_id, self.state, self.layout, self.actions, self.log,
                 self.record, self.save_error) = before
                raise
            return self.status()

    # ------------------------------------------------------------ what the page shows
    def display_names(self) -> list[str]:
        """The seats' names as the page shows them: ``you`` at the human's seat."""
        return ["you" if k == self.setup.seat else name for k, name in enumerate(self.names)]

    def view(self) -> dict[str, Any]:
        """The static part of the page for this game (:func:`~concordia_env.display.viewer.snapshots.static_view`),
        with ``game`` (a number that changes with every new game) and ``seat`` (the human's)."""
        with self.lock:
            data = static_view(self.state, self.display_names(), self.setup.seed)
            data.update({"game": self.game_id, "seat": self.setup.seat})
            return data

    def status(self) -> dict[str, Any]:
        """The game now, as JSON-ready data: ``game``, ``decision`` (actions so far), ``frame``
        (:func:`~concordia_env.display.viewer.snapshots.frame_vector`), ``current``, ``phase``, ``over``,
        ``your_turn``; when it is the human's turn ``question`` and ``moves`` (what is asked and the
        grouped moves: :func:`~concordia_env.server.moves.move_groups`) and ``targets``
        (:func:`~concordia_env.server.moves.move_targets`); ``log``
        (every action: ``index``, ``player``, ``text``), ``scores``, ``result`` (the record's, at the
        end), ``save`` (the record's path) and ``save_error``."""
        with self.lock:
            state = self.state
            mine = not state.is_terminal() and state.current_player == self.setup.seat
            question, groups = move_groups(state) if mine else ("", [])
            return {
                "game": self.game_id, "decision": len(self.actions), "seat": self.setup.seat,
                "frame": frame_vector(state, self.layout).tolist(),
                "current": state.current_player, "phase": state.phase_name, "over": state.is_terminal(),
                "your_turn": mine, "question": question,
                "moves": groups,
                "targets": move_targets(state) if mine else {kind: {} for kind in TARGET_KINDS},
                "log": list(self.log), "scores": state.scores(),
                "result": self.record["result"] if state.is_terminal() else None,
                "save": os.fspath(self.save_path), "save_error": self.save_error,
            }
