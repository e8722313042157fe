"""Moved to :mod:`concordia_env.arena.evaluation`; this name and ``python -m
concordia_env.training.evaluation`` stay for one release."""

import sys

from ..arena.evaluation import *  # noqa: F403
from ..arena.evaluation import _play, main  # noqa: F401  (_play: named by old scripts)

if __name__ == "__main__":
    sys.exit(main())
