"""BotAgent: a program in any language that plays over stdin/stdout, one JSON object per line.

The protocol (``concordia-bot`` version 1) is specified in ``docs/bot-protocol.md``; in short: at a
game's first decision the bot's program is started and sent a ``hello`` (protocol, map, players,
seat, seed, time limits) which it answers with its name and the protocol version it speaks; then
every decision is one ``act`` request (legal ids, and unless the bot declined them the legal
actions' names, the observation and the state as :meth:`GameState.to_json` writes it) answered by
``{"action": id}``. When the game ends the bot's stdin is closed and its process ended.

Specs: ``bot:manifest=FILE.json`` (a manifest naming the program and its limits, see
:func:`read_manifest`; the program runs in the manifest's folder) or ``bot:cmd=COMMAND`` (split
like a shell would, run in the current folder), with the options ``move_ms=N`` (the limit per
decision), ``start_ms=N`` (the limit for starting and answering the hello) and ``label=NAME`` (the
name used in messages until the bot gives its own) overriding the manifest's.

Anything wrong on the bot's side (it cannot start, exits, hangs past a limit, writes what is not a
JSON object, speaks another protocol, answers an illegal id) stops its process and raises
:class:`BotError`, an :class:`~concordia_env.agents.base.AgentError` whose one-line message names
the bot, its seat, the decision and what was wrong, with the end of its stderr.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env.encoding import OBSERVATION_SIZE
from concordia_env.state import GameState

from .base import Agent, AgentError, check_mask
from .bot_process import BotFailure, BotProcess

PROTOCOL = "concordia-bot"
PROTOCOL_VERSION = 1
#: the limits unless the manifest or the spec sets them, in milliseconds
DEFAULT_MOVE_MS = 1000
DEFAULT_START_MS = 10000
#: the request fields a bot may decline in its hello (``"want"``); the others are always sent
OPTIONAL_FIELDS = ("actions", "observation", "state")
MANIFEST_KEYS = ("argv", "name", "move_ms", "start_ms")


class BotError(AgentError):
    """A bot failed (see the module doc): ``bot`` (its name), ``seat``, ``decision`` (its 0-based
    decision in the game; None in the handshake), ``problem`` and ``stderr`` (the end of its stderr)."""

    def __init__(self, bot: str, seat: int, decision: int | None, problem: str, stderr: str = "") -> None:
        self.bot, self.seat, self.decision, self.problem, self.stderr = bot, seat, decision, problem, stderr
        where = "in its handshake" if decision is None else f"at its decision {decision}"
        text = f"bot {bot} at seat {seat}, {where}: {problem}"
        super().__init__(text + (f"; its stderr ends: {stderr}" if stderr else ""))


@dataclass(frozen=True)
class BotConfig:
    """How to run a bot: its argv, the folder it runs in (None: the current one), the name used in
    messages until it gives its own, and its limits in milliseconds."""

    argv: tuple[str, ...]
    cwd: str | None
    label: str
    move_ms: int
    start_ms: int


def _limit(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{where} must be a positive whole number of milliseconds, got {value!r}")
    return value


def read_manifest(path: str | os.PathLike) -> dict[str, Any]:
    """A bot manifest: a JSON object with ``argv`` (the program and its arguments, a non-empty list
    of strings, run in the manifest's folder) and optionally ``name``, ``move_ms`` and ``start_ms``.
    ``ValueError`` naming the file and what is wrong."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"bot manifest {path}: cannot read it: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"bot manifest {path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"bot manifest {path} must be a JSON object with an 'argv' list")
    unknown = sorted(set(data) - set(MANIFEST_KEYS))
    if unknown:
        raise ValueError(f"bot manifest {path}: unknown key(s) {unknown}; allowed: {', '.join(MANIFEST_KEYS)}")
    argv = data.get("argv")
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv)):
        raise ValueError(f"bot manifest {path}: 'argv' must be a non-empty list of strings, got {argv!r}")
    if not isinstance(data.get("name", ""), str):
        raise ValueError(f"bot manifest {path}: 'name' must be a string")
    for key in ("move_ms", "start_ms"):
        if key in data:
            _limit(data[key], f"bot manifest {path}: {key!r}")
    return data


