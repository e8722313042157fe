"""Golden searches: ``python -m concordia_env.tools.search_golden --write`` and ``--check``.

The search agents' results pinned before their tree was compiled: a dozen seeded
searches (:data:`CASES`, ``mcts`` with heuristic and random rollouts, ``az`` with the
released networks, both maps and every player count, early, mid and end-game positions,
a Diplomat's choice and a game about to be truncated) and what each returned: the move,
the root's visits (sparse: action ids and counts) and the root's mean value per seat.
``tests/golden/search_results.json`` holds them; a change to the search that is meant to
keep its decisions (a faster tree, say) must reproduce every one bit for bit
(``tests/test_search_golden.py``). Floats are stored as JSON numbers, which round-trip a
float64 exactly.

A position is reached from ``new_game(map, players, seed)`` by the heuristic agent
(seat ``k`` plays ``HeuristicAgent(seed + k)``) until the case's condition holds; the
searching agent is ``make_agent(spec, seed)`` and searches it once.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import engine as E
from concordia_env._internal.files import write_json_atomic
from concordia_env.agents.base import make_agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent
from concordia_env.encoding import observation
from concordia_env.state import GameState, new_game

FORMAT = "concordia-env/search-golden"
VERSION = 1
#: safety bound on the heuristic moves played to reach a position
MAX_MOVES = 5_000


@dataclass(frozen=True)
class Case:
    """One golden search: the position (``until``: ``moves=N`` heuristic moves, ``end`` the first
    decision once the end is fixed, ``diplomat`` the first Diplomat's choice after 40 moves,
    ``cap`` 40 moves then a spec whose ``max_turns`` is 3 card plays away) and the agent."""

    map: str
    players: int
    seed: int
    until: str
    spec: str

    @property
    def name(self) -> str:
        return f"{self.map}{self.players}-{self.until}-{self.spec}"


CASES: tuple[Case, ...] = (
    Case("italia", 2, 1, "moves=10", "mcts:iterations=200"),
    Case("italia", 3, 2, "moves=120", "mcts:iterations=60:rollout=random"),
    Case("italia", 4, 3, "moves=80", "mcts:iterations=100:root_noise=0.25:move_temperature=1.0"),
    Case("italia", 4, 4, "moves=60", "az:simulations=60:prior_mix=0"),
    Case("imperium", 3, 5, "moves=20", "az:simulations=100:leaf_mix=0.3:compiled=0"),
    Case("imperium", 4, 6, "moves=150", "mcts:iterations=150:end_stake=0"),
    Case("imperium", 5, 7, "moves=100", "az:simulations=50:prior_mix=0.5:root_noise=0.25"),
    Case("italia", 2, 8, "end", "mcts:iterations=100"),
    Case("imperium", 4, 9, "end", "az:simulations=50:prior_mix=0"),
    Case("italia", 3, 10, "diplomat", "mcts:iterations=100"),
    Case("imperium", 3, 11, "cap", "mcts:iterations=50:rollout=random"),
    Case("italia", 2, 12, "moves=70", "az:simulations=80:prior_mix=0:move_temperature=0.5"),
    # the compiled simulations (az_search): the network's sums round as the compiled pass rounds them
    Case("imperium", 3, 5, "moves=20", "az:simulations=100:leaf_mix=0.3"),
    Case("italia", 2, 13, "moves=30", "az:simulations=200"),
)


def _reached(state: GameState, until: str, moves: int) -> bool:
    if state.legal_action_mask().sum() < 2:  # forced: not searched
        return False
    if until.startswith("moves="):
        return moves >= int(until.partition("=")[2])
    if until == "end":
        return int(state.s[E.O_CONCORDIA]) >= 0
    if until == "diplomat":
        return moves >= 40 and int(state.s[E.O_PHASE]) == E.PH_DIPLOMAT
    if until == "cap":
        return moves >= 40
    raise ValueError(f"unknown position condition {until!r}")


def position(case: Case) -> GameState:
    """The case's position: heuristic play from its seeded setup until its condition holds."""
    state = new_game(case.map, case.players, seed=case.seed)
    seats = [HeuristicAgent(case.seed + k) for k in range(case.players)]
    for moves in range(MAX_MOVES):
        if state.is_terminal():
            break
        if _reached(state, case.until, moves):
            return state
        p = state.current_player
        state.apply(seats[p].act(observation(state, p), state.legal_action_mask(), state))
    raise ValueError(f"{case.name}: the position was never reached")


def agent_for(case: Case, state: GameState) -> MCTSAgent:
    """The searching agent of ``case`` (for ``cap``, truncating 3 card plays after ``state``)."""
    spec = case.spec
    if case.until == "cap":
        spec += f":max_turns={int(state.s[E.O_TURN]) + 3}"
    agent = make_agent(spec, case.seed)
    assert isinstance(agent, MCTSAgent)
    return agent


def run_case(case: Case) -> dict[str, Any]:
    """Search the case's position once: the result as stored in the golden file."""
    state = position(case)
    result = agent_for(case, state).search(state)
    ids = np.flatnonzero(result.visits)
    return {"name": case.name, "action": int(result.action), "visit_ids": ids.tolist(),
            "visit_counts": result.visits[ids].tolist(), "value": [float(v) for v in result.value]}


def golden_document(cases: tuple[Case, ...] = CASES) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION,
            "generated_by": "python -m concordia_env.tools.search_golden --write",
            "cases": [run_case(c) for c in cases]}


def check(path: Path, cases: tuple[Case, ...] = CASES) -> list[str]:
    """The ``cases`` whose search no longer returns what ``path`` holds, one line each."""
    stored = {c["name"]: c for c in json.loads(path.read_text())["cases"]}
    bad = []
    for case in cases:
        got = run_case(case)
        if stored.get(case.name) != got:
            bad.append(f"{case.name}: stored {stored.get(case.name)}, got {got}")
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.tools.search_golden",
                                     description="Golden searches: write them, or check the search still returns them.")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="(re)generate the golden file")
    mode.add_argument("--check", action="store_true", help="search every case again; exit 1 on any difference")
    parser.add_argument("--path", type=Path, required=True,
                        help="the golden file (the repository's is tests/golden/search_results.json)")
    args = parser.parse_args(argv)
    if args.write:
        write_json_atomic(golden_document(), args.path, indent=1)
        print(f"wrote {len(CASES)} golden searches to {args.path}")
        return 0
    if not args.path.is_file():
        parser.error(f"--path {args.path} does not exist (run with --write to create it)")
    bad = check(args.path)
    for line in bad:
        print(line)
    print(f"search golden check {'FAILED' if bad else 'passed'}: {len(CASES) - len(bad)} of {len(CASES)} cases match")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
