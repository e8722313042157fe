"""The data-set file: one gzip'd JSON-lines file of games, a header line first (see the package doc).

This module holds the format itself: building a game line from a game record (or from the result
and actions a strength-table worker returns), checking a line or a header, and encoding and writing
a whole file. It replays nothing: :mod:`concordia_env.dataset.replay` does.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..arena.records import check_forfeit, check_game_fields, short_repr
from ..engine import NUM_ACTIONS

DATASET_FORMAT = "concordia-env/games"
DATASET_VERSION = 1
#: the suffix every data-set file has (gzip'd JSON lines)
SUFFIX = ".jsonl.gz"
#: a strength-table chunk ``deals_<a>-<b>.json`` keeps its games in ``deals_<a>-<b>.games.jsonl.gz``
CHUNK_GAMES_SUFFIX = ".games" + SUFFIX
#: the fields of every game line, in the order they are written; ``forfeit`` and ``source`` are optional
GAME_FIELDS = ("map", "players", "seed", "intermediate_scoring", "agents", "actions",
               "scores", "ranking", "winner", "truncated", "turns")
OPTIONAL_FIELDS = ("forfeit", "source")
#: the package file that holds the JSON Schema of a data-set line (header or game)
LINE_SCHEMA = "dataset_line.schema.json"
#: the package file that holds the JSON Schema of a game record
RECORD_SCHEMA = "game_record.schema.json"


def chunk_games_path(chunk: str | os.PathLike) -> Path:
    """The data-set file beside a strength-table chunk that holds its games' actions."""
    path = Path(chunk)
    return path.with_name(path.name.removesuffix(".json") + CHUNK_GAMES_SUFFIX)


# ---------------------------------------------------------------- building lines
def game_line(*, map_name: str, players: int, seed: int, intermediate_scoring: bool, agents: Sequence[str],
              actions: Sequence[int], result: Mapping[str, Any], source: str | None = None) -> dict[str, Any]:
    """One game line from a game's setup, its agents by seat, its actions and its ``result`` block
    (a record's, :meth:`~concordia_env.arena.game_result.GameResult.to_json`). The result's
    ``forfeit`` (``{"seat", "reason"}`` of a forfeited game) is kept; ``source`` says where the game came from."""
    line: dict[str, Any] = {
        "map": map_name, "players": int(players), "seed": int(seed), "intermediate_scoring": bool(intermediate_scoring),
        "agents": [str(a) for a in agents], "actions": [int(a) for a in actions],
        "scores": [int(v) for v in result["scores"]], "ranking": [int(p) for p in result["ranking"]],
        "winner": result["winner"], "truncated": bool(result["truncated"]), "turns": int(result["turns"]),
    }
    if "forfeit" in result:
        line["forfeit"] = {"seat": int(result["forfeit"]["seat"]), "reason": str(result["forfeit"]["reason"])}
    if source is not None:
        line["source"] = source
    return line


def line_from_record(record: Mapping[str, Any], source: str | None = None) -> dict[str, Any]:
    """The game line of a validated game record (:func:`~concordia_env.arena.records.validate_record`)."""
    return game_line(map_name=record["map"], players=record["players"], seed=record["seed"],
                     intermediate_scoring=record["intermediate_scoring"], agents=record["agents"],
                     actions=record["actions"], result=record["result"], source=source)


def header(games: int, **extra: Any) -> dict[str, Any]:
    """The header line of a file of ``games`` games; ``extra`` fields (e.g. ``"source"``) follow."""
    from .. import __version__

    return {"format": DATASET_FORMAT, "version": DATASET_VERSION, "games": int(games),
            "num_actions": NUM_ACTIONS, "concordia_env": __version__, **extra}


# ---------------------------------------------------------------- checking lines
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _ints(x: Any, length: int | None = None) -> bool:
    return isinstance(x, list) and all(_is_int(v) for v in x) and (length is None or len(x) == length)


