"""``python -m concordia_env.cli``: the ``concordia`` command."""

import sys

from .main import main

sys.exit(main())
