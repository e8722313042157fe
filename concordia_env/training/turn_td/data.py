"""Training positions from self-play records: every turn's end, with TD(lambda) targets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env.agents.value_net import ROWS, ValueNet
from concordia_env.arena.game_result import GameResult
from concordia_env.arena.records import initial_state, load_record
from concordia_env.training.value.targets import bootstrap_targets
from concordia_env.turns import turn_ends


def relative(values: Sequence[float] | np.ndarray, seat: int, n: int) -> np.ndarray:
    """Per-seat ``values`` in the rows of ``seat``'s observation (row k: the k-th player after it)."""
    out = np.zeros(ROWS, np.float32)
    out[:n] = [values[(seat + k) % n] for k in range(n)]
    return out


def game_positions(record: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """The turn ends of one finished game: ``obs`` (P, OBS), ``seat`` (P,), ``step`` (P,: the
    turn's index in the game), ``outcome`` (P, 5: 1 for the winner's row) and ``margin`` (P, 5:
    each row's final VP minus the best other's), rows as each position's own; None for a
    truncated game (it has no outcome)."""
    result = GameResult.from_json(record["result"])
    if result.truncated:
        return None
    n = int(record["players"])
    ends = turn_ends(initial_state(record), record["actions"])
    win, margin = result.wins(), result.margins()
    seats = [seat for seat, _ in ends]
    return {
        "obs": np.stack([obs for _, obs in ends]).astype(np.float32),
        "seat": np.asarray(seats, np.int64),
        "step": np.arange(len(ends), dtype=np.int64),
        "outcome": np.stack([relative(win, s, n) for s in seats]),
        "margin": np.stack([relative(margin, s, n) for s in seats]),
    }


def load_positions(record_dirs: Sequence[Path]) -> dict[str, np.ndarray]:
    """The positions of every finished game recorded in ``record_dirs`` (``game_*.json``), with a
    ``game`` index and ``players`` column; ``ValueError`` if there is none."""
    parts: list[dict[str, np.ndarray]] = []
    g = 0
    for folder in record_dirs:
        for path in sorted(Path(folder).glob("game_*.json")):
            record = load_record(path)
            pos = game_positions(record)
            if pos is None:
                continue
            pos["game"] = np.full(len(pos["seat"]), g, np.int64)
            pos["players"] = np.full(len(pos["seat"]), int(record["players"]), np.int64)
            parts.append(pos)
            g += 1
    if not parts:
        raise ValueError(f"no finished game recorded in {', '.join(map(str, record_dirs))}")
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def td_targets(data: dict[str, np.ndarray], net: ValueNet | None, lam: float) -> np.ndarray:
    """TD(lambda) win-share targets (P, 5) over each game's turn ends, bootstrapped from ``net``'s
    values (None or ``lam == 1``: the outcome itself, Monte Carlo)."""
    if net is None or lam >= 1.0:
        return data["outcome"].astype(np.float32)
    pred = np.concatenate([net.values(data["obs"][i:i + 4096]) for i in range(0, len(data["obs"]), 4096)])
    return bootstrap_targets(pred, data["outcome"], data["game"], data["step"], data["seat"], data["players"],
                             lam=lam)
