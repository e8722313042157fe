"""The rules of Concordia as small compiled functions over one flat int32 state.

Read in this order:

* :mod:`.layout`: the two flat arrays (the state ``s`` and the map's tables ``T``), the action
  ids and the phases;
* :mod:`.quantities`: every number the rules derive (a house's cost, a card's price at a display
  position, the Colonus cash, the Tribunus payout, move-action ids ...), each in one place;
* :mod:`.pieces`: questions about the board (free storehouse slots, colonists on the board ...);
* :mod:`.kernel`: the two dispatch tables, which family says what is legal in each phase and
  which family carries out each action range, and :func:`~.kernel.step`;
* one module per action family, each holding its legality and its effect:
  :mod:`.play` (playing a card, starting its action), :mod:`.tribunus`, :mod:`.architectus`,
  :mod:`.praefectus`, :mod:`.mercator`, :mod:`.colonus`, :mod:`.diplomat`, :mod:`.senator`
  (Senator and Consul), :mod:`.specialists`, :mod:`.storehouse` (production into storehouses and
  overflow), :mod:`.turn` (ending a turn and the game) and :mod:`.scoring`;
* :mod:`.setup`: a new game's seeded setup, the one the host and the GPU both run.

Every function is a numba kernel defined with :func:`rule`; none allocates memory, so the same
source can also be compiled for a GPU. The kernel trusts its input: legality is checked by the
Python layer (:class:`concordia_env.state.GameState`) before :func:`~.kernel.step` is called.
:mod:`concordia_env.engine` re-exports what the rest of the package uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from .._internal import jit  # (not ``from .._internal.jit import kernel``: the submodule rules.kernel takes that name)

F = TypeVar("F", bound=Callable[..., Any])


def rule(signature: str | None = None, *, inline: str = "never") -> Callable[[F], F]:
    """:func:`concordia_env._internal.jit.kernel` for the rules: every rules kernel compiles in the ``engine`` group."""
    return jit.kernel(signature, group="engine", inline=inline)
