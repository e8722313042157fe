"""A few real games for the data-set tests: played once per test session (about a second), kept as records."""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

from concordia_env.agents.base import make_agent
from concordia_env.arena.records import partial_record, play_game, save_record

#: (map, players, seed, agent specs by seat, intermediate scoring, max turns)
SETUPS = [
    ("italia", 2, 3, ("heuristic", "random"), False, 2000),
    ("imperium", 4, 4, ("heuristic", "random", "heuristic", "heuristic"), False, 2000),
    ("imperium", 3, 5, ("heuristic", "heuristic", "random"), True, 2000),
    ("italia", 3, 6, ("random", "random", "heuristic"), False, 12),  # truncated at 12 card plays
]


@cache
def _records() -> tuple[dict[str, Any], ...]:
    out = []
    for map_name, n, seed, specs, intermediate, max_turns in SETUPS:
        agents = [make_agent(s) for s in specs]
        out.append(play_game(map_name, n, seed, agents, intermediate_scoring=intermediate, max_turns=max_turns))
    return tuple(out)


def records() -> list[dict[str, Any]]:
    """The games of :data:`SETUPS` as records (fresh copies, free to change); the last one is truncated."""
    return copy.deepcopy(list(_records()))


def partial() -> dict[str, Any]:
    """A partial record: the first game left after 30 actions."""
    first = _records()[0]
    return partial_record(first["map"], first["players"], first["seed"], first["agents"], first["actions"][:30])


def write_records(folder: Path, games: list[dict[str, Any]] | None = None) -> list[Path]:
    """Save ``games`` (default :func:`records`) as ``folder/game_NNNNN.json``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, record in enumerate(records() if games is None else games):
        path = folder / f"game_{i:05d}.json"
        save_record(record, path)
        paths.append(path)
    return paths
