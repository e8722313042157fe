"""Self-play run folders among an export's inputs: which folder is which run, and where its games are.

A folder is a run of one of the package's self-play writers when it holds that writer's settings
file (:mod:`concordia_env.arena.run_folder`) with that writer's settings in it:

- ``dataset.json``: value data (``python -m concordia_env.training.value.data``); its games are
  kept in ``shard_NNNNN.npz`` (:mod:`concordia_env.training.game_log`);
- ``run.json`` of format ``concordia-env/expert-iteration``: expert iteration; its games in
  ``gen_GGG/selfplay/shard_NNNNN.npz``;
- ``settings.json`` with the turn-level TD loop's settings (``python -m concordia_env.training.turn_td``);
  its games are the self-play tournaments' records, ``round_RR/games/game_NNNNN.json``.

Every other file of a run folder (networks, checkpoints, gates, logs, shards set aside as
``.invalid``) holds no self-play game and is not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

#: expert iteration's ``run.json`` format (``expert_iteration.settings.RUN_FORMAT``; that package needs torch)
EI_RUN_FORMAT = "concordia-env/expert-iteration"
#: the settings a value-data ``dataset.json`` holds (some of :class:`~concordia_env.training.value.data.DataConfig`'s)
VALUE_DATA_KEYS = frozenset({"map", "agents", "agent_weights", "players", "shard_size", "every"})
#: the settings a turn-TD ``settings.json`` holds (some of ``turn_td.loop.FIXED``)
TURN_TD_KEYS = frozenset({"map", "players", "rounds", "games", "lam", "w_start", "candidates"})
#: where a run's games are, relative to its folder, by kind of run
UNITS = {
    "value-data": re.compile(r"^shard_\d+\.npz$"),
    "expert-iteration": re.compile(r"^gen_\d+/selfplay/shard_\d+\.npz$"),
    "turn-td": re.compile(r"^round_\d+/games/game_\d+\.json$"),
}
#: a shard file: read as a self-play shard when named on its own
SHARD_RE = re.compile(r"^shard_\d+\.npz$")


def run_kind(settings: Path) -> str | None:
    """``"value-data"``, ``"expert-iteration"`` or ``"turn-td"`` if ``settings`` is the settings file of
    such a run, else None (another file of that name, or one that cannot be read)."""
    if settings.name not in ("dataset.json", "run.json", "settings.json"):
        return None
    try:
        doc = json.loads(settings.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict):
        return None
    if settings.name == "dataset.json" and VALUE_DATA_KEYS <= doc.keys():
        return "value-data"
    if settings.name == "run.json" and doc.get("format") == EI_RUN_FORMAT:
        return "expert-iteration"
    if settings.name == "settings.json" and TURN_TD_KEYS <= doc.keys():
        return "turn-td"
    return None


def run_roots(files: Iterable[Path]) -> dict[Path, str]:
    """The run folders among the parents of ``files`` (their settings files among them), with their kinds."""
    roots = {}
    for path in files:
        kind = run_kind(path)
        if kind is not None:
            roots[path.parent] = kind
    return roots


def unit_kind(kind: str, root: Path, path: Path) -> str | None:
    """How a file in the folder of a ``kind`` run is read: ``"shard"`` (a self-play shard),
    ``"record"`` (a game record) or None (it holds none of the run's games)."""
    if not UNITS[kind].match(path.relative_to(root).as_posix()):
        return None
    return "record" if kind == "turn-td" else "shard"


def run_of(path: Path, roots: dict[Path, str]) -> Path | None:
    """The innermost run folder among ``roots`` that holds ``path``; None if none does."""
    return next((parent for parent in path.parents if parent in roots), None)
