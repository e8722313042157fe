"""Setting up a new game inside a kernel: kept so that old imports keep working.

The setup is one kernel for the host and the device alike, :func:`concordia_env.rules.setup.setup_state`
(with the generator :func:`~concordia_env.rules.setup.splitmix_next` /
:func:`~concordia_env.rules.setup.splitmix_below`); what it reads is built by
:func:`concordia_env.game.setup_table` and :func:`concordia_env.game.template_state`.
:func:`concordia_env.game.initial_state` calls it on the host, :mod:`concordia_env.cuda.games`
on the device.
"""

from __future__ import annotations

from .._internal.moved import moved as _moved
from ..game import setup_table, template_state
from ..rules.setup import setup_state, splitmix_below, splitmix_next

__all__ = ["setup_state", "setup_table", "splitmix_below", "splitmix_next", "template_state"]

_moved("concordia_env.cuda.newgame", "concordia_env.rules.setup")