def check_header(obj: Any) -> dict[str, Any]:
    """``obj`` if it is a data-set header this reader knows, else ``ValueError`` naming what is wrong."""
    if not isinstance(obj, dict) or obj.get("format") != DATASET_FORMAT:
        got = obj.get("format") if isinstance(obj, dict) else obj
        raise ValueError(f"not a Concordia data set: the first line's format is {short_repr(got)}, "
                         f"expected {DATASET_FORMAT!r}")
    if not (_is_int(obj.get("version")) and obj["version"] == DATASET_VERSION):
        raise ValueError(f"unsupported data-set version {short_repr(obj.get('version'))} "
                         f"(this reader knows version {DATASET_VERSION})")
    if not _is_int(obj.get("games")) or obj["games"] < 0:
        raise ValueError(f"header 'games' must be a non-negative int, got {short_repr(obj.get('games'))}")
    if obj.get("num_actions") != NUM_ACTIONS:
        raise ValueError(f"header 'num_actions' is {short_repr(obj.get('num_actions'))}, "
                         f"but this engine has {NUM_ACTIONS} actions")
    return obj


def check_game_line(line: Any) -> None:
    """Check a game line's fields and their types (not the game: replaying it is
    :func:`concordia_env.dataset.replay.replay_line`); ``ValueError`` names what is wrong."""
    if not isinstance(line, dict):
        raise ValueError(f"a game line is a JSON object, got {type(line).__name__}")
    check_game_fields(line, GAME_FIELDS)
    _check_seats(line, line["players"])
    if "source" in line and not isinstance(line["source"], str):
        raise ValueError(f"field 'source' must be a string, got {short_repr(line['source'])}")


def _check_seats(line: dict[str, Any], n: int) -> None:
    """The per-seat fields and the result fields of a game line with ``n`` players."""
    if not _ints(line["scores"], n):
        raise ValueError(f"field 'scores' must be {n} ints, got {short_repr(line['scores'])}")
    if not (_ints(line["ranking"], n) and sorted(line["ranking"]) == list(range(n))):
        raise ValueError(f"field 'ranking' must be an ordering of seats 0..{n - 1}, got {short_repr(line['ranking'])}")
    w = line["winner"]
    if not (w is None or (_is_int(w) and 0 <= w < n)):
        raise ValueError(f"field 'winner' must be a seat 0..{n - 1} or null, got {short_repr(w)}")
    if not isinstance(line["truncated"], bool):
        raise ValueError(f"field 'truncated' must be true or false, got {short_repr(line['truncated'])}")
    if not _is_int(line["turns"]) or line["turns"] < 0:
        raise ValueError(f"field 'turns' must be a non-negative int, got {short_repr(line['turns'])}")
    if "forfeit" in line:
        try:
            seat, _ = check_forfeit(line["forfeit"], n)
        except ValueError as exc:
            raise ValueError(f"field {str(exc).removeprefix('result ')}") from None
        if not line["truncated"] or w is not None or line["ranking"][-1] != seat:
            raise ValueError(f"field 'forfeit': a game forfeited by seat {seat} is truncated, has no winner "
                             f"and ranks seat {seat} last")


# ---------------------------------------------------------------- writing
def encode(lines: Iterable[Mapping[str, Any]], **extra: Any) -> bytes:
    """The bytes of a data-set file holding ``lines`` (game lines), header first. The gzip stream
    carries no time stamp or file name, so the same games give the same bytes."""
    games = [json.dumps(line, separators=(",", ":")) for line in lines]
    text = "\n".join([json.dumps(header(len(games), **extra), separators=(",", ":")), *games]) + "\n"
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def write_dataset(path: str | os.PathLike, lines: Iterable[Mapping[str, Any]], **extra: Any) -> int:
    """Write a data-set file atomically (a reader sees the old file or the whole new one); its size in bytes."""
    from .._internal.files import write_bytes_atomic

    data = encode(lines, **extra)
    write_bytes_atomic(path, data)
    return len(data)
