"""Evaluation harness: a line-up of agents on fixed, paired deals, with the statistics every strength figure uses.

Example::

    python -m concordia_env.arena.evaluation --map italia --players 2 --lineup heuristic,random \\
        --deals 20 --seed 0 --workers 2 --out results.json

**Paired deals.** A line-up lists one agent spec per seat (2-5 seats, repeats
allowed: ``az,heuristic,heuristic,heuristic``). Deal ``k`` (0-based) is the game
set up with seed ``seed + k``, and it is played ``n`` times, once per rotation
``r = 0 .. n-1`` of the line-up: seat ``j`` is taken by ``lineup[(j + r) % n]``.
So every entry meets the same deals from every seat, and two agents are
compared on identical deals (a paired comparison: the luck of the deal cancels
in their difference). Game ``g = k * n + r``; the agent at seat ``j`` is reset
with ``arena.records.agent_seed(seed + k, j)``, so any game replays on its own.

**Statistics per agent** (a spec listed twice is one entry, pooled over its
seats, like the tournament): seat-games, wins, win rate with a 95% Wilson
interval, the fair share ``1/n``, mean VP, mean VP margin (own VP minus the best
other seat's, and minus the mean of the other seats'), mean place, wins by
seat, truncated games, forfeits, decisions and mean milliseconds per decision (the
agent's ``act`` alone, every decision it was asked for). Games stopped at
``max_turns`` card plays count as played and not won; VP, margins and places
are over finished games. A forfeited game (the strength table plays with forfeits:
:mod:`~concordia_env.arena.game_result`) counts likewise, in ``forfeits`` rather than
``truncated``. For a line-up of exactly two distinct specs A and B,
``paired`` gives per deal the wins of each over the ``n`` rotations and their
difference, the difference of their per-seat win rates and of their mean VP,
each with the mean over deals and a 95% Student-t interval of that mean.

Games run in ``workers`` processes but are processed in game order, so the
result depends only on the arguments, not on the worker count. Only the
timings (``ms_per_decision``, per-game ``act_seconds``) and the ``run`` block
(command, arguments, wall time, versions, machine) vary between identical
runs; :func:`comparable` drops them. The results JSON is written atomically
(:func:`write_json_atomic`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from .._internal.files import write_json_atomic
from ..agents.base import Agent
from ..arguments import positive_int
from ..data import MAP_NAMES
from ..env import DEFAULT_MAX_TURNS, check_max_turns
from ..game import check_seed, check_setup_args
from ..state import GameState
from .game_result import GameResult
from .pools import Interrupted
from .records import play_game
from .runner import Runner
from .stats import (  # noqa: F401  (public here too)
    agent_statistics,
    game_counts,
    mean_interval,
    paired_summary,
    t_quantile_975,
)
from .tournament import seat_agents, seat_specs

RESULT_FORMAT = "concordia-env/evaluation"
RESULT_VERSION = 1
PROG = "python -m concordia_env.arena.evaluation"

#: keys whose values are wall-clock measurements (see :func:`comparable`)
TIMING_KEYS = ("ms_per_decision", "act_seconds")

# Agents built in this process, by spec, reused across games (every game resets them) so slow-to-build
# agents (networks) are built once per worker; the i-th seat a spec fills in a game gets its i-th instance.


class TimedAgent(Agent):
    """Wraps an agent for one game to add up the time spent in its ``act``."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.name = inner.name
        self.decisions = 0
        self.seconds = 0.0

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def close(self) -> None:
        self.inner.close()

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        start = time.perf_counter()
        action = self.inner.act(observation, action_mask, state)
        self.seconds += time.perf_counter() - start
        self.decisions += 1
        return action


