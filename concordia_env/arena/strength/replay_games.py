"""Re-playing the games of strength-table chunks that have no games file, to write that file.

Chunks written before the table kept its games hold per game its seed, seats and result, not its
actions. Every agent of a table is seeded (each game resets it with the game's seat seeds) and
deterministic, so a chunk's games can be played again and their actions recorded::

    python -m concordia_env.arena.strength --replay-games --config results/strength/config.json \
        --out results/strength --lines 'italia2-*'

The contract:

- a chunk (``lines/<line>/deals_<a>-<b>.json``) is replayed when it is valid for the config
  (:func:`~concordia_env.arena.strength.chunks.chunk_problem`) and has no games file beside it; one
  with a games file is skipped, so running the command again goes on where it stopped. A chunk
  that is not valid is reported with a warning and left alone (nothing is renamed);
- each game is played from the chunk's seed and seat specs with agents built by
  :func:`~concordia_env.agents.base.make_agent` with ``allow_import=False`` (the specs come from
  files), in the worker pool of :class:`~concordia_env.arena.runner.Runner`;
- every replayed game must give the chunk's scores, ranking, winning seat, truncation, card plays,
  decisions per seat and forfeit. A game with an ``az`` seat that differs is played once more with
  ``az``'s numpy search (``compiled=0``), which the table's ``az`` games were played with: the
  compiled search makes the same moves but for rare near-ties (:func:`numpy_search_specs`). A chunk with a game that differs gets no games file, and one
  :class:`~concordia_env.arena.strength.config.StrengthWarning` line names the chunk, its first
  differing game and what differs;
- the games file is written atomically by the code a strength run writes it with
  (:func:`~concordia_env.arena.strength.chunks.chunk_games`), so it is byte for byte the file the
  run would have written;
- Ctrl-C or SIGTERM: the games in flight finish, the chunks they complete are written, then
  :class:`~concordia_env.arena.pools.Interrupted`.

Nothing else in the folder changes: the chunk files, the summary and the table stay as they are.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from ...dataset.format import chunk_games_path, write_dataset
from ..pools import Interrupted
from ..runner import Runner
from ..tournament import seat_agents
from .chunks import CHUNK_RE, chunk_games, chunk_problem, line_folder, play_seats
from .config import Line, StrengthConfig, StrengthWarning, _is_int, select_lines

#: (chunk entry key, replayed result key, what the mismatch line calls it): what a replay must reproduce
CHECKED = (("scores", "scores", "scores"), ("ranking", "ranking", "ranking"), ("winner_seat", "winner", "winning seat"),
           ("truncated", "truncated", "truncation"), ("turns", "turns", "card plays"),
           ("decisions", "decisions", "decisions per seat"), ("forfeit", "forfeit", "forfeit"))

#: map, players, seed, seat specs, intermediate scoring, card-play limit, and the chunk's entry of the game
Task = tuple[str, int, int, tuple[str, ...], bool, int, dict[str, Any]]



@dataclass
class ReplayReport:
    """What a replay did: the games files written, the games replayed, the chunks that already had
    their games file, and the chunks left without one (a game that did not replay to its result,
    or a chunk that is not valid for the config)."""

    chunks_written: int = 0
    games_replayed: int = 0
    chunks_kept: int = 0
    mismatched: list[Path] = field(default_factory=list)
    unusable: list[Path] = field(default_factory=list)


@dataclass
class _Job:
    """One chunk to replay: its line, file, first deal, ``per_game`` entries and the results so far."""

    line: Line
    path: Path
    first: int
    entries: list[dict[str, Any]]
    played: list[dict[str, Any] | None]

    def tasks(self) -> list[Task]:
        line = self.line
        return [(line.map, line.players, int(e["seed"]), tuple(e["seats"]), line.intermediate_scoring,
                 line.max_turns, e) for e in self.entries]


# ---------------------------------------------------------------- playing (in a worker)
def numpy_search_specs(specs: Sequence[str]) -> tuple[str, ...] | None:
    """``specs`` with every ``az`` spec that names no ``compiled`` option set to ``compiled=0``; None if
    there is none. The table's ``az`` games were played before its search was compiled whole; the
    compiled search makes the same moves except, rarely, where two moves' values differ by less
    than the two searches' rounding (about 1e-6), so such a game is played again with the numpy search."""
    changed = tuple(f"{s}:compiled=0" if s.split(":")[0] == "az" and ":compiled=" not in s else s for s in specs)
    return changed if changed != tuple(specs) else None


