"""The callbacks of a MaskablePPO run: checkpoints that join the opponent pool, the outcomes logged per
rollout, and, without a progress bar, a line per rollout on stdout."""

from __future__ import annotations

import argparse
import importlib
import time
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires
from concordia_env.training.selfplay import FrozenPolicy

from .checkpoints import save_model
from .evaluation import evaluation_callback


def build_callbacks(args: argparse.Namespace, out: Path, vec_env: Any, resumed_at: int | None = None) -> list[Any]:
    """The pool's checkpoints, the outcomes logged per rollout and the periodic evaluation."""
    return [pool_checkpoint(args, out, vec_env), outcomes(vec_env), evaluation_callback(args, out, resumed_at)]


def pool_checkpoint(args: argparse.Namespace, out: Path, vec_env: Any) -> Any:
    """Every ``--checkpoint-every`` steps: save a checkpoint and add it to every env's pool."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.callbacks import BaseCallback

    class PoolCheckpoint(BaseCallback):
        """Every ``--checkpoint-every`` steps: save a checkpoint and add it to every env's pool."""

        def __init__(self) -> None:
            super().__init__()
            self.next_at = 0

        def _on_training_start(self) -> None:  # (num_timesteps is only known from here on a resume)
            self.next_at = (self.num_timesteps // args.checkpoint_every + 1) * args.checkpoint_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_at:
                self.next_at += args.checkpoint_every
                path = save_model(self.model, out / "checkpoints" / f"step_{self.num_timesteps}.zip")
                vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(self.model.policy, path.stem))
            return True

    return PoolCheckpoint()


def outcomes(vec_env: Any) -> Any:
    """Logs, per rollout, the learner's win rate and VP against each opponent kind."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.callbacks import BaseCallback

    class Outcomes(BaseCallback):
        """Logs, per rollout, the learner's win rate and VP against each opponent kind."""

        def __init__(self) -> None:
            super().__init__()
            self.games: list[dict] = []

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "opponent" in info:
                    self.games.append(info)
            return True

        def _on_rollout_end(self) -> None:
            for kind in ("random", "heuristic", "self"):
                games = [g for g in self.games if g["opponent"] == kind]
                if games:
                    self.logger.record(f"selfplay/win_rate_vs_{kind}", float(np.mean([g["is_success"] for g in games])))
                    self.logger.record(f"selfplay/vp_vs_{kind}", float(np.mean([g["vp"] for g in games])))
                    self.logger.record(f"selfplay/games_vs_{kind}", len(games))
            self.logger.record("selfplay/snapshots", int(vec_env.env_method("num_snapshots", indices=0)[0]))
            self.games = []

    return Outcomes()


# ------------------------------------------------------------ progress without a progress bar
def progress_bar_problem() -> str | None:
    """Why sb3's progress bar cannot be shown (``None``: it can): it needs ``rich`` and ``tqdm``,
    which the ``train`` extra installs but an install of torch and sb3-contrib alone may lack."""
    missing = []
    for name in ("rich", "tqdm"):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return None
    return f"no progress bar: it needs {' and '.join(missing)} (pip install {' '.join(missing)}, or the train extra)"


def format_duration(seconds: float) -> str:
    """``"1 h 02 min"``, ``"3 min 05 s"``, ``"42 s"``: short enough for a line per rollout."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def rollout_line(step: int, total: int, started_at: int, elapsed: float, wins: dict[str, tuple[int, int]]) -> str:
    """The line printed per rollout without a progress bar: steps, speed, time left, win rates.

    ``started_at`` is the step count this process started training from (a resume's checkpoint), ``wins`` maps an
    opponent kind to (games won, games played) in this rollout."""
    done = step - started_at
    speed = done / elapsed if elapsed > 0 else 0.0
    left = format_duration((total - step) / speed) if speed > 0 and step < total else "0 s"
    text = (f"step {step:,}/{total:,} ({100 * step / total:.0f}%), {speed:,.0f} steps/s, "
            f"{format_duration(elapsed)} elapsed, about {left} left")
    rates = [f"{kind} {won}/{played}" for kind, (won, played) in wins.items() if played]
    return text + (f"; wins this rollout vs {', '.join(rates)}" if rates else "")


def rollout_lines(total: int) -> Any:
    """A callback printing :func:`rollout_line` on stdout at the end of every rollout (flushed, so a
    log file or a pipe sees it at once)."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.callbacks import BaseCallback

    class RolloutLines(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.start, self.started_at = 0.0, 0
            self.wins: dict[str, list[int]] = {}

        def _on_training_start(self) -> None:
            self.start, self.started_at = time.time(), int(self.num_timesteps)

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "opponent" in info:
                    won_played = self.wins.setdefault(info["opponent"], [0, 0])
                    won_played[0] += int(bool(info.get("is_success")))
                    won_played[1] += 1
            return True

        def _on_rollout_end(self) -> None:
            wins = {kind: (w[0], w[1]) for kind, w in sorted(self.wins.items())}
            print(rollout_line(int(self.num_timesteps), total, self.started_at, time.time() - self.start, wins),
                  flush=True)
            self.wins = {}

    return RolloutLines()
