"""``concordia dataset``: export recorded games into one data-set file, and check such a file.

``concordia dataset export RECORDS... --out FILE`` reads game records, records folders, strength-table
folders, self-play run folders (value data, expert iteration, turn-level TD) and data-set files
(:mod:`concordia_env.dataset.export`); a bad input is skipped with one ``warning:`` line naming it
(``--strict``: the first one is an error), and the shards written before self-play kept its games
are counted in one ``warning:`` line. ``concordia dataset check FILE``
replays every game of a data set against its stored result and prints what the file holds.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import TextIO

from .common import InputFn, UsageError, compile_for


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The ``export`` and ``check`` subcommands of ``concordia dataset`` and their options."""
    sub = p.add_subparsers(dest="dataset_command", required=True, metavar="ACTION")
    e = sub.add_parser("export", help="export game records into one data-set file (.jsonl.gz)",
                       description="Export game records (files, records folders from 'concordia tournament "
                                   "--records', strength-table folders, self-play run folders of value data, "
                                   "expert iteration or turn-level TD, other data-set files) into one data-set "
                                   "file. Every game is replayed and checked against its stored result.")
    e.add_argument("inputs", nargs="+", metavar="RECORDS",
                   help="game record files, folders (records, strength tables, self-play runs), or .jsonl.gz data sets")
    e.add_argument("--out", required=True, metavar="FILE", help="the data-set file to write (name ends in .jsonl.gz)")
    e.add_argument("--strict", action="store_true", help="stop at the first bad input instead of skipping it")
    c = sub.add_parser("check", help="replay every game of a data-set file and summarise it",
                       description="Replay every game of a data-set file, check each against its stored result, "
                                   "and print what the file holds.")
    c.add_argument("file", metavar="FILE", help="a data-set file (.jsonl.gz)")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def cmd_dataset(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """Run ``concordia dataset export`` or ``check``; bad input files: ``error:`` and exit 1 (main)."""
    compile_for(["engine"])
    if args.dataset_command == "export":
        return _export(args, out)
    return _check(args, out)


def _export(args: argparse.Namespace, out: TextIO) -> int:
    from ..dataset import export_dataset

    if not str(args.out).endswith(".jsonl.gz"):
        raise UsageError(f"--out {args.out}: a data-set file's name ends in .jsonl.gz")
    report = export_dataset(args.inputs, args.out, strict=args.strict, on_skip=_warn)
    if report.without_actions:
        _warn(f"{len(report.without_actions)} strength-table chunk file(s) hold no actions (written before the "
              f"table kept its games), so their {report.without_actions_games} games are not exported, "
              f"e.g. {report.without_actions[0]}")
    if report.old_shards:
        _warn(f"{len(report.old_shards)} shards from before game actions were kept: their "
              f"{report.old_shards_games} games are not exported, e.g. {report.old_shards[0]}")
    skipped = f"; {len(report.skipped)} bad input(s) skipped (see the warnings)" if report.skipped else ""
    print(f"wrote {report.games} games from {report.files} file(s) to {report.out} "
          f"({report.bytes / 1024:.1f} KiB){skipped}", file=out)
    return 0


def _check(args: argparse.Namespace, out: TextIO) -> int:
    from ..dataset import iter_games, read_header

    head = read_header(args.file)
    bad: list[str] = []
    setups: Counter[str] = Counter()
    agents: Counter[str] = Counter()
    actions = truncated = 0
    for game in iter_games(args.file, strict=False, replay=True, on_skip=bad.append):
        setups[f"{game['map']} {game['players']}p"] += 1
        agents.update(game["agents"])
        actions += len(game["actions"])
        truncated += game["truncated"]
    games = sum(setups.values())
    print(f"{args.file}: format {head['format']} version {head['version']}, {games} of {head['games']} games "
          f"replayed to their stored results, {actions} actions, {truncated} truncated", file=out)
    print("  setups: " + ", ".join(f"{k} x{v}" for k, v in sorted(setups.items())), file=out)
    print("  seats by agent: " + ", ".join(f"{k} x{v}" for k, v in sorted(agents.items())), file=out)
    for message in bad:
        print(f"error: {message}", file=sys.stderr)
    return 1 if bad else 0
