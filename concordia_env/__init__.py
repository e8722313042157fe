"""concordia_env: a fast, faithful rules engine and RL environment for Concordia (base game).

PettingZoo AEC environment::

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

from .data import GOODS, MAP_NAMES
from .engine import NUM_ACTIONS
from .game import Game, get_game
from .state import GOD_COLUMNS, GameState, IllegalActionError, new_game
from .env import env, raw_env  # noqa: E402  (the function shadows the module name on purpose)

__all__ = [
    "GOODS", "GOD_COLUMNS", "MAP_NAMES", "NUM_ACTIONS", "Game", "GameState",
    "ENV_ID", "IllegalActionError", "env", "get_game", "new_game", "raw_env",
]
__version__ = "0.1.0"

ENV_ID = "concordia/concordia_v0"


def _register() -> None:
    """Make the env available as ``pettingzoo.make("aec", "concordia/concordia_v0", **kwargs)``
    (PettingZoo >= 1.27 has a registry; older versions don't, and need nothing)."""
    import pettingzoo

    if hasattr(pettingzoo, "register") and ENV_ID not in getattr(pettingzoo, "aec_registry", {}):
        pettingzoo.register("aec", ENV_ID, entry_point="concordia_env.env:env")


_register()
