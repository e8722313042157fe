"""Self-play games kept in their shards, so that every game can be replayed and exported.

A shard of value data (:mod:`concordia_env.training.value.data`) or of expert iteration's self-play
(:mod:`concordia_env.training.expert_iteration.shards`) holds positions. Three more members keep its
games, every one of them (truncated ones too), in the shard's game order:

* ``game_actions`` int16: every action id of every game (forced ones included), in the order
  applied, the games one after another;
* ``game_action_offsets`` int64 ``(G + 1,)``: game ``k``'s actions are
  ``game_actions[offsets[k]:offsets[k + 1]]``;
* ``game_records`` (a JSON string, like ``meta``): per game what a data-set line
  (:mod:`concordia_env.dataset`) holds besides its actions: ``map``, ``players``, ``seed``,
  ``intermediate_scoring``, ``agents`` (by seat: a spec, or a name saying who played), ``scores``,
  ``ranking``, ``winner`` (null when truncated), ``truncated`` and ``turns``.

The members are optional: a shard written before games were kept lacks all three, still loads for
training, and :func:`read_games` returns None for it (``concordia dataset export`` counts such
shards in one line). A game's actions take 2 bytes each; with its record, a 2-player Italia game
adds about 0.6 KB to a compressed shard (the positions of such a game take 12 KB or more).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: the members that keep a shard's games
GAME_LOG_KEYS = ("game_actions", "game_action_offsets", "game_records")
#: the fields of a ``game_records`` entry, in the order written (a data-set line's, less its actions)
ENTRY_FIELDS = ("map", "players", "seed", "intermediate_scoring", "agents", "scores", "ranking", "winner",
                "truncated", "turns")


def game_entry(record: Mapping[str, Any], agents: Sequence[str] | None = None) -> dict[str, Any]:
    """The ``game_records`` entry of a game record (:func:`~concordia_env.arena.records.play_game`'s
    return); ``agents`` (one per seat) replaces the record's agent names, for seats that are not
    made from a spec."""
    result = record["result"]
    return {
        "map": str(record["map"]), "players": int(record["players"]), "seed": int(record["seed"]),
        "intermediate_scoring": bool(record["intermediate_scoring"]),
        "agents": [str(a) for a in (record["agents"] if agents is None else agents)],
        "scores": [int(v) for v in result["scores"]], "ranking": [int(p) for p in result["ranking"]],
        "winner": None if result["winner"] is None else int(result["winner"]),
        "truncated": bool(result["truncated"]), "turns": int(result["turns"]),
    }


def log_arrays(entries: Sequence[Mapping[str, Any]], actions: Sequence[Sequence[int]]) -> dict[str, np.ndarray]:
    """The three members of a shard keeping ``entries`` (:func:`game_entry`) with their ``actions``."""
    if len(entries) != len(actions):
        raise ValueError(f"{len(entries)} games but {len(actions)} action lists")
    lengths = [len(a) for a in actions]
    flat = np.fromiter((int(a) for game in actions for a in game), np.int64, sum(lengths))
    if flat.size and (flat.min() < 0 or flat.max() > np.iinfo(np.int16).max):
        raise ValueError("an action id does not fit in int16")
    return {
        "game_actions": flat.astype(np.int16),
        "game_action_offsets": np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64),
        "game_records": np.array(json.dumps([{k: e[k] for k in ENTRY_FIELDS} for e in entries],
                                            separators=(",", ":"))),
    }


def _load(path: str | os.PathLike, keys: Sequence[str]) -> dict[str, np.ndarray] | None:
    """Those of ``keys`` a shard holds (members are read one by one: the positions stay packed); None
    without ``game_records``. ``ValueError`` naming the file if it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "game_records" not in z.files:
                return None
            return {k: z[k] for k in keys if k in z.files}
    except Exception as exc:  # noqa: BLE001 - BadZipFile, zlib.error, EOFError...: all "corrupt"
        raise ValueError(f"{os.fspath(path)}: corrupt or truncated shard ({type(exc).__name__}: {exc})") from None


def _check(data: Mapping[str, np.ndarray], entries: Any) -> str | None:
    """What is inconsistent between a shard's game members and its game table; None if nothing."""
    offsets = data["game_action_offsets"]
    n = len(data["game_index"])
    if not isinstance(entries, list) or len(entries) != n or not all(isinstance(e, dict) for e in entries):
        return f"game_records does not hold one object per game ({n})"
    if offsets.shape != (n + 1,) or offsets[0] != 0 or offsets[-1] != len(data["game_actions"]) \
            or (np.diff(offsets) < 0).any():
        return "game_action_offsets do not split game_actions into its games"
    for k, entry in enumerate(entries):
        missing = [f for f in ENTRY_FIELDS if f not in entry]
        if missing:
            return f"game {k}'s record lacks {', '.join(missing)}"
        ours = (entry["seed"], entry["players"], bool(entry["truncated"]))
        theirs = (int(data["game_seed"][k]), int(data["game_players"][k]), bool(data["game_truncated"][k]))
        if ours != theirs:
            return f"game {k}'s record (seed, players, truncated) {ours} differs from the game table's {theirs}"
    return None


def read_games(path: str | os.PathLike) -> list[dict[str, Any]] | None:
    """The games a shard keeps, in its order, as data-set lines without ``source`` (the fields of
    :data:`ENTRY_FIELDS` plus ``actions``), their ``game_index`` under ``"game"``; None for a shard
    written before games were kept. ``ValueError`` naming the file for a corrupt shard or one whose
    game members disagree with its game table (seeds, players, truncation)."""
    data = _load(path, GAME_LOG_KEYS + ("game_index", "game_seed", "game_players", "game_truncated"))
    if data is None:
        return None
    missing = [k for k in GAME_LOG_KEYS + ("game_index", "game_seed", "game_players", "game_truncated")
               if k not in data]
    if missing:
        raise ValueError(f"{os.fspath(path)}: shard lacks {', '.join(missing)}")
    try:
        entries = json.loads(str(data["game_records"]))
    except ValueError as exc:
        raise ValueError(f"{os.fspath(path)}: game_records is not JSON ({exc})") from None
    problem = _check(data, entries)
    if problem is not None:
        raise ValueError(f"{os.fspath(path)}: {problem}")
    offsets, actions = data["game_action_offsets"], data["game_actions"]
    return [{"game": int(data["game_index"][k]), **{f: entry[f] for f in ENTRY_FIELDS},
             "actions": actions[offsets[k]:offsets[k + 1]].astype(int).tolist()}
            for k, entry in enumerate(entries)]


def shard_games_count(path: str | os.PathLike) -> int:
    """How many games a shard's game table lists (0 if it cannot be read)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return len(z["game_index"]) if "game_index" in z.files else 0
    except Exception:  # noqa: BLE001 - only counted for a message
        return 0
