"""Train a value network on :mod:`concordia_env.training.value.data` shards and export it to numpy.

``python -m concordia_env.training.value.train --data runs/value-data/imperium --out runs/value-net/imperium``

(Moved here from ``concordia_env/training/value_train.py``, whose command still works. The targets
are in :mod:`.targets`, the torch network in :mod:`.model`, the checkpoint in :mod:`.checkpoint`.)

The network (torch here, :class:`concordia_env.agents.value_net.ValueNet` in numpy)
-----------------------------------------------------------------------------------
Observation scaling as in the policies (``numpy_policy.observation_scaling`` of the map's
observation bounds: bounded features divided by their bound, coins/VP/turn ``log1p``), a
trunk of Linear + activation layers (``--hidden 256,128``, ``--activation ReLU``), then a
``win`` head of 5 logits, one per seat row of the observation, turned into win shares by a
softmax over the seats present in the game (``seat_present``), and, unless
``--margin-weight 0``, a ``margin`` head: final VP minus the best other player's, / 50.

Targets and loss
----------------
The win head is trained by cross-entropy against a target distribution over the rows:

* ``--targets mc`` (default): the game's outcome, 1 for the winner (after tie-break);
* ``--targets td --lam L --bootstrap PREV``: TD(lambda) returns from a previous network's
  predictions ``V`` on the recorded positions of each game, in absolute seat order
  ``G_t = (1 - L) V_{t+1} + L G_{t+1}``, ``G_{T-1} = z`` (the outcome), then back to each
  position's rows; ``L = 1`` is ``mc``, ``L = 0`` the one-step bootstrap;
* ``--targets nstep --n N --bootstrap PREV``: ``G_t = V_{t+N}``, or ``z`` past the game's end.

``--bootstrap heuristic`` takes ``V`` from the heuristic's leaf evaluation recorded with each
position (the ``heuristic`` array of the data) instead of a network: the evaluation ``mcts``
searches with, which predicts the winner better than the released ``az`` networks do. (A network
whose stem is the word ``heuristic`` is named ``./heuristic``.)

(``t`` counts *recorded* positions, so with ``value_data --every k`` one step is k decisions.)
The margin head, if any, always learns the Monte-Carlo margin (MSE, weight ``--margin-weight``).

Validation, checkpoints, output
-------------------------------
Games, not positions, are split into training and validation (``--val-fraction``, drawn from
``--seed``). Validation reports the win cross-entropy against the real outcome and the accuracy
of the predicted winner (the row of highest share) by phase of the game (early / mid / late:
decision index in the first, second or last third of the game's decisions), next to the same
numbers for the heuristic's leaf evaluation recorded in the data (``heuristic``). Training is
seeded and deterministic on one machine (batch order from ``(seed, epoch)``, torch
deterministic algorithms, ``--torch-threads 1``; ``--device cuda`` trains on the GPU, deterministic on one GPU). ``OUT/checkpoint.pt`` is written atomically
every ``--checkpoint-every`` steps and at the end; ``--resume`` continues from it to ``--steps``
(a missing, truncated or corrupt checkpoint is a one-line error, status 2). Ctrl-C saves the
checkpoint and exits with status 130; a write that fails (a full disk) stops the run with one
line and status 1, the files written before intact. At the end ``OUT/value_net.npz/.json``
(the numpy export, checked against torch on validation positions) and ``OUT/metrics.json``;
``--export STEM`` writes a copy to ``STEM.npz/.json`` plus ``STEM_config.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.value"):
    import torch

from concordia_env import encoding
from concordia_env._internal.files import write_bytes_atomic
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.pools import sigterm_as_ctrl_c
from concordia_env.game import get_game

from .checkpoint import load_checkpoint, save_checkpoint
from .data import load_shards
from .model import ValueModel, losses, predict, predict_margin, torch_values
from .targets import bootstrap_targets, game_phase, phase_report

PROG = "python -m concordia_env.training.value.train"
#: ``--bootstrap`` word for the heuristic's recorded evaluation instead of a network
HEURISTIC = "heuristic"
#: arguments that must not change when a run is resumed
FIXED_ARGS = ("data", "hidden", "activation", "margin_weight", "targets", "lam", "n", "bootstrap", "seed",
              "val_fraction", "batch", "lr", "weight_decay", "dropout", "input_dropout")


@dataclass
class Progress:
    """Where a run stands: the steps done, the validation history, the seconds of the sessions before
    this one and when this one started (``time.perf_counter``)."""

    step: int
    history: list[dict[str, Any]]
    wall0: float
    start: float

    def wall(self) -> float:
        """Seconds of training so far, earlier sessions included."""
        return self.wall0 + time.perf_counter() - self.start


def split_games(games: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """The validation games: a seeded ``fraction`` of the distinct games (at least one)."""
    uniq = np.unique(games)
    k = max(1, int(round(fraction * len(uniq)))) if fraction > 0 else 0
    return np.sort(np.random.default_rng([seed, 7]).permutation(uniq)[:k])


def train(args: argparse.Namespace) -> int:
    """Train as ``args`` say, checkpointing as it goes, then :func:`finish`; the exit status (130:
    interrupted, the checkpoint of that moment saved)."""
    t_start = time.perf_counter()
    device = training_device(args.device)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_shards(args.data)
    target = training_targets(args, data)
    val_games, tr, va = split(args, data)
    model, opt = new_model(args, data["meta"]["settings"]["map"])
    ckpt_path = out / "checkpoint.pt"
    progress = Progress(*resumed(args, ckpt_path, model, opt), start=t_start)
    model.to(device)
    _optimizer_to(opt, device)
    bar = None
    if not args.no_progress:
        from tqdm import tqdm
        bar = tqdm(total=args.steps, initial=progress.step, unit="step", file=sys.stderr)
    try:
        fit(args, model, opt, data, target, tr, va, progress, ckpt_path, bar)
    except KeyboardInterrupt:
        _to_cpu(model, opt)
        save_checkpoint(ckpt_path, model, opt, progress.step, vars(args), progress.history, progress.wall())
        print(f"interrupted at step {progress.step}: checkpoint saved to {ckpt_path}; continue with --resume",
              file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
    wall = progress.wall()
    _to_cpu(model, opt)  # the checkpoint, the report and the numpy check on the CPU, wherever it trained
    save_checkpoint(ckpt_path, model, opt, progress.step, vars(args), progress.history, wall)
    finish(args, model, data, va, val_games, len(tr), progress.step, wall, progress.history)
    return 0


def training_device(name: str) -> torch.device:
    """The device ``--device`` names (``auto``: CUDA when torch finds it, else the CPU); ``ValueError`` for
    ``cuda`` without one. On CUDA, cuBLAS needs a fixed workspace for deterministic products."""
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch finds no CUDA device (use --device auto or cpu)")
    if name == "cpu" or not torch.cuda.is_available():
        return torch.device("cpu")
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    return torch.device("cuda")


def _optimizer_to(opt: torch.optim.Optimizer, device: torch.device) -> None:
    """Move the optimizer's state (AdamW's moments, present after a resume) to ``device``."""
    for state in opt.state.values():
        for k, v in state.items():
            if isinstance(v, torch.Tensor) and k != "step":
                state[k] = v.to(device)


def _to_cpu(model: torch.nn.Module, opt: torch.optim.Optimizer) -> None:
    model.to("cpu")
    _optimizer_to(opt, torch.device("cpu"))


def _device_of(model: torch.nn.Module) -> torch.device:
    return next(model.parameters()).device


def data_names(args: argparse.Namespace) -> str:
    """The ``--data`` directories as one string, for messages and the network's header."""
    return " ".join(map(str, args.data))


