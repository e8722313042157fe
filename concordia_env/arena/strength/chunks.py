"""The strength table's chunk files: finding, checking, planning, playing and merging them."""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._internal.files import write_json_atomic
from ...dataset.format import chunk_games_path, game_line, write_dataset
from ..evaluation import (
    RESULT_FORMAT,
    RESULT_VERSION,
    TimedAgent,
    _game_entry,
    agent_statistics,
    check_evaluation_args,
    game_counts,
    library_versions,
    paired_summary,
)
from ..game_result import GameResult
from ..pools import Interrupted
from ..records import check_forfeit, play_game
from ..run_folder import set_aside
from ..runner import Runner
from ..stats import forfeited_seat
from ..tournament import forfeit_line, seat_agents, seat_specs
from .config import Line, StrengthConfig, StrengthWarning, _is_int, select_lines

DEFAULT_DEALS_CHUNK = 10
#: as in run_evaluation's results
PAIRING = ("deal k uses setup seed seed+k and is played once per rotation r = 0..n-1, "
           "seat j taken by lineup[(j + r) % n]; game = k * n + r")
#: what happens to the deals of a chunk that cannot be used
REDO = "its deals will be played again"
CHUNK_RE = re.compile(r"^deals_(\d+)-(\d+)\.json$")


# ---------------------------------------------------------------- chunk files
def _warn(message: str) -> None:
    warnings.warn(f"chunk {message}", StrengthWarning, stacklevel=3)


def line_folder(out: str | os.PathLike, line: Line) -> Path:
    """Where a line's chunk files live."""
    return Path(out) / "lines" / line.id


def chunk_name(first: int, last: int) -> str:
    """``deals_<first>-<last>.json`` for deals ``first..last`` (inclusive)."""
    return f"deals_{first:03d}-{last:03d}.json"


def _forfeit_problem(entry: dict[str, Any], n: int, max_turns: int | None) -> str | None:
    """What is wrong with how a game entry stopped: a forfeit block that is malformed or does not
    match the entry (truncated, no winner, that seat last), or a game truncated without a forfeit
    before the card-play limit ``max_turns`` (None: not checked)."""
    if "forfeit" not in entry:
        if entry["truncated"] and max_turns is not None and entry.get("turns") != max_turns:
            return f"truncated after {entry.get('turns')!r} card plays, before the limit of {max_turns}, without a forfeit"
        return None
    try:
        seat, _ = check_forfeit(entry["forfeit"], n)
    except ValueError as exc:
        return str(exc)
    if entry["truncated"] is not True or entry.get("winner_seat") is not None or entry["ranking"][-1] != seat:
        return f"a forfeit by seat {seat} needs truncated true, no winner and seat {seat} ranked last"
    return None


def _check_entry(entry: Any, i: int, lineup: Sequence[str], seed: int, max_turns: int | None = None) -> str | None:
    """Why ``entry`` is not game ``i`` of a line-up's deals from ``seed`` (module doc), None if it is;
    ``max_turns``: the card-play limit a truncated game without a forfeit must have stopped at."""
    n = len(lineup)
    k, r = divmod(i, n)
    expected = {"game": i, "deal": k, "rotation": r, "seed": seed + k, "seats": seat_specs(lineup, r)}
    for key, value in expected.items():
        if entry.get(key) != value:
            return f"game {i}: {key} is {entry.get(key)!r}, expected {value!r}"
    for key in ("scores", "ranking", "decisions", "act_seconds"):
        if not isinstance(entry.get(key), list) or len(entry[key]) != n:
            return f"game {i}: {key} is not a list of {n} entries"
    if sorted(entry["ranking"]) != list(range(n)) or not isinstance(entry.get("truncated"), bool):
        return f"game {i}: ranking or truncated malformed"
    if entry.get("winner_seat") not in (None, *range(n)):
        return f"game {i}: winner_seat {entry.get('winner_seat')!r} malformed"
    problem = _forfeit_problem(entry, n, max_turns)
    return None if problem is None else f"game {i}: {problem}"


