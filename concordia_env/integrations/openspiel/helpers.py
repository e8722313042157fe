"""Loading the game, the chance outcomes that deal a seeded game, the core state under a state,
and the refusal of 2-player-only algorithms."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel

from concordia_env import engine as E
from concordia_env.state import GameState, new_game

from .config import GAME_NAME, _config_of
from .game import ConcordiaGame
from .state import ConcordiaState


def load_game(map_name: str = "imperium", players: int = 4, **params: Any) -> ConcordiaGame:
    """``pyspiel.load_game("python_concordia", {...})`` with the parameters as keywords."""
    return pyspiel.load_game(GAME_NAME, {"map_name": map_name, "players": players, **params})


def deal_outcomes(game: ConcordiaGame, seed: int) -> list[int]:
    """The chance outcomes (setup, then one card per deck position) that deal
    ``new_game(map, players, seed)`` exactly; ``seed`` must be below the game's ``num_setups``."""
    cfg = _config_of(game)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < cfg.num_setups:
        raise ValueError(f"python_concordia: seed must be a setup outcome 0..{cfg.num_setups - 1}, got {seed!r}")
    core = new_game(cfg.map_name, cfg.players, seed=int(seed), intermediate_scoring=cfg.intermediate_scoring)
    return [int(seed)] + core.s[E.O_DECK:E.O_DECK + cfg.deck_len].tolist()


def seeded_state(game: ConcordiaGame, seed: int) -> ConcordiaState:
    """The first decision of the game ``new_game(map, players, seed)``, reached through the
    chance nodes (:func:`deal_outcomes`)."""
    state = game.new_initial_state()
    for outcome in deal_outcomes(game, seed):
        state.apply_action(outcome)
    return state


def core_state(state: ConcordiaState) -> GameState:
    """A copy of the package's :class:`GameState` under ``state`` (once the deal is complete)."""
    if not isinstance(state, ConcordiaState):
        raise TypeError(f"expected a python_concordia state, got {state!r}")
    if state._dealing():
        raise ValueError("python_concordia: the deal is not complete yet: no core game state")
    return state._require_core().clone()


def require_two_players(game: Any, algorithm: str) -> None:
    """``ValueError`` in one line unless ``game`` has 2 players: for OpenSpiel algorithms that only
    play 2-player games (AlphaZero, minimax / alpha-beta, ...). Only Italia allows 2 players."""
    n = game.num_players()
    if n != 2:
        raise ValueError(f"OpenSpiel's {algorithm} needs a 2-player game; this {GAME_NAME} game has {n} players: "
                         f"load it with map_name='italia', players=2 (Italia is the map for 2 players)")
