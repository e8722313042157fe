"""Multi-agent PPO with action masking on RLlib: one shared policy for every seat.

(Moved here from ``concordia_env/training/train_rllib.py``, whose command still works.)

Example (a local Ray instance on this machine)::

    python -m concordia_env.training.ppo.rllib --map italia --players 2 --iterations 50 \\
        --env-runners 2 --out runs/rllib_italia

and on a Ray cluster (``ray start --head --port 6379`` on the head machine, ``ray start
--address HEAD:6379`` on every other machine, the ``rllib`` extra installed on all)::

    python -m concordia_env.training.ppo.rllib --address HEAD:6379 --env-runners 32 ...

How it trains
-------------
The env is :class:`concordia_env.integrations.rllib.ConcordiaMultiAgentEnv` (the AEC env
with RLlib's observation keys, the networks' observation scaling, and every seat's terminal
reward); all seats map to one policy (self-play), whose module is RLlib's action-masking PPO
module of the new API stack (``ActionMaskingTorchRLModule``): illegal actions get a logit of
``FLOAT_MIN`` and are never sampled. Sampling scales with ``--env-runners`` (remote env runner
actors, one CPU each; 0 samples in this process) and ``--envs-per-runner``; the learner runs
in this process.

What a run writes (``--out DIR``)
---------------------------------
* ``config.json``: every argument and the Ray version;
* ``progress.jsonl``: one line per iteration (time, env steps, episodes, mean episode return
  of the shared policy and of each seat, policy loss and entropy, where RLlib reports them);
* ``checkpoint/``: the algorithm (``Algorithm.from_checkpoint`` restores it), written every
  ``--checkpoint-every`` iterations and at the end (also on Ctrl-C);
* ``policy.npz`` + ``policy.json``: the shared policy's actor as a numpy policy pair
  (:mod:`concordia_env.agents.numpy_policy`; checked against torch), which the tournament
  agent ``policy:path=DIR/policy.npz`` plays without Ray or torch;
* ``eval.json``: with ``--eval-games N`` (default ``4 x players``), a tournament through
  :func:`concordia_env.arena.tournament.run_tournament`: the trained policy in one seat against
  ``--eval-opponent`` in the others, seats rotated; its table is printed.

Bad arguments, a missing Ray and an unreachable ``--address`` are one ``error:`` line and
exit status 2; Ctrl-C saves a checkpoint and exits 130.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from concordia_env._internal.extras import install_hint, requires
from concordia_env.arguments import layer_widths, non_negative_int, positive_int
from concordia_env.data import MAP_NAMES
from concordia_env.game import check_setup_args
from concordia_env.rewards import REWARD_MODES

PROG = "python -m concordia_env.training.ppo.rllib"
#: what to install when Ray or RLlib is missing
INSTALL_HINT = install_hint("rllib")


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The parser of the command; ``prog`` is the command named in its usage and errors."""
    p = argparse.ArgumentParser(prog=prog,
                                description="Multi-agent PPO with action masking on RLlib (one shared policy).")
    p.add_argument("--map", default="italia", choices=MAP_NAMES, help="(default italia)")
    p.add_argument("--players", type=int, default=2, help="seats (Imperium 3-5, Italia 2-4; default 2)")
    p.add_argument("--reward", default="win", choices=REWARD_MODES, help="terminal reward (default win)")
    p.add_argument("--max-turns", type=positive_int, default=1000, help="truncate games after this many card plays "
                   "(default 1000)")
    p.add_argument("--iterations", type=positive_int, default=20, help="training iterations (default 20)")
    p.add_argument("--out", default="runs/rllib", help="run folder (default runs/rllib)")
    p.add_argument("--address", default=None, metavar="ADDR",
                   help="connect to the Ray cluster at HOST:PORT, ray://HOST:10001 or auto "
                        "(default: start Ray on this machine)")
    p.add_argument("--num-cpus", type=positive_int, default=None, help="CPUs of the local Ray instance (default all)")
    p.add_argument("--env-runners", type=non_negative_int, default=0,
                   help="remote env runners (one CPU each; 0 = sample in this process; default 0)")
    p.add_argument("--envs-per-runner", type=positive_int, default=1, help="envs per env runner (default 1)")
    p.add_argument("--batch-size", type=positive_int, default=4000, help="env steps per training batch (default 4000)")
    p.add_argument("--minibatch-size", type=positive_int, default=500, help="SGD minibatch (default 500)")
    p.add_argument("--epochs", type=positive_int, default=4, help="passes over each batch (default 4)")
    p.add_argument("--lr", type=float, default=3e-4, help="learning rate (default 3e-4)")
    p.add_argument("--hiddens", type=layer_widths, default=[64, 64], help="MLP layer sizes (default 64,64)")
    p.add_argument("--activation", default="tanh", choices=("tanh", "relu"), help="(default tanh)")
    p.add_argument("--seed", type=int, default=0, help="RLlib's seed and the evaluation's (default 0)")
    p.add_argument("--checkpoint-every", type=non_negative_int, default=10,
                   help="checkpoint every N iterations (0: at the end only; default 10)")
    p.add_argument("--eval-games", type=non_negative_int, default=None,
                   help="tournament games after training, a multiple of players (0: none; default 4 x players)")
    p.add_argument("--eval-opponent", default="random", metavar="SPEC",
                   help="agent spec of the other seats in the evaluation (default random)")
    p.add_argument("--eval-workers", type=positive_int, default=1, help="evaluation worker processes (default 1)")
    return p


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``parser.error`` (one line, exit 2) for arguments that argparse alone cannot check."""
    try:
        check_setup_args(args.map, args.players)
    except ValueError as exc:
        parser.error(f"--players {args.players}: {exc}")
    if args.minibatch_size > args.batch_size:
        parser.error(f"--minibatch-size {args.minibatch_size} exceeds --batch-size {args.batch_size}")
    if not args.lr > 0:
        parser.error(f"--lr must be > 0, got {args.lr}")
    if args.eval_games is None:
        args.eval_games = 4 * args.players
    if args.eval_games % args.players:
        parser.error(f"--eval-games {args.eval_games} must be a multiple of the {args.players} players")
    if args.eval_games:
        from concordia_env.agents.base import make_agent

        try:
            make_agent(args.eval_opponent)
        except (ValueError, FileNotFoundError) as exc:
            parser.error(f"--eval-opponent: {exc}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        parser.error(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        parser.error(f"--out {out}: cannot create it: {exc.strerror or exc}")


def env_config(args: argparse.Namespace) -> dict[str, Any]:
    """The ``env_config`` of the run's env."""
    return {"map_name": args.map, "num_players": args.players, "reward": args.reward, "max_turns": args.max_turns}