def chunk_problem(data: Any, line: Line, first: int, last: int) -> str | None:
    """Why ``data`` (a loaded chunk file) is not the chunk ``first..last`` of ``line``; None if it is."""
    if not isinstance(data, dict):
        return "not a JSON object"
    deals = last - first + 1
    expected = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "map": line.map, "players": line.players,
                "lineup": list(line.lineup), "deals": deals, "seed": line.seed + first, "games": deals * line.players,
                "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns,
                "chunk": {"line": line.id, "first_deal": first, "last_deal": last, "setting_seed": line.seed}}
    for key, value in expected.items():
        if data.get(key) != value:
            return f"{key} is {data.get(key)!r}, this config needs {value!r}"
    games = data.get("per_game")
    if not isinstance(games, list) or len(games) != deals * line.players:
        return f"per_game does not list {deals * line.players} games"
    for i, entry in enumerate(games):
        if not isinstance(entry, dict):
            return f"game {i} is not an object"
        problem = _check_entry(entry, i, line.lineup, line.seed + first, line.max_turns or None)
        if problem:
            return problem
    return None


@dataclass
class LineChunks:
    """What a line's folder holds: per deal the chunk file and its games (global deal and game numbers)."""

    games: dict[int, list[dict[str, Any]]]
    files: dict[int, Path]
    invalid: list[tuple[Path, str]]
    machines: list[str]


def scan_line(line: Line, out: str | os.PathLike, warn: bool = True) -> LineChunks:
    """Read the line's chunk files (in name order; a deal held by two files is taken from the first).
    Unusable files are listed in ``invalid`` and, with ``warn``, reported as :class:`StrengthWarning`."""
    folder = line_folder(out, line)
    found = LineChunks({}, {}, [], [])
    paths = sorted(p for p in folder.glob("deals_*.json") if p.is_file()) if folder.is_dir() else []
    n = line.players
    for path in paths:
        m = CHUNK_RE.match(path.name)
        first, last = (int(m[1]), int(m[2])) if m else (-1, -1)
        data, problem = None, None
        if not 0 <= first <= last < line.deals:
            problem = f"the name is not deals_<first>-<last>.json with deals of 0..{line.deals - 1}"
        else:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                problem = chunk_problem(data, line, first, last)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                problem = f"unreadable ({exc})"
        if problem is not None or not isinstance(data, dict):
            found.invalid.append((path, str(problem)))
            if warn:
                _warn(f"{path}: {problem}; {REDO}")
            continue
        run = data.get("run")
        machine = run.get("machine") if isinstance(run, dict) else None
        if isinstance(machine, str) and machine not in found.machines:
            found.machines.append(machine)
        for k in range(last - first + 1):
            deal = first + k
            if deal in found.games:
                continue
            found.files[deal] = path
            found.games[deal] = [{**g, "deal": deal, "game": deal * n + g["rotation"]}
                                 for g in data["per_game"][k * n:(k + 1) * n]]
    return found


def plan_chunks(line: Line, done: Iterable[int], deals_chunk: int) -> list[tuple[int, int]]:
    """``(first, last)`` of the chunks still to play: the deals not in ``done``, cut at multiples of ``deals_chunk``."""
    have = set(done)
    chunks: list[tuple[int, int]] = []
    for deal in range(line.deals):
        if deal in have:
            continue
        if chunks and chunks[-1][1] == deal - 1 and deal % deals_chunk:
            chunks[-1] = (chunks[-1][0], deal)
        else:
            chunks.append((deal, deal))
    return chunks


def merged_line_result(line: Line, chunks: LineChunks) -> dict[str, Any]:
    """The line's games from its chunks as one evaluation result (module doc, "Merging")."""
    per_game = [g for deal in sorted(chunks.games) for g in chunks.games[deal]]
    lineup = list(line.lineup)
    return {
        "format": RESULT_FORMAT, "version": RESULT_VERSION,
        "map": line.map, "players": line.players, "lineup": lineup, "deals": len(chunks.games), "seed": line.seed,
        "games": len(per_game), "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns,
        "pairing": PAIRING, **game_counts(per_game),
        "per_agent": agent_statistics(per_game, lineup), "paired": paired_summary(per_game, lineup),
        "per_game": per_game,
        "run": {"line": line.id, "chunks": sorted({p.name for p in chunks.files.values()}),
                "machines": list(chunks.machines)},
    }


