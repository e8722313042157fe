"""The MaskablePPO run: environments and model made (or resumed), the run directory written, training up
to ``--total-steps``, the final files and the release (see the package doc)."""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires
from concordia_env.training.selfplay import FrozenPolicy

from .callbacks import build_callbacks, rollout_lines
from .checkpoints import (
    SaveError,
    claim_run_directory,
    refill_pool,
    resume_candidates,
    resume_model,
    run_directory,
    save_interrupted,
    save_model,
    slim_save,
    write_file,
)
from .envs import env_factory
from .logs import make_logger
from .settings import PROG


class Interrupted(Exception):
    """Ctrl-C during training; the message says what was saved."""


def versions() -> dict[str, str]:
    import gymnasium

    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        import sb3_contrib
        import stable_baselines3
        import torch

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
            "gymnasium": gymnasium.__version__, "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__, "platform": platform.platform()}


def write_config(args: argparse.Namespace, out: Path, prog: str = PROG) -> None:
    """``config.json`` (``config-resume-<time>.json`` on a resume): every argument, the command as run
    (``prog`` and the arguments) and the versions the run used."""
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
              if k not in ("argv", "progress_bar")}  # (progress_bar: derived, not an argument)
    config["command"] = shlex.join([*shlex.split(prog), *args.argv])
    config["versions"] = versions()
    path = out / ("config.json" if args.resume is None else f"config-resume-{int(time.time())}.json")
    write_file(path, (json.dumps(config, indent=2) + "\n").encode())


def new_model(args: argparse.Namespace, vec_env: Any) -> Any:
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from sb3_contrib import MaskablePPO

    from concordia_env.training.nets import ObservationScaler

    return MaskablePPO(
        "MlpPolicy", vec_env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
        ent_coef=args.ent_coef, vf_coef=args.vf_coef, seed=args.seed, device="cpu", verbose=args.verbose,
        policy_kwargs={"features_extractor_class": ObservationScaler,
                       "net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}})


def train(args: argparse.Namespace, prog: str = PROG) -> Path:
    """Run the training ``args`` describe; returns the path of the slim final policy. ``prog`` is the
    command ``config.json`` records.

    ``CheckpointError`` for a checkpoint that cannot be resumed (before anything is written),
    ``SaveError`` for a file that cannot be written (those written before stay intact),
    :class:`Interrupted` after Ctrl-C (a checkpoint of the moment saved)."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        import torch
        from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(args.torch_threads)
    out = run_directory(args)
    folder = claim_run_directory(args, out)
    candidates = resume_candidates(args.resume) if args.resume is not None else []
    subproc = args.vec == "subproc"
    factories = [env_factory(args, args.opponents, worker=subproc) for _ in range(args.n_envs)]
    vec_env = SubprocVecEnv(factories) if subproc else DummyVecEnv(factories)
    try:
        model, resumed_at = start_model(args, out, vec_env, candidates)
        vec_env.seed(args.seed)
        # the run really starts: only now is its directory made and written
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        folder.remove_temporaries()
        write_config(args, out, prog)
        model.set_logger(make_logger(args, out, resumed_at))
        try:
            return learn_and_save(args, out, model, vec_env, resumed_at)
        except KeyboardInterrupt:
            raise Interrupted(save_interrupted(model, out)) from None
    finally:
        try:
            vec_env.close()
        except Exception:  # noqa: BLE001 - a worker already gone: nothing left to close
            pass


def start_model(args: argparse.Namespace, out: Path, vec_env: Any, candidates: list[Path]) -> tuple[Any, int | None]:
    """The model to train and the step it was resumed at (``None``: a new model). Resumed: the first
    candidate that loads, its opponent pool refilled from the run's checkpoints; new: the untrained
    policy is the first ``"self"`` opponent, so the self weight is never idle."""
    if candidates:
        model = resume_model(candidates, vec_env, explicit=not args.resume.is_dir())
        model.set_random_seed(args.seed)
        refill_pool(out, vec_env, args.pool_size, until=model.num_timesteps)
        return model, int(model.num_timesteps)
    model = new_model(args, vec_env)
    vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(model.policy, "step_0"))
    return model, None


def learn_and_save(args: argparse.Namespace, out: Path, model: Any, vec_env: Any, resumed_at: int | None) -> Path:
    """Train up to ``--total-steps`` in all, then write ``final.zip``, ``policy.zip``,
    ``wall_time.json`` and the release."""
    start = time.time()
    remaining = args.total_steps - (resumed_at or 0)
    if remaining > 0:
        # main() decides whether sb3's bar can be shown; train() called on its own prints lines
        bar = bool(getattr(args, "progress_bar", False))
        callbacks = build_callbacks(args, out, vec_env, resumed_at)
        if not bar:
            callbacks.append(rollout_lines(args.total_steps))
        model.learn(total_timesteps=remaining, callback=callbacks, progress_bar=bar,
                    reset_num_timesteps=resumed_at is None)
    else:
        print(f"note: the checkpoint is at step {resumed_at}, --total-steps is {args.total_steps}: nothing to "
              f"train; writing the final files", file=sys.stderr)
    save_model(model, out / "final.zip")
    policy_path = slim_save(model, out / "policy.zip")
    wall = {"seconds": round(time.time() - start, 1), "timesteps": int(model.num_timesteps)}
    write_file(out / "wall_time.json", (json.dumps(wall) + "\n").encode())
    if args.release is not None:
        release(model, policy_path, args.release, args.map)
    return policy_path


def release_stem(release: Path) -> Path:
    """``X`` for ``--release X.zip`` (or ``X``): the numpy pair is ``X.npz`` + ``X.json``."""
    return release.with_suffix("") if release.suffix == ".zip" else release


def release(model: Any, policy_path: Path, target: Path, map_name: str) -> tuple[Path, Path]:
    """Copy the slim ``policy_path`` to ``target`` (atomically) and export the actor beside it as numpy
    weights (checked against the torch model); returns the ``.npz`` and ``.json`` paths."""
    from concordia_env.training.export_policy import export_model

    write_file(target, policy_path.read_bytes())
    try:
        return export_model(model, release_stem(target), map_name=map_name, source=target)
    except OSError as exc:
        raise SaveError(f"could not write the numpy export {release_stem(target)}.npz/.json: "
                        f"{exc.strerror or exc}") from None
