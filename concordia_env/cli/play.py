"""``concordia play``: a human at the terminal against agents; ``--resume`` continues a saved game."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..agents.base import Agent
from ..agents.human import HumanAgent, QuitGame
from .common import (
    DEFAULT_OPPONENT,
    InputFn,
    UsageError,
    build_agents,
    check_setup,
    compile_for,
    default_save_name,
    kernel_groups,
    load_resumable,
    move_printer,
    opponent_specs,
    print_outcome,
    record_opponents,
    save_game,
    seat_arguments,
    seat_lines,
)


def add_arguments(p: argparse.ArgumentParser, setup_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The options of ``concordia play``."""
    setup_args(p)
    seat_arguments(p, "--opponents")
    p.add_argument("--save", metavar="FILE", help="write the game record here at the end, and as a partial "
                   "record when you leave (q, Ctrl-D, Ctrl-C)")
    p.add_argument("--resume", metavar="RECORD", help="continue the partial game saved in RECORD from its last "
                   "action (map, players, seed and your seat come from the record; so do the agents, unless one "
                   "loads a file: a model file named only by a record is never loaded, name it in --opponents)")

def _resume_setup(args: argparse.Namespace) -> tuple[dict[str, Any], int, list[Agent]]:
    """``play --resume``: the verified partial record, the human's seat and the opponents' specs
    (from ``--opponents`` or else the record's agent names)."""
    from ..arena.records import verify_record

    record, seat = load_resumable(args.resume, args.seat)
    n = record["players"]
    specs = (opponent_specs(args.opponents, n) if args.opponents is not None
             else record_opponents(record, seat, args.resume, "--opponents"))
    opponents = build_agents(specs)
    compile_for(kernel_groups(specs))
    verify_record(record)
    return record, seat, opponents


def _ask_save(input_fn: InputFn, out: TextIO, record: dict[str, Any], default: str) -> str | None:
    """After ``q`` without ``--save``: ask whether to save and where (end of input: no).
    The path written, or None."""
    try:
        if input_fn("Save the game to continue it later? [y/N] ").strip().lower() not in ("y", "yes"):
            return None
        while True:
            path = input_fn(f"File name [{default}]: ").strip() or default
            why = save_game(record, path)
            if why is None:
                return path
            print(f"cannot save to {path}: {why}", file=out)
    except EOFError:
        return None


@dataclass
class _Game:
    """What ``play`` sets up: the game, the human's seat, the other seats' agents in seat order,
    the actions already played (``--resume``) and the file ``q`` offers to save to."""

    map_name: str
    players: int
    seed: int
    scoring: bool
    seat: int
    opponents: list[Agent]
    history: list[int]
    default_name: str


def _setup(args: argparse.Namespace) -> _Game:
    """The game ``play`` plays: resumed from a record, or new from the options."""
    if args.resume:
        record, seat, opponents = _resume_setup(args)
        return _Game(record["map"], record["players"], record["seed"], record["intermediate_scoring"], seat,
                     opponents, list(record["actions"]), args.resume)
    map_name, n, seed = args.map, args.players, args.seed
    check_setup(map_name, n)
    seat = 0 if args.seat is None else args.seat
    if not 0 <= seat < n:
        raise UsageError(f"--seat must be 0..{n - 1} for {n} players, got {seat}")
    specs = opponent_specs(DEFAULT_OPPONENT if args.opponents is None else args.opponents, n)
    opponents = build_agents(specs)
    compile_for(kernel_groups(specs))
    return _Game(map_name, n, seed, args.intermediate_scoring, seat, opponents, [],
                 default_save_name(map_name, n, seed))


def cmd_play(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """A human at the terminal against agents; ``--resume`` continues a partial record.

    ``--save`` writes the record at the end and also when the game is left (``q``, end of input,
    Ctrl-C) as a partial record; ``q`` without ``--save`` asks whether to save. Ctrl-C exits 130."""
    from ..arena.records import play_game

    game = _setup(args)
    human = HumanAgent(input_fn, out)
    others = iter(game.opponents)
    agents = [human if k == game.seat else next(others) for k in range(game.players)]
    names = ["you" if a is human else a.name for a in agents]
    print(f"Concordia: {game.map_name}, {game.players} players, seed {game.seed}; you are player {game.seat}\n"
          + seat_lines(names), file=out)
    if game.history:
        print(f"Continuing {args.resume} after its {len(game.history)} actions", file=out)
    print("Type h for help.", file=out)
    try:
        record = play_game(game.map_name, game.players, game.seed, agents, intermediate_scoring=game.scoring,
                           on_step=move_printer(names, out), history=game.history)
    except (QuitGame, EOFError, KeyboardInterrupt) as exc:
        return _left(args, game, [a.name for a in agents], exc, input_fn, out)
    return _finished(args, game, record, out)


def _left(args: argparse.Namespace, game: _Game, names: list[str], exc: BaseException, input_fn: InputFn,
          out: TextIO) -> int:
    """The human left the game (``q``, end of input, Ctrl-C): save it as ``--save`` or the human
    says, one line, and the exit status."""
    from ..arena.records import partial_record

    partial = partial_record(game.map_name, game.players, game.seed, names, game.history,
                             intermediate_scoring=game.scoring)
    saved, why = None, None
    if args.save:
        why = save_game(partial, args.save)
        saved = args.save if why is None else None
    elif isinstance(exc, QuitGame):
        saved = _ask_save(input_fn, out, partial, game.default_name)
    if saved:
        note = f"saved to {saved} (continue with: concordia play --resume {shlex.quote(saved)})"
    elif why:
        note = f"could not save to {args.save}: {why}"
    else:
        note = "nothing saved"
    if isinstance(exc, KeyboardInterrupt):
        print(f"\nGame interrupted; {note}.", file=sys.stderr)
        return 130
    reason = "you left" if isinstance(exc, QuitGame) else "end of input"
    print(f"\nGame abandoned ({reason}); {note}.", file=out)
    return 1 if why else 0


def _finished(args: argparse.Namespace, game: _Game, record: dict[str, Any], out: TextIO) -> int:
    """The game is over: the outcome, the human's place, the record saved with ``--save``."""
    from ..arena.records import final_state

    state = final_state(record)
    print_outcome(state, record, out)
    place = state.ranking().index(game.seat) + 1
    print(f"You (player {game.seat}) finished {_ordinal(place)} of {game.players}.", file=out)
    if args.save:
        why = save_game(record, args.save)
        if why:
            print(f"error: cannot save to {args.save}: {why}", file=sys.stderr)
            return 1
        print(f"Game record written to {args.save} (concordia replay {args.save})", file=out)
    return 0


def _ordinal(k: int) -> str:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(k, "th")  # places run 1..5 only
    return f"{k}{suffix}"
