"""``concordia tournament``: many games between agents with rotated seats, and its table."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from typing import TextIO

from .common import InputFn, UsageError, compile_for, kernel_groups, seed_arg, split_specs


def add_arguments(p: argparse.ArgumentParser, setup_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The options of ``concordia tournament``."""
    setup_args(p)
    p.add_argument("--agents", required=True, metavar="SPECS",
                   help="comma list of one agent spec per seat, e.g. heuristic,random,random,random")
    p.add_argument("--games", type=int, default=None,
                   help="number of games, a multiple of players (default 20 x players)")
    p.add_argument("--seed", type=seed_arg, default=0, help="game g is set up with seed+g (default 0)")
    p.add_argument("--workers", type=int, default=None,
                   help="worker processes (default 1); with --backend ray, games in flight (default: the "
                        "cluster's CPUs)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="where games run: local (this machine) or ray (Ray tasks on a local instance or the "
                        "cluster at --address; needs the ray extra). Same results either way")
    p.add_argument("--address", metavar="ADDR", default=None,
                   help="with --backend ray: the cluster's HOST:PORT (the head's 'ray start --head' port), "
                        "ray://HOST:10001, or auto (default: start Ray on this machine)")
    p.add_argument("--max-turns", type=int, default=2000, help="stop a game after this many card plays")
    p.add_argument("--out", metavar="FILE", help="write the results as JSON (missing folders are created); "
                   "partial results are saved there as the games go")
    p.add_argument("--records", metavar="DIR", help="write every game record to DIR/game_NNNNN.json (DIR is "
                   "marked with a tournament.json naming the settings)")
    p.add_argument("--save-every", type=int, default=None, metavar="N",  # None: the arena's default
                   help="save the partial results to --out every N games (default 10; 0: only at the end)")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted tournament from --out (and --records); the settings must be "
                        "the same, and the result is that of an uninterrupted run")
    p.add_argument("--overwrite", action="store_true",
                   help="start afresh over an unfinished --out and over another tournament's --records")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

def resume_command(args: argparse.Namespace) -> str:
    """The command line that resumes the tournament ``args`` describe (``--resume`` added)."""
    argv = ["concordia", "tournament", "--map", args.map, "--players", str(args.players), "--agents", args.agents,
            "--games", str(args.games), "--seed", str(args.seed), "--max-turns", str(args.max_turns),
            "--workers", str(args.workers), "--save-every", str(args.save_every)]
    if args.backend != "local":
        argv += ["--backend", args.backend]
    if args.intermediate_scoring:
        argv.append("--intermediate-scoring")
    for option, value in (("--out", args.out), ("--records", args.records), ("--address", args.address)):
        if value:
            argv += [option, value]
    return shlex.join(argv + ["--resume"])


def _check_args(args: argparse.Namespace, specs: list[str]) -> None:
    """Fill the defaults that depend on other options and check them (:class:`UsageError`)."""
    from ..arena.tournament import DEFAULT_SAVE_EVERY, check_tournament_args

    if args.games is None:
        args.games = 20 * args.players
    if args.save_every is None:
        args.save_every = DEFAULT_SAVE_EVERY
    if args.address is not None and args.backend != "ray":
        raise UsageError("--address needs --backend ray")
    try:
        check_tournament_args(args.map, args.players, specs, args.games, 1 if args.workers is None else args.workers)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _connect(args: argparse.Namespace) -> bool:
    """With ``--backend ray``, connect now (a missing Ray or a wrong address is one line, before any
    game) and default ``--workers`` to the cluster's CPUs; else ``--workers`` defaults to 1.
    Whether the command can go on."""
    if args.backend != "ray":
        args.workers = 1 if args.workers is None else args.workers
        return True
    try:
        from ..integrations.ray_backend import cluster_cpus, connect

        connect(args.address)
    except (ImportError, ValueError) as exc:
        print(f"concordia tournament: error: {exc}", file=sys.stderr)
        return False
    if args.workers is None:
        args.workers = cluster_cpus()
    return True


def cmd_tournament(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """Many games with rotated seats; prints the table, optionally writes JSON and records.

    The results file and records folder are checked before the first game; Ctrl-C once finishes
    the games in flight, saves them and exits 130 with the command that resumes; Ctrl-C twice
    stops at once."""
    from ..arena.tournament import TournamentInterrupted, format_table, prepare_tournament

    specs = split_specs(args.agents)
    _check_args(args, specs)
    if not _connect(args):
        return 2
    try:  # the output paths, and what a resumed run has done: one line, exit 2, before any game
        tournament = prepare_tournament(args.map, args.players, specs, args.games, seed=args.seed,
                                        workers=args.workers, intermediate_scoring=args.intermediate_scoring,
                                        record_dir=args.records, max_turns=args.max_turns, out=args.out,
                                        save_every=args.save_every, resume=args.resume, overwrite=args.overwrite,
                                        backend=args.backend, address=args.address)
    except ValueError as exc:
        print(f"concordia tournament: error: {exc}", file=sys.stderr)
        return 2
    if tournament.done:
        print(f"Resuming after {len(tournament.done)} of {args.games} games", file=sys.stderr)
    compile_for(kernel_groups(specs))  # before the workers start: they load it from the cache
    try:
        result = tournament.run(progress=not args.no_progress)
    except TournamentInterrupted as exc:
        if exc.result is not None:
            print(format_table(exc.result), file=out)
        played = exc.result["games_done"] if exc.result is not None else 0
        done = "aborted" if exc.aborted else f"interrupted after {played} of {args.games} games"
        hint = (f"resume with: {resume_command(args)}" if exc.saved else
                "nothing was saved to resume from" + ("" if args.out or args.records else " (no --out or --records)"))
        print(f"{done}; {hint}", file=sys.stderr)
        return 130
    print(format_table(result), file=out)
    if args.out:
        print(f"Results written to {args.out}", file=out)
    if args.records:
        print(f"Game records written to {args.records}/game_*.json", file=out)
    return 0
