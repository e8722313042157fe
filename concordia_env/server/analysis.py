"""The analysis panel of ``concordia serve --analysis SPEC``: the position on the page, analysed by
a search agent (:mod:`concordia_env.display.analysis`) in a worker process.

Why a process: a search runs compiled code that holds Python's interpreter lock from its start to
its end, so in a thread of the server it would hold up every other request (the page, a move)
for as long as it searches. In a process of its own it runs beside the server, which answers
everything else meanwhile. The process is this module run by the same Python
(``python -m concordia_env.server.analysis SPEC``), sent one position a line as JSON (the setup and
the actions that led to it: :class:`Position`) and answering one line; it is started with the
first position asked for and stopped with the server.

``GET /api/analysis`` (optionally ``?decision=N``, the decision the page shows) answers the
analysis of the game now: ``game``, ``decision``, ``spec`` and the keys of
:func:`~concordia_env.display.analysis.analyse`. A request waits at most :data:`ANALYSIS_WAIT`
seconds: a search that takes longer goes on, the request gets 503 saying so, and asking again
gets the analysis once it is done. Positions are analysed one at a time in the order asked; the
last :data:`KEPT` analyses are kept, so asking again for one costs nothing. Each is seeded from the
game's seed and the decision number (:func:`~concordia_env.display.analysis.analysis_seed`), so a
game's positions get the same analysis here as in ``concordia replay --html --analysis``.

Errors, one line each as ``{"error": ...}``: 404 when the server runs without ``--analysis``, 400
for a malformed ``decision``, 409 for a stale one, 503 while the search runs, 500 when it fails
(also a line on the terminal). A worker process that stopped is started again for the next position.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from ..display.analysis import analyse, analysis_seed, make_analyst
from ..state import GameState, new_game
from .session import GameSession, MoveRejected, shown

#: seconds a request for an analysis waits for the search before it is answered 503
ANALYSIS_WAIT = 8.0
#: the analyses kept (by position) for requests that ask again
KEPT = 64
#: what the 404 says when the server runs without an analyst
ANALYSIS_OFF = ("the analysis is off: start concordia serve with --analysis SPEC, "
                "e.g. --analysis mcts:iterations=200")


@dataclass(frozen=True)
class Position:
    """A position of a game: its setup and the actions that led to it (what the worker process
    rebuilds it from: a state is not sent between processes, its recipe is)."""

    map_name: str
    players: int
    seed: int
    intermediate_scoring: bool
    actions: tuple[int, ...]

    @property
    def decision(self) -> int:
        """The decision number: the actions before the position."""
        return len(self.actions)

    def to_json(self) -> dict[str, Any]:
        return {"map": self.map_name, "players": self.players, "seed": self.seed,
                "intermediate_scoring": self.intermediate_scoring, "actions": list(self.actions)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Position:
        return cls(data["map"], int(data["players"]), int(data["seed"]), bool(data["intermediate_scoring"]),
                   tuple(int(a) for a in data["actions"]))

    def state(self) -> GameState:
        state = new_game(self.map_name, self.players, self.seed, self.intermediate_scoring)
        for action in self.actions:
            state.apply(action)
        return state


def position_of(session: GameSession) -> tuple[int, Position]:
    """The session's game number and the position it is at."""
    with session.lock:
        s = session.setup
        return session.game_id, Position(s.map_name, s.players, s.seed, s.intermediate_scoring, tuple(session.actions))


def _work(spec: str) -> None:
    """The worker process (``python -m concordia_env.server.analysis SPEC``): analyse every position
    the server sends, one JSON line each on stdin, answering one JSON line on stdout,
    ``{"ok": analysis}`` or ``{"error": one line}``, until stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the server, which then stops this process
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # anything else printed goes to the terminal, never into the answers
    sys.stdout = sys.stderr
    try:
        agent, failure = make_analyst(spec), ""
    except Exception as exc:  # noqa: BLE001 - said in answer to every position
        agent, failure = None, f"{type(exc).__name__}: {exc}"
    for line in sys.stdin:
        try:
            if agent is None:
                raise RuntimeError(failure)
            position = Position.from_json(json.loads(line))
            answer: dict[str, Any] = {"ok": analyse(agent, position.state(), analysis_seed(position.seed,
                                                                                           position.decision))}
        except Exception as exc:  # noqa: BLE001 - the server says what failed, and goes on
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


class _Job:
    """One position's analysis, asked for once and answered once (``done``)."""

    __slots__ = ("position", "done", "answer", "error")

    def __init__(self, position: Position) -> None:
        self.position = position
        self.done = threading.Event()
        self.answer: dict[str, Any] | None = None
        self.error = ""


