"""``python -m concordia_env.training.ppo``: see :mod:`concordia_env.training.ppo`."""

import sys

from .command import main

sys.exit(main())
