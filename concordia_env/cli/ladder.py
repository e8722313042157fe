"""``concordia ladder``: an agent's row of the strength table, played on the table's deals against
its agents, and the check of a submitted results file (:mod:`concordia_env.arena.ladder`).

Exit status: 0 done (or the file is valid), 1 a file refused by ``--check`` or a failure while
playing, 2 bad arguments (one line, before any game), 130 interrupted (the finished chunks are
kept and the same command goes on)."""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from .common import InputFn, compile_for, kernel_groups

PROG = "concordia ladder"
#: the options a run is made of, in the order the command that goes on names them
RUN_OPTIONS = ("agent", "name", "out", "map", "pool", "deals", "workers", "deals_chunk", "table")
#: the defaults of --name and --deals-chunk as the help names them
NAME_HELP, CHUNK_HELP = "challenger", 10


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``concordia ladder`` (the defaults named in the help are the arena's, which
    ``concordia --help`` does not import: :data:`NAME_HELP` and :data:`CHUNK_HELP`, tested)."""
    p.add_argument("--agent", metavar="SPEC", help="the agent to rank: any agent spec (below)")
    p.add_argument("--name", default=None, help=f"its name in the row (default {NAME_HELP})")
    p.add_argument("--out", metavar="DIR", help="the run's folder: settings.json, the games (lines/) and the "
                   "results file ladder.json; the same command again goes on where a run stopped")
    p.add_argument("--map", metavar="MAP", default=None,
                   help="play only the table's setting on this map (italia or imperium; default: every setting)")
    p.add_argument("--pool", metavar="NAMES", default=None,
                   help="comma list of the table's agents to play against, by name or spec (default: all); "
                        "a smaller pool makes a row that is not comparable")
    p.add_argument("--deals", metavar="N", default=None,
                   help="play only the first N deals of each setting (default: all): a quick row, not comparable")
    p.add_argument("--workers", metavar="N", default="1", help="worker processes (default 1)")
    p.add_argument("--deals-chunk", metavar="N", default=None, help=f"deals per chunk file (default {CHUNK_HELP})")
    p.add_argument("--table", metavar="DIR", default=None, help="the strength table's folder, with its config.json "
                   "and summary.json (default: results/strength of this checkout)")
    p.add_argument("--check", metavar="FILE", default=None,
                   help="check a submitted results file instead of playing: exit 0 if it is valid, else one line "
                        "saying what is wrong and where, exit 1")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


def _count(value: str | None, option: str) -> int | None:
    if value is None:
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"{option} must be a positive integer, got {value!r}")
    return count


def _list(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def _command(args: argparse.Namespace) -> str:
    """The command line that goes on with the run ``args`` describe."""
    argv = ["concordia", "ladder"]
    for key in RUN_OPTIONS:
        value = getattr(args, key)
        if value is not None:
            argv += ["--" + key.replace("_", "-"), str(value)]
    return shlex.join(argv)


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


@contextmanager
def _warnings_in_one_line() -> Iterator[None]:
    """A chunk file set aside while resuming is one warning line, not a Python warning."""
    from ..arena.strength import StrengthWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", StrengthWarning)
        warnings.showwarning = _show_warning
        yield


def _table(args: argparse.Namespace) -> Any:
    from ..arena.ladder import DEFAULT_TABLE, load_table

    return load_table(DEFAULT_TABLE if args.table is None else Path(args.table))


def _check(args: argparse.Namespace, out: TextIO) -> int:
    from ..arena.ladder import check_results, describe

    if args.agent is not None or any(getattr(args, k) is not None for k in ("name", "out", "map", "pool", "deals")):
        raise ValueError("--check takes only --table: the results file names its agent and options")
    table = _table(args)
    try:
        doc = check_results(args.check, table)
    except ValueError as exc:
        print(f"{PROG}: refused: {exc}", file=sys.stderr)
        return 1
    print(f"{args.check}: valid ladder results: {describe(doc)}", file=out)
    return 0


def _prepare(args: argparse.Namespace) -> tuple[Any, int, int]:
    """The ladder, workers and chunk size the arguments name, checked (one-line ``ValueError``)
    before any game; the agent is built once here, so a bad spec fails now."""
    from ..arena.ladder import DEFAULT_NAME, make_ladder, open_folder
    from ..arena.strength import DEFAULT_DEALS_CHUNK
    from ..arena.tournament import seat_agents

    if args.agent is None:
        raise ValueError("give --agent SPEC (and --out DIR) to play a ladder, or --check FILE to check one")
    if args.out is None:
        raise ValueError("--out DIR is needed: the folder that keeps the games and the results file")
    workers, chunk = _count(args.workers, "--workers"), _count(args.deals_chunk, "--deals-chunk")
    ladder = make_ladder(_table(args), args.agent, name=DEFAULT_NAME if args.name is None else args.name,
                         maps=_list(args.map), pool=_list(args.pool), deals=_count(args.deals, "--deals"))
    try:
        seat_agents([ladder.spec])
    except ValueError as exc:
        raise ValueError(f"--agent: {exc}") from None
    open_folder(ladder, args.out)  # another run's folder is refused before anything is written
    return ladder, workers or 1, chunk or DEFAULT_DEALS_CHUNK


def _compile(ladder: Any) -> None:
    """Compile (or load) the kernels the games need before the workers start."""
    specs = [ladder.spec, *{spec for line in ladder.lines for spec in line.lineup}]
    try:
        groups = kernel_groups(specs)
    except ValueError:  # a spec kind the table does not know compiles what it needs itself
        groups = kernel_groups(specs[1:])
    compile_for(groups)


def _play(args: argparse.Namespace, out: TextIO) -> int:
    from ..arena.ladder import RESULTS_NAME, render_results, run_ladder

    ladder, workers, chunk = _prepare(args)
    _compile(ladder)
    try:
        report, done = run_ladder(ladder, args.out, workers=workers, deals_chunk=chunk,
                                  progress=not args.no_progress, command=_command(args))
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (concordia_env.arena.pools): the chunks written are kept
        print(f"{PROG}: interrupted; the finished games are kept in {Path(args.out) / 'lines'}; go on with: "
              f"{_command(args)}", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - an agent or a write failed: one line, the chunks written are kept
        print(f"{PROG}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    forfeited = f" ({report['forfeits']} forfeited)" if report["forfeits"] else ""
    print(f"{report['games_played']} games played{forfeited}, {report['chunks_written']} chunk files written, "
          f"{report['deals_kept']} deals already held\n", file=out)
    print(render_results(done), file=out)
    results_path = Path(args.out) / RESULTS_NAME
    print(f"Results written to {results_path}; check them with: concordia ladder --check {shlex.quote(str(results_path))}",
          file=out)
    return 0


def cmd_ladder(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """Play a ladder (``--agent``) or check a results file (``--check``); see the module doc."""
    with _warnings_in_one_line():
        try:
            return _check(args, out) if args.check is not None else _play(args, out)
        except ValueError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
