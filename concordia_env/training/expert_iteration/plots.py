"""``OUT/curves.png``: a run's learning curves per generation (losses, gate scores, win rates
against the heuristic), redrawn after every generation."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires
from concordia_env._internal.files import write_bytes_atomic

from .settings import gen_dir, read_json

#: one plotted generation: its number, ``train.json`` and ``gate.json``
CurveRow = tuple[int, dict[str, Any], dict[str, Any]]


def _curve_rows(out: Path, generations: int) -> list[CurveRow]:
    """The generations whose training and gate are both complete."""
    rows = []
    for g in range(generations):
        tr, gt = read_json(gen_dir(out, g) / "train.json"), read_json(gen_dir(out, g) / "gate.json")
        if tr is not None and gt is not None:
            rows.append((g, tr, gt))
    return rows


def _plot_losses(ax: Any, rows: list[CurveRow], gens: list[int]) -> None:
    for part, style in (("train", "-"), ("val", "--")):
        for key, color in (("value_ce", "C0"), ("policy_ce", "C1")):
            ys = [r[1][part][key] if r[1].get(part) else np.nan for r in rows]
            ax.plot(gens, ys, style, color=color, marker="o", label=f"{part} {key}")
    ax.plot(gens, [r[1]["policy_target_entropy"] for r in rows], ":", color="C1", label="visit entropy")
    ax.set(title="losses", xlabel="generation", ylabel="cross-entropy")
    ax.legend(fontsize=7)


def _plot_gates(ax: Any, rows: list[CurveRow], threshold: float) -> None:
    for g, _, gt in rows:
        if gt["gate"] and gt["gate"]["score"] is not None:
            s, (lo, hi) = gt["gate"]["score"], gt["gate"]["score_ci95"]
            ax.errorbar([g], [s], yerr=[[s - lo], [hi - s]], fmt="o" if gt["accepted"] else "x",
                        color="C2" if gt["accepted"] else "C3", capsize=3)
    ax.axhline(threshold, color="grey", ls="--", lw=1)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set(title="gate: new vs best (o accepted, x rejected)", xlabel="generation", ylabel="score", ylim=(0, 1))


def _plot_heuristic(ax: Any, rows: list[CurveRow], gens: list[int]) -> None:
    for kind, color, dx in (("az", "C0", -0.05), ("net", "C4", 0.05)):
        rate = np.array([r[2]["heuristic"][kind]["win_rate"] for r in rows])
        ci = np.array([r[2]["heuristic"][kind]["win_rate_ci95"] for r in rows])
        ax.errorbar(np.array(gens) + dx, rate, yerr=[rate - ci[:, 0], ci[:, 1] - rate], fmt="o-", color=color,
                    capsize=3, label=kind)
    ax.axhline(rows[0][2]["heuristic"]["az"]["fair_share"], color="grey", ls="--", lw=1, label="fair share")
    ax.set(title="win rate vs heuristic", xlabel="generation", ylabel="win rate", ylim=(0, 1))
    ax.legend(fontsize=7)


def plot_curves(out: Path, generations: int, threshold: float) -> None:
    """``OUT/curves.png``: losses, gate score and win rates against the heuristic per generation."""
    with requires("train", "expert iteration's curves.png", "pip install matplotlib"):
        import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _curve_rows(out, generations)
    if not rows:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    gens = [r[0] for r in rows]
    _plot_losses(axes[0], rows, gens)
    _plot_gates(axes[1], rows, threshold)
    _plot_heuristic(axes[2], rows, gens)
    for ax in axes:
        ax.set_xticks(gens)
    fig.suptitle(f"expert iteration: {out}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    write_bytes_atomic(out / "curves.png", buf.getvalue())
