"""A module the tests name only in files (a record, a results file, a strength config), which must
never import it: importing it sets the environment variable ``CONCORDIA_CANARY_IMPORTED``."""

from __future__ import annotations

import os

from tiny_agents import Offset

os.environ["CONCORDIA_CANARY_IMPORTED"] = "1"


class Canary(Offset):
    """An agent whose module marks its import."""