# ---------------------------------------------------------------- arguments
def parse_lineup(text: str) -> list[str]:
    """``"az,heuristic, heuristic"`` -> ``["az", "heuristic", "heuristic"]``; ``ValueError`` for an empty entry."""
    specs = [s.strip() for s in str(text).split(",")]
    if not any(specs):
        raise ValueError("the line-up is empty: give 2-5 agent specs separated by commas, e.g. heuristic,random")
    if not all(specs):
        raise ValueError(f"line-up {text!r} has an empty entry: give 2-5 agent specs separated by commas")
    return specs


def check_evaluation_args(map_name: str, num_players: int, lineup: Sequence[str], deals: int, seed: int,
                          workers: int = 1) -> None:
    """``ValueError`` saying what is wrong with :func:`run_evaluation` arguments; builds each spec's
    agents once, so a bad spec fails here with its own message rather than in a worker."""
    if map_name not in MAP_NAMES:
        raise ValueError(f"unknown map {map_name!r}; allowed maps: {list(MAP_NAMES)}")
    if not 2 <= len(lineup) <= 5:
        raise ValueError(f"a line-up has 2-5 agent specs (one per seat), got {len(lineup)}: {list(lineup)}")
    if len(lineup) != num_players:
        raise ValueError(f"{num_players} players need {num_players} agent specs (one per seat), "
                         f"the line-up has {len(lineup)}: {list(lineup)}")
    check_setup_args(map_name, num_players)
    for name, value in (("deals", deals), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    check_seed(seed)
    seat_agents(lineup)


def check_out_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path if a results file can be written there; ``ValueError`` otherwise
    (checked before any game is played, so a long run cannot end with nowhere to write)."""
    out = Path(path)
    folder = out.parent
    if not folder.is_dir():
        raise ValueError(f"--out {out}: folder {folder} does not exist")
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"--out {out}: folder {folder} is not writable")
    return out


# ---------------------------------------------------------------- playing
def schedule(lineup: Sequence[str], deals: int, seed: int) -> list[tuple[int, int, int, tuple[str, ...]]]:
    """``(deal, rotation, setup seed, spec per seat)`` for every game, in game order (see the module doc)."""
    n = len(lineup)
    return [(k, r, seed + k, tuple(seat_specs(lineup, r))) for k in range(deals) for r in range(n)]


def _play(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """Play one game (runs in a worker process): its result plus the decisions and ``act`` time per seat."""
    map_name, n, game_seed, specs, intermediate, max_turns = task
    timed = [TimedAgent(a) for a in seat_agents(specs)]
    record = play_game(map_name, n, game_seed, timed, intermediate_scoring=intermediate, max_turns=max_turns)
    result = GameResult.from_json(record["result"]).timed([t.decisions for t in timed], [t.seconds for t in timed])
    return result.to_json()


def _game_entry(g: int, deal: int, rotation: int, game_seed: int, specs: Sequence[str],
                played: dict[str, Any]) -> dict[str, Any]:
    return GameResult.from_json(played).entry({"game": g, "deal": deal, "rotation": rotation, "seed": game_seed},
                                              specs)


# ---------------------------------------------------------------- the run
class EvaluationInterrupted(Interrupted):
    """Ctrl-C or SIGTERM stopped :func:`run_evaluation` after ``played`` of ``planned`` games (the
    games in flight finished; :mod:`concordia_env.arena.pools`). Nothing is written: an
    evaluation has no partial results to resume from."""

    def __init__(self, played: int, planned: int) -> None:
        super().__init__()
        self.played, self.planned = played, planned


def library_versions() -> dict[str, str]:
    """Versions of Python and of the libraries that decide the games and the agents (absent ones left out)."""
    out = {"python": sys.version.split()[0]}
    for name in ("concordia-env", "numpy", "numba", "torch", "stable-baselines3", "sb3-contrib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def run_evaluation(map_name: str, lineup: Sequence[str], deals: int, seed: int = 0, *,
                   num_players: int | None = None, workers: int = 1, intermediate_scoring: bool = False,
                   max_turns: int | None = DEFAULT_MAX_TURNS, progress: bool = True,
                   out: str | os.PathLike | None = None, command: str | None = None) -> dict[str, Any]:
    """Play ``deals`` deals of ``lineup`` once per seat rotation and return the results (module doc).

    ``num_players`` defaults to the line-up's length and must equal it. ``out``: write
    the results JSON there atomically (its folder is checked before any game).
    ``command``: the command line to record. ``ValueError`` for bad arguments, before any game.
    """
    lineup = [s.strip() if isinstance(s, str) else s for s in lineup]
    n = len(lineup) if num_players is None else num_players
    check_evaluation_args(map_name, n, lineup, deals, seed, workers)
    limit = check_max_turns(max_turns)
    out_path = check_out_path(out) if out is not None else None
    arguments = {"map": map_name, "players": n, "lineup": lineup, "deals": deals, "seed": seed, "workers": workers,
                 "intermediate_scoring": bool(intermediate_scoring), "max_turns": limit,
                 "out": None if out is None else os.fspath(out)}
    start = time.perf_counter()
    games = schedule(lineup, deals, seed)
    tasks = [(map_name, n, game_seed, specs, bool(intermediate_scoring), limit) for _, _, game_seed, specs in games]
    workers = min(workers, len(tasks))
    per_game = []
    with Runner(_play, tasks, workers=workers, progress=progress, desc=f"{map_name} {n}p {','.join(lineup)}") as run:
        for g, played in run:
            per_game.append(_game_entry(g, *games[g], played))
    if run.cut_short:  # nothing to keep: an evaluation is played in one go
        raise EvaluationInterrupted(len(per_game), len(tasks))
    from ..tools.bench import machine_description  # here: the benchmark module is not needed to play

    result = {
        "format": RESULT_FORMAT, "version": RESULT_VERSION,
        "map": map_name, "players": n, "lineup": lineup, "deals": deals, "seed": seed,
        "games": len(per_game), "intermediate_scoring": bool(intermediate_scoring), "max_turns": limit,
        "pairing": "deal k uses setup seed seed+k and is played once per rotation r = 0..n-1, "
                   "seat j taken by lineup[(j + r) % n]; game = k * n + r",
        **game_counts(per_game),
        "per_agent": agent_statistics(per_game, lineup),
        "paired": paired_summary(per_game, lineup),
        "per_game": per_game,
        "run": {"command": command, "arguments": arguments, "seconds": time.perf_counter() - start,
                "versions": library_versions(), "machine": machine_description()},
    }
    if out_path is not None:
        write_json_atomic(result, out_path)
    return result


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` without what varies between identical runs (the ``run`` block and the timings),
    so two runs of the same arguments compare equal."""
    def strip(x: Any) -> Any:
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in TIMING_KEYS}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x

    return strip({k: v for k, v in result.items() if k != "run"})


