"""Moved to :mod:`concordia_env.training.ppo.rllib` (``python -m concordia_env.training.ppo.rllib``).

Kept for one release: this module re-exports the names it had, and
``python -m concordia_env.training.train_rllib`` runs the same ``main``, naming itself in its messages.
"""

from __future__ import annotations

import argparse
import sys

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from .ppo import rllib as _rllib
from .ppo.rllib import INSTALL_HINT, build_config, check_args, env_config, evaluate, progress_row, train

PROG = "python -m concordia_env.training.train_rllib"

__all__ = ["INSTALL_HINT", "PROG", "build_config", "build_parser", "check_args", "env_config", "evaluate", "main",
           "progress_row", "train"]


def build_parser() -> argparse.ArgumentParser:
    """:func:`concordia_env.training.ppo.rllib.build_parser` under this command's name."""
    return _rllib.build_parser(PROG)


def main(argv: list[str] | None = None) -> int:
    """:func:`concordia_env.training.ppo.rllib.main` under this command's name."""
    return _rllib.main(argv, PROG)


_moved("concordia_env.training.train_rllib", "concordia_env.training.ppo.rllib")


if __name__ == "__main__":
    moved_command("concordia_env.training.train_rllib", "concordia_env.training.ppo.rllib")
    sys.exit(main())
