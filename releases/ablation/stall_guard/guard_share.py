"""How often `net`'s stall guard moved for it: the games of a strength-table line, replayed.

Plays the same games as ``concordia_env.training.strength`` (deal k set up with seed + k, each
played once per seat rotation, each agent reset with the game's seat seed) and prints one JSON
line: games, truncated games, the games a `net` seat won, the games in which the guard acted, the decisions of the `net`
seats, how many of them the guard handed to the heuristic, and the game lengths.

    python releases/ablation/stall_guard/guard_share.py --map italia --lineup net,random --deals 100
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from concordia_env.agents import make_agent
from concordia_env.agents.az import NetAgent
from concordia_env.arena.records import play_game
from concordia_env.arena.tournament import seat_specs
from concordia_env.threads import one_blas_thread
from concordia_env.training.evaluation import TimedAgent


def guard_share(map_name: str, lineup: list[str], deals: int, seed: int = 0) -> dict[str, Any]:
    """Play the line and count what the guard did (see the module docstring)."""
    out: dict[str, Any] = {"map": map_name, "lineup": lineup, "deals": deals, "seed": seed, "games": 0,
                           "truncated": 0, "net_won": 0, "guarded_games": 0, "net_decisions": 0, "guarded_decisions": 0}
    turns = []
    with one_blas_thread():
        for k in range(deals):
            for r in range(len(lineup)):
                seats = [TimedAgent(make_agent(s)) for s in seat_specs(lineup, r)]
                result = play_game(map_name, len(lineup), seed + k, seats)["result"]
                nets = [a for a in seats if isinstance(a.inner, NetAgent)]
                guarded = sum(a.inner.guarded for a in nets)  # type: ignore[attr-defined]
                out["games"] += 1
                out["truncated"] += bool(result["truncated"])
                winner = result["winner"]
                out["net_won"] += winner is not None and isinstance(seats[winner].inner, NetAgent)
                out["guarded_games"] += guarded > 0
                out["net_decisions"] += sum(a.decisions for a in nets)
                out["guarded_decisions"] += guarded
                turns.append(result["turns"])
    out["guarded_share"] = round(out["guarded_decisions"] / max(out["net_decisions"], 1), 4)
    out["median_turns"], out["max_turns"] = int(np.median(turns)), max(turns)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--map", required=True, choices=("italia", "imperium"))
    p.add_argument("--lineup", required=True, help="comma-separated agent specs, one per seat")
    p.add_argument("--deals", type=int, required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(json.dumps(guard_share(args.map, args.lineup.split(","), args.deals, args.seed)))


if __name__ == "__main__":
    main()
