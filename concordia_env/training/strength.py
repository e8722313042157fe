"""Moved to :mod:`concordia_env.arena.strength`; this name and ``python -m
concordia_env.training.strength`` stay for one release."""

import sys

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from ..arena.strength import *  # noqa: F403
from ..arena.strength import __all__  # noqa: F401
from ..arena.strength.chunks import _play_timed  # noqa: F401  (named by tests and old scripts)
from ..arena.strength.cli import main

_moved("concordia_env.training.strength", "concordia_env.arena.strength")


if __name__ == "__main__":
    moved_command("concordia_env.training.strength", "concordia_env.arena.strength")
    sys.exit(main())
