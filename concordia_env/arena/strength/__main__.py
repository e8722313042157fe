"""``python -m concordia_env.arena.strength``."""

import sys

from .cli import main

sys.exit(main())
