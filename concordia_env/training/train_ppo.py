"""Train one MaskablePPO policy for a map that plays any seat of any player count the map allows.

Example (the command behind the released Imperium policy is in docs/training.md)::

    python -m concordia_env.training.train_ppo --map imperium --total-steps 200000 --out runs/imperium

How it trains
-------------
Every environment is an :class:`concordia_env.training.selfplay.SingleLearnerEnv`: the learner
takes one seat of a game (random seat and player count per episode unless
``--players`` / ``--seat`` fix them); the other seats are played inside
``step()`` by the opponent pool (``--opponents``: random, heuristic, and frozen
past checkpoints of the learner), so the learner always receives its own
end-of-game reward. ``--n-envs`` such environments are stepped as one
``DummyVecEnv`` (``--vec subproc``: one process each); sb3-contrib's
``MaskablePPO`` asks them for ``action_masks()`` and never samples an illegal
move.

What a run writes (``--out DIR``)
---------------------------------
* ``config.json``: every argument, and the versions the run used;
* ``checkpoints/step_<N>.zip`` every ``--checkpoint-every`` steps; each checkpoint
  also joins the opponent pool as a frozen ``"self"`` opponent;
* ``eval/``: ``MaskableEvalCallback`` results against the HeuristicAgent
  (``evaluations.npz``) and ``best_model.zip``;
* ``logs/``: TensorBoard events and ``progress.csv`` (learning curve: reward,
  win rates against each opponent kind in training, evaluation win rate);
* ``final.zip`` (full model, to resume) and ``policy.zip`` (the same policy with
  the optimizer state dropped: what ``--release`` copies and ``PolicyAgent`` loads).

``--release X.zip`` copies ``policy.zip`` to ``X.zip`` and writes its actor beside it
as plain numpy weights, ``X.npz`` + ``X.json`` (what the ``ppo`` agent plays without
torch; :mod:`concordia_env.training.export_policy` makes the same pair from any zip).

``--resume CHECKPOINT.zip`` continues a run: the model, its optimizer and step
count come from the file, the opponent pool is refilled from the run's newest
checkpoints, and logs append to the same directory.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import shutil
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.policy import TRAIN_EXTRA_INSTALL, moved_class_objects  # torch is imported lazily there
from ..data import MAP_NAMES
from ..rewards import REWARD_MODES
from .selfplay import TRAINING_MAX_TURNS, FrozenPolicy, OpponentPool, SingleLearnerEnv, parse_weights

DEFAULT_OPPONENTS = "random=0.4,heuristic=0.1,self=0.5"


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value


def int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in text.replace("-", ",").split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if "-" in text:  # a range: 2-5
        if len(values) != 2 or values[0] > values[1]:
            raise argparse.ArgumentTypeError(f"{text!r} is not a range like 2-5")
        values = list(range(values[0], values[1] + 1))
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def opponent_weights(text: str) -> str:
    try:
        parse_weights(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m concordia_env.training.train_ppo", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("game and opponents")
    g.add_argument("--map", required=True, choices=MAP_NAMES, help="board to train on")
    g.add_argument("--players", type=int_list, default=None,
                   help="player counts drawn per episode, e.g. 2,3 or 2-4 (default: all the map allows)")
    g.add_argument("--seat", type=int, default=None, help="fix the learner's seat (default: random per episode)")
    g.add_argument("--opponents", type=opponent_weights, default=DEFAULT_OPPONENTS,
                   help="weights of the opponent kinds random, heuristic, self (frozen checkpoints)")
    g.add_argument("--pool-size", type=positive_int, default=10, help="frozen checkpoints kept as opponents")
    g.add_argument("--reward", choices=REWARD_MODES, default="rank", help="end-of-game reward")
    g.add_argument("--shaping", type=float, default=1.0,
                   help="weight of the potential-based VP-lead shaping (0: terminal reward only)")
    g.add_argument("--max-turns", type=int, default=TRAINING_MAX_TURNS, help="truncate games after this many card plays")

    g = p.add_argument_group("run")
    g.add_argument("--total-steps", type=positive_int, default=1_000_000, help="learner decisions to train for")
    g.add_argument("--out", type=Path, default=None, help="run directory (default: runs/<map>-seed<seed>)")
    g.add_argument("--seed", type=int, default=0, help="seeds torch, the environments and the opponents")
    g.add_argument("--n-envs", type=positive_int, default=8, help="environments stepped together")
    g.add_argument("--vec", choices=("dummy", "subproc"), default="dummy",
                   help="dummy: all envs in this process; subproc: one process per env")
    g.add_argument("--checkpoint-every", type=positive_int, default=100_000,
                   help="steps between checkpoints (each joins the opponent pool)")
    g.add_argument("--eval-every", type=positive_int, default=100_000, help="steps between evaluations")
    g.add_argument("--eval-episodes", type=positive_int, default=20,
                   help="games per evaluation against the HeuristicAgent")
    g.add_argument("--resume", type=Path, default=None, help="checkpoint .zip to continue from")
    g.add_argument("--release", type=Path, default=None,
                   help="also copy the final policy here (X.zip) and write its numpy export beside it "
                        "(X.npz + X.json, what the ppo agent plays), e.g. training/release/ppo_imperium.zip")
    g.add_argument("--torch-threads", type=positive_int, default=1, help="torch CPU threads")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g.add_argument("--verbose", type=int, default=0, choices=(0, 1, 2), help="sb3 verbosity")

    g = p.add_argument_group("MaskablePPO hyperparameters")
    g.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    g.add_argument("--n-steps", type=positive_int, default=512, help="rollout length per env")
    g.add_argument("--batch-size", type=positive_int, default=512, help="minibatch size")
    g.add_argument("--n-epochs", type=positive_int, default=4, help="passes over each rollout")
    g.add_argument("--gamma", type=float, default=0.995, help="discount")
    g.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda")
    g.add_argument("--clip-range", type=float, default=0.2, help="PPO clip range")
    g.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    g.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight")
    g.add_argument("--net-arch", type=int_list, default=[128, 128],
                   help="hidden layer sizes of the policy and of the value MLP")
    return p


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Errors the argument types cannot catch, reported like argparse's own."""
    from concordia_env.data import load_map

    allowed = list(load_map(args.map).players)
    if args.players is not None and not set(args.players) <= set(allowed):
        parser.error(f"--players {args.players}: {args.map} is played by {allowed} players")
    counts = args.players or allowed
    if args.seat is not None and not 0 <= args.seat < min(counts):
        parser.error(f"--seat {args.seat} does not exist in a {min(counts)}-player game")
    if args.shaping < 0:
        parser.error("--shaping must be >= 0")
    if args.max_turns < 0:
        parser.error("--max-turns must be >= 0")
    if args.n_steps * args.n_envs < args.batch_size:
        parser.error(f"--batch-size {args.batch_size} exceeds a rollout of "
                     f"--n-steps x --n-envs = {args.n_steps * args.n_envs} steps")
    if args.resume is not None and not args.resume.is_file():
        parser.error(f"--resume {args.resume}: no such file")
    for name in ("lr", "gamma", "gae_lambda", "clip_range"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0")


def make_env(args: argparse.Namespace, opponents: str, num_players: list[int] | None = None) -> SingleLearnerEnv:
    return SingleLearnerEnv(args.map, num_players=num_players or args.players, learner_seat=args.seat,
                            opponents=OpponentPool(opponents, args.pool_size), reward=args.reward,
                            shaping=args.shaping, max_turns=args.max_turns)


def _env_factory(args: argparse.Namespace, opponents: str):
    from stable_baselines3.common.monitor import Monitor

    def build() -> Any:
        return Monitor(make_env(args, opponents), info_keywords=("is_success", "opponent", "num_players"))

    return build


def slim_save(model: Any, path: Path) -> Path:
    """Save ``model`` without its optimizer state (Adam's moments triple the file and
    inference never uses them); the file loads with ``MaskablePPO.load`` as usual."""
    policy = model.policy
    kept = policy.optimizer
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=0.0, **policy.optimizer_kwargs)
    try:
        model.save(path)
    finally:
        policy.optimizer = kept
    return path.with_suffix(".zip")


