"""``python -m concordia_env.training.turn_td``: see :mod:`concordia_env.training.turn_td.loop`."""

import sys

from .loop import main

sys.exit(main())
