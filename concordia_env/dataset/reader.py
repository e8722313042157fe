"""Reading a data-set file: its header, its games without replay, its games replayed into numpy arrays.

Every reader takes ``strict``: with ``strict=True`` (the default) the first bad game raises a
:class:`DatasetError` naming the file, the game's index and line and what is wrong; with
``strict=False`` the game is skipped with one :class:`DatasetWarning` saying the same (or ``on_skip``
is called with that line instead), and reading goes on. A file that is not a data set (no gzip,
no header, an unknown format or version) always raises: there is nothing to read.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from .format import check_game_line, check_header
from .replay import ReplayedGame, replay_game, replay_line

#: called with one line naming a skipped game and what is wrong with it
SkipFn = Callable[[str], None]


class DatasetError(ValueError):
    """A data-set file, or one game in it, is unusable; the message names the file and what is wrong."""


class DatasetWarning(UserWarning):
    """A bad game was skipped (``strict=False``); the message names the file, the game and what is wrong."""


@dataclass(frozen=True)
class _Raw:
    """One game line as read: its index among the games, its line number (1 = the header) and
    the parsed object, or the problem that kept it from parsing."""

    index: int
    lineno: int
    obj: Any
    problem: str | None


def _where(path: str | os.PathLike, raw: _Raw) -> str:
    source = raw.obj.get("source") if isinstance(raw.obj, dict) else None
    extra = f", from {source}" if isinstance(source, str) else ""
    return f"data set {os.fspath(path)}, game {raw.index} (line {raw.lineno}{extra})"


def _parse(text: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON: {exc}"
    except RecursionError:
        return None, "JSON nested too deeply to read"
    except ValueError as exc:  # an integer too long to convert
        return None, str(exc)


def _next_line(f: gzip.GzipFile, name: str) -> bytes:
    """The next line of the decompressed file (b"" at its end); ``DatasetError`` for a damaged stream."""
    try:
        return f.readline()
    except EOFError:
        raise DatasetError(f"data set {name} is cut short: its gzip stream ends early") from None
    except (OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise DatasetError(f"data set {name} is not a readable gzip file: {exc}") from None


def _read_header(f: gzip.GzipFile, name: str) -> dict[str, Any]:
    first = _next_line(f, name)
    try:
        obj, problem = _parse(first.decode("utf-8"))
    except UnicodeDecodeError:
        obj, problem = None, "not UTF-8 text"
    if problem is not None:
        raise DatasetError(f"data set {name}: the header line is {problem}")
    try:
        return check_header(obj)
    except ValueError as exc:
        raise DatasetError(f"data set {name}: {exc}") from None


def read_header(path: str | os.PathLike) -> dict[str, Any]:
    """A data-set file's header (format, version, number of games, ...); ``DatasetError`` if the
    file is not a data set this reader knows, ``OSError`` if it cannot be opened."""
    with gzip.open(path, "rb") as f:
        return _read_header(f, os.fspath(path))


def _raw_games(path: str | os.PathLike, skip: Callable[[str], None]) -> Iterator[_Raw]:
    """Every game line of the file, parsed (or with its problem); a game count that differs from
    the header's, or a stream cut short, goes to ``skip`` (which raises when strict)."""
    name = os.fspath(path)
    with gzip.open(path, "rb") as f:
        head = _read_header(f, name)
        index, lineno = 0, 1
        while True:
            try:
                data = _next_line(f, name)
            except DatasetError as exc:
                skip(f"{exc}, after {index} of its {head['games']} games")
                return
            if not data:
                break
            lineno += 1
            if not data.strip():
                continue
            try:
                obj, problem = _parse(data.decode("utf-8"))
            except UnicodeDecodeError as exc:
                obj, problem = None, f"not UTF-8 text (byte {exc.start})"
            yield _Raw(index, lineno, obj, problem)
            index += 1
    if index != head["games"]:
        skip(f"data set {name}: the header says {head['games']} games, the file holds {index}")


def _skipper(strict: bool, on_skip: SkipFn | None) -> SkipFn:
    def skip(message: str) -> None:
        if strict:
            raise DatasetError(message)
        if on_skip is not None:
            on_skip(message)
        else:
            warnings.warn(message, DatasetWarning, stacklevel=2)
    return skip


