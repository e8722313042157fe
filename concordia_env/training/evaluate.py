"""Evaluate a saved policy with the tournament runner and write the results as JSON.

Example (the commands behind the published figures are in docs/training.md)::

    python -m concordia_env.training.evaluate --policy concordia_env/agents/policies/ppo_imperium.npz \\
        --map imperium --players 4 --vs random --games 200 --out runs/ppo_vs_random_imperium4.json

``--policy`` is a stable-baselines3 model file (``train_ppo``'s ``policy.zip``, a
checkpoint; needs torch) or a numpy policy pair's ``.npz`` (what the ``ppo`` agent
plays; numpy only). For every player count in ``--players`` and every opponent in
``--vs`` the policy (spec ``policy:path=FILE``) plays ``--games`` games against ``n - 1``
copies of that opponent through :func:`concordia_env.arena.tournament.run_tournament`, with
rotated seats (so ``--games`` is rounded up to a multiple of the player count)
and game ``g`` set up with seed ``--seed + g``. The output file holds one entry
per matchup under ``"matchups"``: the policy's games, wins, win rate with its
Wilson 95% interval and mean VP, next to the full tournament result.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from .._internal.files import write_json_atomic
from ..agents.base import make_agent
from ..arena.tournament import format_table, run_tournament
from ..arguments import int_list, positive_int
from ..data import MAP_NAMES, load_map


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m concordia_env.training.evaluate", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--policy", required=True, type=Path, help="model .zip (train_ppo's policy.zip or a checkpoint) or numpy policy .npz (with its .json)")
    p.add_argument("--map", required=True, choices=MAP_NAMES, help="board to play on")
    p.add_argument("--players", type=int_list, default=None,
                   help="player counts, e.g. 2,4 (default: all the map allows)")
    p.add_argument("--vs", action="append", default=None, metavar="SPEC",
                   help="opponent spec, repeatable (default: random and heuristic)")
    p.add_argument("--games", type=positive_int, default=100, help="games per matchup")
    p.add_argument("--seed", type=int, default=0, help="game g is set up with seed+g")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes")
    p.add_argument("--stochastic", action="store_true", help="sample moves instead of the most likely one")
    p.add_argument("--out", type=Path, required=True, help="results JSON to write")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def policy_spec(path: Path, stochastic: bool) -> str:
    return f"policy:path={path}" + (":deterministic=0" if stochastic else "")


def evaluate(policy: Path, map_name: str, players: list[int], opponents: list[str], games: int, seed: int = 0,
             workers: int = 1, stochastic: bool = False, progress: bool = True) -> dict[str, Any]:
    """Play every (player count, opponent) matchup; ``ValueError`` for a bad argument before any game."""
    allowed = list(load_map(map_name).players)
    if not players or not set(players) <= set(allowed):
        raise ValueError(f"players {players}: {map_name} is played by {allowed} players")
    spec = policy_spec(policy, stochastic)
    make_agent(spec)  # a missing or incompatible model fails here, with the loader's message
    for opp in opponents:
        make_agent(opp)
    matchups = []
    for n in players:
        for opp in opponents:
            rounded = -(-games // n) * n
            result = run_tournament(map_name, n, [spec] + [opp] * (n - 1), rounded, seed=seed,
                                    workers=workers, progress=progress)
            mine = result["per_agent"][spec]
            matchups.append({"players": n, "opponent": opp, "games": mine["games"], "wins": mine["wins"],
                             "win_rate": mine["win_rate"], "win_rate_ci95": mine["win_rate_ci95"],
                             "mean_vp": mine["mean_vp"], "mean_rank": mine["mean_rank"],
                             "tournament": result})
    return {"policy": str(policy), "map": map_name, "deterministic": not stochastic, "seed": seed,
            "matchups": matchups}


def summary_lines(results: dict[str, Any]) -> list[str]:
    lines = [f"{results['policy']} on {results['map']}"]
    for m in results["matchups"]:
        lo, hi = m["win_rate_ci95"]
        lines.append(f"  {m['players']}p vs {m['opponent']:<12} {m['wins']:>4}/{m['games']:<4} wins "
                     f"({100 * m['win_rate']:.1f}%, 95% CI {100 * lo:.1f}-{100 * hi:.1f}%), "
                     f"mean VP {m['mean_vp']:.1f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.policy.is_file():
        parser.error(f"--policy {args.policy}: no such file")
    players = args.players or list(load_map(args.map).players)
    try:
        results = evaluate(args.policy, args.map, players, args.vs or ["random", "heuristic"], args.games,
                           seed=args.seed, workers=args.workers, stochastic=args.stochastic,
                           progress=not args.no_progress)
    except ValueError as exc:
        parser.error(str(exc))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(results, args.out)
    for m in results["matchups"]:
        print(format_table(m["tournament"]), end="\n\n")
    print("\n".join(summary_lines(results)))
    print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
