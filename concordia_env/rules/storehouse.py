"""Production into storehouses, and choosing what to keep when a storehouse overflows.

Produced goods first wait in the ``incoming`` field; they are stored from the active player on
in turn order. A player whose incoming goods do not fit and are of more than one kind chooses
which to keep (phase ``PH_KEEP``, actions ``A_KEEP + good``), one good at a time.
"""

from __future__ import annotations

from ..data import GOODS
from . import rule, turn
from .layout import A_KEEP, NG, O_ACTIVE, O_CURRENT, O_GOODS, O_INCOMING, O_KEEP_PLAYER, O_NPLAYERS, O_PHASE, PH_KEEP
from .pieces import free_slots


@rule(inline="always")
def _incoming(s, x):
    """(goods waiting for player ``x``, kinds among them)."""
    total = 0
    kinds = 0
    for g in range(NG):
        total += s[O_INCOMING + x * NG + g]
        if s[O_INCOMING + x * NG + g] > 0:
            kinds += 1
    return total, kinds


@rule(inline="always")
def _store_what_fits(s, x, free):
    """Store ``x``'s incoming goods in good order until the storehouse is full; the rest is lost."""
    for g in range(NG):
        w = s[O_INCOMING + x * NG + g]
        take = w if w < free else free
        s[O_GOODS + x * NG + g] += take
        free -= take
        s[O_INCOMING + x * NG + g] = 0


@rule()
def resolve_production(s, T):
    """Move incoming goods into storehouses, from the active player on in turn order.

    Returns False when a player must choose what to keep (phase PH_KEEP)."""
    n = s[O_NPLAYERS]
    for o in range(n):
        x = (s[O_ACTIVE] + o) % n
        total, kinds = _incoming(s, x)
        if total == 0:
            continue
        free = free_slots(s, T, x)
        # no choice to make: everything fits, one kind only, or nothing fits
        if total <= free or kinds == 1 or free == 0:
            _store_what_fits(s, x, free)
            continue
        s[O_PHASE] = PH_KEEP
        s[O_KEEP_PLAYER] = x
        s[O_CURRENT] = x
        return False
    return True


@rule()
def finish_production(s, T):
    """Store what was produced; the turn ends unless somebody must choose what to keep."""
    if resolve_production(s, T):
        turn.end_turn(s)


@rule(inline="always")
def legal(s, mask):
    """The overflowing player keeps one good of a kind still waiting."""
    x = s[O_KEEP_PLAYER]
    for g in range(NG):
        if s[O_INCOMING + x * NG + g] > 0:
            mask[A_KEEP + g] = 1


@rule()
def keep(s, T, a):
    """Keep one good; once the storehouse is full the rest of that player's goods are lost."""
    g = a - A_KEEP
    x = s[O_KEEP_PLAYER]
    s[O_GOODS + x * NG + g] += 1
    s[O_INCOMING + x * NG + g] -= 1
    if free_slots(s, T, x) == 0:
        for h in range(NG):
            s[O_INCOMING + x * NG + h] = 0
    finish_production(s, T)


# ------------------------------------------------------------------ names
def name_keep(state, a: int) -> str:
    return f"player {int(state.s[O_KEEP_PLAYER])}: keep 1 {GOODS[a - A_KEEP]}"
