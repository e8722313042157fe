"""The strength table's chunk files: finding, checking, planning, playing and merging them."""

from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._internal.files import write_json_atomic
from ..evaluation import (
    RESULT_FORMAT,
    RESULT_VERSION,
    _game_entry,
    _play,
    agent_statistics,
    check_evaluation_args,
    library_versions,
    paired_summary,
)
from ..pools import Interrupted
from ..run_folder import set_aside
from ..runner import Runner
from ..tournament import seat_specs
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


def _check_entry(entry: Any, i: int, lineup: Sequence[str], seed: int) -> str | None:
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
    return None


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
        problem = _check_entry(entry, i, line.lineup, line.seed + first)
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
        "pairing": PAIRING, "truncated": sum(g["truncated"] for g in per_game),
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
        "truncated": sum(g["truncated"] for g in per_game),
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
def _play_timed(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """One game in a worker: evaluation's raw result plus its wall time (``wall_seconds``)."""
    start = time.perf_counter()
    played = _play(task)
    return {**played, "wall_seconds": time.perf_counter() - start}


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
              command: str | None = None) -> dict[str, int]:
    """Play the chunks of the selected lines (``lines``: comma-separated globs) that ``out`` does not
    hold yet, writing each chunk as soon as its games are done (module doc, "Chunks").

    Returns counts: ``chunks_written``, ``games_played`` and ``deals_kept`` (deals of the selected
    lines that valid chunk files already held). ``ValueError`` for bad arguments or agents that
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
    report = {"chunks_written": 0, "games_played": 0, "deals_kept": planned - sum(j.last - j.first + 1 for j in jobs)}
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
        if all(p is not None for p in job.played):
            result = chunk_result(job.line, job.first, job.last, job.played, command, machine)  # type: ignore[arg-type]
            write_json_atomic(result, line_folder(out, job.line) / chunk_name(job.first, job.last))
            report["chunks_written"] += 1
            bar.set_postfix(chunks=f"{report['chunks_written']}/{len(jobs)}", refresh=False)

    with Runner(_play_timed, [task for _, _, task in tasks], workers=workers, progress=progress,
                desc="strength", leave=True) as run:
        for k, played in run:
            finish(tasks[k][0], tasks[k][1], played, run.bar)
    if run.cut_short:  # stopped: the chunks the finished games completed are written
        raise Interrupted()
    return report
