"""concordia_env: a fast, faithful rules engine and RL environment for Concordia (base game).

PettingZoo AEC environment (``concordia_env.parallel_env(...)`` is its parallel form)::

    env = concordia_env.env(map_name="imperium", num_players=4)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        ...

Core API (modelled on OpenSpiel)::

    import concordia_env
    state = concordia_env.new_game("imperium", num_players=4, seed=0)
    while not state.is_terminal():
        state.apply(state.legal_actions()[0])
    print(state.scores(), state.winner())
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

ENV_ID = "concordia/concordia_v0"

__all__ = [
    "GOODS", "GOD_COLUMNS", "MAP_NAMES", "NUM_ACTIONS", "Game", "GameState",
    "ENV_ID", "IllegalActionError", "env", "get_game", "new_game", "parallel_env", "raw_env",
]

# The public names are imported on first use (PEP 562), so that `import concordia_env`, and
# with it `concordia --help`, neither imports the environment's dependencies nor compiles a
# kernel (importing a kernel module checks its compiled stamp, which compiles a little).
_LAZY: dict[str, str] = {
    "GOODS": "data", "MAP_NAMES": "data", "NUM_ACTIONS": "engine", "Game": "game", "get_game": "game",
    "GOD_COLUMNS": "state", "GameState": "state", "IllegalActionError": "state", "new_game": "state",
    "env": "env", "raw_env": "env", "parallel_env": "parallel",
}

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs
    from .data import GOODS, MAP_NAMES
    from .engine import NUM_ACTIONS
    from .env import env, raw_env
    from .game import Game, get_game
    from .parallel import parallel_env
    from .state import GOD_COLUMNS, GameState, IllegalActionError, new_game


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


class _Package(types.ModuleType):
    """The package module: keeps ``concordia_env.env`` the env function.

    Importing the submodule ``concordia_env.env`` (as ``vector`` and the arena do) makes
    Python set the package's ``env`` attribute to that module; eagerly importing the
    function last used to win, and with lazy names this keeps it so."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "env" and isinstance(value, types.ModuleType):
            return  # the module stays reachable as sys.modules["concordia_env.env"]
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


def _register() -> None:
    """Make the env available as ``pettingzoo.make("aec", "concordia/concordia_v0", **kwargs)``
    and its parallel form as ``pettingzoo.make("parallel", "concordia/concordia_v0", **kwargs)``
    (PettingZoo >= 1.27 has a registry; older versions don't, and need nothing), and the
    single-learner env as ``gymnasium.make("concordia/Concordia-v0", **kwargs)`` (and its vector
    form, ``gymnasium.make_vec``) (string entry points: nothing more is imported until an env is made)."""
    import pettingzoo

    from .integrations.gym_registration import register_gymnasium_envs

    if hasattr(pettingzoo, "register") and ENV_ID not in getattr(pettingzoo, "aec_registry", {}):
        pettingzoo.register("aec", ENV_ID, entry_point="concordia_env.env:env")
    if hasattr(pettingzoo, "register") and ENV_ID not in getattr(pettingzoo, "parallel_registry", {}):
        pettingzoo.register("parallel", ENV_ID, entry_point="concordia_env.parallel:parallel_env")
    register_gymnasium_envs()


_register()
