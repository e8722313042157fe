"""A state of ``python_concordia``: the chance steps of the setup and the deal, then the package's
core :class:`~concordia_env.state.GameState` (held by :class:`_Core`, cheap to clone and pickle)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from concordia_env import engine as E
from concordia_env.agents.mcts import resample_deck
from concordia_env.game import get_game
from concordia_env.rewards import seat_rewards
from concordia_env.state import GameState, new_game

from .config import _Config
from .structs import action_from_struct, player_action_struct, state_struct

if TYPE_CHECKING:
    from .game import ConcordiaGame


# ---------------------------------------------------------------- the core state, copied cheaply

class _Core:
    """Holds the core :class:`GameState`. OpenSpiel clones a Python state by deep-copying its
    attributes and serializes it by pickling them: this copies only the two small arrays (the
    map's tables are shared) and pickles as (map name, state bytes)."""

    __slots__ = ("state",)

    def __init__(self, state: GameState) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict) -> _Core:
        return _Core(self.state.clone())

    def __reduce__(self) -> tuple[Callable[[str, bytes], _Core], tuple[str, bytes]]:
        return _restore_core, (self.state.map_name, self.state.s.tobytes())


def _restore_core(map_name: str, data: bytes) -> _Core:
    return _Core(GameState(get_game(map_name), np.frombuffer(data, np.int32).copy()))