# ---------------------------------------------------------------- output
def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _interval(summary: dict[str, Any], spec: str, scale: float = 1.0) -> str:
    if summary["mean"] is None:
        return "-"
    text = format(scale * summary["mean"], spec)
    if summary["ci95"] is not None:
        lo, hi = summary["ci95"]
        text += f" [{format(scale * lo, spec)}, {format(scale * hi, spec)}]"
    return text


def format_table(result: dict[str, Any]) -> str:
    """The results as a text table, one row per agent in line-up order, then the paired summary."""
    rows = list(result["per_agent"].items())
    width = max(5, *(len(spec) for spec, _ in rows))
    extra = ", intermediate scoring" if result["intermediate_scoring"] else ""
    title = (f"{result['map']}, {result['players']} players{extra}: {result['deals']} deals x {result['players']} "
             f"seat rotations = {result['games']} games from seed {result['seed']}, {result['truncated']} truncated, "
             f"{result['run']['seconds']:.1f} s; fair share {100 / result['players']:.0f}%")
    head = (f"{'agent':<{width}} {'games':>5} {'wins':>5} {'win rate [95% CI]':>22} {'mean VP':>7} "
            f"{'margin':>7} {'vs mean':>7} {'place':>5} {'ms/dec':>7}  wins by seat")
    lines = [title, head, "-" * len(head)]
    for spec, a in rows:
        lo, hi = a["win_rate_ci95"]
        rate = f"{100 * a['win_rate']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}]"
        lines.append(f"{spec:<{width}} {a['games']:>5} {a['wins']:>5} {rate:>22} {_fmt(a['mean_vp'], '.1f'):>7} "
                     f"{_fmt(a['mean_margin_best_other'], '+.1f'):>7} {_fmt(a['mean_margin_mean_others'], '+.1f'):>7} "
                     f"{_fmt(a['mean_place'], '.2f'):>5} {_fmt(a.get('ms_per_decision'), '.3f'):>7}  "
                     + " ".join(f"{w}/{g}" for w, g in zip(a["seat_wins"], a["seat_games"])))
    lines.append("margin: own VP minus the best other player's; vs mean: minus the others' mean")
    paired = result["paired"]
    if paired is not None:
        a, b = paired["agents"]
        lines.append(f"paired over {paired['deals']} deals, {a} minus {b} (mean [95% CI]): "
                     f"wins per deal {_interval(paired['difference'], '+.2f')}; "
                     f"win rate {_interval(paired['win_rate_difference'], '+.1f', 100)} points; "
                     f"mean VP {_interval(paired['vp_difference'], '+.1f')}")
    return "\n".join(lines)