def split(args: argparse.Namespace, data: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The validation games and the indices of the training and validation positions; ``ValueError``
    if the training positions are fewer than one batch."""
    val_games = split_games(data["game"], args.val_fraction, args.seed)
    is_val = np.isin(data["game"], val_games)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    if len(tr) < args.batch:
        raise ValueError(f"{data_names(args)}: {len(tr)} training positions, fewer than one batch of {args.batch}")
    return val_games, tr, va


def new_model(args: argparse.Namespace, map_name: str) -> tuple[ValueModel, torch.optim.Optimizer]:
    """The untrained model of ``map_name``'s observation scaling (seeded by torch's generator) and its optimizer."""
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(map_name).tables)[1])
    model = ValueModel(scale, unbounded, args.hidden, args.activation, args.margin_weight > 0, args.dropout,
                       args.input_dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    return model, opt


def resumed(args: argparse.Namespace, path: Path, model: ValueModel,
            opt: torch.optim.Optimizer) -> tuple[int, list[dict[str, Any]], float]:
    """``(step, history, seconds)`` to go on from: with ``--resume`` those of checkpoint ``path``, whose
    weights and optimizer state are loaded (``ValueError`` if it was written with other settings)."""
    if not args.resume:
        return 0, [], 0.0
    ck = load_checkpoint(path)
    fixed = {k: vars(args)[k] for k in FIXED_ARGS}
    before = dict(ck["args"])
    if isinstance(before.get("data"), str):  # written when --data took one directory
        before["data"] = [before["data"]]
    if {k: before.get(k) for k in FIXED_ARGS} != fixed:
        raise ValueError(f"{path}: written with other settings ({ck['args']}); resume with the same ones")
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    return ck["step"], ck["history"], ck["wall_s"]


def batch_order(tr: np.ndarray, batch: int, seed: int) -> Callable[[int], np.ndarray]:
    """The batch of each step: the same batches whatever the restarts (an epoch's order from ``(seed, epoch)``)."""
    per_epoch = len(tr) // batch

    def batch_at(s: int) -> np.ndarray:
        perm = np.random.default_rng([seed, s // per_epoch]).permutation(tr)
        return np.sort(perm[(s % per_epoch) * batch:(s % per_epoch + 1) * batch])

    return batch_at


def validate(model: ValueModel, obs: np.ndarray, win: np.ndarray, margin: np.ndarray, va: np.ndarray,
             step: int) -> dict[str, Any]:
    """The win cross-entropy on the validation positions at ``step``."""
    model.eval()
    dev, total = _device_of(model), 0.0
    with torch.no_grad():  # in slices: the validation positions of a large data set do not fit one batch
        for i in range(0, len(va), 16384):
            v = va[i:i + 16384]
            _, ce = losses(model, torch.as_tensor(obs[v]).to(dev), torch.as_tensor(win[v]).to(dev),
                           torch.as_tensor(margin[v]).to(dev), 0.0)
            total += float(ce) * len(v)
    model.train()
    return {"step": step, "val_ce": round(total / max(len(va), 1), 4)}


def fit(args: argparse.Namespace, model: ValueModel, opt: torch.optim.Optimizer, data: dict[str, Any],
        target: np.ndarray, tr: np.ndarray, va: np.ndarray, progress: Progress, ckpt_path: Path, bar: Any) -> None:
    """Train from ``progress.step`` to ``--steps``, validating every ``--eval-every`` steps (and at the
    end) and checkpointing every ``--checkpoint-every``; ``progress`` follows."""
    obs, win = data["obs"], data["win"].astype(np.float32)
    margin = data["margin"].astype(np.float32)
    batch_at = batch_order(tr, args.batch, args.seed)
    dev = _device_of(model)
    while progress.step < args.steps:
        b = batch_at(progress.step)
        loss, _ = losses(model, torch.as_tensor(obs[b]).to(dev), torch.as_tensor(target[b]).to(dev),
                         torch.as_tensor(margin[b]).to(dev), args.margin_weight)
        opt.zero_grad()
        loss.backward()
        opt.step()
        progress.step += 1
        if bar is not None:
            bar.update(1)
        if len(va) and (progress.step % args.eval_every == 0 or progress.step == args.steps):
            progress.history.append(dict(validate(model, obs, win, margin, va, progress.step),
                                         train_loss=round(float(loss.detach()), 4)))
            if bar is not None:
                bar.set_postfix(val_ce=progress.history[-1]["val_ce"])
        if progress.step % args.checkpoint_every == 0:
            save_checkpoint(ckpt_path, model, opt, progress.step, vars(args), progress.history, progress.wall())


def training_targets(args: argparse.Namespace, data: dict[str, Any]) -> np.ndarray:
    """The win-head targets of every position: the outcome, or TD(lambda) / n-step returns."""
    win = data["win"].astype(np.float32)
    if args.targets == "mc":
        return win
    if args.bootstrap == HEURISTIC:
        pred = data["heuristic"].astype(np.float64)
    else:
        prev = ValueNet.load(args.bootstrap)
        obs = data["obs"]
        pred = np.concatenate([prev.values(obs[i:i + 4096]) for i in range(0, len(obs), 4096)])
    kw = {"lam": args.lam} if args.targets == "td" else {"n": args.n}
    return bootstrap_targets(pred, win, data["game"], data["step"], data["seat"], data["num_players"], **kw)


def finish(args: argparse.Namespace, model: ValueModel, data: dict[str, Any], va: np.ndarray, val_games: np.ndarray,
           n_train: int, step: int, wall: float, history: list[dict[str, Any]]) -> None:
    """Validation report, numpy export (checked against torch), ``metrics.json`` and ``--export``."""
    out = Path(args.out)
    obs, win, margin = data["obs"], data["win"].astype(np.float32), data["margin"]
    map_name = data["meta"]["settings"]["map"]
    model.eval()
    phase = game_phase(data["step"][va], data["decisions"][va])
    pred = predict(model, obs[va])
    metrics: dict[str, Any] = {
        "map": map_name, "positions": int(len(obs)), "games": int(len(np.unique(data["game"]))),
        "train_positions": n_train, "val_positions": int(len(va)), "val_games": int(len(val_games)),
        "shards": data["meta"]["shards"], "steps": step, "wall_s": round(wall, 1),
        "val": phase_report(pred, win[va], phase),
        "heuristic": phase_report(data["heuristic"][va].astype(np.float64), win[va], phase),
        "history": history,
    }
    if model.margin is not None and len(va):
        m = predict_margin(model, obs[va])
        present = obs[va][:, model.present] > 0
        metrics["val"]["margin_mae_vp"] = round(float(np.abs(m - margin[va])[present].mean()), 2)
    meta = {"data": data_names(args), "positions": metrics["positions"], "games": metrics["games"],
            "steps": step, "targets": args.targets, "seed": args.seed}
    net = model.to_numpy(map_name, meta)
    net.save(out / "value_net")
    check = obs[va[:512]] if len(va) else obs[:512]
    loaded = ValueNet.load(out / "value_net")
    metrics["numpy_vs_torch_max_abs_diff"] = float(np.abs(loaded.values(check) - torch_values(model, check)).max())
    write_bytes_atomic(out / "metrics.json", (json.dumps(metrics, indent=2) + "\n").encode())
    if args.export:
        stem = Path(args.export)
        net.save(stem)
        config = {"arguments": vars(args), "map": map_name,
                  "data": {"positions": metrics["positions"], "games": metrics["games"],
                           "settings": data["meta"]["settings"]},
                  "wall_s": metrics["wall_s"], "val": metrics["val"], "heuristic": metrics["heuristic"]}
        write_bytes_atomic(stem.with_name(stem.name + "_config.json"), (json.dumps(config, indent=2) + "\n").encode())
    summary = {k: metrics[k] for k in ("map", "positions", "val_positions", "steps", "wall_s")}
    summary.update(val_ce=metrics["val"].get("ce"), val_acc=metrics["val"].get("accuracy"),
                   heuristic_ce=metrics["heuristic"].get("ce"), heuristic_acc=metrics["heuristic"].get("accuracy"),
                   numpy_vs_torch=metrics["numpy_vs_torch_max_abs_diff"])
    print(json.dumps(summary))


def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Train as the command line ``argv`` says; the exit status. ``prog`` is the command named in its messages."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, nargs="+",
                    help="a value_data directory, or several of one map and player count (trained on together)")
    ap.add_argument("--out", required=True, help="run directory: checkpoint.pt, value_net.npz/.json, metrics.json")
    ap.add_argument("--hidden", type=_ints, default=[256, 128], help="trunk widths, comma-separated")
    ap.add_argument("--activation", default="ReLU", choices=["ReLU", "Tanh", "ELU", "LeakyReLU"])
    ap.add_argument("--margin-weight", type=float, default=0.1, help="weight of the VP-margin head (0: no head)")
    ap.add_argument("--targets", default="mc", choices=["mc", "td", "nstep"])
    ap.add_argument("--lam", type=float, default=0.8)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--bootstrap", default=None, help="previous value net (numpy stem) for td / nstep targets, or 'heuristic' for the "
                         "heuristic's evaluation recorded in the data")
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.01, help="AdamW decoupled weight decay")
    ap.add_argument("--dropout", type=float, default=0.0, help="dropout after each hidden layer (training only)")
    ap.add_argument("--input-dropout", type=float, default=0.0, help="dropout on the scaled observation (training only)")
    ap.add_argument("--val-fraction", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--checkpoint-every", type=int, default=500)
    ap.add_argument("--resume", action="store_true", help="continue OUT/checkpoint.pt up to --steps")
    ap.add_argument("--export", default=None, help="also write the numpy net to STEM.npz/.json + STEM_config.json")
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument("--device", default="cpu", choices=["auto", "cpu", "cuda"],
                    help="training device (default cpu; auto: CUDA when torch finds it)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.targets != "mc" and not args.bootstrap:
        ap.error(f"--targets {args.targets} needs --bootstrap PREV (a value net's .npz/.json stem, or heuristic)")
    if not 0.0 <= args.lam <= 1.0 or args.n < 1:
        ap.error("--lam must lie in [0, 1] and --n be positive")
    try:
        with sigterm_as_ctrl_c():
            return train(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a write failed (a full disk): the files written before, checkpoint included, are intact
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: could not write{where}: {exc.strerror or exc}; the files written before are intact",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted before training started; nothing saved", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