def _check_program(argv: tuple[str, ...], cwd: str | None) -> None:
    """``ValueError`` if the program is not there to run (found now rather than in every game)."""
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(cwd or ".") / program
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ValueError(f"bot program {program!r} is not an executable file (in {Path(cwd or '.').resolve()})")
    elif shutil.which(program) is None:
        raise ValueError(f"bot program {program!r} is not on the PATH")


def bot_config(manifest: str | None = None, cmd: str | None = None, label: str | None = None,
               move_ms: int | None = None, start_ms: int | None = None) -> BotConfig:
    """The :class:`BotConfig` of a ``bot`` spec's options (see the module doc); ``ValueError`` says
    what is wrong, including a program that is not there."""
    if (manifest is None) == (cmd is None):
        raise ValueError("a bot spec needs manifest=FILE.json or cmd=COMMAND (one of them), "
                         "e.g. bot:manifest=examples/bots/c/bot.json")
    if manifest is not None:
        path = Path(str(manifest)).resolve()
        data = read_manifest(path)
        argv, cwd = tuple(data["argv"]), str(path.parent)
        label = label if label is not None else data.get("name") or path.stem
        move_ms = move_ms if move_ms is not None else data.get("move_ms")
        start_ms = start_ms if start_ms is not None else data.get("start_ms")
    else:
        try:
            argv, cwd = tuple(shlex.split(str(cmd))), None
        except ValueError as exc:
            raise ValueError(f"bot cmd={cmd!r}: {exc}") from None
        if not argv:
            raise ValueError("bot cmd= is empty")
        label = label if label is not None else Path(argv[-1]).name
    _check_program(argv, cwd)
    return BotConfig(argv, cwd, str(label),
                     _limit(DEFAULT_MOVE_MS if move_ms is None else move_ms, "move_ms"),
                     _limit(DEFAULT_START_MS if start_ms is None else start_ms, "start_ms"))


def _numbers(observation: np.ndarray) -> list[Any]:
    """The observation as JSON numbers: whole numbers without a fraction (every entry today)."""
    flat = np.asarray(observation).ravel()
    return flat.astype(np.int64).tolist() if np.array_equal(flat, np.round(flat)) else flat.tolist()