def _checked(path: str | os.PathLike, skip: SkipFn) -> Iterator[tuple[_Raw, dict[str, Any]]]:
    for raw in _raw_games(path, skip):
        problem = raw.problem
        if problem is None:
            try:
                check_game_line(raw.obj)
            except ValueError as exc:
                problem = str(exc)
        if problem is not None:
            skip(f"{_where(path, raw)}: {problem}")
            continue
        yield raw, raw.obj


def iter_games(path: str | os.PathLike, *, strict: bool = True, replay: bool = False,
               on_skip: SkipFn | None = None) -> Iterator[dict[str, Any]]:
    """The game lines of a data-set file, in order, each a dict (see the package doc), with their
    fields checked; ``replay=True`` also replays each game and checks its stored result (about a
    millisecond a game). Bad games raise or are skipped (``strict``, see the module doc)."""
    skip = _skipper(strict, on_skip)
    for raw, line in _checked(path, skip):
        if replay:
            try:
                replay_line(line)
            except ValueError as exc:
                skip(f"{_where(path, raw)}: {exc}")
                continue
        yield line


def _check_gamma(gamma: float) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be a number in [0, 1], got {gamma!r}")
    return float(gamma)


def iter_replays(path: str | os.PathLike, *, reward: str = "win", gamma: float = 1.0, strict: bool = True,
                 on_skip: SkipFn | None = None) -> Iterator[ReplayedGame]:
    """Every game of a data-set file replayed through the engine: per seat its observations, masks,
    actions and returns (:class:`~concordia_env.dataset.replay.ReplayedGame`). A game whose actions
    are illegal in replay, or whose replay does not give its stored result, raises or is skipped
    (``strict``), named by its index."""
    from ..rewards import check_reward_mode

    check_reward_mode(reward)
    gamma = _check_gamma(gamma)
    skip = _skipper(strict, on_skip)
    for raw, line in _checked(path, skip):
        try:
            yield replay_game(line, raw.index, reward=reward, gamma=gamma)
        except ValueError as exc:
            skip(f"{_where(path, raw)}: {exc}")


#: the arrays :func:`load_steps` returns, with their dtypes
STEP_ARRAYS = {"observations": np.float32, "masks": np.int8, "actions": np.int64, "returns": np.float32,
               "game": np.int64, "seat": np.int64, "step": np.int64}


def load_steps(path: str | os.PathLike, *, reward: str = "win", gamma: float = 1.0, strict: bool = True,
               max_games: int | None = None, on_skip: SkipFn | None = None) -> dict[str, np.ndarray]:
    """Every decision of every game (the first ``max_games`` read), as flat arrays of one row per
    decision, in game order and within a game seat by seat: ``observations`` (N, 2378), ``masks``
    (N, 402), ``actions``, ``returns``, and where each row came from: ``game`` (index in the file),
    ``seat`` and ``step`` (index in the game's actions). Ready for behaviour cloning or offline RL."""
    if max_games is not None and (isinstance(max_games, bool) or not isinstance(max_games, int) or max_games < 0):
        raise ValueError(f"max_games must be a non-negative int or None, got {max_games!r}")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in STEP_ARRAYS}
    games = iter_replays(path, reward=reward, gamma=gamma, strict=strict, on_skip=on_skip)
    for game in games if max_games is None else islice(games, max_games):
        for t in game.seats:
            parts["observations"].append(t.observations)
            parts["masks"].append(t.masks)
            parts["actions"].append(t.actions)
            parts["returns"].append(t.returns)
            parts["game"].append(np.full(len(t.actions), game.index, np.int64))
            parts["seat"].append(np.full(len(t.actions), t.seat, np.int64))
            parts["step"].append(t.steps)
    from ..encoding import OBSERVATION_SIZE
    from ..engine import NUM_ACTIONS

    width = {"observations": (OBSERVATION_SIZE,), "masks": (NUM_ACTIONS,)}
    return {k: np.concatenate(v).astype(STEP_ARRAYS[k], copy=False) if v
            else np.zeros((0, *width.get(k, ())), STEP_ARRAYS[k]) for k, v in parts.items()}
