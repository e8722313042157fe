"""Plot learning curves of train_ppo.py runs from their ``logs/progress.csv``.

Example::

    python -m concordia_env.training.plot_curves runs/imperium runs/italia --out releases/learning_curves.png

Top row, per run: the learner's win rate in its training games against each
opponent kind (random, heuristic, frozen past selves; a rolling mean over
``--smooth`` rollouts, stochastic policy) and the evaluation win rate against
the HeuristicAgent (deterministic policy, dots). Bottom row: mean episode
reward (terminal reward plus shaping), same rolling mean.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from concordia_env._internal.extras import requires
from concordia_env._internal.files import write_bytes_atomic

KINDS = {"random": "tab:green", "heuristic": "tab:red", "self": "tab:blue"}


def load_progress(run: str | Path) -> dict[str, np.ndarray]:
    """Columns of ``run/logs/progress.csv`` (or of the CSV file itself) as float arrays, NaN where empty."""
    path = Path(run)
    if path.is_dir():
        path = path / "logs" / "progress.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no progress.csv at {path} (is it a train_ppo.py run directory?)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path} has no rows yet")
    return {key: np.array([float(r[key]) if r.get(key) not in (None, "") else np.nan for r in rows])
            for key in rows[0]}


def rolling_mean(y: np.ndarray, window: int) -> np.ndarray:
    """Mean of the last ``window`` non-NaN values at each point (NaN before the first one)."""
    out = np.full(len(y), np.nan)
    seen: list[float] = []
    for i, v in enumerate(y):
        if not np.isnan(v):
            seen.append(float(v))
        if seen:
            out[i] = np.mean(seen[-window:])
    return out


def plot_runs(runs: Sequence[str | Path], labels: Sequence[str] | None = None, smooth: int = 20,
              out: str | Path | None = None):
    """A matplotlib figure with one column per run (see the module doc); saved to ``out`` if given."""
    with requires("plot", "plotting learning curves", "pip install matplotlib"):
        import matplotlib

    if out is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = list(labels) if labels is not None else [Path(r).name for r in runs]
    fig, axes = plt.subplots(2, len(runs), figsize=(6 * len(runs), 7), squeeze=False, sharex="col")
    for col, (run, label) in enumerate(zip(runs, labels)):
        data = load_progress(run)
        steps = data["time/total_timesteps"]
        top, bottom = axes[0, col], axes[1, col]
        for kind, color in KINDS.items():
            key = f"selfplay/win_rate_vs_{kind}"
            if key in data and not np.isnan(data[key]).all():
                top.plot(steps, rolling_mean(data[key], smooth), color=color, label=f"training games vs {kind}")
        if "eval/success_rate" in data:
            ok = ~np.isnan(data["eval/success_rate"])
            top.plot(steps[ok], data["eval/success_rate"][ok], "o", color="black", markersize=3,
                     label="evaluation vs heuristic (deterministic)")
        top.set_ylim(-0.02, 1.02)
        top.set_ylabel("learner win rate")
        top.set_title(label)
        top.legend(loc="upper center", bbox_to_anchor=(0.55, 0.93), fontsize=8)  # between the curves
        top.grid(alpha=0.3)
        if "rollout/ep_rew_mean" in data:  # (evaluation rows have no rollout figures)
            ok = ~np.isnan(data["rollout/ep_rew_mean"])
            bottom.plot(steps[ok], rolling_mean(data["rollout/ep_rew_mean"][ok], smooth), color="tab:purple")
        bottom.set_ylabel("mean episode reward")
        bottom.set_xlabel("learner decisions (timesteps)")
        bottom.grid(alpha=0.3)
    fig.tight_layout()
    if out is not None:  # rendered into memory, then written atomically: never a half-written PNG
        buf = io.BytesIO()
        fig.savefig(buf, format=Path(out).suffix[1:].lower() or "png", dpi=100)  # (as savefig(out) would)
        write_bytes_atomic(out, buf.getvalue())
    return fig


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="plot_curves.py", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path, help="run directories (or progress.csv files)")
    p.add_argument("--labels", nargs="+", default=None, help="titles, one per run (default: directory names)")
    p.add_argument("--smooth", type=int, default=20, help="rollouts in the rolling mean")
    p.add_argument("--out", type=Path, required=True, help="PNG to write")
    args = p.parse_args(argv)
    if args.labels is not None and len(args.labels) != len(args.runs):
        p.error(f"{len(args.runs)} runs need {len(args.runs)} labels, got {len(args.labels)}")
    if args.smooth < 1:
        p.error("--smooth must be >= 1")
    try:
        plot_runs(args.runs, args.labels, args.smooth, args.out)
    except (FileNotFoundError, ValueError, ImportError) as exc:  # ImportError: matplotlib missing
        p.error(str(exc))
    except OSError as exc:  # the PNG could not be written (a full disk): the previous one is intact
        print(f"plot_curves.py: error: could not write {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
