"""Exporting games into one data-set file: from game records, records folders, strength-table folders
and other data-set files.

What is read, for each input in the order given (a folder's files in sorted path order, recursively):

- a game record (``game_*.json``, or any ``*.json`` whose format is the record format): validated and
  replayed (:func:`~concordia_env.arena.records.verify_record`), then written as one game line. A
  partial record (a game left before its end, ``concordia play`` after ``q``) is skipped: it is
  neither finished nor truncated;
- a data-set file (``*.jsonl.gz``): every game line checked and replayed. A strength-table chunk's
  games file (``deals_<a>-<b>.games.jsonl.gz``) must also agree with its chunk (seed, seats and scores
  of every game) where the chunk is there;
- a strength-table chunk (``deals_<a>-<b>.json``) without a games file: written before the table
  kept its games; its games cannot be exported (counted in :attr:`ExportReport.without_actions`);
- a self-play run folder (:mod:`concordia_env.dataset.runs`: value data, expert iteration, the
  turn-level TD loop, found by its settings file, named or inside a folder): its games only, from
  its shards (:mod:`concordia_env.training.game_log`; each game's source is the shard and the game's
  index, ``RUN/gen_002/selfplay/shard_00000.npz#5``) or its records. A shard written before games
  were kept holds none (counted in :attr:`ExportReport.old_shards`); a shard file named on its own is
  read the same way;
- anything else (results files, manifests, summaries): ignored.

A bad input (unreadable, corrupt, a game that does not replay to its stored result) is skipped with
one line naming the file (and the game) and what is wrong (``on_skip``, default a warning), and the
export goes on; ``strict=True`` raises ``ValueError`` at the first one instead. The output is written
atomically, once everything is read, so an input may be an earlier version of the output.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..arena.records import RECORD_FORMAT, is_unfinished, load_record, read_json_file, verify_record
from ..training.game_log import read_games, shard_games_count
from .format import CHUNK_GAMES_SUFFIX, GAME_FIELDS, SUFFIX, check_game_line, line_from_record, write_dataset
from .reader import DatasetWarning, SkipFn, iter_games
from .replay import replay_line
from .runs import SHARD_RE, run_of, run_roots, unit_kind

CHUNK_RE = re.compile(r"^deals_\d+-\d+\.json$")


@dataclass
class ExportReport:
    """What an export did: the games written, the input files they came from, the bad inputs skipped
    (one line each), the strength chunks and the self-play shards that hold no actions (with their
    games), and the file's size in bytes."""

    out: Path
    games: int = 0
    files: int = 0
    skipped: list[str] = field(default_factory=list)
    without_actions: list[Path] = field(default_factory=list)
    without_actions_games: int = 0
    old_shards: list[Path] = field(default_factory=list)
    old_shards_games: int = 0
    bytes: int = 0


@dataclass
class _Export:
    """The state of one export: the lines gathered so far and the report."""

    report: ExportReport
    strict: bool
    on_skip: SkipFn | None
    lines: list[dict[str, Any]] = field(default_factory=list)

    def skip(self, message: str) -> None:
        if self.strict:
            raise ValueError(message)
        self.report.skipped.append(message)
        if self.on_skip is not None:
            self.on_skip(message)
        else:
            warnings.warn(message, DatasetWarning, stacklevel=2)


# ---------------------------------------------------------------- one input file
def _record(path: Path, source: str, ex: _Export) -> None:
    try:
        record = load_record(path)
        if is_unfinished(record):
            ex.skip(f"game record {path}: a game left before its end (partial record), not exported")
            return
        verify_record(record)
    except (OSError, ValueError) as exc:
        text = str(exc)
        ex.skip(text if os.fspath(path) in text else f"game record {path}: {text}")
        return
    ex.lines.append(line_from_record(record, source))
    ex.report.files += 1


