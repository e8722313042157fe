"""What every checker shares: the declaration of an invariant, the violation row it writes,
the field indices and bounds its messages name, and the stamp of the kernels' sources."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import engine as E
from .._internal.jit import kernel

if TYPE_CHECKING:
    from .messages import Names

#: the jit group of every kernel of the package (see :data:`concordia_env._internal.jit.GROUPS`)
GROUP = "validation"

# ------------------------------------------------------------- field indices
FIELD_NAMES = tuple(name for name, _ in E.STATE_FIELDS)
_FI = {name: i for i, name in enumerate(FIELD_NAMES)}
F_CURRENT = _FI["current"]
F_ACTIVE = _FI["active"]
F_PM = _FI["pm"]
F_CONCORDIA = _FI["concordia"]
F_START = _FI["start_player"]
F_TURN = _FI["turn"]
F_INTERMEDIATE = _FI["intermediate"]
F_KIND = _FI["ctx_kind"]
F_POINTS = _FI["ctx_points"]
F_BUILT = _FI["ctx_built"]
F_SOLD = _FI["ctx_sold"]
F_BOUGHT = _FI["ctx_bought"]
F_PLACED = _FI["ctx_placed"]
F_BUYS_LEFT = _FI["ctx_buys_left"]
F_CONSUL = _FI["ctx_consul"]
F_BOUGHT_POS = _FI["ctx_bought_pos"]
F_PAY_LEFT = _FI["ctx_pay_left"]
F_KEEP_PLAYER = _FI["ctx_keep_player"]
F_COINS = _FI["coins"]
F_GOODS = _FI["goods"]
F_HAND = _FI["hand"]
F_DISCARD = _FI["discard"]
F_TOP = _FI["top"]
F_HOUSES_LEFT = _FI["houses_left"]
F_COLONIST = _FI["colonist"]
F_INCOMING = _FI["incoming"]
F_INTER_DONE = _FI["inter_done"]
F_INTER_SCORE = _FI["inter_score"]

# --------------------------------------------- bounds on fields the rules leave open
# The rules bound most fields (12 storehouse slots, 15 houses, 6 colonists, the cards in the
# box); sestertii, the card-play counter and VP are unbounded ("goods and coins are
# unlimited"). A state must still keep them far from int32 overflow, or a few moves later
# the kernel's arithmetic wraps. No real game comes near these bounds: random play ends
# within about 1,000 card plays and 1,000 sestertii, heuristic play well within. A card play
# gains at most about 100 sestertii (a Mercator selling 12 cloth), so even a game played on
# for MAX_TURN plays from MAX_COINS stays below 1e8, a twentieth of 2**31. Each bound is
# below 2**24, so the float32 observation holds every accepted value exactly.
#: most card plays a game may count (field 'turn')
MAX_TURN = 1_000_000
#: most sestertii a player may hold (field 'coins')
MAX_COINS = 1_000_000
#: most VP an intermediate scoring may have counted (field 'inter_score'). VP grow with money
#: through Vesta only, one Senator per player: (sestertii + goods) // 10 <= 100_009 here; every
#: other god is capped by houses, provinces, goods and colonists (a few hundred VP in all).
MAX_SCORE = 1_000_000
#: goods the active player may receive beyond one per house: the Praefectus bonus (2 with
#: the Praefectus Magnus); bounds field 'incoming' together with the houses of each good
MAX_BONUS_GOODS = 2


# ------------------------------------------------------------- declared invariants
@dataclass(frozen=True)
class Row:
    """A violation row as Python sees it: the five integers the kernel wrote, and the names
    (of cities, goods, cards, ...) of the game they are read on."""

    a: int
    b: int
    c: int
    d: int
    e: int
    names: Names


#: a message: a ``str.format`` template of the row's integers ``{a}`` .. ``{e}`` (a format spec
#: names them: ``{c:city}``, see :class:`~concordia_env.invariants.messages.Names`), or, where
#: the wording depends on the values, a function of the :class:`Row`
Message = str | Callable[[Row], str]


@dataclass(frozen=True)
class Invariant:
    """One rule invariant: the code its check writes in a violation row, a short name, and the
    message that row becomes."""

    code: int
    name: str
    message: Message


#: every declared invariant by code
REGISTRY: dict[int, Invariant] = {}


def declare(code: int, name: str, message: Message) -> int:
    """Declare invariant ``code`` (once: the codes are the kernels' constants); returns ``code``."""
    if code in REGISTRY:
        raise ValueError(f"invariant code {code} declared twice ({REGISTRY[code].name}, {name})")
    REGISTRY[code] = Invariant(code, name, message)
    return code


# ------------------------------------------------------------- violation rows
MAXERR = 64  # rows kept; the kernels still count the ones beyond


# Explicit signatures: one compiled version each, whatever int types the call sites pass
# (otherwise numba compiles a specialization per call-site type mix, slowing the first call).
@kernel("int64(int32[:, ::1], int64, int64, int64, int64, int64, int64, int64)", exact=True, group=GROUP)
def emit(out, k, code, a, b, c, d, e):
    """Write violation row ``k`` (kept only below :data:`MAXERR`); return the next ``k``."""
    if k < MAXERR:
        out[k, 0] = code
        out[k, 1] = a
        out[k, 2] = b
        out[k, 3] = c
        out[k, 4] = d
        out[k, 5] = e
    return k + 1


@kernel("int64(int64)", exact=True, group=GROUP)
def popcount(x):
    # bounded loop: a negative (corrupt) value must not spin forever
    n = 0
    for i in range(32):
        n += (x >> i) & 1
    return n