class ConcordiaState(pyspiel.State):
    """One game: the chance steps of the setup and the deal, then the core :class:`GameState`."""

    def __init__(self, game: ConcordiaGame) -> None:
        super().__init__(game)
        self._cfg: _Config = game.config
        self._core: _Core | None = None  # None until the setup chance node is resolved
        self._dealt = 0  # deck positions dealt by chance so far

    # ------------------------------------------------------------ phases
    def _dealing(self) -> bool:
        return self._core is None or self._dealt < self._cfg.deck_len

    def _over(self, core: GameState) -> bool:
        return core.is_terminal() or int(core.s[E.O_TURN]) >= self._cfg.max_turns

    def current_player(self) -> int:
        if self._dealing():
            return int(pyspiel.PlayerId.CHANCE)
        core = self._require_core()
        if self._over(core):
            return int(pyspiel.PlayerId.TERMINAL)
        return core.current_player

    def is_terminal(self) -> bool:
        return not self._dealing() and self._over(self._require_core())

    def _require_core(self) -> GameState:
        if self._core is None:
            raise ValueError("python_concordia: the setup chance node is not resolved yet")
        return self._core.state

    # ------------------------------------------------------------ chance
    def _block(self, position: int) -> tuple[int, int]:
        return next(b for b in self._cfg.blocks if b[0] <= position < b[1])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Setup: every seed below ``num_setups``, equally likely. Deal: the card ids of this
        position's deck not yet placed, equally likely."""
        if self._core is None:
            return [(k, 1.0 / self._cfg.num_setups) for k in range(self._cfg.num_setups)]
        if not self._dealing():
            raise ValueError("python_concordia: chance_outcomes() outside the deal")
        cards = self._undealt()
        return [(c, 1.0 / len(cards)) for c in cards]

    def _undealt(self) -> list[int]:
        """Card ids still to place in the deck of the next deal position, ascending."""
        _, stop = self._block(self._dealt)
        s = self._require_core().s
        return sorted(int(c) for c in s[E.O_DECK + self._dealt:E.O_DECK + stop])

    def _apply_chance(self, outcome: int) -> None:
        if self._core is None:
            if not 0 <= outcome < self._cfg.num_setups:
                raise ValueError(f"python_concordia: setup outcome must be 0..{self._cfg.num_setups - 1}, got {outcome}")
            self._core = _Core(new_game(self._cfg.map_name, self._cfg.players, seed=outcome,
                                        intermediate_scoring=self._cfg.intermediate_scoring))
            return
        s, i = self._core.state.s, self._dealt
        _, stop = self._block(i)
        deck = s[E.O_DECK:E.O_DECK + stop]
        where = np.flatnonzero(deck[i:] == outcome)
        if where.size == 0:
            raise ValueError(f"python_concordia: card {outcome} is not among the cards left to deal at deck "
                             f"position {i}: {self._undealt()}")
        j = i + int(where[0])
        deck[i], deck[j] = deck[j], deck[i]  # Fisher-Yates, in place: the deck stays a permutation
        if i < E.NDISP:
            s[E.O_DISPLAY + i] = outcome
        self._dealt += 1
        if not self._dealing():
            self._core.state.refresh()

    # ------------------------------------------------------------ decisions
    def _legal_actions(self, player: int) -> list[int]:
        return self._require_core().legal_actions()

    def _apply_action(self, action: int) -> None:
        if self._dealing():
            self._apply_chance(int(action))
        else:
            self._require_core().apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._core is None:
                return f"setup {action} (the package's seed {action})"
            where = "display position" if self._dealt < E.NDISP else "deck position"
            index = self._dealt + 1 if self._dealt < E.NDISP else self._dealt - E.NDISP + 1
            return f"deal {_card_name(self._cfg.map_name, int(action))} (card {action}) to {where} {index}"
        return self._require_core().action_to_string(int(action))

    # ------------------------------------------------------------ structs (OpenSpiel 2: to_struct, to_json, ...)
    def _to_struct(self) -> dict[str, Any]:
        """The position as a dict in board terms, nothing hidden shown (:mod:`.structs`)."""
        return state_struct(self)

    def _to_observation_struct(self, player: int) -> dict[str, Any]:
        """Seat ``player``'s observation as a dict (:mod:`.structs`)."""
        return state_struct(self, player)

    def _action_to_struct(self, player: int, action: int) -> dict[str, Any]:
        return player_action_struct(self, action)

    def _struct_to_actions(self, struct: dict[str, Any]) -> list[int]:
        return [action_from_struct(self, struct)]

    def observation_json(self, player: int) -> str:
        """Seat ``player``'s observation as JSON text: ``to_observation_struct(player).to_json()``,
        also what the observer ``make_observation(game, params={"format": "json"})`` writes."""
        return str(self.to_observation_struct(player).to_json())

    def returns(self) -> list[float]:
        """The env's final rewards once the game is over; 0 for everyone before, and after a
        truncation at ``max_turns`` card plays."""
        if not self.is_terminal():
            return [0.0] * self._cfg.players
        return _returns(self._require_core(), self._cfg)

    # ------------------------------------------------------------ information
    def resample_from_infostate(self, player: int, probability_sampler: Any) -> ConcordiaState:
        """A state of ``player``'s information set: this one with the undrawn cards of every
        stacked deck shuffled (within its deck). ``probability_sampler()`` (e.g.
        ``pyspiel.UniformProbabilitySampler`` or a :class:`Resampler`) gives the randomness, so a
        seeded sampler gives reproducible samples. Every player knows the same, so ``player``
        only has to be a seat."""
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
                or not 0 <= player < self._cfg.players:
            raise ValueError(f"python_concordia: player must be a seat 0..{self._cfg.players - 1}, got {player!r}")
        new = self.clone()
        if new._core is not None:
            seed = int(float(probability_sampler()) * 2.0**53)
            resample_deck(new._core.state.s, list(self._cfg.blocks), np.random.default_rng(seed))
        return new

    def _info_key(self, player: int) -> str:
        if self._core is None:
            return f"p{player} setup"
        s = self._core.state.s.copy()
        pos = int(s[E.O_DECK_POS])
        for start, stop in self._cfg.blocks:  # the undrawn order is hidden: keep only each deck's content
            lo = max(start, pos)
            s[E.O_DECK + lo:E.O_DECK + stop].sort()
        if self._dealing() and self._dealt < E.NDISP:  # display positions not dealt yet
            s[E.O_DISPLAY + self._dealt:E.O_DISPLAY + E.NDISP] = -1
        return f"p{player} d{self._dealt} " + s.tobytes().hex()

    def _header(self) -> str:
        """One readable line: the game, the turn and who decides (or the result)."""
        cfg = self._cfg
        head = f"Concordia ({cfg.map_name}, {cfg.players} players)"
        if self._core is None:
            return f"{head}: setup to draw"
        if self._dealing():
            return f"{head}: dealing the decks, {self._dealt} of {cfg.deck_len} positions dealt"
        core = self._core.state
        head += f", turn {int(core.s[E.O_TURN])}"
        if core.is_terminal():
            return f"{head}, game over, VP {core.scores()}, returns {self.returns()}"
        if self._over(core):
            return f"{head}, truncated after {cfg.max_turns} card plays, VP {core.scores()}"
        return f"{head}, player {core.current_player} to decide: {core.phase_name}"

    def __str__(self) -> str:
        """The header line, then the whole state array in hex, hidden deck order included (a god's
        view, exact, cheap: OpenSpiel's tests compare states by it). ``print(core_state(state))``
        shows the position as readable text."""
        if self._core is None:
            return self._header()
        return f"{self._header()}\nstate {self._dealt} {self._core.state.s.tobytes().hex()}"


def _card_name(map_name: str, card_id: int) -> str:
    game = get_game(map_name)
    return game.components.card_types[int(game.tables[E.T_CARD_TYPE + card_id])].name


def _returns(core: GameState, cfg: _Config) -> list[float]:
    """The utilities of a finished (or truncated: all 0) game."""
    if not core.is_terminal():
        return [0.0] * cfg.players
    return [float(r) for r in seat_rewards(core, cfg.reward)]
