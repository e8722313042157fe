"""Moved to :mod:`concordia_env.training.value.data` (``python -m concordia_env.training.value.data``).

Kept for one release: this module re-exports the names it had, and
``python -m concordia_env.training.value_data`` runs the same ``main``, naming itself in its messages.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from .value import data as _data
from .value.data import (
    DATA_VERSION,
    GAME_KEYS,
    HEURISTIC_TEMPERATURE,
    POSITION_KEYS,
    DataConfig,
    build_shard,
    game_plan,
    generate,
    load_shards,
    play_recorded,
    read_shard,
    read_shard_arrays,
    shard_games,
    shard_path,
    write_shard,
)

PROG = "python -m concordia_env.training.value_data"

__all__ = ["DATA_VERSION", "GAME_KEYS", "HEURISTIC_TEMPERATURE", "POSITION_KEYS", "PROG", "DataConfig", "build_shard",
           "game_plan", "generate", "load_shards", "main", "play_recorded", "read_shard", "read_shard_arrays",
           "shard_games", "shard_path", "write_shard"]


def main(argv: Sequence[str] | None = None) -> int:
    """:func:`concordia_env.training.value.data.main` under this command's name."""
    return _data.main(argv, PROG)


_moved("concordia_env.training.value_data", "concordia_env.training.value.data")


if __name__ == "__main__":
    moved_command("concordia_env.training.value_data", "concordia_env.training.value.data")
    sys.exit(main())
