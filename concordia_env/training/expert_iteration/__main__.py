"""``python -m concordia_env.training.expert_iteration``: the command line (:mod:`.cli`)."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
