"""How a round's network alone chooses against the agent that played: agreement and regret.

At every card choice of a sample of the round's self-play games (replayed from their records),
the candidates are scored twice: by the *teacher*, the agent that played the round (the
heuristic's value times ``W`` plus the playing network's win share times ``win``), and by the
*student*, the round's new network alone (its win share). Reported: how often the student's
choice is the teacher's (tie-aware: a candidate the teacher scores equal to its best counts as
agreeing), and the teacher's score the student gives up (regret, in the teacher's points),
overall and per card the teacher would play.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import engine as E
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.records import initial_state, load_record
from concordia_env.turns import TurnGenerator

#: self-play games of a round replayed for its telemetry
TELEMETRY_GAMES = 50
#: a teacher score this close to its best is a tie
TIE = 1e-9


def _card(state: Any, action: int) -> str:
    """The kind of a first action: the card played (``"Mercator"``), or the decision's phase."""
    if state.phase != E.PH_PLAY:
        return state.phase_name
    name = state.action_to_string(action)
    return name.removeprefix("play ").split(" (")[0]


def compare(records: list[Path], teacher_net: ValueNet | None, w: float, win: float, student: ValueNet,
            candidates: int) -> dict[str, Any]:
    """Agreement and regret of ``student`` against the teacher over the card choices of ``records``."""
    per_kind: dict[str, list[tuple[bool, bool, float]]] = defaultdict(list)
    generators: dict[str, TurnGenerator] = {}
    for path in records:
        record = load_record(path)
        state = initial_state(record)
        gen = generators.setdefault(state.map_name, TurnGenerator(state.map_name, candidates))
        for action in record["actions"]:
            if state.phase == E.PH_PLAY and int(state.legal_action_mask().sum()) > 1:
                n = gen.generate(state.s, state.game.tables)
                rows = gen.observations(state.game.tables, state.current_player)[:n]
                teacher = w * gen.values[:n]
                if teacher_net is not None:
                    teacher = teacher + win * teacher_net.values(rows)[:, 0]
                pick = int(np.argmax(student.values(rows)[:, 0]))
                best = int(np.argmax(teacher))
                regret = float(teacher[best] - teacher[pick])
                per_kind[_card(state, gen.sequence(best)[0])].append((pick == best, regret <= TIE, regret))
            state.apply(action)
    return summarise(per_kind)


def summarise(per_kind: dict[str, list[tuple[bool, bool, float]]]) -> dict[str, Any]:
    def stats(rows: list[tuple[bool, bool, float]]) -> dict[str, Any]:
        a = np.asarray(rows, dtype=np.float64)
        return {"decisions": len(rows), "agreement": round(float(a[:, 0].mean()), 4),
                "agreement_tie_aware": round(float(a[:, 1].mean()), 4), "mean_regret": round(float(a[:, 2].mean()), 3)}

    every = [r for rows in per_kind.values() for r in rows]
    if not every:
        return {"decisions": 0}
    return {**stats(every), "by_card": {k: stats(v) for k, v in sorted(per_kind.items())}}
