"""The self-play shard format: writing a shard, reading and checking one, and loading the
positions of a window's shards for training.

A shard also keeps its games whole (:data:`~concordia_env.training.game_log.GAME_LOG_KEYS`: the
action ids, setups, seat names and results), for ``concordia dataset export``. Those members are
optional: a shard written before games were kept lacks them and loads for training as before; the
members of the positions and the game table, and ``meta``, are what they were, so such a shard is
still kept by a resumed run."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import engine as E
from concordia_env._internal import files
from concordia_env._internal.files import write_bytes_atomic
from concordia_env.arena.run_folder import keep
from concordia_env.training.game_log import log_arrays
from concordia_env.training.value.data import read_shard_arrays

from .settings import Expert, SelfPlayConfig, shard_games, warn

#: per-position arrays of a shard
POSITION_KEYS = ("state", "seat", "game", "step", "turn", "num_players", "root_value", "visit_len")
#: per-visit-entry arrays of a shard (the positions' legal actions, concatenated)
VISIT_KEYS = ("visit_actions", "visit_counts")
#: per-game arrays of a shard
GAME_KEYS = ("game_index", "game_seed", "game_players", "game_winner", "game_truncated", "game_decisions",
             "game_positions", "game_turns", "game_scores")


def shard_meta(cfg: SelfPlayConfig, g: int, index: int, expert: Expert) -> dict[str, Any]:
    """A shard's ``meta``: the settings, its place and its expert (with the heuristic teacher's
    exploration rate, which only that teacher's shards record)."""
    games = shard_games(cfg, index)
    meta = dict(cfg.to_json(), generation=g, shard=index, games=[games.start, games.stop], expert=expert.sha256)
    if expert.is_teacher:
        meta["teacher_epsilon"] = cfg.teacher_epsilon
    return meta


def write_shard(path: Path, meta: dict[str, Any], games: list[tuple[dict[str, np.ndarray], dict[str, Any]]]) -> int:
    """Write one shard atomically (fixed zip time stamps: the same games give the same bytes); returns
    its number of positions. Each game's info holds its game-table row, ``game_record`` and ``actions``."""
    data = {k: np.concatenate([a[k] for a, _ in games]) for k in POSITION_KEYS + VISIT_KEYS}
    for k in GAME_KEYS:
        dtype = np.int64 if k == "game_seed" else np.int32
        data[k] = np.asarray([i[k] for _, i in games], dtype)
    data.update(log_arrays([i["game_record"] for _, i in games], [i["actions"] for _, i in games]))
    data["meta"] = np.array(json.dumps(meta, sort_keys=True))
    write_bytes_atomic(path, files.npz_bytes(data, compresslevel=6))
    return len(data["step"])


def read_shard(path: Path) -> dict[str, Any]:
    """The arrays of one shard plus ``meta`` (a dict); ``ValueError`` naming the file if it is
    truncated, corrupt or inconsistent."""
    data, meta = read_shard_arrays(path, POSITION_KEYS + VISIT_KEYS + GAME_KEYS)
    m = len(data["step"])
    bad = [k for k in POSITION_KEYS if len(data[k]) != m]
    if bad or data["state"].shape[1:] != (E.STATE_SIZE,) or len(data["visit_actions"]) != data["visit_len"].sum() \
            or len(data["visit_counts"]) != len(data["visit_actions"]):
        raise ValueError(f"{path}: inconsistent arrays ({', '.join(bad) or 'state width or visits'})")
    data["meta"] = meta
    return data


def shard_ok(path: Path, meta: dict[str, Any]) -> bool:
    """True if ``path`` holds exactly the shard ``meta`` describes; a damaged or foreign shard is
    set aside with one warning line (:func:`~concordia_env.arena.run_folder.keep`)."""

    def problem(path: Path) -> str | None:
        try:
            found = read_shard(path)["meta"]
        except ValueError as exc:
            return str(exc).removeprefix(f"{path}: ")
        return None if found == meta else "written with other settings or another expert"

    return bool(keep([path], problem, "regenerating it"))


def load_positions(directories: Iterable[Path], quiet: bool = False) -> dict[str, Any]:
    """Every readable shard of ``directories`` concatenated; a shard that cannot be read is skipped
    with one warning line. Adds ``offset`` (start of each position's visits), ``winner`` (of the
    position's game) and ``game_key`` (generation and game, unique over the directories)."""
    parts: list[dict[str, Any]] = []
    used: list[str] = []
    for directory in directories:
        for path in sorted(Path(directory).glob("shard_*.npz")):
            try:
                shard = read_shard(path)
            except ValueError as exc:
                if not quiet:
                    warn(f"skipping {exc}")
                continue
            winners = dict(zip(shard["game_index"].tolist(), shard["game_winner"].tolist()))
            shard["winner"] = np.asarray([winners[g] for g in shard["game"].tolist()], np.int64)
            shard["game_key"] = shard["game"].astype(np.int64) + (1 << 32) * int(shard["meta"]["generation"])
            parts.append(shard)
            used.append(str(path))
    keys = POSITION_KEYS + VISIT_KEYS + ("winner", "game_key", "game_truncated", "game_positions")
    if not parts:
        return {"shards": [], "positions": 0}
    data: dict[str, Any] = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    data["offset"] = np.concatenate([[0], np.cumsum(data["visit_len"])]).astype(np.int64)
    data["shards"] = used
    data["positions"] = len(data["step"])
    return data
