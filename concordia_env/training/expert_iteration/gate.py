"""Gating: the new network plays the best one (its gate score and Wilson interval decide whether it
becomes the best), and both the network's search and the network alone play the heuristic."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env.arena.pools import stop_signals
from concordia_env.arena.tournament import wilson_interval

from .settings import RUN_FORMAT, Expert, file_sha256, gen_dir


def az_spec(stem: str | os.PathLike, simulations: int, args: argparse.Namespace) -> str:
    return (f"az:net={os.fspath(stem)}:simulations={simulations}:c_puct={args.c_puct}:leaf_mix={args.leaf_mix}"
            f":prior_mix=0:max_turns={args.max_turns}")


def gate_lineup(new: str, best: str, n: int) -> list[str]:
    """The gate's line-up: the two specs alternating over the ``n`` seats."""
    return [new if k % 2 == 0 else best for k in range(n)]


def gate_score(result: dict[str, Any], new: str, best: str) -> dict[str, Any]:
    """The new network's share of the wins per seat, with a Wilson interval on the decided games."""
    a, b = result["per_agent"][new], result["per_agent"][best]
    wins_new, wins_best = a["wins"], b["wins"]
    decided = wins_new + wins_best
    if decided == 0:
        return {"score": None, "score_ci95": None, "wins": [wins_new, wins_best], "decided": 0}
    rate_new, rate_best = wins_new / a["seats"], wins_best / b["seats"]
    score = rate_new / (rate_new + rate_best)
    lo, hi = wilson_interval(score * decided, decided)  # a real-valued count of wins is fine
    return {"score": score, "score_ci95": [lo, hi], "wins": [wins_new, wins_best], "decided": decided}


def _agent_summary(result: dict[str, Any], spec: str) -> dict[str, Any]:
    a = result["per_agent"][spec]
    keep = ("games", "wins", "win_rate", "win_rate_ci95", "fair_share", "mean_vp", "mean_margin_best_other",
            "truncated", "ms_per_decision")
    return {k: a[k] for k in keep}


def _drop_agent_caches() -> None:
    """Forget networks and agents cached by file path in this process: a file rewritten since (a
    generation trained again after its files were deleted) must be read again."""
    from concordia_env.agents import az
    from concordia_env.arena import tournament

    for cache in (getattr(az, "_NETS", None), getattr(tournament, "_AGENT_POOL", None)):
        if isinstance(cache, dict):
            cache.clear()


def _eval_seed(args: argparse.Namespace, *key: int) -> int:
    return int(np.random.SeedSequence([args.seed, *key]).generate_state(1)[0] >> 2)


def run_gate(args: argparse.Namespace, out: Path, g: int, best: Expert) -> dict[str, Any]:
    """Gate generation ``g``'s network against ``best`` and play it against the heuristic.

    A stop signal stops the gate even when it comes after an evaluation's last game started (that
    evaluation then completes, and nothing stops it): the gate is played again on ``--resume``."""
    with stop_signals("game") as interrupts:  # the evaluations inside share it
        return _run_gate(args, out, g, best, interrupts.check)


def _run_gate(args: argparse.Namespace, out: Path, g: int, best: Expert, stopped: Callable[[], None]) -> dict[str, Any]:
    from concordia_env.arena.evaluation import run_evaluation

    t0 = time.perf_counter()
    d = gen_dir(out, g)
    stem = d / "net"
    n = args.players
    new = az_spec(stem, args.gate_simulations, args)
    common: dict[str, Any] = {"num_players": n, "workers": args.workers, "max_turns": args.max_turns,
                              "progress": not args.no_progress}
    _drop_agent_caches()
    gate: dict[str, Any] | None = None
    accepted = True
    if best.stem is not None:
        old = az_spec(best.stem, args.gate_simulations, args)
        seed = _eval_seed(args, g, 1)
        result = run_evaluation(args.map, gate_lineup(new, old, n), args.gate_deals, seed, out=d / "eval_gate.json",
                                **common)
        stopped()
        gate = {"lineup": result["lineup"], "deals": args.gate_deals, "seed": seed, "games": result["games"],
                "truncated": result["truncated"], "threshold": args.gate_threshold,
                "new": _agent_summary(result, new), "best": _agent_summary(result, old),
                **gate_score(result, new, old)}
        accepted = gate["score"] is not None and gate["score"] >= args.gate_threshold
        gate["accepted"] = accepted
    heuristic: dict[str, Any] = {}
    seed = _eval_seed(args, 2)  # the same deals every generation: the curve compares like with like
    for kind, spec in (("az", new), ("net", f"net:net={os.fspath(stem)}")):
        result = run_evaluation(args.map, [spec] + ["heuristic"] * (n - 1), args.eval_deals, seed,
                                out=d / f"eval_heuristic_{kind}.json", **common)
        stopped()
        heuristic[kind] = dict(_agent_summary(result, spec), deals=args.eval_deals, seed=seed)
    return {"format": RUN_FORMAT + "/gate", "generation": g, "net": stem.relative_to(out).as_posix(),
            "net_sha256": file_sha256(stem.with_suffix(".npz")), "best_before": best.stem,
            "best_before_generation": best.generation, "best_before_sha256": best.sha256, "accepted": accepted,
            "gate": gate, "heuristic": heuristic, "seconds": round(time.perf_counter() - t0, 1)}
