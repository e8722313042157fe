"""The losses of a batch (value and policy cross-entropies, see the package doc) and the mean
losses and hit rates over a set of positions."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.expert_iteration"):
    import torch

from .data import Batch, Positions
from .model import ExItModel


@dataclass
class Losses:
    """Loss tensors of a batch, plus the numbers reported for it."""

    total: torch.Tensor
    value: torch.Tensor
    policy: torch.Tensor
    outcome_ce: float = 0.0
    winner_hits: int = 0
    policy_hits: int = 0
    logits: torch.Tensor | None = field(default=None, repr=False)


def compute_losses(model: ExItModel, batch: Batch, device: torch.device, value_weight: float,
                   policy_weight: float) -> Losses:
    """Value and policy cross-entropies of a batch (see the module doc)."""
    obs = torch.as_tensor(batch.obs, device=device)
    after = torch.as_tensor(batch.after, device=device)
    logp, logits = model(obs, after)
    value_ce = -(torch.as_tensor(batch.value, device=device) * logp).sum(dim=1).mean()
    seg = torch.as_tensor(batch.seg, device=device)
    col = torch.as_tensor(batch.col, device=device)
    padded = torch.full(batch.pi.shape, float("-inf"), device=device, dtype=logits.dtype)
    padded = padded.index_put((seg, col), logits)
    legal = torch.isfinite(padded)
    logq = torch.log_softmax(padded, dim=1).masked_fill(~legal, 0.0)
    pi = torch.as_tensor(batch.pi, device=device)
    policy_ce = -(pi * logq).sum(dim=1).mean()
    total = value_weight * value_ce + policy_weight * policy_ce
    with torch.no_grad():
        outcome = torch.as_tensor(batch.outcome, device=device)
        outcome_ce = float(-(outcome * logp).sum(dim=1).mean())
        present = obs[:, model.present] > 0
        predicted = logp.masked_fill(~present, float("-inf")).argmax(dim=1)
        winner_hits = int((predicted == outcome.argmax(dim=1)).sum())
        policy_hits = int((padded.argmax(dim=1) == pi.argmax(dim=1)).sum())
    return Losses(total, value_ce, policy_ce, outcome_ce, winner_hits, policy_hits, logits)


def batch_losses(model: ExItModel, batch: Batch, device: torch.device, value_weight: float,
                 policy_weight: float) -> Losses:
    """:func:`compute_losses`, looked up on the package at every call: a replacement set there
    (tests stop training at a given step that way) takes effect, as when the package was one module."""
    from concordia_env.training import expert_iteration as package

    return package.compute_losses(model, batch, device, value_weight, policy_weight)


def evaluate_positions(model: ExItModel, pos: Positions, idx: np.ndarray, args: argparse.Namespace,
                       device: torch.device) -> dict[str, Any]:
    """Mean losses and hit rates over positions ``idx`` (the model in eval mode)."""
    model.eval()
    sums = {"value_ce": 0.0, "policy_ce": 0.0, "outcome_ce": 0.0, "winner_accuracy": 0.0, "policy_accuracy": 0.0}
    with torch.no_grad():
        for start in range(0, len(idx), args.batch):
            b = idx[start:start + args.batch]
            ls = batch_losses(model, pos.batch(b), device, args.value_weight, args.policy_weight)
            sums["value_ce"] += float(ls.value) * len(b)
            sums["policy_ce"] += float(ls.policy) * len(b)
            sums["outcome_ce"] += ls.outcome_ce * len(b)
            sums["winner_accuracy"] += ls.winner_hits
            sums["policy_accuracy"] += ls.policy_hits
    model.train()
    n = max(len(idx), 1)
    return {"positions": int(len(idx)), **{k: round(v / n, 4) for k, v in sums.items()}}


def target_entropy(pos: Positions, idx: np.ndarray) -> float:
    """Mean entropy of the visit distributions of ``idx``: the least policy cross-entropy possible."""
    total = 0.0
    for i in idx.tolist():
        c = pos.visits(i)[1]
        p = c[c > 0] / c.sum()
        total += float(-(p * np.log(p)).sum())
    return round(total / max(len(idx), 1), 4)
