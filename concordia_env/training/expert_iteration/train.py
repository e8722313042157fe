"""Training a generation's network on its window: the torch settings, the checkpoints that let
training stop and resume, the training steps, and the numpy export checked against torch."""

from __future__ import annotations

import argparse
import io
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.expert_iteration"):
    import torch

from concordia_env import encoding
from concordia_env._internal.files import write_bytes_atomic, write_json_atomic
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.agents.value_net import ValueNet
from concordia_env.game import get_game
from concordia_env.training.value.checkpoint import load_torch_checkpoint, plain

from .data import Positions, split_games
from .losses import batch_losses, evaluate_positions, target_entropy
from .model import ExItModel
from .settings import checkpoint_fixed, file_sha256, gen_dir, warn
from .shards import load_positions


@dataclass
class TrainContext:
    """What training generation ``g`` needs besides the arguments."""

    out: Path
    g: int
    device: torch.device
    warm_from: str | None
    progress: bool


def _save_checkpoint(path: Path, model: ExItModel, opt: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), **plain(state)}, buf)
    write_bytes_atomic(path, buf.getvalue())


def _load_checkpoint(path: Path, expect: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint at ``path`` if it loads and was written for ``expect`` (generation, settings,
    data, steps); else None, with a warning for a file that is there."""
    if not path.exists():
        return None
    try:
        ck = load_torch_checkpoint(path)  # tensors and plain data only: a crafted file cannot run code
        if not isinstance(ck, dict) or "model" not in ck:
            raise ValueError(f"{path}: not a checkpoint")
    except ValueError as exc:  # truncated, corrupt, or holding other objects (UnsafeCheckpointError)
        warn(f"skipping {exc}; training this generation from its start")
        return None
    found = {k: ck.get(k) for k in expect}
    if found != plain(expect):
        warn(f"skipping {path}: written for other settings or data; training this generation from its start")
        return None
    return ck


class _Interrupted(Exception):
    """Ctrl-C during training, after the checkpoint was saved."""

    def __init__(self, step: int, path: Path) -> None:
        super().__init__(f"interrupted at training step {step}: checkpoint saved to {path}")


def _set_torch(args: argparse.Namespace) -> torch.device:
    torch.set_num_threads(args.torch_threads)
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=device.type == "cuda")
    return device


def new_model(args: argparse.Namespace, ctx: TrainContext) -> ExItModel:
    """A freshly seeded model for generation ``ctx.g``, warm-started from ``ctx.warm_from`` if given."""
    torch.manual_seed(int(np.random.SeedSequence([args.seed, ctx.g, 11]).generate_state(1)[0]))
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(args.map).tables)[1])
    model = ExItModel(scale, unbounded, args.hidden, args.activation, args.dropout)
    if ctx.warm_from is not None:
        model.load_numpy(ValueNet.load(ctx.warm_from))
    return model.to(ctx.device)


@dataclass
class _Schedule:
    """Which training positions each step uses: ``per_epoch`` batches per pass over ``tr``, ``steps``
    in all."""

    tr: np.ndarray
    batch: int
    seed: int
    g: int
    per_epoch: int
    steps: int

    def batch_at(self, s: int) -> np.ndarray:
        """Step ``s``'s positions, drawn from (seed, generation, epoch) alone: the same batches
        whatever the restarts."""
        perm = np.random.default_rng([self.seed, self.g, s // self.per_epoch]).permutation(self.tr)
        return np.sort(perm[(s % self.per_epoch) * self.batch:(s % self.per_epoch + 1) * self.batch])


@dataclass
class _Session:
    """A generation's training in progress: the model, its optimiser and what its checkpoint holds
    besides them (``expect``: what it was written for; the step, the loss history, the wall time)."""

    model: ExItModel
    opt: torch.optim.Optimizer
    path: Path
    expect: dict[str, Any]
    t_start: float
    step: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    wall0: float = 0.0

    def state(self) -> dict[str, Any]:
        """The checkpoint's data; its wall time includes the sessions before a restart."""
        return dict(self.expect, step=self.step, history=self.history,
                    wall_s=self.wall0 + time.perf_counter() - self.t_start)

    def save(self) -> None:
        _save_checkpoint(self.path, self.model, self.opt, self.state())

    def resume(self) -> None:
        """Continue from the checkpoint, if there is one written for this training."""
        ck = _load_checkpoint(self.path, self.expect)
        if ck is not None:
            self.model.load_state_dict(ck["model"])
            self.opt.load_state_dict(ck["optimizer"])
            self.step, self.history, self.wall0 = ck["step"], ck["history"], ck["wall_s"]


def _window_positions(args: argparse.Namespace, out: Path, g: int) -> tuple[Positions, np.ndarray, np.ndarray]:
    """The positions of generation ``g``'s window, with the indices of its training and validation
    positions."""
    first = max(0, g - args.window + 1)
    data = load_positions(gen_dir(out, k) / "selfplay" for k in range(first, g + 1))
    if data["positions"] == 0:
        raise ValueError(f"generations {first}-{g} of {out} hold no positions (every game truncated?); "
                         f"raise --max-turns or --games")
    pos = Positions(data, args.map, args.value_target_mix, args.seed)
    val_keys = split_games(data["game_key"], args.val_fraction, args.seed, g)
    is_val = np.isin(data["game_key"], val_keys)
    return pos, np.flatnonzero(~is_val), np.flatnonzero(is_val)


def _start_session(args: argparse.Namespace, ctx: TrainContext, pos: Positions, plan: _Schedule,
                   t_start: float) -> _Session:
    """The model and optimiser of generation ``ctx.g``, resumed from its checkpoint if that fits."""
    fixed = checkpoint_fixed(args)
    shards = [Path(p).relative_to(ctx.out).as_posix() for p in pos.data["shards"]]
    expect = {"generation": ctx.g, "fixed": fixed, "shards": shards, "positions": pos.n, "steps": plan.steps}
    model = new_model(args, ctx)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    session = _Session(model, opt, gen_dir(ctx.out, ctx.g) / "checkpoint.pt", expect, t_start)
    session.resume()
    return session


def _train_steps(args: argparse.Namespace, ctx: TrainContext, session: _Session, pos: Positions,
                 plan: _Schedule) -> None:
    """Train up to ``plan.steps``, saving the checkpoint every ``--checkpoint-every`` steps and on
    Ctrl-C (which then raises :class:`_Interrupted`)."""
    from tqdm import tqdm

    bar = tqdm(total=plan.steps, initial=session.step, unit="step", file=sys.stderr, leave=False,
               disable=not ctx.progress, desc=f"gen {ctx.g} training")
    window: list[tuple[float, float]] = []
    try:
        while session.step < plan.steps:
            ls = batch_losses(session.model, pos.batch(plan.batch_at(session.step)), ctx.device, args.value_weight,
                              args.policy_weight)
            session.opt.zero_grad()
            ls.total.backward()
            session.opt.step()
            session.step += 1
            window = (window + [(ls.value.item(), ls.policy.item())])[-plan.per_epoch:]
            bar.update()
            if session.step % plan.per_epoch == 0 or session.step == plan.steps:
                session.history.append({"step": session.step,
                                        "value_ce": round(float(np.mean([w[0] for w in window])), 4),
                                        "policy_ce": round(float(np.mean([w[1] for w in window])), 4)})
                bar.set_postfix(value=session.history[-1]["value_ce"], policy=session.history[-1]["policy_ce"])
            if session.step % args.checkpoint_every == 0:
                session.save()
    except KeyboardInterrupt:
        session.save()
        raise _Interrupted(session.step, session.path) from None
    finally:
        bar.close()


def train_generation(args: argparse.Namespace, ctx: TrainContext) -> dict[str, Any]:
    """Train generation ``ctx.g``'s network on its window, export it and return ``train.json``'s contents."""
    t_start = time.perf_counter()
    pos, tr, va = _window_positions(args, ctx.out, ctx.g)
    per_epoch = max(1, -(-len(tr) // args.batch))
    steps = max(1, int(math.ceil(args.epochs * per_epoch)))
    plan = _Schedule(tr, args.batch, args.seed, ctx.g, per_epoch, steps)
    session = _start_session(args, ctx, pos, plan, t_start)
    _train_steps(args, ctx, session, pos, plan)
    session.save()
    return finish_training(args, ctx, session.model, pos, tr, va, session.state())


def finish_training(args: argparse.Namespace, ctx: TrainContext, model: ExItModel, pos: Positions,
                    tr: np.ndarray, va: np.ndarray, state: dict[str, Any]) -> dict[str, Any]:
    """Metrics, the numpy export (checked against torch) and ``train.json``'s contents."""
    out, g = ctx.out, ctx.g
    model.eval()
    data = pos.data
    games = int(len(np.unique(data["game_key"])))
    meta = {"trainer": "expert_iteration", "generation": g, "seed": args.seed, "positions": pos.n, "games": games,
            "window": [max(0, g - args.window + 1), g], "steps": state["step"]}
    net = model.to_numpy(args.map, meta)
    stem = gen_dir(out, g) / "net"
    net.save(stem)
    loaded = ValueNet.load(stem)
    check = (va if len(va) else tr)[:64]
    b = pos.batch(check)
    with torch.no_grad():
        logp, logits = model(torch.as_tensor(b.obs, device=ctx.device), torch.as_tensor(b.after, device=ctx.device))
    present = b.obs[:, model.present] > 0
    diff_v = float(np.abs(loaded.values(b.obs) - np.where(present, logp.exp().cpu().numpy(), 0.0)).max())
    diff_p = float(np.abs(loaded.policy_logits(b.after) - logits.cpu().numpy()).max())
    if max(diff_v, diff_p) > 1e-3:
        raise RuntimeError(f"{stem}: the numpy export disagrees with torch (max difference {max(diff_v, diff_p):.2g})")
    sample = np.random.default_rng([args.seed, g, 3]).permutation(tr)[:2048]
    metrics = {
        "generation": g, "net": stem.relative_to(out).as_posix(), "net_sha256": file_sha256(stem.with_suffix(".npz")),
        "window": meta["window"], "shards": len(data["shards"]), "games": games, "positions": pos.n,
        "train_positions": int(len(tr)), "val_positions": int(len(va)), "steps": state["step"],
        "warm_start": ctx.warm_from, "device": str(ctx.device), "wall_s": round(state["wall_s"], 1),
        "train": evaluate_positions(model, pos, np.sort(sample), args, ctx.device),
        "val": evaluate_positions(model, pos, va, args, ctx.device) if len(va) else None,
        "policy_target_entropy": target_entropy(pos, tr),
        "history": state["history"],
        "numpy_vs_torch_max_abs_diff": {"win": diff_v, "policy": diff_p},
    }
    write_json_atomic(metrics, gen_dir(out, g) / "train.json")
    return metrics
