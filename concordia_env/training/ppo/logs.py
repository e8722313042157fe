"""The logs and evaluations of a MaskablePPO run, kept across a resume: ``progress.csv``, TensorBoard,
``evaluations.npz``."""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

from .checkpoints import one_line, warn, write_file


def read_progress(path: Path, until: int) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of an earlier ``progress.csv`` logged at no more than ``until`` steps (the
    rows of steps a resume goes back over are dropped); an unreadable file is started afresh."""
    if not path.is_file():
        return [], []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            keys = list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        warn(f"{path}: unreadable ({one_line(exc)}); starting it afresh")
        return [], []

    def step(row: dict[str, str]) -> float:
        try:
            return float(row.get("time/total_timesteps") or "nan")
        except ValueError:
            return float("nan")

    kept = [{k: v for k, v in row.items() if k is not None} for row in rows if not step(row) > until]
    return keys, kept


def progress_csv(path: Path, resumed_at: int | None) -> Any:
    """sb3 logger output for ``progress.csv`` that rewrites the whole file atomically at every dump.

    sb3's own CSV output opens the file with ``"w+"`` (a resume wiped the curve of the steps
    before it) and rewrites it in place when a column appears; this one keeps the rows up to the
    resumed step and is never seen half-written. A row per rollout makes the rewrite cheap."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.logger import KVWriter, filter_excluded_keys

    class AtomicCSV(KVWriter):
        def __init__(self) -> None:
            self.keys, self.rows = read_progress(path, resumed_at) if resumed_at is not None else ([], [])

        def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
            values = filter_excluded_keys(key_values, key_excluded, "csv")
            self.keys += sorted(k for k in values if k not in self.keys)
            self.rows.append({k: "" if v is None else str(v) for k, v in values.items()})
            text = io.StringIO()
            writer = csv.DictWriter(text, self.keys, restval="", lineterminator="\n")
            writer.writeheader()
            writer.writerows(self.rows)
            write_file(path, text.getvalue().encode())

        def close(self) -> None:
            pass

    return AtomicCSV()


def make_logger(args: argparse.Namespace, out: Path, resumed_at: int | None) -> Any:
    """The run's sb3 logger: ``logs/progress.csv`` (atomic, see :func:`progress_csv`), TensorBoard
    events (a new file per session, so nothing is overwritten) and, with ``--verbose``, stdout."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.logger import Logger, make_output_format

    folder = out / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    formats = [progress_csv(folder / "progress.csv", resumed_at), make_output_format("tensorboard", str(folder))]
    if args.verbose:
        formats.append(make_output_format("stdout", str(folder)))
    return Logger(folder=str(folder), output_formats=formats)


def read_evaluations(path: Path, until: int) -> dict[str, list]:
    """The evaluations of an earlier ``evaluations.npz`` made at no more than ``until`` steps, as
    the lists sb3's ``EvalCallback`` keeps; an unreadable file is started afresh with a warning."""
    empty: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": [], "successes": []}
    if not path.is_file():
        return empty
    try:
        with np.load(path, allow_pickle=False) as z:
            found = {k: z[k].tolist() for k in empty if k in z.files}
        keep = [i for i, t in enumerate(found["timesteps"]) if t <= until]
        kept = {k: [found[k][i] for i in keep] if len(found.get(k, [])) == len(found["timesteps"]) else []
                for k in empty}
    except Exception as exc:  # noqa: BLE001 - a damaged npz fails in many ways
        warn(f"{path}: unreadable ({one_line(exc)}); starting it afresh")
        return empty
    return kept
