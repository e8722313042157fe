"""The win head's targets (TD(lambda) and n-step returns from a previous network) and the scoring of
predictions against the outcome, by phase of the game (numpy only)."""

from __future__ import annotations

from typing import Any

import numpy as np

from concordia_env.agents.value_net import ROWS

PHASES = ("early", "mid", "late")


def _to_absolute(rel: np.ndarray, seat: int, n: int) -> np.ndarray:
    return np.array([rel[(p - seat) % n] for p in range(n)])


def _to_relative(ab: np.ndarray, seat: int, n: int) -> np.ndarray:
    out = np.zeros(ROWS)
    out[:n] = [ab[(seat + k) % n] for k in range(n)]
    return out


def bootstrap_targets(pred: np.ndarray, outcome: np.ndarray, game: np.ndarray, step: np.ndarray,
                      seat: np.ndarray, num_players: np.ndarray, lam: float | None = None,
                      n: int | None = None) -> np.ndarray:
    """TD(lambda) (``lam``) or n-step (``n``) targets per position, rows as the position's own.

    ``pred`` and ``outcome`` are ``(P, 5)`` per-row values of each position (a previous
    network's win shares; the final win outcome). Positions of a game are ordered by ``step``;
    values are moved to absolute seats so that positions seen by different players combine, and
    entries of the same step (``value_data --views all``) are one time step, valued by their mean."""
    if (lam is None) == (n is None):
        raise ValueError("give exactly one of lam (TD(lambda)) and n (n-step)")
    out = np.zeros_like(outcome, dtype=np.float64)
    for g in np.unique(game):
        idx = np.flatnonzero(game == g)
        np_ = int(num_players[idx[0]])
        steps, which = np.unique(step[idx], return_inverse=True)  # one time step per decision, all its views
        T = len(steps)
        v = np.zeros((T + 1, np_))
        views = np.bincount(which, minlength=T)[:, None]
        for j, i in zip(which, idx):
            v[j] += _to_absolute(pred[i], int(seat[i]), np_)
        v[:T] /= views  # the mean over the views of one position
        z = _to_absolute(outcome[idx[0]], int(seat[idx[0]]), np_)
        v[T] = z  # the value of the state after the last recorded position: the outcome
        G = np.empty((T, np_))
        if lam is not None:
            nxt = z
            for t in range(T - 1, -1, -1):
                nxt = (1.0 - lam) * v[t + 1] + lam * nxt
                G[t] = nxt
        else:
            k = int(n)  # type: ignore[arg-type]  # not None here: checked above
            for t in range(T):
                G[t] = v[t + k] if t + k < T else z
        for j, i in zip(which, idx):
            out[i] = _to_relative(G[j], int(seat[i]), np_)
    return out.astype(np.float32)


def game_phase(step: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    """0 early, 1 mid, 2 late: which third of the game's decisions a position lies in."""
    return np.minimum((3 * step) // np.maximum(decisions, 1), 2).astype(np.int64)


def phase_report(pred: np.ndarray, win: np.ndarray, phase: np.ndarray) -> dict[str, Any]:
    """Cross-entropy against the outcome and winner accuracy, overall and per phase."""
    ce = -(win * np.log(np.clip(pred, 1e-7, 1.0))).sum(axis=1)
    hit = pred.argmax(axis=1) == win.argmax(axis=1)
    out: dict[str, Any] = {"positions": int(len(ce)), "ce": round(float(ce.mean()), 4),
                           "accuracy": round(float(hit.mean()), 4)}
    for i, name in enumerate(PHASES):
        sel = phase == i
        if sel.any():
            out[name] = {"positions": int(sel.sum()), "ce": round(float(ce[sel].mean()), 4),
                         "accuracy": round(float(hit[sel].mean()), 4)}
    return out
