"""What a search agent makes of a position: the analysis panel of ``concordia serve`` and of
``concordia replay --html``.

An *analyst* is a search agent built from a spec (:func:`make_analyst`): ``mcts`` or ``az`` with
their options, e.g. ``mcts:iterations=200`` (any :class:`~concordia_env.agents.mcts.MCTSAgent`).
:func:`analyse` searches one position with the analyst's budget
(:meth:`~concordia_env.agents.mcts.MCTSAgent.search`) and reads the root of the tree the search
leaves behind:

* ``moves``: every legal action, by id and by name, with the search's visits through it, their
  ``share`` of the root's visits (the shares sum to 1) and the ``value`` of the action: the mean
  result of those visits for the player deciding (None for an action never visited); most
  visited first, ties to the higher value, then to the lower action id;
* ``values``: the root's mean result for every seat, the position's value.

A result is the search's share of a win (:mod:`concordia_env.agents.mcts`): the seats' values sum
to 1 and lie in [0, 1], except once the end of the game is fixed, when a lead counts
``1 + end_stake`` times as much and a value may leave [0, 1] (down to ``-end_stake / n`` and up to
``1 + end_stake (n - 1) / n`` for ``n`` players).

A decision with one legal action is not searched (``forced``: the move has the whole share and no
value), and a finished game has nothing to analyse (``over``).

Reproducible: every position is searched by a freshly seeded analyst, seeded with
:func:`analysis_seed` from the game's setup seed and the position's decision number (the actions
before it). So a position's analysis is the same in the replay page (whichever positions it
analyses), in ``concordia serve``, and on every run and machine, for a budget of ``iterations``
(``simulations`` for ``az``); an ``ms`` budget depends on the machine's speed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..agents.base import make_agent
from ..agents.mcts import MCTSAgent
from ..state import GameState

#: the SeedSequence key of the analysis seeds, apart from the agents' (one entry: the seat)
_SEED_KEY = 0xA7A1
#: decimals kept of shares and values in the replay page (the page shows three)
PAGE_DECIMALS = 4
#: a move in the replay page's data: a list of these, in this order
PAGE_MOVE_FIELDS = ("action", "name", "visits", "share", "value")


def make_analyst(spec: str) -> MCTSAgent:
    """The search agent ``spec`` names; ``ValueError`` naming the spec for an unknown agent, a bad
    option, or an agent that does not search (only a search has visits and values to show)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("the analysis needs a search agent spec, e.g. mcts:iterations=200")
    agent = make_agent(spec)
    if not isinstance(agent, MCTSAgent):
        raise ValueError(f"analysis spec {spec!r} is not a search agent: use mcts or az, e.g. mcts:iterations=200")
    return agent


def analysis_seed(game_seed: int, decision: int) -> int:
    """The seed of the analysis of the position after ``decision`` actions of a game set up with
    ``game_seed`` (a stream of its own: never one of :func:`~concordia_env.arena.records.agent_seed`'s)."""
    ss = np.random.SeedSequence(int(game_seed) % 2**64, spawn_key=(_SEED_KEY, int(decision)))
    return int(ss.generate_state(1, np.uint64)[0] >> np.uint64(1))  # 63 bits, as agent_seed


def analyse(agent: MCTSAgent, state: GameState, seed: int) -> dict[str, Any]:
    """The analysis of ``state`` by ``agent`` reset with ``seed`` (see the module doc): a JSON-ready
    dict with ``over``, ``forced``, ``player`` (the seat deciding, None at the end), ``iterations``
    (the root's visits), ``legal`` (the number of legal actions), ``values`` (per seat, None when
    not searched) and ``moves`` (``action``, ``name``, ``visits``, ``share``, ``value``)."""
    if state.is_terminal():
        return {"over": True, "forced": False, "player": None, "iterations": 0, "legal": 0, "values": None,
                "moves": []}
    legal = state.legal_actions()
    base = {"over": False, "player": state.current_player, "legal": len(legal)}
    if len(legal) == 1:
        move = {"action": legal[0], "name": state.action_to_string(legal[0]), "visits": 0, "share": 1.0,
                "value": None}
        return {**base, "forced": True, "iterations": 0, "values": None, "moves": [move]}
    agent.reset(seed)
    result = agent.search(state.clone())
    return {**base, "forced": False, **_root(agent, state, result.visits, result.value)}


