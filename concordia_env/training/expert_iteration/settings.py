"""The run's settings: the fixed arguments and their check against ``run.json``, what decides the
self-play data (:class:`SelfPlayConfig`, :class:`Expert`) and where a run keeps its files."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from concordia_env.arena.run_folder import RunFolder, flag_label

PROG = "python -m concordia_env.training.expert_iteration"
RUN_FORMAT = "concordia-env/expert-iteration"
RUN_VERSION = 1
#: version of the self-play shard layout; part of every shard's settings
DATA_VERSION = 1
#: arguments that decide the results: a restart must repeat them (``run.json``)
FIXED_ARGS = ("map", "players", "seed", "games", "simulations", "shard_size", "max_turns", "c_puct", "leaf_mix",
              "root_noise", "root_noise_alpha", "move_temperature", "temperature_decisions", "init_net",
              "hidden", "activation", "window", "epochs", "batch", "lr", "weight_decay", "dropout",
              "value_target_mix", "value_weight", "policy_weight", "warm_start", "val_fraction",
              "gate_deals", "gate_simulations", "gate_threshold", "eval_deals", "teacher", "teacher_epsilon")
#: fixed arguments added after runs existed: a ``run.json`` (or a training checkpoint) without
#: them was started with these values
FIXED_DEFAULTS: dict[str, Any] = {"teacher": "mcts", "teacher_epsilon": 0.1}
#: the expert of a generation without a network (generation 0 without --init-net)
HEURISTIC_EXPERT = "mcts-heuristic"
#: the expert of generation 0 without --init-net with ``--teacher heuristic``
HEURISTIC_TEACHER = "heuristic-priors"
#: generation 0's teachers (``--teacher``)
TEACHERS = ("mcts", "heuristic")


@dataclass(frozen=True)
class SelfPlayConfig:
    """Everything that decides the contents of a generation's self-play shards except the expert."""

    map: str
    players: int
    seed: int
    games: int
    simulations: int
    shard_size: int
    max_turns: int
    c_puct: float
    leaf_mix: float
    root_noise: float
    root_noise_alpha: float
    move_temperature: float
    temperature_decisions: int
    version: int = DATA_VERSION
    #: the heuristic teacher's exploration rate; it enters only its shards' meta (:func:`shard_meta`),
    #: so the search's shards keep the bytes they had before the teacher existed
    teacher_epsilon: float = FIXED_DEFAULTS["teacher_epsilon"]

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        del doc["teacher_epsilon"]
        return doc


@dataclass(frozen=True)
class Expert:
    """The player of a generation's self-play: a network file (``stem``) with the sha256 of its
    ``.npz``, or (``stem`` None) the heuristic-guided MCTS (``sha256`` ``HEURISTIC_EXPERT``) or the
    heuristic teacher (``HEURISTIC_TEACHER``)."""

    stem: str | None = None
    sha256: str = HEURISTIC_EXPERT
    generation: int | None = None

    @property
    def is_teacher(self) -> bool:
        """The heuristic teacher (``--teacher heuristic``) rather than a search."""
        return self.stem is None and self.sha256 == HEURISTIC_TEACHER

    @staticmethod
    def of(stem: str | os.PathLike, generation: int | None) -> Expert:
        npz = Path(stem).with_suffix(".npz") if Path(stem).suffix in (".npz", ".json") else Path(f"{stem}.npz")
        return Expert(str(npz.with_suffix("")), hashlib.sha256(npz.read_bytes()).hexdigest(), generation)


def gen_dir(out: Path, g: int) -> Path:
    return out / f"gen_{g:03d}"


def shard_path(out: Path, g: int, index: int) -> Path:
    return gen_dir(out, g) / "selfplay" / f"shard_{index:05d}.npz"


def shard_games(cfg: SelfPlayConfig, index: int) -> range:
    return range(index * cfg.shard_size, min(cfg.games, (index + 1) * cfg.shard_size))


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None if it is missing or unreadable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def checkpoint_fixed(args: argparse.Namespace) -> dict[str, Any]:
    """The fixed arguments as a training checkpoint records them: those of ``FIXED_DEFAULTS`` only
    when they differ from it, so a checkpoint written before they existed still matches."""
    return {k: vars(args)[k] for k in FIXED_ARGS if k not in FIXED_DEFAULTS or vars(args)[k] != FIXED_DEFAULTS[k]}


def check_run_file(args: argparse.Namespace, out: Path) -> None:
    """Claim ``OUT`` as this run's folder (:mod:`concordia_env.arena.run_folder`): write
    ``OUT/run.json``, or check a restart against it (``ValueError`` in one line). A run file written
    before a fixed argument existed reads as that argument's default."""
    fixed = {k: vars(args)[k] for k in FIXED_ARGS}

    def unwrap(doc: Any) -> dict[str, Any] | None:
        if not isinstance(doc, dict) or doc.get("format") != RUN_FORMAT or not isinstance(doc.get("arguments"), dict):
            return None
        return {**FIXED_DEFAULTS, **doc["arguments"]}

    RunFolder.open(out, fixed, settings_name="run.json", units=("gen_*/shard_*.npz", "gen_*/*.json"),
                   resume=bool(args.resume), label=flag_label,
                   wrap=lambda settings: {"format": RUN_FORMAT, "version": RUN_VERSION, "arguments": dict(settings),
                                          "command": getattr(args, "command", None)},
                   unwrap=unwrap)


def selfplay_config(args: argparse.Namespace) -> SelfPlayConfig:
    return SelfPlayConfig(args.map, args.players, args.seed, args.games, args.simulations, args.shard_size,
                          args.max_turns, args.c_puct, args.leaf_mix, args.root_noise, args.root_noise_alpha,
                          args.move_temperature, args.temperature_decisions, teacher_epsilon=args.teacher_epsilon)


def selfplay_expert(args: argparse.Namespace, g: int, best: Expert) -> Expert:
    """Who plays generation ``g``'s self-play: the best network's search, or, with no network yet
    (generation 0 without ``--init-net``), the heuristic-guided MCTS or the heuristic teacher."""
    if g == 0 and best.stem is None and args.teacher == "heuristic":
        return Expert(sha256=HEURISTIC_TEACHER)
    return best
