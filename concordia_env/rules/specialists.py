"""Specialists (Mason, Farmer, Smith, Vintner, Weaver): every house of the player in a city
producing the specialist's good yields one."""

from __future__ import annotations

from . import rule, storehouse
from .layout import K_SPECIALIST, NG, O_INCOMING
from .pieces import houses_of_good


@rule()
def start(s, T, p, k):
    g = k - K_SPECIALIST
    s[O_INCOMING + p * NG + g] += houses_of_good(s, p, g)
    storehouse.finish_production(s, T)
