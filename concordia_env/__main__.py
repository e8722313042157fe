"""``python -m concordia_env``: play and print one seeded game of random legal play.

Example::

    python -m concordia_env --map imperium --players 4 --seed 0
"""

from __future__ import annotations

import argparse
import random
import sys

from ._internal.jit import compile_kernels
from .data import MAP_NAMES
from .display.render import TurnPrinter, score_table
from .game import check_setup_args
from .state import GameState, new_game


def play_random_game(state: GameState, seed: int, out=sys.stdout, verbose: bool = True) -> GameState:
    """Play uniformly random legal actions (``random.Random(seed)``) to the end, printing each turn."""
    rng = random.Random(seed)
    printer = TurnPrinter(out=out)
    while not state.is_terminal():
        legal = state.legal_actions()
        action = legal[rng.randrange(len(legal))]
        if verbose:
            printer(state, state.current_player, action)
        state.apply(action)
    printer.flush()
    return state


def print_result(state: GameState, out=sys.stdout) -> None:
    """Scores with the per-god breakdown, and the winner once the game is over
    (:func:`concordia_env.display.render.score_table`: a game still running, a partial record, has none)."""
    print("\n" + score_table(state), file=out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env", description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="imperium", choices=MAP_NAMES)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0, help="seeds both the setup and the random players")
    parser.add_argument("--intermediate-scoring", action="store_true")
    parser.add_argument("--quiet", action="store_true", help="print only the result")
    args = parser.parse_args(argv)
    try:
        check_setup_args(args.map, args.players)  # bad arguments fail before any compiling
        compile_kernels(["engine"])  # a first run says so, with progress, instead of looking hung
        state = new_game(args.map, args.players, args.seed, args.intermediate_scoring)
    except ValueError as exc:
        parser.error(str(exc))
    if not args.quiet:
        print(state, end="\n\n")
    play_random_game(state, args.seed, verbose=not args.quiet)
    if not args.quiet:
        print("\n" + str(state))
    print_result(state)
    return 0


if __name__ == "__main__":
    sys.exit(main())
