"""Moved to :mod:`concordia_env.arena.evaluation`; this name and ``python -m
concordia_env.training.evaluation`` stay for one release."""

import sys

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from ..arena.evaluation import *  # noqa: F403
from ..arena.evaluation import _play, main  # noqa: F401  (_play: named by old scripts)

_moved("concordia_env.training.evaluation", "concordia_env.arena.evaluation")


if __name__ == "__main__":
    moved_command("concordia_env.training.evaluation", "concordia_env.arena.evaluation")
    sys.exit(main())
