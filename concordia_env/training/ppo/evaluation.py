"""The periodic evaluation of a MaskablePPO run against the HeuristicAgent (``eval/``)."""

from __future__ import annotations

import argparse
import io
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

from .checkpoints import save_model, write_file
from .envs import env_factory
from .logs import read_evaluations


def evaluation_callback(args: argparse.Namespace, out: Path, resumed_at: int | None) -> Any:
    """The periodic evaluation against the HeuristicAgent (``eval/``)."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
        from stable_baselines3.common.vec_env import DummyVecEnv

    folder = out / "eval"

    class Evaluation(MaskableEvalCallback):
        """``MaskableEvalCallback`` writing ``evaluations.npz`` and ``best_model.zip`` atomically (sb3
        writes both in place), and keeping, on a resume, the evaluations made up to the resumed step
        (sb3 would start the file afresh) and the best mean reward among them."""

        def __init__(self, eval_env: Any) -> None:
            super().__init__(eval_env, n_eval_episodes=args.eval_episodes,
                             eval_freq=max(args.eval_every // args.n_envs, 1), log_path=None,
                             best_model_save_path=None, deterministic=True, verbose=0)
            if resumed_at is not None:
                kept = read_evaluations(folder / "evaluations.npz", resumed_at)
                self.evaluations_timesteps, self.evaluations_results = kept["timesteps"], kept["results"]
                self.evaluations_length, self.evaluations_successes = kept["ep_lengths"], kept["successes"]
                if self.evaluations_results:
                    self.best_mean_reward = max(float(np.mean(r)) for r in self.evaluations_results)

        def _on_step(self) -> bool:
            buffer = io.BytesIO()
            self.log_path = buffer  # type: ignore[assignment]  # sb3 hands it to np.savez, which takes a file
            best = self.best_mean_reward
            try:
                go_on = super()._on_step()
            finally:
                self.log_path = None
            if buffer.getvalue():
                write_file(folder / "evaluations.npz", buffer.getvalue())
            if self.best_mean_reward > best:
                save_model(self.model, folder / "best_model.zip")
            return go_on

    # one evaluation env in this process whatever --vec is: sb3 warns about the mismatch, harmlessly
    warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
    eval_env = DummyVecEnv([env_factory(args, "heuristic=1")])
    eval_env.seed(args.seed + 10_000)  # episodes of their own, the same in every run with this seed
    return Evaluation(eval_env)