def _play(task: Task, specs: Sequence[str]) -> dict[str, Any]:
    map_name, n, seed, _, intermediate, max_turns, _ = task
    return play_seats(map_name, n, seed, specs, intermediate, max_turns, allow_import=False)


def _replay(task: Task) -> dict[str, Any]:
    """One game: its result (timed, as a strength run's worker returns it), its ``actions`` and
    ``wall_seconds``; played with the numpy ``az`` search again if it differs from the chunk's entry
    with the compiled one (:func:`numpy_search_specs`). An agent that fails forfeits the game, so the
    result differs from the chunk's and the chunk is reported, rather than the whole replay stopping."""
    start = time.perf_counter()
    played = _play(task, task[3])
    numpy_specs = numpy_search_specs(task[3])
    if numpy_specs is not None and _difference(task[6], played) is not None:
        played = _play(task, numpy_specs)
    return {**played, "wall_seconds": time.perf_counter() - start}


# ---------------------------------------------------------------- checking
def _difference(entry: dict[str, Any], played: dict[str, Any]) -> str | None:
    """What the replayed game ``played`` gives differently from the chunk's ``entry``; None if nothing."""
    for ours, theirs, what in CHECKED:
        if entry.get(ours) != played.get(theirs):
            return f"the replay gives {what} {played.get(theirs)!r}, the chunk {entry.get(ours)!r}"
    return None


def chunk_mismatch(chunk: Path, first: int, players: int, entries: Sequence[dict[str, Any]],
                   played: Sequence[dict[str, Any]]) -> str | None:
    """The one line saying how a chunk's replayed games differ from its entries (the first differing
    game, and how many more differ); None if every game replayed to the chunk's result."""
    differences = [(g, d) for g, (e, p) in enumerate(zip(entries, played)) if (d := _difference(e, p)) is not None]
    if not differences:
        return None
    g, what = differences[0]
    entry = entries[g]
    more = f"; {len(differences) - 1} more game(s) of the chunk differ" if len(differences) > 1 else ""
    return (f"chunk {chunk}, game {g} (deal {first + g // players}, seed {entry['seed']}, seats "
            f"{', '.join(entry['seats'])}): {what}{more}; no games file written")


# ---------------------------------------------------------------- finding the chunks
def _warn(message: str) -> None:
    with tqdm.external_write_mode(file=sys.stderr):  # clear the progress bar, then write the line
        warnings.warn(message, StrengthWarning, stacklevel=3)


def _jobs(lines: Sequence[Line], out: Path, report: ReplayReport) -> list[_Job]:
    """The chunks of ``lines`` without a games file, in line order then name order."""
    jobs = []
    for line in lines:
        folder = line_folder(out, line)
        paths = sorted(p for p in folder.glob("deals_*.json") if p.is_file()) if folder.is_dir() else []
        for path in paths:
            if chunk_games_path(path).exists():
                report.chunks_kept += 1
                continue
            m = CHUNK_RE.match(path.name)
            data: Any = None
            if m is None or not 0 <= int(m[1]) <= int(m[2]) < line.deals:
                problem: str | None = f"the name is not deals_<first>-<last>.json with deals of 0..{line.deals - 1}"
            else:
                try:
                    data = json.loads(path.read_text(encoding="utf-8"))
                    problem = chunk_problem(data, line, int(m[1]), int(m[2]))
                except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                    problem = f"unreadable ({exc})"
            if problem is not None or m is None:
                report.unusable.append(path)
                _warn(f"chunk {path}: {problem}; its games are not replayed")
                continue
            entries = data["per_game"]
            jobs.append(_Job(line, path, int(m[1]), entries, [None] * len(entries)))
    return jobs


