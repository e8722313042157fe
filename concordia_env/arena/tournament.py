"""Tournaments: many seeded games between agents named by spec strings, with rotated seats.

Game ``g`` (0-based) is set up with seed ``seed + g`` and seat ``k`` is played by
``agent_specs[(k + g) % n]``, so over a multiple of ``n`` games every listed
entry sits in every seat equally often (seat order matters in Concordia: the
start player and the Praefectus Magnus tie-break depend on it).

Per distinct spec (a spec listed twice is one entry, pooled over its seats) the
result holds seat-games, wins, the win rate with its Wilson 95% interval, mean
VP and mean place, wins per seat, and an OpenSkill Plackett-Luce rating
(``mu``, ``sigma``, ``ordinal = mu - 3 sigma``) updated game by game in game
order. Games run in worker processes but are processed in game order, so the
result is the same for any number of workers.

The result also keeps the games themselves, for plots and per-game analysis:
``per_game`` lists every game in game order as ``{"game", "seed", "seats"
(spec per seat), "scores", "ranking", "winner_seat", "winner" (its spec),
"truncated", "turns"}`` (winners null when truncated), and ``rating_history``
lists, per game, every spec's ``[mu, sigma]`` after that game was rated (a
truncated game repeats the previous ratings), so its last entry matches
``per_agent``.
"""

from __future__ import annotations

import math
import os
import signal
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import NormalDist
from typing import Any

from openskill.models import PlackettLuce
from tqdm import tqdm

from concordia_env.env import DEFAULT_MAX_TURNS, check_max_turns
from concordia_env.game import check_setup_args

from ..agents.base import Agent, make_agent
from ..files import write_json_atomic
from ..threads import blas_threads
from .records import play_game, save_record

#: two-sided 95% normal quantile (1.95996...), for the Wilson interval
Z95 = NormalDist().inv_cdf(0.975)

# Agents built in this process, by spec: one instance per seat a spec fills in a
# game, reused across games (each game resets them), so slow-to-build agents
# (policy networks) are built once per worker rather than once per game.
_AGENT_POOL: dict[str, list[Agent]] = {}


