"""Training data of a window: value targets, the split into training and validation games, and
batches of observations and afterstates rebuilt from the stored states (:class:`Positions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env import engine as E
from concordia_env.agents.afterstates import AfterstateEncoder
from concordia_env.agents.mcts import deck_blocks, resample_deck
from concordia_env.agents.value_net import ROWS
from concordia_env.data import load_map
from concordia_env.game import get_game
from concordia_env.state import new_game


def to_relative(values: np.ndarray, seat: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per-absolute-seat rows ``(P, 5)`` -> rows from each position's ``seat`` (row k = seat (seat+k) % n)."""
    out = np.zeros((len(seat), ROWS), np.float32)
    for k in range(ROWS):
        present = k < n
        src = (seat + k) % np.maximum(n, 1)
        out[present, k] = values[np.flatnonzero(present), src[present]]
    return out


def value_targets(data: dict[str, Any], mix: float) -> tuple[np.ndarray, np.ndarray]:
    """``(targets, outcomes)`` ``(P, 5)`` in each position's row order: the outcome (1 for the winner)
    mixed with weight ``mix`` with the root search value (clipped to [0, 1], renormalised)."""
    seat = data["seat"].astype(np.int64)
    n = data["num_players"].astype(np.int64)
    won = np.zeros((len(seat), ROWS), np.float32)
    won[np.arange(len(seat)), data["winner"]] = 1.0
    outcome = to_relative(won, seat, n)
    if mix == 0:
        return outcome, outcome
    v = np.clip(data["root_value"].astype(np.float64), 0.0, 1.0)
    for k in range(ROWS):
        v[k >= n, k] = 0.0
    total = v.sum(axis=1, keepdims=True)
    v = np.where(total > 0, v / np.maximum(total, 1e-12), outcome)  # no information: the outcome
    return ((1 - mix) * outcome + mix * to_relative(v.astype(np.float32), seat, n)).astype(np.float32), outcome


@dataclass
class Batch:
    """Numpy arrays of a batch: observations ``(B, OBS)``, afterstate observations ``(N, OBS)`` with
    the batch row ``seg`` and column ``col`` of each, visit shares ``pi`` padded to ``(B, L)``, and
    the value targets and outcomes ``(B, 5)``."""

    obs: np.ndarray
    after: np.ndarray
    seg: np.ndarray
    col: np.ndarray
    pi: np.ndarray
    value: np.ndarray
    outcome: np.ndarray


class Positions:
    """Training positions of a window: stored states, visits and targets; batches rebuilt on demand."""

    def __init__(self, data: dict[str, Any], map_name: str, mix: float, seed: int = 0) -> None:
        self.data = data
        self.n = int(data["positions"])
        self.game = get_game(map_name)
        self.map_index = encoding.map_id(map_name)
        self.encoder = AfterstateEncoder(map_name)
        self.mask = np.zeros(E.NUM_ACTIONS, np.int8)
        self.targets, self.outcomes = value_targets(data, mix)
        self.seed = seed
        self.blocks = {n: deck_blocks(new_game(map_name, n, 0)) for n in load_map(map_name).players}

    def sampled_deck(self, i: int, s: np.ndarray) -> np.ndarray:
        """A copy of state ``s`` of position ``i`` with its undrawn cards shuffled within their decks, drawn
        from (seed, game, decision) alone: the deck order a player knows no more of than the searcher did."""
        s = s.copy()
        key = [self.seed, int(self.data["game_key"][i]), int(self.data["step"][i])]
        resample_deck(s, self.blocks[int(self.data["num_players"][i])], np.random.default_rng(key))
        return s

    def visits(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.data["offset"][i], self.data["offset"][i + 1]
        return self.data["visit_actions"][a:b].astype(np.int64), self.data["visit_counts"][a:b].astype(np.float32)

    def batch(self, idx: np.ndarray) -> Batch:
        """The observations, afterstates and targets of positions ``idx``."""
        T = self.game.tables
        states = np.ascontiguousarray(self.data["state"][idx])
        seats = self.data["seat"][idx].astype(np.int64)
        obs = np.empty((len(idx), encoding.OBSERVATION_SIZE), np.float32)
        encoding.encode_batch(states, T, self.map_index, seats, obs)
        after, seg, col, shares = [], [], [], []
        for j, i in enumerate(idx.tolist()):
            actions, counts = self.visits(i)
            E.legal_mask(states[j], T, self.mask)
            if not np.array_equal(np.flatnonzero(self.mask), actions):
                raise ValueError(f"position {i}: stored legal actions do not match its state (corrupt data)")
            sampled = self.sampled_deck(i, states[j])
            after.append(self.encoder.rows(sampled, T, self.mask, int(seats[j])).copy())
            seg.append(np.full(len(actions), j))
            col.append(np.arange(len(actions)))
            shares.append(counts / max(float(counts.sum()), 1.0))
        width = max(len(c) for c in col)
        pi = np.zeros((len(idx), width), np.float32)
        seg_a, col_a = np.concatenate(seg), np.concatenate(col)
        pi[seg_a, col_a] = np.concatenate(shares)
        return Batch(obs, np.concatenate(after), seg_a, col_a, pi, self.targets[idx], self.outcomes[idx])


def split_games(keys: np.ndarray, fraction: float, seed: int, g: int) -> np.ndarray:
    """Validation game keys: a seeded ``fraction`` of the window's games (at least one if fraction > 0
    and there are two games or more)."""
    uniq = np.unique(keys)
    if fraction <= 0 or len(uniq) < 2:
        return uniq[:0]
    k = min(len(uniq) - 1, max(1, int(round(fraction * len(uniq)))))
    return np.sort(np.random.default_rng([seed, g, 7]).permutation(uniq)[:k])