class Analyst:
    """Analyses positions with the search agent ``spec`` in a worker process (see the module doc).
    ``ValueError`` at once for a spec that names no search agent; :meth:`close` stops the process."""

    def __init__(self, spec: str, wait: float = ANALYSIS_WAIT) -> None:
        make_analyst(spec)  # a bad spec fails here, in one line, before any process starts
        self.spec = spec.strip()
        self.wait = wait
        self._lock = threading.Lock()
        self._jobs: OrderedDict[Position, _Job] = OrderedDict()
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._process: subprocess.Popen[str] | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._dispatch, name="concordia-analysis", daemon=True)
        self._thread.start()

    def analysis(self, position: Position, wait: float | None = None) -> dict[str, Any]:
        """The analysis of ``position``, waiting at most ``wait`` seconds (default :attr:`wait`;
        ``float('inf')``: until it is done). :class:`MoveRejected` 503 while it runs longer, 500 if
        it failed (its line is on the terminal already)."""
        job = self._job(position)
        limit = self.wait if wait is None else wait
        if not job.done.wait(None if limit == float("inf") else limit):
            raise MoveRejected(503, f"the analysis ({self.spec}) of decision {position.decision} is still running "
                                    f"after {limit:g} s; ask again in a moment")
        if job.answer is None:
            raise MoveRejected(500, job.error)
        return job.answer

    def _job(self, position: Position) -> _Job:
        """The job of ``position``: the one kept, or a new one queued (the oldest finished ones go)."""
        with self._lock:
            job = self._jobs.get(position)
            if job is not None and (job.answer is not None or not job.done.is_set()):
                self._jobs.move_to_end(position)
                return job
            job = self._jobs[position] = _Job(position)  # new, or again after a failure
            self._queue.put(job)
            for old in [p for p, j in self._jobs.items() if j.done.is_set()][:max(0, len(self._jobs) - KEPT)]:
                del self._jobs[old]
            return job

    def _dispatch(self) -> None:
        """The thread that hands the jobs to the worker process, one at a time."""
        while (job := self._queue.get()) is not None:
            try:
                job.answer = self._run(job.position)
            except Exception as exc:  # noqa: BLE001 - said for this position; the thread goes on with the next
                why = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
                job.error = f"the analysis ({self.spec}) of decision {job.position.decision} failed: {why}"
                if not self._closing:  # (closing stops the process under a search: no news)
                    print(f"concordia serve: error: {job.error}", file=sys.stderr)
            finally:
                job.done.set()

    def _run(self, position: Position) -> dict[str, Any]:
        """Analyse ``position`` in the worker process (started if there is none); ``RuntimeError``
        with the worker's one line if the search failed, or if the process stopped."""
        process = self._worker()
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(json.dumps(position.to_json()) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        except OSError:
            line = ""
        if not line:
            code = self._stop_worker()
            raise RuntimeError(f"the analysis process stopped (exit code {code}); the next position starts "
                               "a new one")
        answer = json.loads(line)
        if "ok" not in answer:
            raise RuntimeError(answer["error"])
        return dict(answer["ok"])

    def _worker(self) -> subprocess.Popen[str]:
        """The worker process, started if there is none: a new interpreter running this module, so
        it needs nothing from the program that started the server (unlike multiprocessing, which
        would import that program's main module again)."""
        if self._process is None:
            root = str(Path(__file__).resolve().parents[2])  # where this package is imported from
            path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
            self._process = subprocess.Popen(
                [sys.executable, "-m", "concordia_env.server.analysis", self.spec], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, encoding="utf-8", env={**os.environ, "PYTHONPATH": path})
        return self._process

    def _stop_worker(self) -> int | None:
        """Stop the worker process (if any); its exit code."""
        process, self._process = self._process, None
        if process is None:
            return None
        process.kill()
        code = process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        return code

    def close(self) -> None:
        """Stop the worker process and the thread that feeds it; a search under way is dropped."""
        self._closing = True
        self._queue.put(None)
        process = self._process
        if process is not None:
            process.kill()  # the dispatcher, waiting for an answer, sees the pipe close
        self._thread.join(10)
        self._stop_worker()


def analysis_answer(analyst: Analyst | None, session: GameSession, query: str) -> dict[str, Any]:
    """The answer of ``GET /api/analysis?QUERY`` (see the module doc): :class:`MoveRejected` with
    the status and one line for each refusal."""
    if analyst is None:
        raise MoveRejected(404, ANALYSIS_OFF)
    asked = parse_qs(query, keep_blank_values=True).get("decision")
    game, position = position_of(session)
    if asked is not None:
        text = asked[-1]
        if len(asked) != 1 or not (text.isascii() and text.isdigit()) or len(text) > 12:
            raise MoveRejected(400, f"'decision' must be the decision number the page shows, got {shown(asked[-1])}")
        if int(text) != position.decision:
            raise MoveRejected(409, f"decision {int(text)} is stale: the game is at decision {position.decision}")
    return {"game": game, "decision": position.decision, "spec": analyst.spec, **analyst.analysis(position)}


if __name__ == "__main__":
    _work(sys.argv[1])
