"""Rule invariants of a state, and validated loading of saved states.

:func:`check_invariants` lists every way a :class:`~concordia_env.state.GameState`
breaks the rules' invariants (storehouse limits, colonist placement, route
occupancy, houses, card conservation and ownership, city tokens, bonus markers,
the deck's order and the display, the Concordia card, goods waiting for an
overflow choice, absent seats, bounds on the counters the rules leave open,
...), one readable message each, naming the field and the player, city or
route concerned. A state it accepts encodes inside the observation space.

:func:`state_from_document` turns a parsed JSON document (see
``GameState.to_json``) back into a state, rejecting anything malformed,
corrupt or against the rules with a ``ValueError`` that says what is wrong.

The invariants themselves are declared in :mod:`concordia_env.invariants`, each
beside the numba kernel that checks it over the flat state array, because
property tests call :func:`check_invariants` after every action of thousands of
games: the kernels write (code, arguments) rows, and only when there are
violations does Python turn them into messages. The kernels never read a field
before the checks it depends on have passed (the order is documented there), so
arbitrary (hostile) integers are safe to check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from . import engine as E
from ._internal.shorten import SHORT_DIGITS, cut_numbers, short_number  # noqa: F401  (public here too)
from .data import MAP_NAMES
from .game import Game, get_game
from .invariants import *  # noqa: F403  (the violation codes C_* and the bounds MAX_*, re-exported)
from .invariants import MAX_COINS, MAX_TURN, MAXERR, describe_rows, find_violations

if TYPE_CHECKING:
    from .state import GameState

__all__ = ["check_invariants", "short_number", "state_from_document", "state_violations"]

_FIELD_NAMES = tuple(name for name, _ in E.STATE_FIELDS)
_FI = {name: i for i, name in enumerate(_FIELD_NAMES)}

#: A loaded state must leave the game room to go on inside the bounds of the invariants
#: (``MAX_TURN``, ``MAX_COINS``), or playing on from it would break them: loading refuses a
#: turn counter or sestertii above a tenth of the bound. From there a game stays inside the bounds for 900,000 more card plays, and for at
#: least 9,000 at the highest gain per play: nine times the longest real game. (The
#: intermediate score does not grow in play: it is set once per scoring from the VP then.)
LOAD_LIMITS = {"turn": MAX_TURN // 10, "coins": MAX_COINS // 10}
_LIMIT_OF_INVARIANTS = {"turn": MAX_TURN, "coins": MAX_COINS}


# This module compiles no check of its own (they are in concordia_env.invariants, whose
# modules stamp themselves with the engine's and their own sources); its stamp kernel stays
# for the callers and tests that read it.



# ------------------------------------------------------------------ API
def state_violations(game: Game, s: np.ndarray) -> list[str]:
    """Rule-invariant violations of flat state array ``s`` on ``game``'s map (see :func:`check_invariants`)."""
    if s.dtype != np.int32 or s.shape != (E.STATE_SIZE,):
        return [f"state array must be int32 of shape ({E.STATE_SIZE},), got {s.dtype} {s.shape}"]
    rows, k = find_violations(game, s)
    if k == 0:
        return []
    msgs = describe_rows(game, s, rows)
    if k > MAXERR:
        msgs.append(f"... and {k - MAXERR} more violations")
    return msgs


def check_invariants(state) -> list[str]:
    """Every rule invariant ``state`` breaks, one readable message each (empty when all hold).

    Messages name the field and the player, city or route concerned, e.g.
    ``"field 'coins': player 2 has -3 sestertii (must be >= 0)"``. Costs a few
    microseconds when the state is fine."""
    return state_violations(state.game, state.s)


_TOP_KEYS = ("format", "version", "map")
_MAX_LISTED = 10  # unknown or missing field names listed in one message


def _short(value: Any) -> str:
    """A short description of a (hostile) JSON value for a message, at a cost independent of
    its size: containers by length (repr of a deeply nested one overflows the recursion limit),
    ints of many digits by :func:`short_number`, other values cut to 40 characters."""
    if isinstance(value, (list, dict)):
        return f"of length {len(value)}"
    if type(value) is int:
        return short_number(value)
    if isinstance(value, str):
        return repr(value[:40])
    return repr(value)[:40]


