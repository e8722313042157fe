"""Train a value network on :mod:`concordia_env.training.value_data` shards and export it to numpy.

``python -m concordia_env.training.value_train --data runs/value-data/imperium --out runs/value-net/imperium``

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
deterministic algorithms, ``--torch-threads 1``). ``OUT/checkpoint.pt`` is written atomically
every ``--checkpoint-every`` steps and at the end; ``--resume`` continues from it to ``--steps``
(a missing, truncated or corrupt checkpoint is a one-line error, status 2). Ctrl-C saves the
checkpoint and exits with status 130; a write that fails (a full disk) stops the run with one
line and status 1, the files written before intact. At the end ``OUT/value_net.npz/.json``
(the numpy export, checked against torch on validation positions) and ``OUT/metrics.json``;
``--export STEM`` writes a copy to ``STEM.npz/.json`` plus ``STEM_config.json``.
"""

from __future__ import annotations

import argparse
import io
import json
import pickle
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from concordia_env import encoding
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.agents.value_net import MARGIN_SCALE, ROWS, ValueNet
from concordia_env.arena.pools import sigterm_as_ctrl_c
from concordia_env.files import write_bytes_atomic
from concordia_env.game import get_game
from concordia_env.training.value_data import load_shards

PHASES = ("early", "mid", "late")
#: arguments that must not change when a run is resumed
FIXED_ARGS = ("data", "hidden", "activation", "margin_weight", "targets", "lam", "n", "bootstrap", "seed",
              "val_fraction", "batch", "lr", "weight_decay", "dropout", "input_dropout")


# ------------------------------------------------------------ targets (numpy)
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


# ------------------------------------------------------------ the torch model

def mlp_trunk(hidden: Sequence[int], activation: str, dropout: float = 0.0,
              input_dropout: float = 0.0) -> tuple[nn.Sequential, int]:
    """The networks' shared trunk over the scaled observation: ``Linear -> activation`` per width of
    ``hidden`` (each followed by dropout when ``dropout > 0``), and its output width. The layers
    are created in order, so a seeded torch initialises them the same way wherever it is built."""
    layers: list[nn.Module] = [nn.Dropout(input_dropout)] if input_dropout > 0 else []
    n_in = encoding.OBSERVATION_SIZE
    for h in hidden:
        layers += [nn.Linear(n_in, h), getattr(nn, activation)()]
        if dropout > 0:
            layers.append(nn.Dropout(dropout))
        n_in = h
    return nn.Sequential(*layers), n_in

