"""``python -m concordia_env.tools.agents_bench``: how long each agent thinks per decision, in real games.

Plays ``--games`` seeded games (seats rotated as in a tournament) and prints,
per agent, the number of decisions with a choice (two or more legal actions;
forced moves are answered at once and not counted) and the mean, median, 95th
percentile and longest time per decision. Example::

    python -m concordia_env.tools.agents_bench --map italia --players 2 --agents mcts:iterations=1000,heuristic --games 4

Figures depend on the machine and on what else it runs; run it alone.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from concordia_env._internal.threads import one_blas_thread
from concordia_env.data import MAP_NAMES
from concordia_env.encoding import observation
from concordia_env.state import GameState, new_game
from concordia_env.tools.bench import machine_description

from ..agents.base import Agent, make_agent
from ..arena.records import play_game
from ..arena.tournament import check_tournament_args, seat_specs


class TimedAgent(Agent):
    """Wraps an agent and records the seconds of every decision that had a choice."""

    def __init__(self, inner: Agent) -> None:
        self.inner, self.name = inner, inner.name
        self.seconds: list[float] = []

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def close(self) -> None:
        self.inner.close()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        start = time.perf_counter()
        action = self.inner.act(observation, action_mask, state)
        if np.count_nonzero(action_mask) > 1:
            self.seconds.append(time.perf_counter() - start)
        return action


def time_agents(map_name: str, num_players: int, specs: list[str], games: int, seed: int = 0) -> dict[str, list[float]]:
    """Seconds per decision (with a choice) of each distinct spec over ``games`` rotated games."""
    check_tournament_args(map_name, num_players, specs, games, 1)
    timed = {spec: TimedAgent(make_agent(spec)) for spec in dict.fromkeys(specs)}
    warm = new_game(map_name, num_players, seed)
    for agent in timed.values():  # load compiled kernels before the clock runs
        agent.inner.act(observation(warm, warm.current_player), warm.legal_action_mask(), warm)
    with one_blas_thread():  # as the evaluation and strength harnesses play (concordia_env._internal.threads)
        for g in range(games):
            play_game(map_name, num_players, seed + g, [timed[s] for s in seat_specs(specs, g)])
    return {spec: agent.seconds for spec, agent in timed.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.tools.agents_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--map", default="italia", choices=MAP_NAMES)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--agents", default="mcts:iterations=1000,heuristic", help="comma-separated specs, one per seat")
    parser.add_argument("--games", type=int, default=4, help="a multiple of the player count")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    specs = [s.strip() for s in args.agents.split(",")]
    try:
        times = time_agents(args.map, args.players, specs, args.games, args.seed)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"{args.map}, {args.players} players, {args.games} games from seed {args.seed}; {machine_description()}")
    print(f"{'agent':<28} {'decisions':>9} {'mean ms':>9} {'median':>9} {'p95':>9} {'max':>9}")
    for spec, sec in times.items():
        ms = np.asarray(sec) * 1000 if sec else np.zeros(1)
        print(f"{spec:<28} {len(sec):>9} {ms.mean():>9.1f} {np.median(ms):>9.1f} "
              f"{np.percentile(ms, 95):>9.1f} {ms.max():>9.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
