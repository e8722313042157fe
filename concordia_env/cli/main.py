"""The ``concordia`` command's parser and entry point: one subcommand per module of this package."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TextIO

from .._internal.shorten import cut_numbers
from ..agents.base import AgentError
from ..data import MAP_NAMES
from . import dataset, demo, ladder, play, replay, serve, tournament
from .common import AGENT_SPECS_HELP, ArgumentParser, InputFn, UsageError


def _setup_args(p: argparse.ArgumentParser) -> None:
    """``--map``, ``--players`` and ``--intermediate-scoring``, as every game-playing command takes them."""
    p.add_argument("--map", default="imperium", choices=MAP_NAMES, help="(default imperium)")
    p.add_argument("--players", type=int, default=4, help="Imperium 3-5, Italia 2-4 (default 4)")
    p.add_argument("--intermediate-scoring", action="store_true", help="play with the intermediate scoring")


def build_parser() -> argparse.ArgumentParser:
    """The ``concordia`` parser: every subcommand with its options and its ``run`` function."""
    parser = ArgumentParser(prog="concordia", description="Play Concordia against the baseline "
                            "agents, run tournaments between them, replay and watch games.",
                            formatter_class=argparse.RawDescriptionHelpFormatter,
                            epilog="Run 'concordia COMMAND -h' for a command's options.\n\n" + AGENT_SPECS_HELP)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, text: str, specs: bool = True) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".",
                              epilog=AGENT_SPECS_HELP if specs else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)

    p = command("play", "play against agents in the terminal")
    play.add_arguments(p, _setup_args)
    p.set_defaults(run=play.cmd_play, parser=p)
    p = command("tournament", "many games between agents with rotated seats; ratings table")
    tournament.add_arguments(p, _setup_args)
    p.set_defaults(run=tournament.cmd_tournament, parser=p)
    p = command("ladder", "an agent's row of the strength table, on its deals against its agents; "
                "or check a submitted results file")
    ladder.add_arguments(p)
    p.set_defaults(run=ladder.cmd_ladder, parser=p)
    p = command("replay", "step through a saved game record", specs=False)
    replay.add_arguments(p)
    p.set_defaults(run=replay.cmd_replay, parser=p)
    p = command("demo", "watch one seeded game between the baseline agents")
    demo.add_arguments(p, _setup_args)
    p.set_defaults(run=demo.cmd_demo, parser=p)
    p = command("serve", "play against agents in the browser (a local web server)")
    serve.add_arguments(p, _setup_args)
    p.set_defaults(run=serve.cmd_serve, parser=p)
    p = command("dataset", "export recorded games into one data-set file, or check one", specs=False)
    dataset.add_arguments(p)
    p.set_defaults(run=dataset.cmd_dataset, parser=p)
    return parser


def main(argv: Sequence[str] | None = None, *, input_fn: InputFn = input, out: TextIO | None = None) -> int:
    """Run the ``concordia`` command; returns the exit code.

    Bad arguments exit through ``parser.error`` (status 2); unreadable or corrupt
    files, and policy agents without torch installed, print ``error: ...`` on stderr
    and return 1."""
    args = build_parser().parse_args(argv)
    out = out or sys.stdout
    try:
        return args.run(args, input_fn, out)
    except UsageError as exc:
        args.parser.error(cut_numbers(str(exc)))
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly, and keep the interpreter from failing
        # again when it flushes stdout at exit
        if out is sys.stdout:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    # ImportError: policy agents without the train extra; AgentError: an agent (a bot) that failed
    except (OSError, ValueError, ImportError, AgentError) as exc:
        print(f"error: {cut_numbers(str(exc))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 1  # pragma: no cover - parser.error exits
