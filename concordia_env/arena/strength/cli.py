"""``python -m concordia_env.arena.strength``: play the table's lines, then write its summary and table."""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...arguments import positive_int
from ..tournament import SHOWN_FORFEITS
from .chunks import DEFAULT_DEALS_CHUNK, run_lines
from .config import PROG, StrengthWarning, load_config, select_lines
from .replay_games import replay_command
from .table import write_outputs


# ---------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, required=True, help="the table's config JSON (see the module doc)")
    p.add_argument("--out", type=Path, required=True, help="results folder: lines/<line>/deals_*.json, summary.json")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default: 1)")
    p.add_argument("--lines", default=None, help="play only the lines whose id matches one of these comma-separated "
                                                  "globs, e.g. 'italia2-*' (the summary covers all lines)")
    p.add_argument("--deals-chunk", type=positive_int, default=DEFAULT_DEALS_CHUNK,
                   help=f"deals per chunk file (default: {DEFAULT_DEALS_CHUNK})")
    p.add_argument("--table-only", action="store_true", help="play nothing: rebuild the summary and the table")
    p.add_argument("--replay-games", action="store_true",
                   help="write the games file of every chunk that has none by replaying its games from their "
                        "seeds, each checked against the chunk's results (nothing else is written)")
    p.add_argument("--docs", type=Path, default=None,
                   help="a page whose strength-table block (between the markers) to rewrite, e.g. docs/agents.md "
                        "(default: none)")
    p.add_argument("--no-docs", action="store_true", help=argparse.SUPPRESS)  # the old default's opt-out: a no-op
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    config = load_config(args.config)
    if args.replay_games:
        if args.table_only or args.docs is not None:
            raise ValueError("--replay-games writes only the chunks' games files: leave out --table-only and --docs")
        select_lines(config, args.lines)
        return replay_command(config, args.out, args.lines, args.workers, not args.no_progress)
    docs = args.docs
    if docs is not None and not Path(docs).is_file():
        raise ValueError(f"--docs {docs}: no such file")
    if not args.table_only:
        select_lines(config, args.lines)
        args.out.mkdir(parents=True, exist_ok=True)
        forfeits: list[str] = []  # printed after the run, not through its progress bar
        report = run_lines(config, args.out, lines=args.lines, workers=args.workers, deals_chunk=args.deals_chunk,
                           progress=not args.no_progress, command=f"{PROG} {shlex.join(argv)}",
                           on_forfeit=forfeits.append)
        forfeited = f" ({report['forfeits']} forfeited)" if report["forfeits"] else ""
        print(f"{report['games_played']} games played{forfeited}, {report['chunks_written']} chunk files written, "
              f"{report['deals_kept']} deals already held")
        for notice in forfeits[:SHOWN_FORFEITS]:
            print(notice)
        if len(forfeits) > SHOWN_FORFEITS:
            print(f"... and {len(forfeits) - SHOWN_FORFEITS} more forfeits (see per_game in the chunk files)")
    summary = write_outputs(config, args.out, docs)
    print(f"{summary['games']} of {summary['planned']} planned games in {args.out}; wrote "
          f"{args.out / 'summary.json'}, {args.out / 'table.md'}" + (f" and the table in {docs}" if docs else ""))
    for t in summary["targets"]:
        print(f"target {t['line']} ({t['agent']} >= {100 * t['min_win_rate']:.0f}%): {t['status']}, "
              f"{100 * t['win_rate']:.1f}% of {t['games']} of {t['planned']} games")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 0, 1 (a failure while playing or writing; with ``--replay-games``, a
    chunk left without its games file), 2 (bad arguments or config) or 130 (Ctrl-C: the finished chunks
    are kept). Errors are one line, never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("always", StrengthWarning)
        warnings.showwarning = _show_warning
        try:
            return _run(args, argv)
        except ValueError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (concordia_env.arena.pools)
            print(f"{PROG}: interrupted; the chunks already written are kept in {args.out / 'lines'}; go on with: "
                  f"{PROG} {shlex.join(argv)}", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - a game or a write failed: one line, not a traceback
            print(f"{PROG}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
