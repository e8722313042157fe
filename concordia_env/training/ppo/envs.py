"""The environments of a MaskablePPO run: single-learner games behind sb3's ``Monitor``."""

from __future__ import annotations

import argparse
import signal
from collections.abc import Callable
from typing import Any

from concordia_env._internal.extras import requires
from concordia_env.training.selfplay import OpponentPool, SingleLearnerEnv


def make_env(args: argparse.Namespace, opponents: str, num_players: list[int] | None = None) -> SingleLearnerEnv:
    return SingleLearnerEnv(args.map, num_players=num_players or args.players, learner_seat=args.seat,
                            opponents=OpponentPool(opponents, args.pool_size), reward=args.reward,
                            shaping=args.shaping, max_turns=args.max_turns)


def env_factory(args: argparse.Namespace, opponents: str, worker: bool = False) -> Callable[[], Any]:
    """A function building one monitored env (what sb3's vector envs take); ``worker``: it runs in a
    ``SubprocVecEnv`` process, which leaves Ctrl-C to the trainer."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from stable_baselines3.common.monitor import Monitor

    def build() -> Any:
        if worker:  # a SubprocVecEnv process: Ctrl-C is the trainer's, which saves, then closes the workers
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return Monitor(make_env(args, opponents), info_keywords=("is_success", "opponent", "num_players"))

    return build