def _listed(names: list[str]) -> str:
    more = len(names) - _MAX_LISTED
    return ", ".join(names[:_MAX_LISTED]) + (f" and {more} more" if more > 0 else "")


def _shape_problems(name: str, value: Any, shape: tuple[int, ...], path: str, out: list, flat: list) -> None:
    """Check that ``value`` is a nested list of ints of ``shape``; append ints to ``flat``."""
    if not shape:
        if type(value) is not int:  # bool, float, str, None, list ... are all wrong
            out.append(f"field '{name}'{path} must be an int, got {type(value).__name__} {_short(value)}")
        elif not -2**31 <= value < 2**31:
            out.append(f"field '{name}'{path} = {_short(value)} does not fit a 32-bit int")
        else:
            flat.append(value)
            return
        flat.append(0)
        return
    if not isinstance(value, list):
        out.append(f"field '{name}'{path} must be a list of length {shape[0]}, got {type(value).__name__}")
        return
    if len(value) != shape[0]:
        out.append(f"field '{name}'{path} must have length {shape[0]} (shape {list(shape)}), got {len(value)}")
        return
    for i, v in enumerate(value):
        _shape_problems(name, v, shape[1:], f"{path}[{i}]", out, flat)
        if len(out) > 20:
            return


def state_from_document(doc: Any) -> GameState:
    """Build a :class:`~concordia_env.state.GameState` from a parsed ``to_json`` document.

    Raises ``ValueError`` listing what is wrong: not an object, wrong format or
    version, unknown map, missing or unknown fields, wrong shapes, non-int
    values, rule-invariant violations (see :func:`check_invariants`), a turn
    counter or sestertii above :data:`LOAD_LIMITS` (too close to the bounds to
    play on), or a running game in which the player to move has no legal action."""
    from .state import STATE_FORMAT, STATE_VERSION, GameState

    def fail(problems: list[str]) -> None:
        raise ValueError("invalid Concordia state: " + "; ".join(problems))

    if not isinstance(doc, dict):
        fail([f"expected a JSON object, got {type(doc).__name__}"])
    problems: list[str] = []
    fmt = doc.get("format")
    if type(fmt) is not str or fmt != STATE_FORMAT:
        problems.append(f"'format' must be {STATE_FORMAT!r}, got {_short(fmt)}")
    version = doc.get("version")
    if type(version) is not int or version != STATE_VERSION:
        problems.append(f"'version' must be {STATE_VERSION}, got {_short(version)}")
    map_name = doc.get("map")
    if not isinstance(map_name, str) or map_name not in MAP_NAMES:
        problems.append(f"'map' must be one of {list(MAP_NAMES)}, got {_short(map_name)}")
    missing = [name for name in _FIELD_NAMES if name not in doc]
    if missing:
        problems.append(f"missing field(s): {_listed(missing)}")
    unknown = [str(key)[:40] for key in doc if key not in _FI and key not in _TOP_KEYS]
    if unknown:
        problems.append(f"unknown field(s): {_listed(sorted(unknown))}")
    flat: list[int] = []
    for name, shape in E.STATE_FIELDS:
        if name in doc:
            _shape_problems(name, doc[name], shape, "", problems, flat)
    if problems:
        fail(problems)
    s = np.asarray(flat, dtype=np.int32)
    game = get_game(map_name)
    violations = state_violations(game, s)
    for name, limit in LOAD_LIMITS.items():
        # only where the invariants hold: past them the kernel's own message says it
        top = int(E.field_view(s, name).max())
        if limit < top <= _LIMIT_OF_INVARIANTS[name]:
            violations.append(f"field '{name}' holds {top}, above {limit}, the most a loaded state may "
                              f"hold (a tenth of the bound {_LIMIT_OF_INVARIANTS[name]}, so play can go on)")
    if violations:
        fail(violations)
    state = GameState(game, s)
    if not state.is_terminal() and not state.legal_actions():
        fail([f"player {state.current_player} has no legal action in phase '{state.phase_name}' "
              "of a running game"])
    return state
