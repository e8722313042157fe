"""Moved to :mod:`concordia_env.training.ppo` (``python -m concordia_env.training.ppo``).

Kept for one release: this module re-exports the names it had, and
``python -m concordia_env.training.train_ppo`` runs the same ``main``, naming itself in its messages
and in ``config.json`` as before.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from .ppo import command as _command
from .ppo import loop as _loop
from .ppo import settings as _settings
from .ppo.callbacks import build_callbacks, format_duration, progress_bar_problem, rollout_line, rollout_lines
from .ppo.checkpoints import (
    ADAM_STATE,
    CHECKPOINT_NAME,
    TEMPORARY_NAME,
    CheckpointError,
    RunExists,
    SaveError,
    check_new_run_directory,
    checkpoint_step,
    checkpoints_of,
    drop_partial_optimizer_state,
    existing_run,
    load_checkpoint,
    refill_pool,
    remove_stale_temporaries,
    resume_candidates,
    resume_model,
    resume_readable,
    run_directory,
    save_interrupted,
    save_model,
    slim_save,
    warn,
    write_file,
)
from .ppo.envs import make_env
from .ppo.evaluation import evaluation_callback
from .ppo.logs import make_logger, progress_csv, read_evaluations, read_progress
from .ppo.loop import Interrupted, learn_and_save, new_model, release, release_stem, versions
from .ppo.settings import DEFAULT_OPPONENTS, check_args, int_list, opponent_weights, positive_int

PROG = "python -m concordia_env.training.train_ppo"

__all__ = ["ADAM_STATE", "CHECKPOINT_NAME", "DEFAULT_OPPONENTS", "PROG", "TEMPORARY_NAME", "CheckpointError",
           "Interrupted", "RunExists", "SaveError", "build_callbacks", "build_parser", "check_args",
           "check_new_run_directory", "checkpoint_step", "checkpoints_of", "drop_partial_optimizer_state",
           "evaluation_callback", "existing_run", "format_duration", "int_list", "learn_and_save", "load_checkpoint",
           "main", "make_env", "make_logger", "new_model", "opponent_weights", "positive_int", "progress_bar_problem",
           "progress_csv", "read_evaluations", "read_progress", "refill_pool", "release", "release_stem",
           "remove_stale_temporaries", "resume_candidates", "resume_model", "resume_readable", "rollout_line",
           "rollout_lines", "run_directory", "save_interrupted", "save_model", "slim_save", "train", "versions", "warn",
           "write_config", "write_file"]


def build_parser() -> argparse.ArgumentParser:
    """:func:`concordia_env.training.ppo.settings.build_parser` under this command's name."""
    return _settings.build_parser(PROG)


def write_config(args: argparse.Namespace, out: Path) -> None:
    """:func:`concordia_env.training.ppo.loop.write_config` recording this command."""
    _loop.write_config(args, out, PROG)


def train(args: argparse.Namespace) -> Path:
    """:func:`concordia_env.training.ppo.loop.train` recording this command in ``config.json``."""
    return _loop.train(args, PROG)


def main(argv: list[str] | None = None) -> int:
    """:func:`concordia_env.training.ppo.command.main` under this command's name."""
    return _command.main(argv, PROG)


_moved("concordia_env.training.train_ppo", "concordia_env.training.ppo")


if __name__ == "__main__":
    moved_command("concordia_env.training.train_ppo", "concordia_env.training.ppo")
    sys.exit(main())
