"""Game data sets: many recorded games in one file, and readers that replay them into numpy arrays.

**The file** (``*.jsonl.gz``, ``"format": "concordia-env/games"``, ``"version": 1``) is gzip'd JSON
lines: a header line, then one line per game::

    {"format": "concordia-env/games", "version": 1, "games": 200, "num_actions": 402, "concordia_env": "0.1.0"}
    {"map": "italia", "players": 2, "seed": 7, "intermediate_scoring": false,
     "agents": ["mcts", "heuristic"],        # agent name (spec) by seat
     "actions": [3, 17, ...],                # action ids, in the order applied
     "scores": [121, 98], "ranking": [0, 1], # VP by seat; seats first to last, tie-break applied
     "winner": 0, "truncated": false,        # winner null when truncated (stopped at the card-play limit)
     "turns": 140,                           # card plays
     "source": "italia2/game_00007.json"}    # optional: where the game came from

(each game on one line in the file). A forfeited game (an agent failed at a decision, as tournaments
and the strength table record it) also carries ``"forfeit": {"seat", "reason"}`` from its result: the
actions end where that seat was to decide and the ranking puts it last (the replay checks both). The game is fully determined by its map, players, seed, scoring variant
and actions, so a reader rebuilds every state by replaying them; the stored result lets it check
the replay. The JSON Schemas of a line (header or game) and of a game record ship in the package:
:func:`schema` (``"dataset_line"`` or ``"game_record"``).

**Writing**: ``concordia dataset export RECORDS... --out FILE`` (:func:`export_dataset`) from game
records, records folders (``concordia tournament --records``), strength-table folders, self-play run
folders (value data, expert iteration, turn-level TD: :mod:`.runs`) and other data-set files; the
strength table keeps each chunk's games beside it as a data-set file, self-play shards keep theirs
(:mod:`concordia_env.training.game_log`).

**Reading**: :func:`iter_games` (the game lines, without replay), :func:`iter_replays` (per game and
seat: observations, masks, actions, returns) and :func:`load_steps` (flat arrays of every decision);
:func:`read_header`. Bad games raise :class:`DatasetError` or, with ``strict=False``, are skipped
with a :class:`DatasetWarning`.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .export import ExportReport, export_dataset
from .format import (
    CHUNK_GAMES_SUFFIX,
    DATASET_FORMAT,
    DATASET_VERSION,
    SUFFIX,
    check_game_line,
    chunk_games_path,
    game_line,
    line_from_record,
    write_dataset,
)
from .reader import DatasetError, DatasetWarning, iter_games, iter_replays, load_steps, read_header
from .replay import ReplayedGame, SeatTrajectory, replay_game, replay_line

SCHEMAS = ("dataset_line", "game_record")


def schema(name: str) -> dict[str, Any]:
    """A JSON Schema shipped in the package: ``"dataset_line"`` (a data-set line, header or game)
    or ``"game_record"`` (a game record file)."""
    if name not in SCHEMAS:
        raise ValueError(f"unknown schema {name!r}; known: {list(SCHEMAS)}")
    text = resources.files("concordia_env").joinpath("data").joinpath(f"{name}.schema.json").read_text(encoding="utf-8")
    out: dict[str, Any] = json.loads(text)
    return out


__all__ = [
    "CHUNK_GAMES_SUFFIX", "DATASET_FORMAT", "DATASET_VERSION", "SCHEMAS", "SUFFIX", "DatasetError", "DatasetWarning",
    "ExportReport", "ReplayedGame", "SeatTrajectory", "check_game_line", "chunk_games_path", "export_dataset",
    "game_line", "iter_games", "iter_replays", "line_from_record", "load_steps", "read_header", "replay_game",
    "replay_line", "schema", "write_dataset",
]
