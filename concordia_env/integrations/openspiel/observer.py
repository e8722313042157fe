"""What a player observes: the observation (tensor and readable string) and the information state
(a string key), OpenSpiel's PyObserver interface (``open_spiel.python.observation``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from concordia_env.encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT, OBSERVATION_SIZE, encode, map_id

if TYPE_CHECKING:
    from .state import ConcordiaState


class _Observer:
    """The package's per-seat observation vector (named blocks in ``dict``) and the readable
    public position (the PyObserver interface of ``open_spiel.python.observation``)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {name: self.tensor[OBSERVATION_LAYOUT[name]].reshape(shape)
                     for name, shape, _ in OBSERVATION_FIELDS}

    def set_from(self, state: ConcordiaState, player: int) -> None:
        if state._dealing():
            self.tensor.fill(0.0)
            return
        core = state._require_core()
        encode(core.s, core.game.tables, map_id(core.map_name), int(player), self.tensor)

    def string_from(self, state: ConcordiaState, player: int) -> str:
        return f"seat {player}: {state._header()}\n{state._info_key(int(player))}"


class _JsonObserver(_Observer):
    """The same tensor; the string is the player's observation as JSON in board terms
    (``state.observation_json(player)``, see :mod:`.structs`)."""

    def string_from(self, state: ConcordiaState, player: int) -> str:
        return state.observation_json(int(player))


class _InfoStateObserver:
    """The information state: a string key only (see :mod:`concordia_env.integrations.openspiel`)."""

    def __init__(self) -> None:
        self.tensor = None
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: ConcordiaState, player: int) -> None:
        pass

    def string_from(self, state: ConcordiaState, player: int) -> str:
        return state._info_key(int(player))
