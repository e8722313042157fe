"""``concordia play``: a human at the terminal against agents; ``--resume`` continues a saved game."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
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
    seat_lines,
    seed_arg,
)


def add_arguments(p: argparse.ArgumentParser, setup_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The options of ``concordia play``."""
    setup_args(p)
    p.add_argument("--opponents", default=None, metavar="SPECS",
                   help=f"one agent spec for every other seat, or a comma list of players-1 specs "
                        f"(default {DEFAULT_OPPONENT}; with --resume, the record's agents)")
    p.add_argument("--seat", type=int, default=None, help="your seat, 0..players-1 (default 0)")
    p.add_argument("--seed", type=seed_arg, default=0, help="game setup seed (default 0)")
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


def cmd_play(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """A human at the terminal against agents; ``--resume`` continues a partial record.

    ``--save`` writes the record at the end and also when the game is left (``q``, end of input,
    Ctrl-C) as a partial record; ``q`` without ``--save`` asks whether to save. Ctrl-C exits 130."""
    from ..arena.records import final_state, partial_record, play_game

    history: list[int] = []
    if args.resume:
        record, seat, opponent_list = _resume_setup(args)
        map_name, n, seed = record["map"], record["players"], record["seed"]
        scoring = record["intermediate_scoring"]
        history = list(record["actions"])
        opponents = iter(opponent_list)
        default_name = args.resume
    else:
        map_name, n, seed, scoring = args.map, args.players, args.seed, args.intermediate_scoring
        check_setup(map_name, n)
        seat = 0 if args.seat is None else args.seat
        if not 0 <= seat < n:
            raise UsageError(f"--seat must be 0..{n - 1} for {n} players, got {seat}")
        specs = opponent_specs(DEFAULT_OPPONENT if args.opponents is None else args.opponents, n)
        opponents = iter(build_agents(specs))
        compile_for(kernel_groups(specs))
        default_name = default_save_name(map_name, n, seed)
    human = HumanAgent(input_fn, out)
    agents = [human if k == seat else next(opponents) for k in range(n)]
    names = ["you" if a is human else a.name for a in agents]
    print(f"Concordia: {map_name}, {n} players, seed {seed}; you are player {seat}\n"
          + seat_lines(names), file=out)
    if history:
        print(f"Continuing {args.resume} after its {len(history)} actions", file=out)
    print("Type h for help.", file=out)
    try:
        record = play_game(map_name, n, seed, agents, intermediate_scoring=scoring,
                           on_step=move_printer(names, out), history=history)
    except (QuitGame, EOFError, KeyboardInterrupt) as exc:
        partial = partial_record(map_name, n, seed, [a.name for a in agents], history,
                                 intermediate_scoring=scoring)
        saved, why = None, None
        if args.save:
            why = save_game(partial, args.save)
            saved = args.save if why is None else None
        elif isinstance(exc, QuitGame):
            saved = _ask_save(input_fn, out, partial, default_name)
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
    state = final_state(record)
    print_outcome(state, record, out)
    place = state.ranking().index(seat) + 1
    print(f"You (player {seat}) finished {_ordinal(place)} of {n}.", file=out)
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