def build_callbacks(args: argparse.Namespace, out: Path, vec_env: Any) -> list[Any]:
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

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
                path = out / "checkpoints" / f"step_{self.num_timesteps}"
                self.model.save(path)
                vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(self.model.policy, path.name))
            return True

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

    # one evaluation env in this process whatever --vec is: sb3 warns about the mismatch, harmlessly
    warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
    eval_env = DummyVecEnv([_env_factory(args, "heuristic=1")])
    eval_env.seed(args.seed + 10_000)  # episodes of their own, the same in every run with this seed
    evaluation = MaskableEvalCallback(
        eval_env, n_eval_episodes=args.eval_episodes, eval_freq=max(args.eval_every // args.n_envs, 1),
        log_path=str(out / "eval"), best_model_save_path=str(out / "eval"), deterministic=True, verbose=0)
    return [PoolCheckpoint(), Outcomes(), evaluation]


def refill_pool(out: Path, vec_env: Any, pool_size: int, algo: Any) -> int:
    """Load the run's newest ``pool_size`` checkpoints into the opponent pools (on resume)."""
    ckpts = sorted((out / "checkpoints").glob("step_*.zip"), key=lambda p: int(p.stem.split("_")[1]))
    for path in ckpts[-pool_size:]:
        model = algo.load(path, device="cpu", custom_objects=moved_class_objects(path))
        vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(model.policy, path.stem))
    return len(ckpts[-pool_size:])