def _short(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


class BotAgent(Agent):
    """A bot program playing over the JSON-lines protocol (see the module doc). Needs the game
    state at every decision (``play_game``, tournaments and ``serve`` pass it)."""

    name = "bot"

    def __init__(self, seed: int = 0, manifest: str | None = None, cmd: str | None = None,
                 label: str | None = None, move_ms: int | None = None, start_ms: int | None = None) -> None:
        self.config = bot_config(manifest, cmd, label, move_ms, start_ms)
        self.seed = seed
        self.process: BotProcess | None = None
        self.bot_name = self.config.label
        self.want: tuple[str, ...] = OPTIONAL_FIELDS
        self.decisions = 0
        self.failed: BotError | None = None  # a failed bot stays failed until the next game

    def reset(self, seed: int | None = None) -> None:
        """End the last game's process; the next decision starts a new one, seeded with ``seed``."""
        self.close()
        if seed is not None:
            self.seed = seed
        self.decisions = 0
        self.failed = None

    def close(self) -> None:
        """Close the bot's stdin and end its process (killed after a short grace)."""
        if self.process is not None:
            self.process.stop()
            self.process = None

    def _fail(self, seat: int, decision: int | None, problem: str) -> BotError:
        """Stop the process and the :class:`BotError` to raise, with the end of its stderr."""
        stderr = ""
        if self.process is not None:
            self.process.stop(grace_s=0)  # no courtesy for a bot that failed: its answer is already too late
            stderr = self.process.stderr_tail()
            self.process = None
        self.failed = BotError(f"{self.bot_name!r} ({self.name})", seat, decision, problem, stderr)
        return self.failed

    def _answer(self, seat: int, decision: int | None, timeout_s: float) -> dict[str, Any]:
        """The bot's next line as a JSON object, or a :class:`BotError`."""
        assert self.process is not None
        try:
            line = self.process.receive(timeout_s)
        except BotFailure as exc:
            raise self._fail(seat, decision, str(exc)) from None
        try:
            answer = json.loads(line)
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict):
            raise self._fail(seat, decision, f"answered {_short(line)}, which is not a JSON object")
        return answer

    def _start(self, state: GameState, seat: int) -> None:
        """Start the program and shake hands (``BotError`` on any failure)."""
        try:
            self.process = BotProcess(self.config.argv, self.config.cwd)
        except OSError as exc:
            raise self._fail(seat, None, f"could not start {shlex.join(self.config.argv)}: "
                                         f"{exc.strerror or exc}") from None
        self.process.send(json.dumps({
            "type": "hello", "protocol": PROTOCOL, "version": PROTOCOL_VERSION, "map": state.map_name,
            "players": state.num_players, "seat": seat, "seed": int(self.seed),
            "intermediate_scoring": bool(state.field("intermediate")), "num_actions": state.num_actions,
            "observation_size": OBSERVATION_SIZE,
            "time": {"start_ms": self.config.start_ms, "move_ms": self.config.move_ms}}))
        hello = self._answer(seat, None, self.config.start_ms / 1000)
        self._check_hello(hello, seat)

    def _check_hello(self, hello: dict[str, Any], seat: int) -> None:
        """Take the bot's name and wanted fields from its hello; ``BotError`` for another protocol."""
        protocol, version = hello.get("protocol"), hello.get("version")
        if protocol != PROTOCOL or version != PROTOCOL_VERSION or isinstance(version, bool):
            raise self._fail(seat, None, f"speaks protocol {protocol!r} version {version!r}, but this is "
                                         f"{PROTOCOL!r} version {PROTOCOL_VERSION}")
        name = hello.get("name")
        if isinstance(name, str) and name.strip():
            self.bot_name = name.strip()[:80]
        want = hello.get("want", list(OPTIONAL_FIELDS))
        if not (isinstance(want, list) and all(w in OPTIONAL_FIELDS for w in want)):
            raise self._fail(seat, None, f"'want' must be a list of some of {list(OPTIONAL_FIELDS)}, "
                                         f"got {_short(json.dumps(want))}")
        self.want = tuple(want)

    def _request(self, observation: np.ndarray, legal: np.ndarray, state: GameState, seat: int) -> str:
        """One ``act`` request line (the state spliced in as :meth:`GameState.to_json` writes it)."""
        request: dict[str, Any] = {"type": "act", "decision": self.decisions, "seat": seat,
                                   "turn": int(state.field("turn")), "legal": legal.tolist(),
                                   "time_ms": self.config.move_ms}
        if "actions" in self.want:
            request["actions"] = [{"id": int(a), "name": state.action_to_string(int(a))} for a in legal]
        if "observation" in self.want:
            request["observation"] = _numbers(observation)
        line = json.dumps(request, separators=(",", ":"))
        return line[:-1] + ',"state":' + state.to_json() + "}" if "state" in self.want else line

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        if state is None:
            raise ValueError(f"bot {self.bot_name!r} needs the game state at every decision "
                             "(play_game, tournaments and concordia serve pass it)")
        if self.failed is not None:  # not restarted mid-game: the game it failed in is lost
            raise self.failed
        seat = int(state.current_player)
        legal = check_mask(action_mask)
        if self.process is None:
            self._start(state, seat)
        assert self.process is not None
        decision = self.decisions
        time.sleep(0)  # let the reader thread queue what the bot wrote with its last answer
        if self.process.pending():  # a line nobody asked for, or the end of its output
            try:
                extra = self.process.receive(0)
            except BotFailure as exc:
                raise self._fail(seat, decision, str(exc)) from None
            raise self._fail(seat, decision, f"wrote a line nobody asked for: {_short(extra)}")
        self.process.send(self._request(observation, legal, state, seat))
        answer = self._answer(seat, decision, self.config.move_ms / 1000)
        action = answer.get("action")
        if isinstance(action, bool) or not isinstance(action, int):
            raise self._fail(seat, decision, f"answered {_short(json.dumps(answer))}, which has no integer 'action'")
        if not np.any(legal == action):
            shown = ", ".join(map(str, legal[:10].tolist())) + (", ..." if legal.size > 10 else "")
            raise self._fail(seat, decision, f"answered action {action}, which is not legal here (legal: {shown})")
        self.decisions += 1
        return action
