"""Moved to :mod:`concordia_env.training.value` (``python -m concordia_env.training.value.train``).

Kept for one release: this module re-exports the names it had (from :mod:`.value.train`,
:mod:`.value.model`, :mod:`.value.targets` and :mod:`.value.checkpoint`), and
``python -m concordia_env.training.value_train`` runs the same ``main``, naming itself in its messages.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from .value import train as _train
from .value.checkpoint import UnsafeCheckpointError, load_checkpoint, load_torch_checkpoint, plain, save_checkpoint
from .value.model import ValueModel, losses, mlp_trunk, predict, torch_values
from .value.targets import PHASES, bootstrap_targets, game_phase, phase_report
from .value.train import FIXED_ARGS, finish, split_games, train, training_targets

#: the old private name of :func:`concordia_env.training.value.checkpoint.save_checkpoint`
_save_checkpoint = save_checkpoint

PROG = "python -m concordia_env.training.value_train"

__all__ = ["FIXED_ARGS", "PHASES", "PROG", "UnsafeCheckpointError", "ValueModel", "bootstrap_targets", "finish",
           "game_phase", "load_checkpoint", "load_torch_checkpoint", "losses", "main", "mlp_trunk", "phase_report",
           "plain", "predict", "split_games", "torch_values", "train", "training_targets"]


def main(argv: Sequence[str] | None = None) -> int:
    """:func:`concordia_env.training.value.train.main` under this command's name."""
    return _train.main(argv, PROG)


_moved("concordia_env.training.value_train", "concordia_env.training.value.train")


if __name__ == "__main__":
    moved_command("concordia_env.training.value_train", "concordia_env.training.value.train")
    sys.exit(main())
