"""``concordia serve``: play against agents in the browser (the server is :mod:`concordia_env.server`).

The command checks its options, listens (a port in use: one line on stderr, exit 2), builds the
agents, compiles what they need, sets the game up (agents play up to the human's first decision),
saves the record and serves until Ctrl-C (one line, exit 130; the record is already saved).
"""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .common import (
    DEFAULT_OPPONENT,
    HUMAN_NAME,
    UsageError,
    default_save_name,
    kernel_groups,
    load_resumable,
    opponent_specs,
    record_opponents,
    seat_arguments,
)

if TYPE_CHECKING:  # the session brings in the arena and the environment: loaded when serving
    from ..agents.base import Agent
    from ..server.analysis import Analyst
    from ..server.app import PlayServer
    from ..server.session import GameSession, Setup

#: where the server listens unless told: this machine only
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def add_arguments(p: argparse.ArgumentParser, setup_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The options of ``concordia serve``: ``setup_args`` adds ``--map``, ``--players`` and
    ``--intermediate-scoring`` as for the other commands; the rest are ``concordia play``'s
    (``--agents`` for its ``--opponents``) plus ``--host`` and ``--port``."""
    setup_args(p)
    seat_arguments(p, "--agents")
    p.add_argument("--save", metavar="FILE", help="the game record, saved after every move (default: a free "
                   "concordia-MAP-Np-seedS.json here; with --resume, RECORD). New games from the page are "
                   "saved beside it")
    p.add_argument("--resume", metavar="RECORD", help="continue the unfinished game in RECORD (from concordia "
                   "serve or concordia play; map, players, seed and your seat come from the record; so do the "
                   "agents, unless one loads a file: a model file named only by a record is never loaded, name "
                   "it in --agents)")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST}: "
                   "this machine only)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    p.add_argument("--analysis", metavar="SPEC", help="offer an analysis panel on the page: the visit shares and "
                   "values of this search agent for the position on screen (mcts or az, e.g. mcts:iterations=200; "
                   "default: off)")


# ---------------------------------------------------------------- the game's setup
def other_specs(text: str, players: int) -> list[str]:
    """``--agents``: one spec for every other seat, or a comma list of exactly ``players - 1``."""
    return opponent_specs(text, players, "--agents")


def _new_setup(args: argparse.Namespace) -> tuple[Setup, list[str], list[int]]:
    """A new game from the options: its Setup, the spec of every seat (``human`` at the human's)
    and no history."""
    from ..game import check_setup_args
    from ..server.session import Setup

    try:
        check_setup_args(args.map, args.players)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    n = args.players
    seat = 0 if args.seat is None else args.seat
    if not 0 <= seat < n:
        raise UsageError(f"--seat must be 0..{n - 1} for {n} players, got {seat}")
    others = other_specs(DEFAULT_OPPONENT if args.agents is None else args.agents, n)
    specs = others[:seat] + [HUMAN_NAME] + others[seat:]
    return Setup(args.map, n, args.seed, seat, args.intermediate_scoring), specs, []


def _resume_setup(args: argparse.Namespace) -> tuple[Setup, list[str], list[int]]:
    """``--resume RECORD``: the verified unfinished record's Setup, specs (``--agents`` or the
    record's names) and actions. ``ValueError`` (exit 1) for a record that cannot be continued."""
    from ..arena.records import verify_record
    from ..server.session import Setup

    record, seat = load_resumable(args.resume, args.seat)
    n = record["players"]
    others = (other_specs(args.agents, n) if args.agents is not None
              else record_opponents(record, seat, args.resume, "--agents"))
    verify_record(record)
    specs = others[:seat] + [HUMAN_NAME] + others[seat:]
    return (Setup(record["map"], n, record["seed"], seat, record["intermediate_scoring"]), specs,
            list(record["actions"]))


def _save_paths(args: argparse.Namespace, map_name: str, players: int, seed: int) -> tuple[Path, Callable[[int], Path]]:
    """The first game's record path, and the path of a new game started from the page by seed."""
    from ..server.session import free_path

    if args.save or args.resume:
        first = Path(args.save or args.resume)
        if first.is_dir():
            raise UsageError(f"--save {first} is a folder; give the path of the .json file to write")
        return first, lambda seed: free_path(first)
    folder = Path.cwd()  # where the server started, wherever it runs later
    return (free_path(Path(default_save_name(map_name, players, seed))),
            lambda seed: free_path(folder / default_save_name(map_name, players, seed)))


def _listen_error(host: str, port: int, exc: OSError) -> str:
    """One line saying why the server cannot listen."""
    if exc.errno == errno.EADDRINUSE:
        return (f"port {port} on {host} is in use (another server?); choose another with --port, "
                "or --port 0 for a free one")
    if exc.errno == errno.EACCES:
        return f"no permission to listen on port {port} (ports below 1024 need privileges); choose another --port"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


# ---------------------------------------------------------------- the command
def cmd_serve(args: argparse.Namespace, input_fn: Callable[[str], str], out: TextIO) -> int:
    """Serve a game in the browser (see the module doc); the exit status."""
    from .._internal.jit import compile_kernels
    from ..agents.base import make_agent
    from ..server.app import make_server
    from ..server.session import GameSession

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be 0..65535, got {args.port}")
    setup, specs, history = _resume_setup(args) if args.resume else _new_setup(args)
    save_path, next_save = _save_paths(args, setup.map_name, setup.players, setup.seed)
    try:
        server = make_server(args.host, args.port)
    except OSError as exc:  # a port in use, an unknown or foreign address: one line, exit 2
        print(f"concordia serve: error: {_listen_error(args.host, args.port, exc)}", file=sys.stderr)
        return 2
    analyst = None
    agents: list[Agent | None] = []
    try:
        analyst = _analyst(args.analysis)
        try:
            agents = [None if k == setup.seat else make_agent(spec) for k, spec in enumerate(specs)]
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        searchers = [s for k, s in enumerate(specs) if k != setup.seat] + ([args.analysis] if analyst else [])
        compile_kernels(kernel_groups(searchers))
        if analyst is not None and not _first_analysis(analyst, setup, history, out):
            return 1
        names = [HUMAN_NAME if a is None else a.name for a in agents]
        session = GameSession(setup, agents, names, save_path, next_save=next_save, history=history,
                              note=lambda line: print(line, file=out, flush=True))
        if session.save_error:
            print(f"error: {session.save_error}", file=sys.stderr)
            return 1
        server.session = session
        server.analyst = analyst
        _greet(server.url, args, setup, names, session, len(history), out)
        return _serve(server, session)
    finally:
        server.server_close()
        if analyst is not None:
            analyst.close()
        for agent in agents:  # a bot's process ends with the server
            if agent is not None:
                agent.close()


def _analyst(spec: str | None) -> Analyst | None:
    """``--analysis SPEC``: the analyst (its worker process starts with the first position), None
    without the option; :class:`UsageError` (one line, exit 2) for a spec that names no search agent."""
    if spec is None:
        return None
    from ..server.analysis import Analyst

    try:
        return Analyst(spec)
    except ValueError as exc:
        raise UsageError(f"--analysis: {exc}") from None


def _first_analysis(analyst: Analyst, setup: Setup, history: list[int], out: TextIO) -> bool:
    """Analyse the game's first position (after ``history``) before anything is saved or served: the
    worker process starts and loads what it needs now, and a search that cannot run is said at once
    (its one line, then exit 1, no record written). Whether it ran."""
    from ..server.analysis import Position
    from ..server.session import MoveRejected

    first = Position(setup.map_name, setup.players, setup.seed, setup.intermediate_scoring, tuple(history))
    try:
        analyst.analysis(first, wait=float("inf"))
    except MoveRejected:  # the analyst has put its line on the terminal
        return False
    print(f"Analysis panel: {analyst.spec} (the Analysis button on the page)", file=out)
    return True


def _greet(url: str, args: argparse.Namespace, setup: Setup, names: list[str], session: GameSession,
           resumed_after: int, out: TextIO) -> None:
    """The lines printed once the server is ready: where to play, who plays, where the record goes."""
    seats = ", ".join(f"player {k}: {'you' if k == setup.seat else name}" for k, name in enumerate(names))
    resumed = f", continuing {args.resume} after its {resumed_after} actions" if args.resume else ""
    print(f"Concordia: {setup.map_name}, {setup.players} players, seed {setup.seed}{resumed} ({seats})", file=out)
    print(f"Game record saved after every move to {session.save_path}", file=out)
    if "?token=" in url:  # listening beyond this machine (see app.PlayServer.token)
        print(f"warning: listening on {args.host}: anyone who can reach this machine and has the address below "
              "(with its token) can play", file=sys.stderr)
    print(f"Play at {url}  (Ctrl-C stops the server)", file=out, flush=True)


def _serve(server: PlayServer, session: GameSession) -> int:
    """Serve until Ctrl-C: then one line (where the record is) and exit status 130."""
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        # no lock: an agent may be thinking; the record on disk is whole either way (atomic saves)
        path = os.fspath(session.save_path)
        over = session.state.is_terminal()
        then = f"concordia replay {shlex.quote(path)}" if over else f"continue with: concordia serve --resume {shlex.quote(path)}"
        print(f"\nServer stopped; the game is saved in {path} ({then}).", file=sys.stderr)
        return 130
    return 0  # pragma: no cover - serve_forever returns only after shutdown() from another thread
