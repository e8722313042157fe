"""Speed benchmarks: ``python -m concordia_env.bench core``.

``core`` plays whole games of uniformly random legal play through the public
Python API (``legal_actions()`` + ``apply()`` every decision, single process)
for every map and player count and prints decisions/s and games/s, each the
median of several runs. It also prints the compiled kernel's own speed
(``engine.random_playout``, no Python per decision) as an upper bound for
search rollouts.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time

from . import engine as E
from .data import MAP_NAMES, load_map
from .state import new_game

COMBOS = [(m, n) for m in MAP_NAMES for n in load_map(m).players]


def machine_description() -> str:
    """One line naming the machine, for the README's figures."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import os

    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def time_python_api(map_name: str, players: int, games: int, seed: int) -> tuple[float, float, float]:
    """(decisions/s, games/s, mean decisions per game) of random play through the Python API."""
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        state = new_game(map_name, players, seed=seed + g)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
            decisions += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed, decisions / games


def time_kernel(map_name: str, players: int, games: int, seed: int) -> tuple[float, float]:
    """(decisions/s, games/s) of the compiled random playout, no Python per decision."""
    states = [new_game(map_name, players, seed=seed + g) for g in range(games)]
    decisions = 0
    start = time.perf_counter()
    for g, st in enumerate(states):
        decisions += E.random_playout(st.s, st.game.tables, st._mask, seed + g, 1_000_000)
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def bench_core(games: int, repeats: int, seed: int, out=sys.stdout) -> list[dict]:
    """Run the core benchmark and print a table; returns the rows."""
    # warm up: compile (or load from cache) the kernel outside the timings
    time_python_api("italia", 2, 1, seed)
    time_kernel("italia", 2, 1, seed)
    print(f"machine: {machine_description()}", file=out)
    print(f"random legal play, {games} games x {repeats} runs per row, median shown\n", file=out)
    print(f"{'map':<9} {'players':>7} {'decisions/game':>14} {'API decisions/s':>16} {'API games/s':>12}"
          f" {'kernel decisions/s':>19} {'kernel games/s':>15}", file=out)
    rows = []
    for map_name, players in COMBOS:
        api = [time_python_api(map_name, players, games, seed + 1000 * r) for r in range(repeats)]
        ker = [time_kernel(map_name, players, games, seed + 1000 * r) for r in range(repeats)]
        row = {
            "map": map_name, "players": players,
            "decisions_per_game": statistics.median(x[2] for x in api),
            "api_decisions_per_s": statistics.median(x[0] for x in api),
            "api_games_per_s": statistics.median(x[1] for x in api),
            "kernel_decisions_per_s": statistics.median(x[0] for x in ker),
            "kernel_games_per_s": statistics.median(x[1] for x in ker),
        }
        rows.append(row)
        print(f"{map_name:<9} {players:>7} {row['decisions_per_game']:>14.0f} {row['api_decisions_per_s']:>16,.0f}"
              f" {row['api_games_per_s']:>12.1f} {row['kernel_decisions_per_s']:>19,.0f}"
              f" {row['kernel_games_per_s']:>15.1f}", file=out, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.bench", description="Speed benchmarks.")
    sub = parser.add_subparsers(dest="what", required=True)
    core = sub.add_parser("core", help="rules core: random play through the Python API and the kernel")
    core.add_argument("--games", type=int, default=40, help="games per run (default 40)")
    core.add_argument("--repeats", type=int, default=5, help="runs per row; the median is shown (default 5)")
    core.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.games < 1 or args.repeats < 1:
        parser.error("--games and --repeats must be at least 1")
    bench_core(args.games, args.repeats, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