def build_config(args: argparse.Namespace) -> Any:
    """The RLlib ``PPOConfig`` the arguments describe (shared masked policy, new API stack)."""
    from concordia_env.integrations.rllib import masked_ppo_config

    config = masked_ppo_config(env_config(args), hiddens=args.hiddens, activation=args.activation)
    fragment = max(1, args.batch_size // max(1, args.env_runners) // args.envs_per_runner)
    return (config
            .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=args.envs_per_runner,
                         rollout_fragment_length=fragment, num_cpus_per_env_runner=1)
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=args.batch_size, minibatch_size=args.minibatch_size,
                      num_epochs=args.epochs, lr=args.lr)
            .debugging(seed=args.seed))


def _pick(result: dict[str, Any], *path: str) -> Any:
    for key in path:
        if not isinstance(result, dict) or key not in result:
            return None
        result = result[key]
    return result


def progress_row(iteration: int, seconds: float, result: dict[str, Any]) -> dict[str, Any]:
    """The ``progress.jsonl`` line of one iteration (None where RLlib reported nothing)."""
    from concordia_env.integrations.rllib import SHARED_POLICY

    def num(x: Any) -> float | None:
        try:
            return float(x)
        except (TypeError, ValueError):
            return None

    return {
        "iteration": iteration,
        "seconds": round(seconds, 3),
        "env_steps": num(_pick(result, "env_runners", "num_env_steps_sampled_lifetime")),
        "episodes": num(_pick(result, "env_runners", "num_episodes_lifetime")),
        "episode_len_mean": num(_pick(result, "env_runners", "episode_len_mean")),
        "return_mean": num(_pick(result, "env_runners", "module_episode_returns_mean", SHARED_POLICY)),
        "seat_returns_mean": {str(k): num(v) for k, v in
                              (_pick(result, "env_runners", "agent_episode_returns_mean") or {}).items()},
        "policy_loss": num(_pick(result, "learners", SHARED_POLICY, "policy_loss")),
        "entropy": num(_pick(result, "learners", SHARED_POLICY, "entropy")),
    }