def chunk_result(line: Line, first: int, last: int, played: Sequence[dict[str, Any]],
                 command: str | None, machine: str) -> dict[str, Any]:
    """The chunk file's content: the evaluation result of deals ``first..last`` from the games'
    raw results (``played``, in game order), as ``run_evaluation`` with ``seed = line seed + first`` gives it.
    ``run.seconds`` adds up the games' wall times (they may have run in parallel, among other lines' games)."""
    n, deals, seed, lineup = line.players, last - first + 1, line.seed + first, list(line.lineup)
    per_game = [_game_entry(g, g // n, g % n, seed + g // n, seat_specs(lineup, g % n), p) for g, p in enumerate(played)]
    return {
        "format": RESULT_FORMAT, "version": RESULT_VERSION,
        "map": line.map, "players": n, "lineup": lineup, "deals": deals, "seed": seed, "games": len(per_game),
        "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns, "pairing": PAIRING,
        **game_counts(per_game),
        "per_agent": agent_statistics(per_game, lineup), "paired": paired_summary(per_game, lineup),
        "per_game": per_game,
        "run": {"command": command,
                "arguments": {"map": line.map, "players": n, "lineup": lineup, "deals": deals, "seed": seed,
                              "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns},
                "seconds": sum(float(p.get("wall_seconds", 0.0)) for p in played),
                "versions": library_versions(), "machine": machine},
        "chunk": {"line": line.id, "first_deal": first, "last_deal": last, "setting_seed": line.seed},
    }


# ---------------------------------------------------------------- playing
def _play(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """One game in a worker: evaluation's raw result (the agents timed) plus its action ids
    (``actions``), which the chunk's games file keeps. An agent that fails (an illegal action, a
    bot that crashes, hangs or answers garbage) forfeits the game, as in a tournament: the result
    says so (``forfeit``) and the run goes on."""
    return play_seats(*task)


def play_seats(map_name: str, n: int, game_seed: int, specs: Sequence[str], intermediate: bool, max_turns: int,
               allow_import: bool = True) -> dict[str, Any]:
    """:func:`_play`'s game with the seats' agents from the process pool (``allow_import=False`` for
    specs read from files, as a replay's are)."""
    timed = [TimedAgent(a) for a in seat_agents(specs, allow_import=allow_import)]
    record = play_game(map_name, n, game_seed, timed, intermediate_scoring=intermediate, max_turns=max_turns,
                       forfeit=True)
    result = GameResult.from_json(record["result"]).timed([t.decisions for t in timed], [t.seconds for t in timed])
    return {**result.to_json(), "actions": record["actions"]}


def _play_timed(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """One game in a worker: :func:`_play` plus its wall time (``wall_seconds``)."""
    start = time.perf_counter()
    played = _play(task)
    return {**played, "wall_seconds": time.perf_counter() - start}


def chunk_games(line: Line, first: int, played: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The data-set lines (:mod:`concordia_env.dataset`) of a chunk's games, from their raw results
    (``played``, in game order, each with its ``actions``); ``source`` names the line, chunk and game."""
    n, lineup = line.players, list(line.lineup)
    name = chunk_name(first, first + len(played) // n - 1)
    return [game_line(map_name=line.map, players=n, seed=line.seed + first + g // n,
                      intermediate_scoring=line.intermediate_scoring, agents=seat_specs(lineup, g % n),
                      actions=p["actions"], result=p, source=f"{line.id}/{name}#{g}") for g, p in enumerate(played)]


@dataclass
class _Job:
    line: Line
    first: int
    last: int
    played: list[dict[str, Any] | None]

    def tasks(self) -> list[tuple[str, int, int, tuple[str, ...], bool, int]]:
        n = self.line.players
        return [(self.line.map, n, self.line.seed + self.first + g // n, tuple(seat_specs(self.line.lineup, g % n)),
                 self.line.intermediate_scoring, self.line.max_turns) for g in range(len(self.played))]


def forfeit_notice(line: Line, game: int, played: dict[str, Any]) -> str | None:
    """The one line that says game ``game`` of ``line`` (its raw result ``played``) was forfeited,
    naming the line, game, seat, agent and reason (as a tournament's table does); None if it was not."""
    if forfeited_seat(played) is None:
        return None
    entry = {"game": game, "seats": seat_specs(line.lineup, game % line.players), "forfeit": played["forfeit"]}
    return forfeit_line(entry, f"{line.id} ")


def _prepare(lines: Sequence[Line], out: Path, deals_chunk: int) -> list[_Job]:
    jobs = []
    for line in lines:
        found = scan_line(line, out, warn=False)
        for path, problem in found.invalid:
            set_aside(path, problem, REDO, _warn)
        for first, last in plan_chunks(line, found.games, deals_chunk):
            jobs.append(_Job(line, first, last, [None] * ((last - first + 1) * line.players)))
    return jobs


def run_lines(config: StrengthConfig, out: str | os.PathLike, *, lines: str | None = None, workers: int = 1,
              deals_chunk: int = DEFAULT_DEALS_CHUNK, progress: bool = True,
              command: str | None = None, on_forfeit: Callable[[str], None] | None = None) -> dict[str, int]:
    """Play the chunks of the selected lines (``lines``: comma-separated globs) that ``out`` does not
    hold yet, writing each chunk as soon as its games are done (module doc, "Chunks").

    Returns counts: ``chunks_written``, ``games_played``, ``forfeits`` (of the games played) and
    ``deals_kept`` (deals of the selected lines that valid chunk files already held). An agent that
    fails forfeits its game (module doc, "Forfeits"): recorded, and the run goes on; ``on_forfeit``
    gets :func:`forfeit_notice`'s line for each. ``ValueError`` for bad arguments or agents that
    cannot be built, before any game. Ctrl-C or SIGTERM (:mod:`concordia_env.arena.pools`): the games in
    flight finish and the chunks they complete are written, then ``Interrupted``; a second one kills them.
    """
    for name, value in (("workers", workers), ("deals_chunk", deals_chunk)):
        if not _is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    selected = select_lines(config, lines)
    out = Path(out)
    jobs = _prepare(selected, out, deals_chunk)
    planned = sum(line.deals for line in selected)
    report = {"chunks_written": 0, "games_played": 0, "forfeits": 0,
              "deals_kept": planned - sum(j.last - j.first + 1 for j in jobs)}
    if not jobs:
        return report
    for line in dict.fromkeys(j.line for j in jobs):  # builds every agent here, before the workers fork
        try:
            check_evaluation_args(line.map, line.players, list(line.lineup), line.deals, line.seed)
        except ValueError as exc:
            raise ValueError(f"line {line.id}: {exc}") from None
    from ...tools.bench import machine_description  # here: the benchmark module is not needed to play

    machine = machine_description()
    tasks = [(j, g, task) for j, job in enumerate(jobs) for g, task in enumerate(job.tasks())]

    def finish(j: int, g: int, played: dict[str, Any], bar: Any) -> None:
        job = jobs[j]
        job.played[g] = played
        report["games_played"] += 1
        notice = forfeit_notice(job.line, job.first * job.line.players + g, played)
        if notice is not None:
            report["forfeits"] += 1
            if on_forfeit is not None:
                on_forfeit(notice)
        if all(p is not None for p in job.played):
            result = chunk_result(job.line, job.first, job.last, job.played, command, machine)  # type: ignore[arg-type]
            path = line_folder(out, job.line) / chunk_name(job.first, job.last)
            # the games file first: a chunk file, once written, always has its games beside it
            write_dataset(chunk_games_path(path), chunk_games(job.line, job.first, job.played))  # type: ignore[arg-type]
            write_json_atomic(result, path)
            report["chunks_written"] += 1
            bar.set_postfix(chunks=f"{report['chunks_written']}/{len(jobs)}", refresh=False)

    with Runner(_play_timed, [task for _, _, task in tasks], workers=workers, progress=progress,
                desc="strength", leave=True) as run:
        for k, played in run:
            finish(tasks[k][0], tasks[k][1], played, run.bar)
    if run.cut_short:  # stopped: the chunks the finished games completed are written
        raise Interrupted()
    return report
