"""The game's parameters as OpenSpiel sees them: the registered :data:`GAME_TYPE`, the defaults,
and their checking into one shared :class:`_Config` per loaded game."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel

from concordia_env import engine as E
from concordia_env.agents.mcts import deck_blocks
from concordia_env.data import MAP_NAMES
from concordia_env.env import DEFAULT_MAX_TURNS
from concordia_env.game import check_setup_args
from concordia_env.state import new_game

#: the short name the game is registered under
GAME_NAME = "python_concordia"
#: equally likely setups of the first chance node (setup k = the package's seed k)
DEFAULT_SETUPS = 1000
#: the most num_setups may be (the setup node lists every outcome)
MAX_SETUPS = 100_000
#: utilities OpenSpiel may be given: the env's zero-sum reward modes ("vp" is unbounded)
REWARDS = ("win", "rank")
#: a bound on the decisions of one card play, for OpenSpiel's max_game_length: the card (1), a
#: Diplomat's choice (1), then at most an Architectus' 6 moves + 15 builds + done, a Mercator's
#: 12 sales + 12 purchases + done, or a production with up to 5 owners keeping up to 12 goods one
#: at a time (61); 100 leaves room
DECISIONS_PER_CARD_PLAY = 100
#: the game's parameters and their defaults
PARAMETERS: dict[str, Any] = {"map_name": "imperium", "players": 4, "intermediate_scoring": False,
                              "max_turns": DEFAULT_MAX_TURNS, "reward": "win", "num_setups": DEFAULT_SETUPS}

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Concordia (concordia-env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=E.MAXP,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


# ---------------------------------------------------------------- configuration

@dataclass(frozen=True)
class _Config:
    """The checked parameters of one loaded game. Shared, never copied, by every state of it."""

    map_name: str
    players: int
    intermediate_scoring: bool
    max_turns: int
    reward: str
    num_setups: int
    blocks: tuple[tuple[int, int], ...]  # (start, stop) of each stacked deck in the deck array

    @property
    def deck_len(self) -> int:
        return self.blocks[-1][1]

    def __deepcopy__(self, memo: dict) -> _Config:
        return self


def _positive_int(name: str, value: Any, top: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1 \
            or (top is not None and value > top):
        bound = f" no more than {top:,}" if top is not None else ""
        raise ValueError(f"python_concordia: {name} must be a positive int{bound}, got {value!r}")
    return int(value)


def _config(params: Mapping[str, Any]) -> _Config:
    """Check the parameters (``ValueError`` in one line naming what is wrong and what is allowed)."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"python_concordia: unknown parameter(s) {unknown}; known: {sorted(PARAMETERS)}")
    p = {**PARAMETERS, **params}
    map_name, players = p["map_name"], p["players"]
    if map_name not in MAP_NAMES:
        raise ValueError(f"python_concordia: unknown map_name {map_name!r}; allowed: {list(MAP_NAMES)}")
    try:
        check_setup_args(map_name, players)
    except ValueError as exc:
        raise ValueError(f"python_concordia: {exc}") from None
    if not isinstance(p["intermediate_scoring"], (bool, np.bool_)):
        raise ValueError(f"python_concordia: intermediate_scoring must be a bool, got {p['intermediate_scoring']!r}")
    if p["max_turns"] is None:
        raise ValueError("python_concordia: max_turns must be a positive int: OpenSpiel needs a bounded game")
    max_turns = _positive_int("max_turns", p["max_turns"])
    if p["reward"] not in REWARDS:
        raise ValueError(f"python_concordia: reward must be one of {list(REWARDS)}, got {p['reward']!r}")
    setups = _positive_int("num_setups", p["num_setups"], MAX_SETUPS)
    blocks = tuple(deck_blocks(new_game(map_name, int(players), seed=0)))  # the same for every seed
    return _Config(map_name, int(players), bool(p["intermediate_scoring"]), int(max_turns), p["reward"], setups,
                   blocks)


def _utility_range(cfg: _Config) -> tuple[float, float]:
    """(min, max) utility: -1/(n-1) is the least a "win" loser gets, -1 the last place's "rank"."""
    low = -1.0 if cfg.reward == "rank" or cfg.players == 2 else -1.0 / (cfg.players - 1)
    return low, 1.0


def _config_of(game: Any) -> _Config:
    """The :class:`_Config` of a ``python_concordia`` game; ``TypeError`` for any other game."""
    cfg = getattr(game, "config", None)
    if not isinstance(cfg, _Config):
        raise TypeError(f"expected a python_concordia game, got {game!r}")
    return cfg
