"""Old import paths and commands kept for one release: each says once where its code went.

Importing an old module path (``concordia_env.render``, ``concordia_env.training.train_ppo``...)
raises a :class:`MovedWarning`, a ``DeprecationWarning``: Python shows it where the import is in
``__main__``, a test run or a notebook, and hides it elsewhere. Running an old command
(``python -m concordia_env.training.train_ppo``) prints one ``note:`` line on stderr naming the
new one, then runs the same code.
"""

from __future__ import annotations

import sys
import warnings

#: when the old names go
WHEN = "the old name goes in the next release"


class MovedWarning(DeprecationWarning):
    """An old import path kept for one release."""


def moved(old: str, new: str) -> None:
    """Warn that module ``old`` is ``new`` now (call at the top of the old module)."""
    # stacklevel 3: the line that imported the old module (the import machinery's frames are skipped)
    warnings.warn(f"{old} has moved to {new}; {WHEN}", MovedWarning, stacklevel=3)


def moved_command(old: str, new: str) -> None:
    """One stderr line saying that the command ``python -m old`` is ``python -m new`` now."""
    print(f"note: python -m {old} is now python -m {new}; {WHEN}", file=sys.stderr)
