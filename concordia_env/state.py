"""`GameState`: the mutable state of one game, with an OpenSpiel-style API.

The state is one flat int32 array (layout in :mod:`concordia_env.engine`)
plus the cached legal-action mask, so :meth:`GameState.clone` is two small
array copies and encoders can slice it directly.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from . import engine as E
from .actions import describe
from .game import Game, check_seed, check_setup_args, get_game, initial_state
from .rules.scoring import pm_distance

GOD_COLUMNS = ("Vesta", "Jupiter", "Saturnus", "Mercurius", "Mars", "Minerva", "Concordia")
STATE_FORMAT = "concordia-env/state"
STATE_VERSION = 1


class IllegalActionError(ValueError):
    """An action that is not legal in the current state; the state is left unchanged."""

    def __init__(self, message: str, action: Any = None, player: int | None = None, phase: str | None = None):
        super().__init__(message)
        self.action = action
        self.player = player
        self.phase = phase


class GameState:
    """The mutable state of one game of Concordia.

    Players are numbered 0..n-1 clockwise; the start player is drawn from the
    seed. ``current_player`` is whoever must decide now: usually the active
    player, but the owner of the goods when a storehouse overflows, and -1
    once the game is over.
    """

    __slots__ = ("game", "s", "_mask", "_n_legal")

    def __init__(self, game: Game, s: np.ndarray) -> None:
        self.game = game
        self.s = s
        self._mask = np.zeros(E.NUM_ACTIONS, dtype=np.int8)
        self.refresh()

    # ------------------------------------------------------------ queries
    @property
    def num_players(self) -> int:
        return int(self.s[E.O_NPLAYERS])

    @property
    def current_player(self) -> int:
        return int(self.s[E.O_CURRENT])

    @property
    def active_player(self) -> int:
        """The player whose turn it is (may differ from ``current_player`` in an overflow choice)."""
        return int(self.s[E.O_ACTIVE])

    @property
    def phase(self) -> int:
        return int(self.s[E.O_PHASE])

    @property
    def phase_name(self) -> str:
        return E.PHASE_NAMES[self.phase]

    @property
    def num_actions(self) -> int:
        return E.NUM_ACTIONS

    @property
    def map_name(self) -> str:
        return self.game.name

    def field(self, name: str) -> np.ndarray:
        """A read-write view of one named state field (see ``engine.STATE_FIELDS``)."""
        return E.field_view(self.s, name)

    def refresh(self) -> None:
        """Recompute the cached legal actions after editing fields directly (see ``scenario``)."""
        self._n_legal = int(E.legal_mask(self.s, self.game.tables, self._mask))

    def legal_actions(self) -> list[int]:
        """Legal actions, ascending; empty once the game is over."""
        return np.flatnonzero(self._mask).tolist()

    def legal_action_mask(self) -> np.ndarray:
        """int8 mask over the whole action space (a copy)."""
        return self._mask.copy()

    def is_terminal(self) -> bool:
        return self.phase == E.PH_OVER

    # ------------------------------------------------------------ actions
    def apply(self, action: int) -> None:
        """Apply ``action`` for the current player.

        Raises :class:`IllegalActionError` naming the action, the player and the
        decision phase if it is not legal; the state is then unchanged.
        """
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(
                f"action must be an int, got {action!r} ({type(action).__name__}) "
                f"for player {self.current_player} in phase '{self.phase_name}'",
                action, self.current_player, self.phase_name)
        a = int(action)
        if not 0 <= a < E.NUM_ACTIONS or not self._mask[a]:
            if self.is_terminal():
                why = "the game is over"
            elif 0 <= a < E.NUM_ACTIONS:
                why = f"'{self.action_to_string(a)}' is not legal now"
            else:
                why = f"ids run from 0 to {E.NUM_ACTIONS - 1}"
            raise IllegalActionError(
                f"illegal action {a} for player {self.current_player} in phase "
                f"'{self.phase_name}': {why}; legal: {self.legal_actions()}",
                a, self.current_player, self.phase_name)
        self._n_legal = int(E.step(self.s, self.game.tables, self._mask, a))

    def action_to_string(self, action: int) -> str:
        """Human-readable name of ``action`` in this state."""
        return describe(self, int(action))

    # ------------------------------------------------------------ scores
    def score_breakdown(self) -> np.ndarray:
        """VP per player (rows) and god (columns: Vesta, Jupiter, Saturnus, Mercurius, Mars,
        Minerva, Concordia), as final scoring would count them now."""
        out = np.zeros((self.num_players, E.NGODS), dtype=np.int32)
        for p in range(self.num_players):
            E.score_player(self.s, self.game.tables, p, out[p])
        return out

    def scores(self) -> list[int]:
        """Total VP per player as final scoring would count them now."""
        return self.score_breakdown().sum(axis=1).tolist()

    def ranking(self) -> list[int]:
        """Players from first to last: most VP first, ties broken by the Praefectus Magnus
        (its holder first, then whoever would receive it soonest: it passes to the right,
        i.e. to the previous player in turn order)."""
        sc = self.scores()
        return sorted(range(self.num_players), key=lambda p: (-sc[p], int(pm_distance(self.s, p))))

    def winner(self) -> int | None:
        """The winner after tie-break, or None while the game is running."""
        return self.ranking()[0] if self.is_terminal() else None

    def returns(self) -> list[float]:
        """+1 for the winner and -1/(n-1) for everyone else at the end (sums to 0); zeros before."""
        n = self.num_players
        if not self.is_terminal():
            return [0.0] * n
        w = self.winner()
        return [1.0 if p == w else -1.0 / (n - 1) for p in range(n)]

    # ------------------------------------------------------------ copies
    def clone(self) -> GameState:
        """An independent copy (two small array copies)."""
        new = GameState.__new__(GameState)
        new.game = self.game
        new.s = self.s.copy()
        new._mask = self._mask.copy()
        new._n_legal = self._n_legal
        return new

    def to_json(self) -> str:
        """The whole state as JSON; :meth:`from_json` restores it exactly."""
        doc: dict[str, Any] = {"format": STATE_FORMAT, "version": STATE_VERSION, "map": self.game.name}
        for name, _ in E.STATE_FIELDS:
            doc[name] = self.field(name).tolist()
        return json.dumps(doc, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes, source: str | None = None) -> GameState:
        """Restore a state written by :meth:`to_json` (``str``, or UTF-8 ``bytes`` as read
        from a file). ``source`` names the document in messages, e.g. the file it came from.

        Raises ``ValueError`` saying what is wrong for malformed, corrupt or
        rule-breaking input: also for what ``json`` itself would raise otherwise
        (non-UTF-8 bytes, nesting deeper than the recursion limit, integers of
        more than 4300 digits), so one ``except ValueError`` covers any file."""
        from .validation import state_from_document

        where = f"{source}: " if source is not None else ""
        if isinstance(text, (bytes, bytearray, memoryview)):
            try:
                text = bytes(text).decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}state is not UTF-8 text: {exc}") from None
        if not isinstance(text, str):
            raise ValueError(f"{where}state is not valid JSON: expected str or bytes, got {type(text).__name__}")
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}state is not valid JSON: {exc}") from None
        except RecursionError:
            raise ValueError(f"{where}state is not a Concordia state: its JSON is nested deeper than Python's "
                             "recursion limit (a state nests 2 levels)") from None
        except ValueError as exc:  # an int literal over sys.get_int_max_str_digits() digits
            raise ValueError(f"{where}state is not a Concordia state: {exc}") from None
        try:
            return state_from_document(doc)
        except ValueError as exc:
            if where:
                raise ValueError(f"{where}{exc}") from None
            raise
        except RecursionError:  # a nested value that escaped the shape checks: never a state
            raise ValueError(f"{where}invalid Concordia state: nested deeper than Python's recursion "
                             "limit") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and other.game is self.game and np.array_equal(other.s, self.s)

    def __hash__(self) -> int:
        return hash((self.game.name, self.s.tobytes()))

    def __repr__(self) -> str:
        return (f"<GameState {self.game.name} {self.num_players}p turn {int(self.s[E.O_TURN])} "
                f"player {self.current_player} '{self.phase_name}'>")

    def __str__(self) -> str:
        from .display.render import state_to_text

        return state_to_text(self)


def new_game(map_name: str = "imperium", num_players: int = 4, seed: int = 0,
             intermediate_scoring: bool = False) -> GameState:
    """Set up a new game from ``seed`` (same seed, same game, on any machine).

    Raises ``ValueError`` listing the allowed combinations when the rules don't
    allow ``num_players`` on ``map_name`` (Imperium 3–5, Italia 2–4)."""
    check_setup_args(map_name, num_players)
    game = get_game(map_name)
    return GameState(game, initial_state(game, int(num_players), check_seed(seed), intermediate_scoring))
