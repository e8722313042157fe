"""The rules kernel as the rest of the package sees it: one namespace (``from concordia_env import
engine as E``) with the layout of the flat arrays, the action ids, and the kernel's entry points.

The rules themselves live in :mod:`concordia_env.rules`, one module per action family; this
module only gathers what other modules use:

* the layout (:mod:`concordia_env.rules.layout`): sizes, phases, action ids, the ``O_*``
  offsets of the state array ``s`` and the ``T_*`` offsets of the map tables ``T``;
* the entry points (:mod:`concordia_env.rules.kernel`): :func:`legal_mask`, :func:`step`,
  :func:`random_playout`, :func:`score_player` (:mod:`concordia_env.rules.scoring`), and
  :func:`setup_state` (:mod:`concordia_env.rules.setup`: a new game's seeded setup);
* helpers other kernels call: :func:`free_slots`, :func:`can_build`, :func:`move_action`,
  :func:`decode_move` (compiled code is kept fresh by ``jit.ensure_fresh``).
"""

from __future__ import annotations

from .rules.architectus import can_build
from .rules.kernel import legal_mask, random_playout, step
from .rules.layout import *  # noqa: F403 - the layout is this namespace's main content
from .rules.pieces import free_slots
from .rules.quantities import decode_move, move_action
from .rules.scoring import score_player
from .rules.setup import setup_state

__all__ = ["can_build", "decode_move", "free_slots", "legal_mask", "move_action", "random_playout",
           "score_player", "setup_state", "step"]
