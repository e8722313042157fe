"""The generation loop: every missing step of each generation (self-play, training, gate), what
``--resume`` finds complete, the run's log and ``OUT/best.npz/.json``."""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.training.expert_iteration"):
    import torch

from concordia_env._internal.files import write_bytes_atomic, write_json_atomic, write_text_atomic
from concordia_env._internal.threads import one_blas_thread
from concordia_env.agents.value_net import ValueNet

from .gate import run_gate
from .plots import plot_curves
from .selfplay import run_selfplay
from .settings import (
    RUN_FORMAT,
    Expert,
    check_run_file,
    file_sha256,
    gen_dir,
    read_json,
    selfplay_config,
    selfplay_expert,
    warn,
)
from .train import TrainContext, _set_torch, train_generation


def append_log(out: Path, entry: dict[str, Any]) -> None:
    """Add ``entry`` (with the time) as a line of ``OUT/log.jsonl``; a step done again after its files
    were lost gets a new line: the log is the run's history."""
    path = out / "log.jsonl"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    entry = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), **entry}
    write_text_atomic(path, text + json.dumps(entry) + "\n")


def gate_done(out: Path, g: int, best: Expert) -> dict[str, Any] | None:
    """``gate.json`` of generation ``g`` if it is complete and about the current network and best."""
    doc = read_json(gen_dir(out, g) / "gate.json")
    npz = gen_dir(out, g) / "net.npz"
    if doc is None or not npz.exists() or doc.get("format") != RUN_FORMAT + "/gate":
        return None
    if doc.get("net_sha256") != file_sha256(npz) or doc.get("best_before_sha256") != best.sha256:
        return None
    return doc


def train_done(out: Path, g: int) -> dict[str, Any] | None:
    """``train.json`` of generation ``g`` if its network is there and loads. A network that
    ``train.json`` records but that is missing, truncated or corrupt gets one warning line, and the
    generation is trained again (from its checkpoint, if that is complete: then only the export
    is redone)."""
    doc = read_json(gen_dir(out, g) / "train.json")
    stem = gen_dir(out, g) / "net"
    npz = stem.with_suffix(".npz")
    if doc is None:
        return None
    if not npz.exists() or doc.get("net_sha256") != file_sha256(npz):
        warn(f"{npz}: missing, or not the network train.json records (truncated?); training generation {g} again")
        return None
    try:
        ValueNet.load(stem)
    except (ValueError, FileNotFoundError) as exc:
        warn(f"{' '.join(str(exc).split())}; training generation {g} again")
        return None
    return doc


def warm_source(args: argparse.Namespace, out: Path, g: int, best: Expert) -> str | None:
    if args.warm_start == "none":
        return None
    if g == 0:
        return args.init_net
    return str(gen_dir(out, g - 1) / "net") if args.warm_start == "previous" else best.stem


def copy_best(out: Path, best: Expert) -> None:
    """``OUT/best.npz/.json``: a copy of the best network (npz first, like ``ValueNet.save``)."""
    if best.stem is None:
        return
    for suffix in (".npz", ".json"):
        src, dst = Path(best.stem + suffix), out / f"best{suffix}"
        data = src.read_bytes()
        if not dst.exists() or dst.read_bytes() != data:
            write_bytes_atomic(dst, data)


def run_generation(args: argparse.Namespace, out: Path, g: int, best: Expert, device: torch.device) -> Expert:
    """Every missing step of generation ``g``; returns the best network after it."""
    progress = not args.no_progress
    summary = run_selfplay(selfplay_config(args), out, g, selfplay_expert(args, g, best), args.workers, progress,
                           args.backend, args.address)
    if summary is not None:
        append_log(out, {"generation": g, "step": "selfplay", **summary})
    if train_done(out, g) is None:
        ctx = TrainContext(out, g, device, warm_source(args, out, g, best), progress)
        metrics = train_generation(args, ctx)
        append_log(out, {"generation": g, "step": "train", **{k: v for k, v in metrics.items() if k != "history"}})
    gate = gate_done(out, g, best)
    if gate is None:
        gate = run_gate(args, out, g, best)
        write_json_atomic(gate, gen_dir(out, g) / "gate.json")
        append_log(out, {"generation": g, "step": "gate", **gate})
    if gate["accepted"]:
        best = Expert.of(gen_dir(out, g) / "net", g)
    copy_best(out, best)
    plot_curves(out, g + 1, args.gate_threshold)
    return best


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole loop (module doc); returns a summary."""
    out = Path(args.out)
    check_run_file(args, out)
    device = _set_torch(args)
    best = Expert.of(args.init_net, None) if args.init_net else Expert()
    with one_blas_thread():  # inherited by the game workers forked from here (see concordia_env._internal.threads)
        for g in range(args.generations):
            best = run_generation(args, out, g, best, device)
    gates = [read_json(gen_dir(out, g) / "gate.json") or {} for g in range(args.generations)]
    last = gates[-1]
    return {"out": str(out), "generations": args.generations, "best_generation": best.generation,
            "accepted": [bool(x.get("accepted")) for x in gates],
            "last_gate_score": (last.get("gate") or {}).get("score"),
            "last_az_vs_heuristic": last.get("heuristic", {}).get("az", {}).get("win_rate"),
            "last_net_vs_heuristic": last.get("heuristic", {}).get("net", {}).get("win_rate")}