def _chunk_games(chunk: Path) -> list[dict[str, Any]] | None:
    """The ``per_game`` list of a strength chunk, or None if the chunk cannot be read."""
    try:
        data = json.loads(chunk.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    games = data.get("per_game") if isinstance(data, dict) else None
    return games if isinstance(games, list) else None


def _chunk_mismatch(lines: list[dict[str, Any]], chunk: Path) -> str | None:
    """How a chunk's games file disagrees with the chunk beside it; None if it agrees or there is no chunk."""
    per_game = _chunk_games(chunk) if chunk.is_file() else None
    if per_game is None:
        return None
    if len(per_game) != len(lines):
        return f"it holds {len(lines)} games, its chunk {chunk.name} {len(per_game)}"
    for i, (line, entry) in enumerate(zip(lines, per_game)):
        for ours, theirs in (("seed", "seed"), ("agents", "seats"), ("scores", "scores")):
            if not isinstance(entry, dict) or line[ours] != entry.get(theirs):
                return f"game {i}'s {ours} differs from its chunk {chunk.name}'s"
    return None


def _dataset(path: Path, source: str, ex: _Export) -> None:
    before = len(ex.report.skipped)
    try:
        lines = list(iter_games(path, strict=ex.strict, replay=True, on_skip=ex.skip))
    except (OSError, ValueError) as exc:
        text = str(exc)
        ex.skip(text if os.fspath(path) in text else f"data set {path}: {text}")
        return
    if path.name.endswith(CHUNK_GAMES_SUFFIX):
        chunk = path.with_name(path.name.removesuffix(CHUNK_GAMES_SUFFIX) + ".json")
        problem = _chunk_mismatch(lines, chunk)
        if problem is not None:
            ex.skip(f"strength games file {path}: {problem}; its games are not exported")
            return
    for i, line in enumerate(lines):
        line.setdefault("source", f"{source}#{i}")
    ex.lines.extend(lines)
    if lines or len(ex.report.skipped) == before:
        ex.report.files += 1


def _shard(path: Path, source: str, ex: _Export) -> None:
    """The games a self-play shard keeps, each checked and replayed against its stored result."""
    try:
        games = read_games(path)
    except ValueError as exc:
        text = str(exc)
        ex.skip(text if os.fspath(path) in text else f"self-play shard {path}: {text}")
        return
    if games is None:
        ex.report.old_shards.append(path)
        ex.report.old_shards_games += shard_games_count(path)
        return
    before = len(ex.lines)
    for game in games:
        line = {**{k: game[k] for k in GAME_FIELDS}, "source": f"{source}#{game['game']}"}
        try:
            check_game_line(line)
            replay_line(line)
        except ValueError as exc:
            ex.skip(f"self-play shard {path}, game {game['game']}: {exc}")
            continue
        ex.lines.append(line)
    if len(ex.lines) > before or not games:
        ex.report.files += 1


def _old_chunk(path: Path, ex: _Export) -> None:
    ex.report.without_actions.append(path)
    games = _chunk_games(path)
    ex.report.without_actions_games += len(games) if games is not None else 0


# ---------------------------------------------------------------- walking the inputs
def _kind(path: Path, named: bool) -> str | None:
    """``"record"``, ``"dataset"``, ``"chunk"`` (a strength chunk without its games file), ``"chunk games"``
    (a chunk named by the user, read through its games file) or None (not read); a self-play run's
    files are sorted out before (:func:`_folder`). ``named``: the user named this file, so a JSON file
    is taken as a record."""
    name = path.name
    if name.startswith(".") or name.endswith(".tmp"):
        return None
    if name.endswith(SUFFIX):
        return "dataset"
    if not name.endswith(".json"):
        return None
    if CHUNK_RE.match(name):  # read through its games file when there is one (found beside it in a folder)
        games = path.with_name(name.removesuffix(".json") + CHUNK_GAMES_SUFFIX)
        return ("chunk games" if named else None) if games.exists() else "chunk"
    if named or name.startswith("game_"):
        return "record"
    try:  # another JSON file in a folder: a record only if it says so
        data = read_json_file(path)
    except (OSError, ValueError):
        return None
    return "record" if isinstance(data, dict) and data.get("format") == RECORD_FORMAT else None


def _folder(path: Path, out: Path) -> Iterator[tuple[Path, str, str | None]]:
    """``(file, source label, kind)`` for every file of a folder, in sorted order; a self-play run's
    files (:mod:`concordia_env.dataset.runs`) are read as the run keeps its games."""
    found = [p for p in sorted(path.rglob("*")) if p.is_file() and p.resolve() != out]
    roots = run_roots(found)
    for file in found:
        source = f"{path.resolve().name}/{file.relative_to(path).as_posix()}"
        root = run_of(file, roots)
        yield file, source, _kind(file, False) if root is None else unit_kind(roots[root], root, file)


def _files(inputs: Sequence[str | os.PathLike], out: Path) -> Iterator[tuple[Path, str, str | None]]:
    """``(file, source label, kind)`` (:func:`_kind`) for every file of the inputs, in order."""
    for given in inputs:
        path = Path(given)
        if path.is_file():
            yield path, path.name, "shard" if SHARD_RE.match(path.name) else _kind(path, True)
        elif path.is_dir():
            yield from _folder(path, out)
        else:
            raise ValueError(f"no such file or folder: {path}")


def export_dataset(inputs: Sequence[str | os.PathLike], out: str | os.PathLike, *, strict: bool = False,
                   on_skip: SkipFn | None = None) -> ExportReport:
    """Export the games of ``inputs`` (files and folders, see the module doc) into the data-set file
    ``out``; returns an :class:`ExportReport`. ``ValueError`` for an input that does not exist, for
    inputs holding no game at all, and (``strict``) for the first bad input."""
    if not inputs:
        raise ValueError("give at least one records folder, record or data-set file to export")
    out_path = Path(out)
    if not out_path.name.endswith(SUFFIX):
        raise ValueError(f"the data-set file's name must end in {SUFFIX}, got {out_path.name!r}")
    if out_path.is_dir():
        raise ValueError(f"{out_path} is a folder; give a file name ending in {SUFFIX}")
    ex = _Export(ExportReport(out_path), strict, on_skip)
    readers = {"record": _record, "dataset": _dataset, "shard": _shard}
    for path, source, kind in list(_files(inputs, out_path.resolve())):
        if kind == "chunk":
            _old_chunk(path, ex)
        elif kind == "chunk games":
            _dataset(path.with_name(path.name.removesuffix(".json") + CHUNK_GAMES_SUFFIX), source, ex)
        elif kind is not None:
            readers[kind](path, source, ex)
    if not ex.lines:
        where = ", ".join(os.fspath(p) for p in inputs)
        why = [f"{len(ex.report.skipped)} bad input(s) skipped"] if ex.report.skipped else []
        if ex.report.without_actions:
            why.append(f"{len(ex.report.without_actions)} strength-table chunk(s) hold no actions, written before "
                       f"the table kept its games")
        if ex.report.old_shards:
            why.append(f"{len(ex.report.old_shards)} self-play shard(s) from before game actions were kept")
        raise ValueError(f"no game to export in {where}" + (f" ({'; '.join(why)})" if why else ""))
    ex.report.games = len(ex.lines)
    ex.report.bytes = write_dataset(out_path, ex.lines)
    return ex.report