def _build_agents(jobs: Sequence[_Job]) -> None:
    """Build every spec's agent here, before any game (and before the workers fork): a spec that
    cannot be built is a ``ValueError`` naming its line."""
    for job in jobs:
        for spec in dict.fromkeys(job.line.lineup):
            try:  # built once: the pool keeps it for the games
                seat_agents([spec], allow_import=False)
            except ValueError as exc:
                raise ValueError(f"line {job.line.id}: {exc}") from None


# ---------------------------------------------------------------- the run
def replay_chunk_games(config: StrengthConfig, out: str | os.PathLike, *, lines: str | None = None,
                       workers: int = 1, progress: bool = True,
                       log: Callable[[str], None] | None = None) -> ReplayReport:
    """Replay the games of the selected lines' chunks (``lines``: comma-separated globs) that have
    no games file, and write it for each chunk whose games replay to its results (module doc).

    ``log`` gets one line per games file written (its path, games and seconds). Returns a
    :class:`ReplayReport`. ``ValueError`` for bad arguments or agents that cannot be built, before
    any game; ``Interrupted`` after Ctrl-C or SIGTERM (the chunks completed are written)."""
    if not _is_int(workers) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    out = Path(out)
    report = ReplayReport()
    jobs = _jobs(select_lines(config, lines), out, report)
    if not jobs:
        return report
    _build_agents(jobs)
    tasks = [(j, g, task) for j, job in enumerate(jobs) for g, task in enumerate(job.tasks())]

    def finish(job: _Job) -> None:
        played: list[dict[str, Any]] = [p for p in job.played if p is not None]
        job.played = []  # the actions are written or dropped: free them
        problem = chunk_mismatch(job.path, job.first, job.line.players, job.entries, played)
        if problem is not None:
            report.mismatched.append(job.path)
            _warn(problem)
            return
        games = chunk_games_path(job.path)
        write_dataset(games, chunk_games(job.line, job.first, played))
        report.chunks_written += 1
        if log is not None:
            seconds = sum(float(p["wall_seconds"]) for p in played)
            with tqdm.external_write_mode(file=sys.stderr):
                log(f"wrote {games.relative_to(out)}: {len(played)} games replayed in {seconds:.1f} s")

    with Runner(_replay, [task for _, _, task in tasks], workers=workers, progress=progress,
                desc="replay", leave=True) as run:
        for k, played in run:
            j, g = tasks[k][0], tasks[k][1]
            jobs[j].played[g] = played
            report.games_replayed += 1
            if all(p is not None for p in jobs[j].played):
                finish(jobs[j])
                run.bar.set_postfix(chunks=f"{report.chunks_written}/{len(jobs)}", refresh=False)
    if run.cut_short:
        raise Interrupted()
    return report


def replay_command(config: StrengthConfig, out: Path, lines: str | None, workers: int, progress: bool) -> int:
    """``--replay-games`` of the command line: replay, print one line per games file and a last line
    with the counts; exit status 0, or 1 when a chunk is left without its games file (see the warnings)."""
    if not (out / "lines").is_dir():
        raise ValueError(f"--out {out}: no lines folder, so no chunk to replay")
    report = replay_chunk_games(config, out, lines=lines, workers=workers, progress=progress,
                                log=lambda line: print(line, flush=True))
    left = len(report.mismatched) + len(report.unusable)
    print(f"{report.games_replayed} games replayed, {report.chunks_written} games files written, "
          f"{report.chunks_kept} chunks already had theirs"
          + (f", {left} chunk(s) left without one (see the warnings)" if left else ""))
    return 1 if left else 0