def _root(agent: MCTSAgent, state: GameState, visits: np.ndarray, values: np.ndarray) -> dict[str, Any]:
    """``iterations``, ``values`` and ``moves`` of the root just searched: the visits come from the
    search's result; the actions' values from the agent's tree, which a search keeps until the
    next (row 0 is the root, see :mod:`concordia_env.agents.tree`)."""
    tree = agent._tree
    player = state.current_player
    mean = np.full(visits.size, np.nan)
    actions, rows = tree.children(0)
    seen = tree.visits[rows] > 0
    mean[actions[seen]] = tree.value[rows[seen], player] / tree.visits[rows[seen]]
    legal = state.legal_actions()
    total = sum(int(visits[a]) for a in legal)
    # most visited first, ties to the higher value (an unvisited move has none: last), then the lower id
    order = sorted(legal, key=lambda a: (-int(visits[a]), -np.nan_to_num(mean[a], nan=-np.inf), a))
    moves = [{"action": a, "name": state.action_to_string(a), "visits": int(visits[a]),
              "share": int(visits[a]) / total if total else 0.0,
              "value": None if np.isnan(mean[a]) else float(mean[a])} for a in order]
    return {"iterations": total, "values": [float(v) for v in values], "moves": moves}


# ---------------------------------------------------------------- a whole record, for the replay page
def record_positions(record: dict[str, Any]) -> Iterator[tuple[int, GameState]]:
    """Every position of a (verified) record: ``(decision, state)`` for 0 (the start) to the
    number of actions (the end), the state shared and changed by the next step."""
    from ..arena.records import initial_state

    state = initial_state(record)
    yield 0, state
    for i, action in enumerate(record["actions"]):
        state.apply(int(action))
        yield i + 1, state


def analyse_record(record: dict[str, Any], spec: str, every: int = 1,
                   progress: Any = None) -> dict[str, Any]:
    """The analysis the replay page embeds: ``spec``, ``every``, ``fields`` (:data:`PAGE_MOVE_FIELDS`)
    and ``positions``, one entry per
    position 0..N (N actions): :func:`page_analysis` of every ``every``-th position (0, every,
    2 every, ...) and of the last, None for the others. ``progress(done, total)`` (optional) is
    called after each analysed position. ``ValueError`` for a bad spec or ``every``."""
    if isinstance(every, bool) or not isinstance(every, int) or every < 1:
        raise ValueError(f"the analysis interval must be a whole number of positions, 1 or more, got {every!r}")
    agent = make_analyst(spec)
    last = len(record["actions"])
    total = last // every + 1 + (last % every != 0)  # the positions analysed
    positions: list[dict[str, Any] | None] = [None] * (last + 1)
    done = 0
    for decision, state in record_positions(record):
        if decision % every == 0 or decision == last:
            positions[decision] = page_analysis(analyse(agent, state, analysis_seed(record["seed"], decision)))
            done += 1
            if progress is not None:
                progress(done, total)
    return {"spec": spec.strip(), "every": every, "fields": list(PAGE_MOVE_FIELDS), "positions": positions}


def page_analysis(analysis: dict[str, Any]) -> dict[str, Any]:
    """An :func:`analyse` result as the replay page keeps it: only the moves the search visited
    (``legal`` still counts all; the others have no share and no value), each as a list in the
    order of :data:`PAGE_MOVE_FIELDS`, shares and values rounded to :data:`PAGE_DECIMALS`, so a
    page of hundreds of positions stays small."""
    moves = [m for m in analysis["moves"] if m["visits"] > 0 or analysis["forced"]]
    return {**analysis, "values": _rounded(analysis["values"]),
            "moves": [[m["action"], m["name"], m["visits"], round(m["share"], PAGE_DECIMALS),
                       None if m["value"] is None else round(m["value"], PAGE_DECIMALS)] for m in moves]}


def _rounded(values: list[float] | None) -> list[float] | None:
    return None if values is None else [round(v, PAGE_DECIMALS) for v in values]
