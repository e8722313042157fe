"""Moved to :mod:`concordia_env.training.ppo.cuda` (``python -m concordia_env.training.ppo.cuda``).

Kept for one release: this module re-exports the names it had, and
``python -m concordia_env.training.ppo_cuda`` runs the same ``main``, naming itself in its messages.
"""

from __future__ import annotations

import sys

from .._internal.moved import moved as _moved
from .._internal.moved import moved_command
from .ppo import cuda as _cuda
from .ppo.cuda import Config, make_agent, seat_advantages, sync, train

PROG = "python -m concordia_env.training.ppo_cuda"

__all__ = ["PROG", "Config", "main", "make_agent", "seat_advantages", "sync", "train"]


def main(argv: list[str] | None = None) -> int:
    """:func:`concordia_env.training.ppo.cuda.main` under this command's name."""
    return _cuda.main(argv, PROG)


_moved("concordia_env.training.ppo_cuda", "concordia_env.training.ppo.cuda")


if __name__ == "__main__":
    moved_command("concordia_env.training.ppo_cuda", "concordia_env.training.ppo.cuda")
    sys.exit(main())
