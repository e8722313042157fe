"""Tournaments: many seeded games between agents named by spec strings, with rotated seats.

Game ``g`` (0-based) is set up with seed ``seed + g`` and seat ``k`` is played by
``agent_specs[(k + g) % n]``, so over a multiple of ``n`` games every listed
entry sits in every seat equally often (seat order matters in Concordia: the
start player and the Praefectus Magnus tie-break depend on it).

Per distinct spec (a spec listed twice is one entry, pooled over its seats) the
result holds seat-games, wins, the win rate with its Wilson 95% interval, mean
VP and mean place, wins per seat, forfeits, and an OpenSkill Plackett-Luce rating
(``mu``, ``sigma``, ``ordinal = mu - 3 sigma``) updated game by game in game
order.

Forfeits. An agent that fails at a decision (an illegal action; a bot that crashes, hangs past
its time limit or answers garbage: :class:`~concordia_env.agents.base.AgentError`) does not stop
the tournament: its game is recorded as a forfeit by that seat (``"forfeit": {"seat", "reason"}``
in the record's result and the ``per_game`` entry, see
:mod:`~concordia_env.arena.game_result`) and the next game starts with the agent reset. A
forfeited game has no winner and counts as played for every seat; it is rated with the
forfeiting seat last and the others by their VP at that point (rules' tie-break), so failing
costs rating; it adds to the forfeiting spec's ``forfeits`` and to the result's ``forfeits``, not
to ``truncated``, and not to anyone's mean VP or mean place. Games run in worker processes (or as Ray tasks: ``backend="ray"``) but are processed in
game order, so the result is the same for any number of workers and either backend.

The result also keeps the games themselves, for plots and per-game analysis:
``per_game`` lists every game in game order as ``{"game", "seed", "seats"
(spec per seat), "scores", "ranking", "winner_seat", "winner" (its spec),
"truncated", "turns"}`` plus ``"forfeit"`` for a forfeited game (winners null when truncated), ``per_game_sha256`` its checksum
(:func:`per_game_digest`), and ``rating_history``
lists, per game, every spec's ``[mu, sigma]`` after that game was rated (a
truncated game repeats the previous ratings), so its last entry matches
``per_agent``. ``complete`` says whether every game was played and
``games_done`` how many were.

Interruptions and resuming. With a results file (``out``) the result is written
atomically every ``save_every`` games with ``"complete": false``, and at the end
with ``"complete": true``. A first Ctrl-C (or SIGTERM) stops scheduling games: the games in
flight finish and are kept (records and results written) and
:class:`TournamentInterrupted` is raised; a second one kills the workers at
once (:mod:`concordia_env.arena.pools`, shared by every pool of games). ``resume=True``
continues from the game records when there are any, each replayed from its seed and checked to
give its stored result (a damaged one, and the games after it, are played again with a one-line
warning; results-file entries that differ from them are replaced, with a warning), else from the
results file, whose ``per_game`` list must match its checksum. The per-game list is re-rated in
game order, so a resumed tournament gives exactly the result of an uninterrupted one (apart from
``seconds``). A records folder is marked with :data:`RECORDS_MANIFEST`, naming
the tournament's settings; a folder holding another tournament's records is
refused unless ``overwrite=True``. Worker processes end with their parent, even
when the parent is killed (:func:`~concordia_env.arena.pools.game_worker_init`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce

from concordia_env.env import DEFAULT_MAX_TURNS, check_max_turns
from concordia_env.game import check_setup_args

from ..agents.base import Agent, make_agent
from .pools import Interrupted, process_pool
from .records import play_game, save_record
from .results import (
    RECORD_NAME,
    _check_against_records,
    _game_summary,
    _unfinished,
    check_results_path,
    load_partial_results,
    per_game_digest,
    prepare_record_dir,
    recorded_games,
    seat_specs,  # noqa: F401  (public here too)
    tournament_settings,
    write_results,
)
from .runner import Runner
from .stats import Z95, is_rated, wilson_interval  # noqa: F401  (Z95: public here too)

#: games between two saves of the partial results (``concordia tournament --save-every``)
DEFAULT_SAVE_EVERY = 10
#: where games run: ``local`` (this machine: in this process or a process pool) or ``ray`` (Ray
#: remote tasks, :mod:`concordia_env.integrations.ray_backend`; same results)
BACKENDS = ("local", "ray")

# Agents built in this process, by spec: one instance per seat a spec fills in a
# game, reused across games (each game resets them), so slow-to-build agents
# (policy networks) are built once per worker rather than once per game.
_AGENT_POOL: dict[str, list[Agent]] = {}


def seat_agents(specs: Sequence[str], allow_import: bool = True) -> list[Agent]:
    """Agents for one game's seats from the process-wide pool (the i-th seat a spec fills
    gets that spec's i-th instance, so no instance plays two seats of one game).
    ``allow_import=False`` for specs read from files: a ``module:Class`` spec is refused, not
    imported (:func:`concordia_env.agents.base.make_agent`)."""
    used: dict[str, int] = {}
    out = []
    for spec in specs:
        i = used.get(spec, 0)
        used[spec] = i + 1
        pool = _AGENT_POOL.setdefault(spec, [])
        while len(pool) <= i:
            pool.append(make_agent(spec, allow_import=allow_import))
        out.append(pool[i])
    return out


def _play(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """Play one tournament game (runs in a worker process): task -> game record."""
    map_name, n, game_seed, specs, intermediate, max_turns = task
    return play_game(map_name, n, game_seed, seat_agents(specs),
                     intermediate_scoring=intermediate, max_turns=max_turns, forfeit=True)


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
        self.games = self.wins = self.finished = self.vp = self.places = self.forfeits = 0
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
            "forfeits": self.forfeits,
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


def _tally_game(model: PlackettLuce, tallies: dict[str, _Tally], game: dict[str, Any]) -> None:
    """Add one game (a ``per_game`` entry) to the tallies (truncated games: played, not won, not
    rated; forfeited games: played, not won, rated with the forfeiting seat last)."""
    specs, truncated, forfeit = game["seats"], game["truncated"], game.get("forfeit")
    for seat, spec in enumerate(specs):
        t = tallies[spec]
        t.games += 1
        t.seat_games[seat] += 1
        t.forfeits += forfeit is not None and forfeit["seat"] == seat
        if truncated:
            continue
        t.finished += 1
        t.vp += game["scores"][seat]
        t.places += game["ranking"].index(seat) + 1
        if game["winner_seat"] == seat:
            t.wins += 1
            t.seat_wins[seat] += 1
    if is_rated(game):
        _rate(model, tallies, specs, game["ranking"])


# ---------------------------------------------------------------- interrupts
class TournamentInterrupted(Interrupted):
    """Ctrl-C (or SIGTERM) stopped :func:`run_tournament` (:mod:`concordia_env.arena.pools`).

    After a first Ctrl-C the games in flight were finished and saved: ``result`` is the partial
    result (``"complete": false``). After a second one (``aborted``) the games in flight were
    killed and ``result`` is None. ``saved``: whether anything a resume can start from was
    written (results file or records)."""

    def __init__(self, result: dict[str, Any] | None, aborted: bool = False, saved: bool = False) -> None:
        KeyboardInterrupt.__init__(self, "tournament aborted" if aborted else "tournament interrupted")
        self.result = result
        self.aborted = aborted
        self.saved = saved


Task = tuple[str, int, int, tuple[str, ...], bool, int]


# ---------------------------------------------------------------- running
class _Scoreboard:
    """The tallies, ratings and game list of the games processed so far, in game order."""

    def __init__(self, settings: dict[str, Any]) -> None:
        self.settings = settings
        self.model = PlackettLuce()
        self.tallies = {spec: _Tally(settings["players"], self.model, spec)
                        for spec in dict.fromkeys(settings["agents"])}
        self.per_game: list[dict[str, Any]] = []
        self.rating_history: list[dict[str, list[float]]] = []
        self.truncated = self.forfeits = 0

    def add(self, game: dict[str, Any]) -> None:
        _tally_game(self.model, self.tallies, game)
        forfeited = "forfeit" in game
        self.truncated += game["truncated"] and not forfeited
        self.forfeits += forfeited
        self.per_game.append(game)
        self.rating_history.append({spec: [t.rating.mu, t.rating.sigma] for spec, t in self.tallies.items()})

    def result(self, seconds: float) -> dict[str, Any]:
        s = self.settings
        done = len(self.per_game)
        return {
            "map": s["map"],
            "players": s["players"],
            "games": s["games"],
            "seed": s["seed"],
            "intermediate_scoring": s["intermediate_scoring"],
            "max_turns": s["max_turns"],
            "agents": list(s["agents"]),
            "complete": done == s["games"],
            "games_done": done,
            "per_agent": {spec: t.summary() for spec, t in self.tallies.items()},
            "truncated": self.truncated,
            "forfeits": self.forfeits,
            "per_game": list(self.per_game),
            "per_game_sha256": per_game_digest(self.per_game),
            "rating_history": list(self.rating_history),
            "seconds": seconds,
        }


@dataclass
class Tournament:
    """A checked tournament, ready to :meth:`run`: its settings (:func:`tournament_settings`), output
    paths, and when resumed the games already played (``done``) and the seconds they took."""

    settings: dict[str, Any]
    workers: int = 1
    out: Path | None = None
    record_dir: Path | None = None
    save_every: int = DEFAULT_SAVE_EVERY
    done: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    backend: str = "local"
    address: str | None = None

    def _pool(self, workers: int) -> Executor | None:
        """Where the games run: None (this process), a process pool of ``workers``, or Ray tasks."""
        if self.backend == "ray":
            from ..integrations.ray_backend import RayGamePool

            return RayGamePool(self.address)
        return process_pool(workers)

    def _task(self, g: int) -> Task:
        s = self.settings
        return (s["map"], s["players"], s["seed"] + g, tuple(seat_specs(s["agents"], g)), s["intermediate_scoring"],
                s["max_turns"])

    def run(self, progress: bool = True, graceful_interrupt: bool = True) -> dict[str, Any]:
        """Play the games not done yet and return the result (see the module doc), writing the
        records and the results file (every ``save_every`` games and at the end) as it goes.

        ``graceful_interrupt``: a first Ctrl-C finishes the games in flight, saves and raises
        :class:`TournamentInterrupted` with the partial result; a second kills the workers and
        raises it at once (aborted). Without it Ctrl-C kills the workers at once."""
        games = self.settings["games"]
        start = time.perf_counter()
        board = _Scoreboard(self.settings)
        for game in self.done:
            board.add(game)
        saved = bool(self.done)
        tasks = [(g, self._task(g)) for g in range(len(self.done), games)]
        workers = max(1, min(self.workers, len(tasks)))
        try:
            with Runner(_play, [task for _, task in tasks], workers=workers,
                        pool=self._pool(workers) if tasks else None, progress=progress, total=games,
                        initial=len(self.done), desc=f"{self.settings['map']} {self.settings['players']}p",
                        graceful=graceful_interrupt) as run:
                for i, record in run:
                    saved = self._add(board, tasks[i][0], record, start) or saved
        except Interrupted as exc:  # a second Ctrl-C: the games in flight were killed
            raise TournamentInterrupted(None, aborted=exc.aborted, saved=saved) from None
        result = self._save(board, start) if self.out is not None else board.result(self._seconds(start))
        if not result["complete"]:
            raise TournamentInterrupted(result, saved=saved or self.out is not None)
        return result

    def _add(self, board: _Scoreboard, g: int, record: dict[str, Any], start: float) -> bool:
        """Add game ``g`` to the board, write its record and, every ``save_every`` games, the
        partial results; whether anything was written."""
        games = self.settings["games"]
        board.add(_game_summary(g, self.settings["seed"] + g, seat_specs(self.settings["agents"], g),
                                record["result"]))
        saved = False
        if self.record_dir is not None:
            path = self.record_dir / RECORD_NAME.format(g)
            save_record(record, path)
            saved = True
        done = len(board.per_game)
        if self.out is not None and self.save_every and done % self.save_every == 0 and done < games:
            self._save(board, start)
            saved = True
        return saved

    def _seconds(self, start: float) -> float:
        return self.seconds + time.perf_counter() - start

    def _save(self, board: _Scoreboard, start: float) -> dict[str, Any]:
        assert self.out is not None
        result = board.result(self._seconds(start))
        write_results(result, self.out)
        return result


def prepare_tournament(map_name: str, num_players: int, agent_specs: Sequence[str], games: int, seed: int = 0,
                       workers: int = 1, intermediate_scoring: bool = False,
                       record_dir: str | os.PathLike | None = None, max_turns: int | None = DEFAULT_MAX_TURNS, *,
                       out: str | os.PathLike | None = None, save_every: int = DEFAULT_SAVE_EVERY,
                       resume: bool = False, overwrite: bool = False, backend: str = "local",
                       address: str | None = None) -> Tournament:
    """Check a tournament's arguments and output paths and load what a resumed run has done,
    before any game is played; ``ValueError`` says what is wrong (see :func:`run_tournament`)."""
    agent_specs = [s.strip() if isinstance(s, str) else s for s in agent_specs]
    check_tournament_args(map_name, num_players, agent_specs, games, workers)
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError("a Ray address needs the ray backend (--backend ray)")
    settings = tournament_settings(map_name, num_players, agent_specs, games, seed, intermediate_scoring,
                                   check_max_turns(max_turns))
    if isinstance(save_every, bool) or not isinstance(save_every, int) or save_every < 0:
        raise ValueError(f"save_every must be a non-negative int (0: save only at the end), got {save_every!r}")
    if resume and overwrite:
        raise ValueError("--resume continues a tournament and --overwrite starts it afresh: give one of them")
    if resume and out is None and record_dir is None:
        raise ValueError("--resume needs the results file (--out) or the records folder (--records) to resume from")
    out_path = check_results_path(out) if out is not None else None
    if resume and not (out_path is not None and out_path.exists()) and not (
            record_dir is not None and Path(record_dir).is_dir() and any(Path(record_dir).glob("game_*.json"))):
        where = " or ".join(f"{w} {p}" for w, p in (("results file", out), ("records folder", record_dir)) if p)
        raise ValueError(f"--resume: nothing to resume in {where}; run without --resume to start")
    done: list[dict[str, Any]] = []
    seconds = 0.0
    if out_path is not None and out_path.exists():
        if resume:  # with records, they decide (verified by replay); without, the file's checksum must hold
            done, seconds = load_partial_results(out_path, settings, check_digest=record_dir is None)
        elif not overwrite and (partial := _unfinished(out_path)) is not None:
            raise ValueError(f"results file {out_path} holds an unfinished tournament ({partial.get('games_done')} "
                             f"of {partial.get('games')} games): add --resume to continue it, or --overwrite to "
                             f"start afresh")
    folder = prepare_record_dir(record_dir, settings, overwrite) if record_dir is not None else None
    if resume and folder is not None:
        verified = recorded_games(folder, 0, settings)
        if out_path is not None:
            _check_against_records(out_path, done, verified, folder)
        done = verified
    return Tournament(settings, workers, out_path, folder, save_every, done, seconds, backend, address)


def run_tournament(map_name: str, num_players: int, agent_specs: Sequence[str], games: int, seed: int = 0,
                   workers: int = 1, intermediate_scoring: bool = False,
                   record_dir: str | os.PathLike | None = None, progress: bool = True,
                   max_turns: int | None = DEFAULT_MAX_TURNS, *, out: str | os.PathLike | None = None,
                   save_every: int = DEFAULT_SAVE_EVERY, resume: bool = False, overwrite: bool = False,
                   graceful_interrupt: bool = True, backend: str = "local",
                   address: str | None = None) -> dict[str, Any]:
    """Play ``games`` games with rotated seats (see the module doc) and return the statistics.

    ``agent_specs`` has one spec per seat; ``games`` must be a multiple of the
    player count. ``record_dir``: write every game's record there as
    ``game_{g:05d}.json`` (see :func:`prepare_record_dir`). ``progress``: a tqdm bar on stderr. Games
    stopped at ``max_turns`` card plays count as played, without a winner, and are not rated.
    Besides the per-agent statistics the result lists every game (``per_game``)
    and the ratings after each game (``rating_history``); see the module doc.

    ``out``: write the result there as JSON, every ``save_every`` games (``"complete": false``;
    0: only at the end) and at the end; its folder is created if missing. An unfinished
    tournament's file is not replaced unless ``resume`` (continue it: the settings must be the
    same) or ``overwrite`` (start afresh; also deletes another tournament's records in
    ``record_dir``). Ctrl-C: see :meth:`Tournament.run` (:class:`TournamentInterrupted`).
    ``ValueError`` for bad arguments or output paths (before any game is played).

    ``backend``: ``"local"`` (default; ``workers`` processes) or ``"ray"``: every game a Ray task
    (:mod:`concordia_env.integrations.ray_backend`), at most ``workers`` in flight, on the cluster
    at ``address`` (None: a local Ray instance, or the Ray this process is connected to); the
    result is the local backend's. ``ImportError`` if Ray is missing.
    """
    tournament = prepare_tournament(map_name, num_players, agent_specs, games, seed, workers, intermediate_scoring,
                                    record_dir, max_turns, out=out, save_every=save_every, resume=resume,
                                    overwrite=overwrite, backend=backend, address=address)
    return tournament.run(progress=progress, graceful_interrupt=graceful_interrupt)


def _fmt(x: float | None, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def ranked_agents(result: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """``(spec, stats)`` pairs, best OpenSkill ordinal first."""
    return sorted(result["per_agent"].items(), key=lambda kv: -kv[1]["ordinal"])


#: the forfeits :func:`format_table` lists under the table (the results file keeps them all)
SHOWN_FORFEITS = 10


def format_table(result: dict[str, Any]) -> str:
    """The result as a text table, best OpenSkill ordinal first; with forfeits, a ``forfeits``
    column and one line per forfeited game (the first :data:`SHOWN_FORFEITS`) under it."""
    rows = ranked_agents(result)
    forfeits = [g for g in result.get("per_game", []) if "forfeit" in g]
    width = max(5, *(len(spec) for spec, _ in rows))
    forf = f" {'forfeits':>8}" if forfeits else ""
    head = (f"{'#':>2} {'agent':<{width}} {'games':>6} {'wins':>5} {'win%':>6} {'95% CI':>13} "
            f"{'mean VP':>8} {'mean rank':>9} {'mu':>6} {'sigma':>6} {'ordinal':>7}{forf}  wins by seat")
    lines = [_title(result), head, "-" * len(head)]
    for i, (spec, a) in enumerate(rows, 1):
        lo, hi = a["win_rate_ci95"]
        lines.append(
            f"{i:>2} {spec:<{width}} {a['games']:>6} {a['wins']:>5} {100 * a['win_rate']:>5.1f}% "
            f"{f'{100 * lo:.1f}-{100 * hi:.1f}%':>13} {_fmt(a['mean_vp'], '8.1f'):>8} "
            f"{_fmt(a['mean_rank'], '9.2f'):>9} {a['mu']:>6.2f} {a['sigma']:>6.2f} {a['ordinal']:>7.2f}"
            + (f" {a.get('forfeits', 0):>8}" if forfeits else "") + "  "
            + " ".join(f"{w}/{g}" for w, g in zip(a["seat_wins"], a["seat_games"])))
    return "\n".join(lines + forfeit_lines(forfeits))


def forfeit_line(game: dict[str, Any], where: str = "") -> str:
    """One line for a forfeited game (a ``per_game`` entry): ``where`` it was played (e.g. a line
    id, then a space), the game, the seat, its spec and the reason."""
    seat = game["forfeit"]["seat"]
    return f"forfeit: {where}game {game['game']}, seat {seat} ({game['seats'][seat]}): {game['forfeit']['reason']}"


def forfeit_lines(forfeits: Sequence[dict[str, Any]], where: Sequence[str] | None = None) -> list[str]:
    """One line per forfeited game (``per_game`` entries; ``where``: a prefix for each, see
    :func:`forfeit_line`), the first :data:`SHOWN_FORFEITS`, then how many more there are."""
    lines = [forfeit_line(g, where[i] if where is not None else "") for i, g in enumerate(forfeits[:SHOWN_FORFEITS])]
    if len(forfeits) > SHOWN_FORFEITS:
        lines.append(f"... and {len(forfeits) - SHOWN_FORFEITS} more forfeits (see per_game in the results)")
    return lines


def _title(result: dict[str, Any]) -> str:
    extra = ", intermediate scoring" if result.get("intermediate_scoring") else ""
    games = f"{result['games']} games"
    if result.get("complete") is False:
        games = f"{result.get('games_done')} of {games} (unfinished)"
    forfeits = f", {result['forfeits']} forfeited" if result.get("forfeits") else ""
    return (f"{result['map']}, {result['players']} players{extra}: {games} from seed "
            f"{result['seed']}, {result['truncated']} truncated{forfeits}, {result['seconds']:.1f} s")
