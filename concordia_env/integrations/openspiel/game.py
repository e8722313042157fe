"""The registered game ``python_concordia``: :class:`ConcordiaGame`, what ``pyspiel.load_game`` builds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyspiel

from concordia_env import engine as E

from .config import DECISIONS_PER_CARD_PLAY, GAME_TYPE, PARAMETERS, _config, _utility_range
from .observer import _InfoStateObserver, _JsonObserver, _Observer
from .state import ConcordiaState


class ConcordiaGame(pyspiel.Game):
    """The registered game; ``pyspiel.load_game("python_concordia", {...})`` builds one."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        cfg = _config(dict(params or {}))
        low, high = _utility_range(cfg)
        info = pyspiel.GameInfo(
            num_distinct_actions=E.NUM_ACTIONS,
            max_chance_outcomes=max(cfg.num_setups, E.NCARD),
            num_players=cfg.players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            max_game_length=cfg.max_turns * DECISIONS_PER_CARD_PLAY,
        )
        super().__init__(GAME_TYPE, info, {**PARAMETERS, **dict(params or {})})
        self.config = cfg

    def new_initial_state(self) -> ConcordiaState:
        """The empty table: a chance node choosing the setup."""
        return ConcordiaState(self)

    def max_chance_nodes_in_history(self) -> int:
        return 1 + self.config.deck_len

    def make_py_observer(self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """The observation (tensor + readable string) or, for perfect-recall types, the information
        state (string key only). Every player sees the same public information, so the private /
        public parts of ``iig_obs_type`` select nothing else. ``params={"format": "json"}`` makes
        the observation's string the player's observation as JSON (``state.observation_json``)."""
        if isinstance(iig_obs_type, Mapping):  # OpenSpiel passes the parameters alone when no type is given
            iig_obs_type, params = None, iig_obs_type
        params = dict(params or {})
        form = params.pop("format", "text")
        if params or form not in ("text", "json"):
            raise ValueError(f"python_concordia: the only observation parameter is format='text' or 'json'; "
                             f"got {dict(params, format=form)}")
        if getattr(iig_obs_type, "perfect_recall", False):
            if form == "json":
                raise ValueError("python_concordia: format='json' is an observation, not an information state")
            return _InfoStateObserver()
        return _JsonObserver() if form == "json" else _Observer()