def versions() -> dict[str, str]:
    import gymnasium
    import sb3_contrib
    import stable_baselines3
    import torch

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
            "gymnasium": gymnasium.__version__, "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__, "platform": platform.platform()}


def train(args: argparse.Namespace) -> Path:
    """Run the training ``args`` describe; returns the path of the slim final policy."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    from .nets import ObservationScaler

    torch.set_num_threads(args.torch_threads)
    out = args.out or Path("runs") / f"{args.map}-seed{args.seed}"
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "argv"}
    config["command"] = shlex.join(["python", "-m", __spec__.name if __spec__ else "concordia_env.training.train_ppo", *args.argv])
    config["versions"] = versions()
    (out / ("config.json" if args.resume is None else f"config-resume-{int(time.time())}.json")).write_text(
        json.dumps(config, indent=2) + "\n")

    factories = [_env_factory(args, args.opponents) for _ in range(args.n_envs)]
    vec_env = SubprocVecEnv(factories) if args.vec == "subproc" else DummyVecEnv(factories)
    if args.resume is not None:
        # (a zip of the earlier layout names its features extractor agents.nets.ObservationScaler)
        model = MaskablePPO.load(args.resume, env=vec_env, device="cpu", custom_objects=moved_class_objects(args.resume))
        model.set_random_seed(args.seed)
        refill_pool(out, vec_env, args.pool_size, MaskablePPO)
    else:
        model = MaskablePPO(
            "MlpPolicy", vec_env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
            n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
            ent_coef=args.ent_coef, vf_coef=args.vf_coef, seed=args.seed, device="cpu", verbose=args.verbose,
            policy_kwargs={"features_extractor_class": ObservationScaler,
                           "net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}})
        # the untrained policy is the first "self" opponent, so the self weight is never idle
        vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(model.policy, "step_0"))
    vec_env.seed(args.seed)
    formats = ["csv", "tensorboard"] + (["stdout"] if args.verbose else [])
    model.set_logger(configure(str(out / "logs"), formats))
    start = time.time()
    model.learn(total_timesteps=args.total_steps, callback=build_callbacks(args, out, vec_env),
                progress_bar=not args.no_progress, reset_num_timesteps=args.resume is None)
    model.save(out / "final")
    policy_path = slim_save(model, out / "policy")
    (out / "wall_time.json").write_text(json.dumps(
        {"seconds": round(time.time() - start, 1), "timesteps": int(model.num_timesteps)}) + "\n")
    vec_env.close()
    if args.release is not None:
        release(model, policy_path, args.release, args.map)
    return policy_path


def release_stem(release: Path) -> Path:
    """``X`` for ``--release X.zip`` (or ``X``): the numpy pair is ``X.npz`` + ``X.json``."""
    return release.with_suffix("") if release.suffix == ".zip" else release


def release(model: Any, policy_path: Path, target: Path, map_name: str) -> tuple[Path, Path]:
    """Copy the slim ``policy_path`` to ``target`` and export the actor beside it as numpy
    weights (checked against the torch model); returns the ``.npz`` and ``.json`` paths."""
    from .export_policy import export_model

    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(policy_path, target)
    return export_model(model, release_stem(target), map_name=map_name, source=target)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    check_args(args, parser)
    try:
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        parser.error(f"training needs the train extra ({exc}): {TRAIN_EXTRA_INSTALL}")
    path = train(args)
    released = ""
    if args.release:
        stem = release_stem(args.release)
        released = f", {args.release}, {stem}.npz and {stem}.json"
    print(f"policy written to {path}{released}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