def evaluate(args: argparse.Namespace, stem: Path) -> dict[str, Any]:
    """A tournament of the exported policy (one seat, rotated) against ``--eval-opponent``."""
    from concordia_env.arena.tournament import format_table, run_tournament

    specs = [f"policy:path={stem}.npz"] + [args.eval_opponent] * (args.players - 1)
    result = run_tournament(args.map, args.players, specs, args.eval_games, seed=args.seed,
                            workers=args.eval_workers, progress=False, max_turns=args.max_turns,
                            out=Path(args.out) / "eval.json", overwrite=True)
    print(format_table(result))
    return result


def train(args: argparse.Namespace) -> int:
    """Train, checkpoint, export and evaluate (see the module doc); the exit status."""
    with requires("rllib", "training with RLlib (concordia_env.training.ppo.rllib)", 'pip install "ray[rllib]"'):
        import ray

    from concordia_env.integrations.ray_backend import connect
    from concordia_env.integrations.rllib import SHARED_POLICY, ConcordiaMultiAgentEnv, export_numpy_policy

    out = Path(args.out)
    owns = connect(args.address, args.num_cpus)
    (out / "config.json").write_text(json.dumps({**vars(args), "ray": ray.__version__}, indent=2) + "\n")
    algo = build_config(args).build_algo()
    checkpoint = out / "checkpoint"
    start = time.perf_counter()
    status = 0
    try:
        with open(out / "progress.jsonl", "w") as log:
            for i in range(1, args.iterations + 1):
                result = algo.train()
                row = progress_row(i, time.perf_counter() - start, result)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(f"iteration {i}/{args.iterations}: {row['env_steps']} env steps, {row['episodes']} episodes, "
                      f"return {row['return_mean']}, {row['seconds']:.1f} s", flush=True)
                if args.checkpoint_every and i % args.checkpoint_every == 0 and i < args.iterations:
                    algo.save_to_path(str(checkpoint.resolve()))
    except KeyboardInterrupt:
        print("interrupted: saving a checkpoint", file=sys.stderr)
        status = 130
    algo.save_to_path(str(checkpoint.resolve()))
    print(f"checkpoint written to {checkpoint}")
    env = ConcordiaMultiAgentEnv(env_config(args))
    export_numpy_policy(algo.get_module(SHARED_POLICY), out / "policy", env)
    print(f"policy written to {out / 'policy'}.npz/.json")
    algo.stop()
    if owns:
        ray.shutdown()
    if status == 0 and args.eval_games:
        result = evaluate(args, out / "policy")
        print(f"evaluation written to {out / 'eval.json'} ({result['games']} games)")
    return status


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Train as the command line ``argv`` says; the exit status. ``prog`` is the command named in its messages."""
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    check_args(parser, args)
    try:
        import ray.rllib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        print(f"error: training with RLlib needs Ray with RLlib and torch ({exc}): {INSTALL_HINT}", file=sys.stderr)
        return 2
    from concordia_env.integrations.ray_backend import RayConnectionError

    try:
        return train(args)
    except RayConnectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