def wilson_interval(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a win rate of ``wins`` out of ``games`` ((0, 1) for no games).

    Unlike the normal approximation it stays inside [0, 1] and is not degenerate at 0 or all wins."""
    if games <= 0:
        return 0.0, 1.0
    p = wins / games
    z2n = z * z / games
    centre = (p + z2n / 2) / (1 + z2n)
    half = z * math.sqrt(p * (1 - p) / games + z2n / (4 * games)) / (1 + z2n)
    # the bounds are exactly 0 and 1 at the extremes; say so rather than leave rounding dust
    lo = 0.0 if wins == 0 else centre - half
    hi = 1.0 if wins == games else centre + half
    return lo, hi


def seat_specs(agent_specs: Sequence[str], game: int) -> list[str]:
    """The spec at each seat of game ``game``: seat ``k`` gets ``agent_specs[(k + game) % n]``."""
    n = len(agent_specs)
    return [agent_specs[(k + game) % n] for k in range(n)]


def seat_agents(specs: Sequence[str]) -> list[Agent]:
    """Agents for one game's seats from the process-wide pool (the i-th seat a spec fills
    gets that spec's i-th instance, so no instance plays two seats of one game)."""
    used: dict[str, int] = {}
    out = []
    for spec in specs:
        i = used.get(spec, 0)
        used[spec] = i + 1
        pool = _AGENT_POOL.setdefault(spec, [])
        while len(pool) <= i:
            pool.append(make_agent(spec))
        out.append(pool[i])
    return out


def _play(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """Play one tournament game (runs in a worker process): task -> game record."""
    map_name, n, game_seed, specs, intermediate, max_turns = task
    return play_game(map_name, n, game_seed, seat_agents(specs),
                     intermediate_scoring=intermediate, max_turns=max_turns)


def ignore_sigint() -> None:
    """Worker initializer: Ctrl-C is the parent's to handle (it cancels the queued games),
    rather than every worker dying with its own traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def game_worker_init() -> None:
    """Initializer of every pool of game workers: Ctrl-C is the parent's (:func:`ignore_sigint`),
    and one BLAS thread per process (:mod:`concordia_env.threads`)."""
    ignore_sigint()
    blas_threads(1)


def check_tournament_args(map_name: str, num_players: int, agent_specs: Sequence[str], games: int,
                          workers: int = 1) -> None:
    """``ValueError`` saying what is wrong with :func:`run_tournament` arguments (the map and
    player count, one spec per seat, known specs, games a multiple of the players)."""
    check_setup_args(map_name, num_players)
    n = num_players
    if len(agent_specs) != n:
        raise ValueError(f"{n} players need {n} agent specs (one per seat), got {len(agent_specs)}: "
                         f"{list(agent_specs)}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be a positive int, got {games!r}")
    if games % n:
        lo, hi = games - games % n, games - games % n + n
        nearest = f"{lo} or {hi}" if lo else f"{hi}"
        raise ValueError(f"games must be a multiple of the {n} players so every agent plays every seat "
                         f"equally often; got {games}, try {nearest}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    # build the agents here: a bad spec fails now with its own message rather than in a
    # worker, and forked workers inherit the built agents
    seat_agents(agent_specs)


class _Tally:
    """Running statistics of one spec over the games processed so far."""

    def __init__(self, n: int, model: PlackettLuce, spec: str) -> None:
        self.games = self.wins = self.finished = self.vp = self.places = 0
        self.seat_games = [0] * n
        self.seat_wins = [0] * n
        self.rating = model.rating(name=spec)

    def summary(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        return {
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.wins / self.games if self.games else 0.0,
            "win_rate_ci95": [lo, hi],
            "finished": self.finished,
            "mean_vp": self.vp / self.finished if self.finished else None,
            "mean_rank": self.places / self.finished if self.finished else None,
            "seat_games": self.seat_games,
            "seat_wins": self.seat_wins,
            "mu": self.rating.mu,
            "sigma": self.rating.sigma,
            "ordinal": self.rating.mu - 3 * self.rating.sigma,
        }


def _rate(model: PlackettLuce, tallies: dict[str, _Tally], specs: Sequence[str], ranking: Sequence[int]) -> None:
    """One rating update: every seat is a one-player team placed by ``ranking``; a spec
    filling several seats takes the mean of its seats' updated ratings."""
    place = {seat: i + 1 for i, seat in enumerate(ranking)}
    teams = [[model.rating(mu=tallies[s].rating.mu, sigma=tallies[s].rating.sigma, name=s)] for s in specs]
    new = model.rate(teams, ranks=[place[k] for k in range(len(specs))])
    for spec in dict.fromkeys(specs):
        mine = [team[0] for k, team in enumerate(new) if specs[k] == spec]
        r = tallies[spec].rating
        r.mu = sum(t.mu for t in mine) / len(mine)
        r.sigma = sum(t.sigma for t in mine) / len(mine)


def _tally_game(model: PlackettLuce, tallies: dict[str, _Tally], specs: Sequence[str],
                result: dict[str, Any]) -> None:
    """Add one game's result to the tallies (truncated games: played, not won, not rated)."""
    truncated = result["truncated"]
    for seat, spec in enumerate(specs):
        t = tallies[spec]
        t.games += 1
        t.seat_games[seat] += 1
        if truncated:
            continue
        t.finished += 1
        t.vp += result["scores"][seat]
        t.places += result["ranking"].index(seat) + 1
        if result["winner"] == seat:
            t.wins += 1
            t.seat_wins[seat] += 1
    if not truncated:
        _rate(model, tallies, specs, result["ranking"])


def _game_summary(game: int, game_seed: int, specs: Sequence[str], result: dict[str, Any]) -> dict[str, Any]:
    """One ``per_game`` entry (see the module doc): the record's result without the VP breakdown."""
    winner = result["winner"]
    return {
        "game": game,
        "seed": game_seed,
        "seats": list(specs),
        "scores": list(result["scores"]),
        "ranking": list(result["ranking"]),
        "winner_seat": winner,
        "winner": None if winner is None else specs[winner],
        "truncated": bool(result["truncated"]),
        "turns": int(result["turns"]),
    }


def run_tournament(map_name: str, num_players: int, agent_specs: Sequence[str], games: int, seed: int = 0,
                   workers: int = 1, intermediate_scoring: bool = False,
                   record_dir: str | os.PathLike | None = None, progress: bool = True,
                   max_turns: int | None = DEFAULT_MAX_TURNS) -> dict[str, Any]:
    """Play ``games`` games with rotated seats (see the module doc) and return the statistics.

    ``agent_specs`` has one spec per seat; ``games`` must be a multiple of the
    player count. ``record_dir``: write every game's record there as
    ``game_{g:05d}.json``. ``progress``: a tqdm bar on stderr. Games stopped at
    ``max_turns`` card plays count as played, without a winner, and are not rated.
    Besides the per-agent statistics the result lists every game (``per_game``)
    and the ratings after each game (``rating_history``); see the module doc.
    ``ValueError`` for bad arguments (before any game is played).
    """
    agent_specs = [s.strip() if isinstance(s, str) else s for s in agent_specs]
    check_tournament_args(map_name, num_players, agent_specs, games, workers)
    max_turns = check_max_turns(max_turns)
    start = time.perf_counter()
    out_dir = Path(record_dir) if record_dir is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    model = PlackettLuce()
    tallies = {spec: _Tally(num_players, model, spec) for spec in dict.fromkeys(agent_specs)}
    tasks = [(map_name, num_players, seed + g, tuple(seat_specs(agent_specs, g)), bool(intermediate_scoring),
              max_turns) for g in range(games)]
    truncated = 0
    per_game: list[dict[str, Any]] = []
    rating_history: list[dict[str, list[float]]] = []
    workers = min(workers, games)
    pool = ProcessPoolExecutor(workers, initializer=game_worker_init) if workers > 1 else None
    try:
        # map submits every game now, which forks the workers before tqdm starts its monitor
        # thread (forking a process that has threads can deadlock); results come back in game
        # order, so the output does not depend on scheduling
        records = pool.map(_play, tasks, chunksize=1) if pool else map(_play, tasks)
        with tqdm(total=games, disable=not progress, unit="game", desc=f"{map_name} {num_players}p",
                  leave=False) as bar:
            for g, record in enumerate(records):
                specs, result = tasks[g][3], record["result"]
                _tally_game(model, tallies, specs, result)
                truncated += result["truncated"]
                per_game.append(_game_summary(g, tasks[g][2], specs, result))
                rating_history.append({spec: [t.rating.mu, t.rating.sigma] for spec, t in tallies.items()})
                if out_dir is not None:
                    save_record(record, out_dir / f"game_{g:05d}.json")
                bar.update()
    finally:
        if pool is not None:
            # on an error or Ctrl-C, drop the queued games instead of playing them out
            pool.shutdown(wait=True, cancel_futures=True)
    return {
        "map": map_name,
        "players": num_players,
        "games": games,
        "seed": seed,
        "intermediate_scoring": bool(intermediate_scoring),
        "max_turns": max_turns,
        "agents": list(agent_specs),
        "per_agent": {spec: t.summary() for spec, t in tallies.items()},
        "truncated": truncated,
        "per_game": per_game,
        "rating_history": rating_history,
        "seconds": time.perf_counter() - start,
    }


def write_results(result: dict[str, Any], path: str | os.PathLike) -> None:
    """Write a :func:`run_tournament` result as indented JSON."""
    write_json_atomic(result, path)


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def ranked_agents(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(spec, stats)`` pairs, best OpenSkill ordinal first."""
    return sorted(result["per_agent"].items(), key=lambda kv: -kv[1]["ordinal"])


def format_table(result: dict[str, Any]) -> str:
    """The result as a text table, best OpenSkill ordinal first."""
    rows = ranked_agents(result)
    width = max(5, *(len(spec) for spec, _ in rows))
    head = (f"{'#':>2} {'agent':<{width}} {'games':>6} {'wins':>5} {'win%':>6} {'95% CI':>13} "
            f"{'mean VP':>8} {'mean rank':>9} {'mu':>6} {'sigma':>6} {'ordinal':>7}  wins by seat")
    lines = [_title(result), head, "-" * len(head)]
    for i, (spec, a) in enumerate(rows, 1):
        lo, hi = a["win_rate_ci95"]
        lines.append(
            f"{i:>2} {spec:<{width}} {a['games']:>6} {a['wins']:>5} {100 * a['win_rate']:>5.1f}% "
            f"{f'{100 * lo:.1f}-{100 * hi:.1f}%':>13} {_fmt(a['mean_vp'], '8.1f'):>8} "
            f"{_fmt(a['mean_rank'], '9.2f'):>9} {a['mu']:>6.2f} {a['sigma']:>6.2f} {a['ordinal']:>7.2f}  "
            + " ".join(f"{w}/{g}" for w, g in zip(a["seat_wins"], a["seat_games"])))
    return "\n".join(lines)


def _title(result: dict[str, Any]) -> str:
    extra = ", intermediate scoring" if result.get("intermediate_scoring") else ""
    return (f"{result['map']}, {result['players']} players{extra}: {result['games']} games from seed "
            f"{result['seed']}, {result['truncated']} truncated, {result['seconds']:.1f} s")

