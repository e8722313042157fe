"""OpenSpiel 2's struct API for ``python_concordia``: the state, a player's observation and an action
as JSON-ready dicts in board terms (:mod:`concordia_env.display.structs`), and an action back
from such a dict.

OpenSpiel calls the state's ``_to_struct``, ``_to_observation_struct``, ``_action_to_struct`` and
``_struct_to_actions`` (:class:`~.state.ConcordiaState`) and wraps the dicts, so ``state.to_struct()``,
``state.to_json()``, ``state.to_dict()``, ``state.to_observation_struct(p)``,
``state.action_to_struct(a)``, ``state.validate_action_struct(s)`` and ``state.apply_action_struct(s)``
all work. OpenSpiel writes the JSON with its keys sorted and no spaces, so it is deterministic.

Nothing hidden is shown, not even by ``to_struct`` (which in OpenSpiel is the state, not one
player's view): the only hidden information is the undrawn deck's order, given as its size and
content per card type only. During the chance steps (setup, deal) the struct says which step it is
and, in the deal, the display cards dealt so far.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from concordia_env import engine as E
from concordia_env.display.structs import action_struct, card_type_struct, position_struct

if TYPE_CHECKING:
    from .state import ConcordiaState


def _stage(state: ConcordiaState) -> str:
    """``setup``, ``deal``, ``play``, ``over`` or ``truncated`` (stopped at ``max_turns`` card plays)."""
    if state._core is None:
        return "setup"
    if state._dealing():
        return "deal"
    core = state._require_core()
    if core.is_terminal():
        return "over"
    return "truncated" if state.is_terminal() else "play"


def _chance_struct(state: ConcordiaState, stage: str) -> dict[str, Any]:
    """The struct of a chance step: the game, and in the deal the display cards dealt so far."""
    cfg = state._cfg
    out: dict[str, Any] = {"map": cfg.map_name, "players": cfg.players,
                           "intermediate_scoring": cfg.intermediate_scoring}
    if stage == "setup":
        return {**out, "num_setups": cfg.num_setups}
    core = state._require_core()
    shown = min(state._dealt, E.NDISP)
    cards = [int(c) for c in core.s[E.O_DISPLAY:E.O_DISPLAY + shown]]
    display = [{"position": j + 1, "display_index": j, "card_id": cid,
                **card_type_struct(core, int(core.game.tables[E.T_CARD_TYPE + cid]))} for j, cid in enumerate(cards)]
    return {**out, "deck_positions": cfg.deck_len, "dealt": state._dealt, "display": display}


def state_struct(state: ConcordiaState, observer: int | None = None) -> dict[str, Any]:
    """The state's struct (``observer`` None) or seat ``observer``'s observation: the position
    (:func:`~concordia_env.display.structs.position_struct`) with the ``stage``, OpenSpiel's
    ``current_player`` (a seat, -1 chance, -4 terminal) and, once terminal, the ``returns``."""
    if observer is not None and (isinstance(observer, (bool, np.bool_)) or not isinstance(observer, (int, np.integer))
                                 or not 0 <= observer < state._cfg.players):
        raise ValueError(f"python_concordia: player must be a seat 0..{state._cfg.players - 1}, got {observer!r}")
    stage = _stage(state)
    if stage in ("setup", "deal"):
        out = _chance_struct(state, stage)
        if observer is not None:
            out["observing_player"] = int(observer)
    else:
        out = position_struct(state._require_core(), None if observer is None else int(observer))
        if stage == "truncated":
            out["decision"] = None  # nobody decides: OpenSpiel's game is over
    out.update(stage=stage, current_player=int(state.current_player()))
    if state.is_terminal():
        out["returns"] = state.returns()
    return out


def chance_action_struct(state: ConcordiaState, outcome: int) -> dict[str, Any]:
    """A chance outcome: a setup (the package's seed) or a card dealt to a deck position."""
    name = state._action_to_string(int(pyspiel.PlayerId.CHANCE), outcome)
    if state._core is None:
        return {"id": outcome, "type": "setup", "name": name, "seed": outcome}
    if not 0 <= outcome < E.NCARD:
        raise ValueError(f"python_concordia: a card dealt must be a card id 0..{E.NCARD - 1}, got {outcome}")
    core = state._require_core()
    card = card_type_struct(core, int(core.game.tables[E.T_CARD_TYPE + outcome]))
    to = "display" if state._dealt < E.NDISP else "deck"  # the first 7 positions dealt are the display
    return {"id": outcome, "type": "deal", "name": name, "card_id": outcome, **card, "to": to,
            "deck_index": state._dealt}


def player_action_struct(state: ConcordiaState, action: int) -> dict[str, Any]:
    """An action of the game (chance outcome or decision) as a dict; ``ValueError`` for an id out of range."""
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"python_concordia: action must be an int, got {action!r}")
    if state._dealing():
        return chance_action_struct(state, int(action))
    return action_struct(state._require_core(), int(action))


def _candidates(state: ConcordiaState) -> list[int]:
    """The actions a struct may name now: the chance outcomes, or the legal decisions."""
    if state.is_terminal():
        return []
    if state._dealing():
        return [a for a, _ in state.chance_outcomes()]
    return state._require_core().legal_actions()


def action_from_struct(state: ConcordiaState, struct: Mapping[str, Any] | str) -> int:
    """The one action of ``state`` that ``struct`` names: a dict (or its JSON text) as
    ``action_to_struct`` gives, or any part of one that picks out a single legal action, e.g.
    ``{"id": 270}``, ``{"name": "play Architectus"}``, ``{"type": "build", "city": "Verona"}``.
    An ``id`` is taken as it is (legal or not: ``validate_action_struct`` says); other fields are
    matched against the legal actions' structs. ``ValueError`` in one line when none or several
    match, naming the legal choices."""
    if isinstance(struct, str):
        try:
            struct = json.loads(struct)
        except json.JSONDecodeError as exc:
            raise ValueError(f"python_concordia: action struct is not valid JSON: {exc}") from None
    if not isinstance(struct, Mapping) or not struct:
        raise ValueError(f"python_concordia: an action struct is a non-empty JSON object, got {struct!r}")
    if "id" in struct:
        action = struct["id"]
        if isinstance(action, bool) or not isinstance(action, int):
            raise ValueError(f"python_concordia: action struct id must be an int, got {action!r}")
        return action
    legal = _candidates(state)
    found = [a for a in legal if _matches(player_action_struct(state, a), struct)]
    if len(found) == 1:
        return found[0]
    names = [state._action_to_string(state.current_player(), a) for a in (found or legal)]
    shown = "; ".join(names[:8]) + (f"; ... ({len(names)} in all)" if len(names) > 8 else "")
    if found:
        raise ValueError(f"python_concordia: {len(found)} legal actions match the action struct {dict(struct)}: "
                         f"{shown}")
    raise ValueError(f"python_concordia: no legal action matches the action struct {dict(struct)}; "
                     f"legal: {shown or 'none'}")


def _matches(candidate: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether every field of ``wanted`` is in ``candidate`` with the same value (nested dicts
    are matched field by field; text case-insensitively)."""
    for key, value in wanted.items():
        if key not in candidate:
            return False
        have = candidate[key]
        if isinstance(value, Mapping):
            if not isinstance(have, Mapping) or not _matches(have, value):
                return False
        elif isinstance(value, str) and isinstance(have, str):
            if value.strip().casefold() != have.casefold():
                return False
        elif value != have or isinstance(value, bool) != isinstance(have, bool):
            return False
    return True
