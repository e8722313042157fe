"""``concordia demo``: one seeded game between baseline agents, printed turn by turn."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TextIO

from ..display.render import TurnPrinter, state_to_text
from ..state import new_game
from .common import (
    InputFn,
    UsageError,
    build_agents,
    check_setup,
    compile_for,
    kernel_groups,
    print_outcome,
    seat_lines,
    seed_arg,
    split_specs,
)

#: the demo's agents by seat; an n-player demo takes the first n
DEMO_AGENTS: tuple[str, ...] = ("heuristic", "mcts:iterations=200", "random", "random", "random")


def add_arguments(p: argparse.ArgumentParser, setup_args: Callable[[argparse.ArgumentParser], None]) -> None:
    """The options of ``concordia demo``."""
    setup_args(p)
    p.add_argument("--seed", type=seed_arg, default=0, help="game setup seed (default 0)")
    p.add_argument("--agents", metavar="SPECS",
                   help="comma list of one spec per seat (default: the first players of "
                        + ",".join(DEMO_AGENTS) + ")")
    p.add_argument("--max-turns", type=int, default=2000, help="stop the game after this many card plays")
    p.add_argument("--save", metavar="FILE", help="write the game record here")

def cmd_demo(args: argparse.Namespace, input_fn: InputFn, out: TextIO) -> int:
    """One seeded game between baseline agents, printed turn by turn."""
    from ..arena.records import final_state, play_game, save_record

    check_setup(args.map, args.players)
    n = args.players
    specs = split_specs(args.agents) if args.agents else list(DEMO_AGENTS[:n])
    if len(specs) != n:
        raise UsageError(f"--agents: {n} players need {n} specs, got {len(specs)}: {specs}")
    agents = build_agents(specs)
    compile_for(kernel_groups(specs))
    names = [a.name for a in agents]
    print(f"Concordia demo: {args.map}, {n} players, seed {args.seed}\n" + seat_lines(names), file=out)
    print("\n" + state_to_text(new_game(args.map, n, args.seed, args.intermediate_scoring)) + "\n", file=out)
    printer = TurnPrinter(names, out)
    record = play_game(args.map, n, args.seed, agents, intermediate_scoring=args.intermediate_scoring,
                       max_turns=args.max_turns, on_step=printer)
    printer.flush()
    print_outcome(final_state(record), record, out)
    if args.save:
        save_record(record, args.save)
        print(f"Game record written to {args.save} (concordia replay {args.save})", file=out)
    return 0