# ---------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--map", required=True, choices=MAP_NAMES, help="board to play on")
    p.add_argument("--players", type=int, default=None, help="player count (default: the line-up's length)")
    p.add_argument("--lineup", required=True,
                   help="agent spec per seat, comma-separated, repeats allowed: e.g. heuristic,random,random")
    p.add_argument("--deals", type=positive_int, required=True, help="deals; each is played once per seat rotation")
    p.add_argument("--seed", type=int, default=0, help="deal k is set up with seed+k (default: 0)")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default: 1)")
    p.add_argument("--intermediate-scoring", action="store_true", help="play the intermediate-scoring variant")
    p.add_argument("--max-turns", type=positive_int, default=DEFAULT_MAX_TURNS,
                   help=f"stop a game after this many card plays; it counts as played, not won "
                        f"(default: {DEFAULT_MAX_TURNS})")
    p.add_argument("--out", type=Path, default=None, help="results JSON to write (its folder must exist)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    try:  # bad arguments: one line, before any game is played
        lineup = parse_lineup(args.lineup)
        check_evaluation_args(args.map, len(lineup) if args.players is None else args.players, lineup,
                              args.deals, args.seed, args.workers)
        if args.out is not None:
            check_out_path(args.out)
    except ValueError as exc:
        parser.error(str(exc))
    # the file is written after the table is printed, so a failing write still shows what was played
    try:
        result = run_evaluation(args.map, lineup, args.deals, args.seed, num_players=args.players,
                                workers=args.workers, intermediate_scoring=args.intermediate_scoring,
                                max_turns=args.max_turns, progress=not args.no_progress,
                                command=f"{PROG} {shlex.join(argv)}")
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM (concordia_env.arena.pools)
        done = (f"interrupted after {exc.played} of {exc.planned} games" if isinstance(exc, EvaluationInterrupted)
                else "aborted" if isinstance(exc, Interrupted) else "interrupted")
        print(f"{PROG}: {done}; nothing was written (an evaluation is played in one go): run it again with: "
              f"{PROG} {shlex.join(argv)}", file=sys.stderr)
        return 130
    print(format_table(result))
    if args.out is not None:
        result["run"]["arguments"]["out"] = os.fspath(args.out)
        try:
            write_json_atomic(result, args.out)
        except OSError as exc:
            print(f"{PROG}: error: could not write {args.out}: {exc}", file=sys.stderr)
            return 1
        print(f"results written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