class ValueModel(nn.Module):
    """Scaling -> trunk -> win logits masked to present seats (+ margin head); see the module doc."""

    def __init__(self, scale: np.ndarray, unbounded: np.ndarray, hidden: Sequence[int], activation: str,
                 margin: bool, dropout: float = 0.0, input_dropout: float = 0.0) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))
        # dropout only regularises training (identity in eval mode, absent from the numpy copy): with a
        # few hundred games a net otherwise memorises each game's setup and its winner
        self.trunk, n_in = mlp_trunk(hidden, activation, dropout, input_dropout)
        self.win = nn.Linear(n_in, ROWS)
        self.margin: nn.Linear | None = nn.Linear(n_in, ROWS) if margin else None
        self.activation = activation
        sl = encoding.OBSERVATION_LAYOUT["seat_present"]
        self.present = slice(sl.start, sl.stop)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """``(win log-shares with absent rows 0, margin / MARGIN_SCALE or None)``, plus absent rows masked."""
        x = obs.float()
        present = x[:, self.present] > 0
        scale, unbounded = self.get_buffer("scale"), self.get_buffer("unbounded")  # typed as tensors
        x = torch.where(unbounded, torch.log1p(torch.clamp(x, min=0.0)), x * scale)
        h = self.trunk(x)
        logp = torch.log_softmax(self.win(h).masked_fill(~present, float("-inf")), dim=1)
        logp = logp.masked_fill(~present, 0.0)  # 0, not -inf: absent rows have target 0 and 0 * -inf is nan
        return logp, (self.margin(h) if self.margin is not None else None)

    def to_numpy(self, map_name: str, metadata: dict[str, Any]) -> ValueNet:
        def lay(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()
        trunk = [lay(m) for m in self.trunk if isinstance(m, nn.Linear)]
        heads = {"win": lay(self.win)}
        if self.margin is not None:
            heads["margin"] = lay(self.margin)
        return ValueNet(trunk, heads, self.activation, self.get_buffer("scale").cpu().numpy(),
                        self.get_buffer("unbounded").cpu().numpy(),
                        map_name=map_name, metadata=metadata)


def torch_values(model: ValueModel, obs: np.ndarray) -> np.ndarray:
    """Win shares ``(B, 5)`` of the torch model (absent rows 0), for comparing with numpy."""
    with torch.no_grad():
        logp, _ = model(torch.as_tensor(np.asarray(obs, np.float32)))
        present = torch.as_tensor(np.asarray(obs)[:, model.present] > 0)
        return torch.where(present, logp.exp(), 0.0).numpy()


def losses(model: ValueModel, obs: torch.Tensor, target: torch.Tensor, margin: torch.Tensor,
           margin_weight: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``(total loss, win cross-entropy)`` of a batch."""
    logp, m = model(obs)
    ce = -(target * logp).sum(dim=1).mean()
    if m is None or margin_weight == 0:
        return ce, ce
    present = obs[:, model.present] > 0
    mse = (((m - margin / MARGIN_SCALE) ** 2) * present).sum() / present.sum()
    return ce + margin_weight * mse, ce


# ------------------------------------------------------------ evaluation
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


def predict(model: ValueModel, obs: np.ndarray, batch: int = 4096) -> np.ndarray:
    return np.concatenate([torch_values(model, obs[i:i + batch]) for i in range(0, len(obs), batch)])


# ------------------------------------------------------------ the run
def plain(x: Any) -> Any:
    """``x`` as JSON data (dicts, lists, strings, numbers, bools, None; anything else as its string):
    what a checkpoint stores besides tensors, so that ``torch.load(weights_only=True)`` reads it."""
    return json.loads(json.dumps(x, default=str))


def _save_checkpoint(path: Path, model: ValueModel, opt: torch.optim.Optimizer, step: int, args: dict[str, Any],
                     history: list[dict[str, Any]], wall: float) -> None:
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step, "args": plain(args),
                "history": plain(history), "wall_s": wall}, buf)
    write_bytes_atomic(path, buf.getvalue())


class UnsafeCheckpointError(ValueError):
    """A checkpoint holding objects other than tensors and plain data: loading it could run code."""


def load_torch_checkpoint(path: Path) -> Any:
    """What ``path`` (a ``torch.save`` file) holds, read with ``weights_only=True``: tensors and plain
    data only, so a crafted file cannot run code. :class:`UnsafeCheckpointError` for a file that
    holds anything else, ``ValueError`` for one torch cannot read (truncated, corrupt); both one
    line naming the file."""
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        if "weights only" in str(exc).lower():  # torch's refusal of an object it does not allow
            raise UnsafeCheckpointError(f"{path}: refused: it holds objects other than tensors and plain data, "
                                        f"which could run code when loaded; only load checkpoints you made") from None
        raise ValueError(f"{path}: truncated or corrupt checkpoint (UnpicklingError)") from None
    except Exception as exc:  # noqa: BLE001 - a truncated file fails in many ways (EOFError, RuntimeError...)
        raise ValueError(f"{path}: truncated or corrupt checkpoint ({type(exc).__name__})") from None


def load_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint ``--resume`` names (``OUT/checkpoint.pt``); ``ValueError`` in one line if it is
    missing, truncated or corrupt (it is written atomically, so only damage from outside does that),
    or holds more than tensors and plain data (:func:`load_torch_checkpoint`: nothing in it runs)."""
    if not path.is_file():
        raise ValueError(f"--resume: {path}: no checkpoint to resume; run without --resume to start")
    try:
        ck = load_torch_checkpoint(path)
        if not isinstance(ck, dict) or not {"model", "optimizer", "step", "args"} <= set(ck):
            raise ValueError(f"{path}: not a value_train checkpoint")
    except UnsafeCheckpointError as exc:
        raise ValueError(f"--resume: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"--resume: {exc}; delete it and run without --resume to train from the start") from None
    return ck


def split_games(games: np.ndarray, fraction: float, seed: int) -> np.ndarray:
    """The validation games: a seeded ``fraction`` of the distinct games (at least one)."""
    uniq = np.unique(games)
    k = max(1, int(round(fraction * len(uniq)))) if fraction > 0 else 0
    return np.sort(np.random.default_rng([seed, 7]).permutation(uniq)[:k])


def train(args: argparse.Namespace) -> int:
    t_start = time.perf_counter()
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(args.torch_threads)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = load_shards(args.data)
    map_name = data["meta"]["settings"]["map"]
    obs, win = data["obs"], data["win"].astype(np.float32)
    target = training_targets(args, data)
    val_games = split_games(data["game"], args.val_fraction, args.seed)
    is_val = np.isin(data["game"], val_games)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    if len(tr) < args.batch:
        raise ValueError(f"{args.data}: {len(tr)} training positions, fewer than one batch of {args.batch}")
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(map_name).tables)[1])
    model = ValueModel(scale, unbounded, args.hidden, args.activation, args.margin_weight > 0, args.dropout,
                       args.input_dropout)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    ckpt_path = out / "checkpoint.pt"
    fixed = {k: vars(args)[k] for k in FIXED_ARGS}
    step, history, wall0 = 0, [], 0.0
    if args.resume:
        ck = load_checkpoint(ckpt_path)
        if {k: ck["args"].get(k) for k in FIXED_ARGS} != fixed:
            raise ValueError(f"{ckpt_path}: written with other settings ({ck['args']}); resume with the same ones")
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        step, history, wall0 = ck["step"], ck["history"], ck["wall_s"]
    margin_t = data["margin"].astype(np.float32)
    per_epoch = len(tr) // args.batch

    def batch_at(s: int) -> np.ndarray:  # the same batches whatever the restarts
        perm = np.random.default_rng([args.seed, s // per_epoch]).permutation(tr)
        return np.sort(perm[(s % per_epoch) * args.batch:(s % per_epoch + 1) * args.batch])

    def validate() -> dict[str, Any]:
        model.eval()
        with torch.no_grad():
            _, ce = losses(model, torch.as_tensor(obs[va]), torch.as_tensor(win[va]),
                           torch.as_tensor(margin_t[va]), 0.0)
        model.train()
        return {"step": step, "val_ce": round(float(ce), 4)}

    bar = None
    if not args.no_progress:
        from tqdm import tqdm
        bar = tqdm(total=args.steps, initial=step, unit="step", file=sys.stderr)
    try:
        while step < args.steps:
            b = batch_at(step)
            loss, _ = losses(model, torch.as_tensor(obs[b]), torch.as_tensor(target[b]),
                             torch.as_tensor(margin_t[b]), args.margin_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            step += 1
            if bar is not None:
                bar.update(1)
            if len(va) and (step % args.eval_every == 0 or step == args.steps):
                history.append(dict(validate(), train_loss=round(float(loss.detach()), 4)))
                if bar is not None:
                    bar.set_postfix(val_ce=history[-1]["val_ce"])
            if step % args.checkpoint_every == 0:
                _save_checkpoint(ckpt_path, model, opt, step, vars(args), history,
                                 wall0 + time.perf_counter() - t_start)
    except KeyboardInterrupt:
        _save_checkpoint(ckpt_path, model, opt, step, vars(args), history, wall0 + time.perf_counter() - t_start)
        print(f"interrupted at step {step}: checkpoint saved to {ckpt_path}; continue with --resume", file=sys.stderr)
        return 130
    finally:
        if bar is not None:
            bar.close()
    wall = wall0 + time.perf_counter() - t_start
    _save_checkpoint(ckpt_path, model, opt, step, vars(args), history, wall)
    finish(args, model, data, va, val_games, len(tr), step, wall, history)
    return 0


def training_targets(args: argparse.Namespace, data: dict[str, Any]) -> np.ndarray:
    """The win-head targets of every position: the outcome, or TD(lambda) / n-step returns."""
    win = data["win"].astype(np.float32)
    if args.targets == "mc":
        return win
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
        with torch.no_grad():
            m = model(torch.as_tensor(obs[va]))[1].numpy() * MARGIN_SCALE
        present = obs[va][:, model.present] > 0
        metrics["val"]["margin_mae_vp"] = round(float(np.abs(m - margin[va])[present].mean()), 2)
    meta = {"data": str(args.data), "positions": metrics["positions"], "games": metrics["games"],
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


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m concordia_env.training.value_train", description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="a value_data directory")
    ap.add_argument("--out", required=True, help="run directory: checkpoint.pt, value_net.npz/.json, metrics.json")
    ap.add_argument("--hidden", type=_ints, default=[256, 128], help="trunk widths, comma-separated")
    ap.add_argument("--activation", default="ReLU", choices=["ReLU", "Tanh", "ELU", "LeakyReLU"])
    ap.add_argument("--margin-weight", type=float, default=0.1, help="weight of the VP-margin head (0: no head)")
    ap.add_argument("--targets", default="mc", choices=["mc", "td", "nstep"])
    ap.add_argument("--lam", type=float, default=0.8)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--bootstrap", default=None, help="previous value net (numpy stem) for td / nstep targets")
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
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.targets != "mc" and not args.bootstrap:
        ap.error(f"--targets {args.targets} needs --bootstrap PREV (a value net's .npz/.json stem)")
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
