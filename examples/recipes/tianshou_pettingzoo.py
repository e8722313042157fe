"""Tianshou on the PettingZoo AEC env: ``PettingZooEnv``, the multi-agent dispatcher, a masked DQN learner.

What it shows:

* ``tianshou.env.PettingZooEnv`` takes ``concordia_env.env(...)`` unchanged: observations come as
  ``{"agent_id", "obs", "mask"}``, and every step returns the reward of every seat (a vector), so the
  step that ends a game carries every seat's final reward.
* ``MultiAgentOffPolicyAlgorithm`` gives each seat its own algorithm: a DQN learner in seat 0 (masked:
  ``DiscreteQLearningPolicy`` reads ``obs.mask``, for its greedy and its random moves) and Tianshou's
  masked random player (``MARLRandomDiscreteMaskedOffPolicyAlgorithm``) in the other seats.
* **The caveat it measures.** Tianshou hands each seat the transitions where that seat acted, with its
  column of the reward vector. A game ends on one seat's move; the other seats' final rewards sit in a
  transition that is not theirs, and DQN's n-step return reaches them only if that seat acted within
  ``--n-step`` steps of the end. The script counts, over the games it finishes, how many of the
  learner's final rewards reach one of its own n-step returns.
* ``--setup single`` trains the same DQN on the single-learner env (``gymnasium.make("concordia/Italia-v0")``,
  the other seats played inside ``step()``) instead: every episode ends on the learner's own step, so
  every final reward is its own. Prefer it for training one policy with Tianshou.

Run ``python examples/recipes/tianshou_pettingzoo.py`` (tiny defaults), or, e.g.,
``--setup single --steps 200000 --envs 8``. Tested with tianshou 2.0.1, pettingzoo 1.27, gymnasium 1.4.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import time
from collections.abc import Sequence
from typing import Any, cast

import gymnasium
import numpy as np
import torch
from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.utils.torch_utils import policy_within_training_step
from torch import nn

import concordia_env
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.data import load_map

LEARNER = "player_0"

# the collector summarises each step's reward vector (one entry per seat) and warns that it flattens
# it; this script reads the rewards per seat from the buffer instead
logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)


class QNet(nn.Module):
    """Q-values from a raw observation, scaled as the project's networks do (bounded features / bound,
    coins, VP and the turn counter log1p). Tianshou calls ``model(obs, state=..., info=...)``."""

    def __init__(self, high: np.ndarray, hidden: int, n_actions: int) -> None:
        super().__init__()
        scale, unbounded = observation_scaling(high)
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))
        self.net = nn.Sequential(nn.Linear(len(high), hidden), nn.ReLU(), nn.Linear(hidden, n_actions))

    def forward(self, obs: Any, state: Any = None, info: Any = None) -> tuple[torch.Tensor, Any]:
        x = torch.as_tensor(np.asarray(obs), dtype=torch.float32)
        x = torch.where(self.get_buffer("unbounded"), torch.log1p(x.clamp(min=0.0)), x * self.get_buffer("scale"))
        return self.net(x), state


class MaskInObservation(gymnasium.ObservationWrapper):
    """The single-learner env's observation as ``{"obs", "mask"}``, the form Tianshou's masked policies read."""

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.observation_space = gymnasium.spaces.Dict({
            "obs": env.observation_space,
            "mask": gymnasium.spaces.MultiBinary(int(cast(gymnasium.spaces.Discrete, env.action_space).n))})

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"obs": observation, "mask": self.env.get_wrapper_attr("action_masks")()}


def make_dqn(env: Any, hidden: int, lr: float, gamma: float, n_step: int) -> DQN:
    """A masked DQN for ``env``'s spaces: a Dict holding the observation Box under "observation"
    (PettingZoo) or "obs" (:class:`MaskInObservation`)."""
    spaces = env.observation_space.spaces
    high = spaces["observation" if "observation" in spaces else "obs"].high
    policy = DiscreteQLearningPolicy(model=QNet(high, hidden, int(env.action_space.n)),
                                     action_space=env.action_space, eps_training=1.0, eps_inference=0.0)
    return DQN(policy=policy, optim=AdamOptimizerFactory(lr=lr), gamma=gamma, n_step_return_horizon=n_step,
               target_update_freq=100)


def make_marl(args: argparse.Namespace) -> tuple[OffPolicyAlgorithm, DQN, DummyVectorEnv]:
    """(the algorithm, the learner, the envs): seat 0 learns (DQN), the others play random legal moves."""
    def make_env() -> PettingZooEnv:
        return PettingZooEnv(concordia_env.env(map_name=args.map, num_players=args.players))

    probe = make_env()
    learner = make_dqn(probe, args.hidden, args.lr, args.gamma, args.n_step)
    others = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=probe.action_space)
              for _ in range(args.players - 1)]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *others], env=probe)
    return algorithm, learner, DummyVectorEnv([make_env for _ in range(args.envs)])


def make_single(args: argparse.Namespace) -> tuple[OffPolicyAlgorithm, DQN, DummyVectorEnv]:
    """The learner (also the algorithm) in a random seat of each game, random opponents played inside
    ``step()``."""
    def make_env() -> gymnasium.Env:
        env_id = {"italia": "concordia/Italia-v0", "imperium": "concordia/Imperium-v0"}[args.map]
        return MaskInObservation(gymnasium.make(env_id, num_players=args.players, shaping=0.0, reward="win"))

    learner = make_dqn(make_env(), args.hidden, args.lr, args.gamma, args.n_step)
    return learner, learner, DummyVectorEnv([make_env for _ in range(args.envs)])


def game_ends(buffer: VectorReplayBuffer) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Every finished game in ``buffer``: (every seat's final reward, the seat of each of its steps).

    A game's steps are those of one env's sub-buffer, taken in time order; the seats are None in the
    single-learner setup (every step is the learner's). Games truncated by ``max_turns`` pay nobody
    and are left out, as is, in a full buffer, the oldest game, cut by the wrap."""
    games = []
    for env_buffer in buffer.buffers:
        order = env_buffer.sample_indices(0)  # time order, oldest first
        if len(order) == 0:
            continue
        seats = np.asarray(env_buffer.obs.agent_id)[order] if "agent_id" in env_buffer.obs.get_keys() else None
        terminated = np.asarray(env_buffer.terminated)[order]
        ends = np.flatnonzero(terminated | np.asarray(env_buffer.truncated)[order])
        starts = np.concatenate([[0], ends[:-1] + 1])
        full = len(env_buffer) == env_buffer.maxsize
        for start, end in list(zip(starts, ends))[1 if full else 0:]:
            if not terminated[end]:
                continue
            rewards = np.asarray(env_buffer.rew[order[end]], dtype=np.float64).reshape(-1)
            games.append((rewards, None if seats is None else seats[start:end + 1]))
    return games


def credited(games: list[tuple[np.ndarray, np.ndarray | None]], n_step: int) -> int:
    """How many of the learner's final rewards reach one of its own n-step returns.

    The final reward is on the game's last step; in the MARL setup that step belongs to whoever
    made the last move, and the learner's n-step return covers it only if the learner acted at
    most ``n_step - 1`` steps before it."""
    count = 0
    for _, seats in games:
        if seats is None:
            count += 1
            continue
        own = np.flatnonzero(seats == LEARNER)
        count += int(len(own) > 0 and len(seats) - 1 - own[-1] < n_step)
    return count


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--setup", choices=["marl", "single"], default="marl",
                   help="marl: PettingZooEnv and one algorithm per seat; single: the single-learner env")
    p.add_argument("--map", default="italia", choices=["italia", "imperium"])
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--steps", type=int, default=2400, help="env steps in all (every seat's moves in marl)")
    p.add_argument("--envs", type=int, default=2, help="envs stepped together (DummyVectorEnv)")
    p.add_argument("--collect", type=int, default=200, help="env steps per collection, then updates")
    p.add_argument("--updates", type=int, default=5, help="DQN gradient steps per collection")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--buffer", type=int, default=20000, help="replay buffer size (all envs)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--gamma", type=float, default=0.99)
    p.add_argument("--n-step", type=int, default=3, help="DQN's n-step return horizon")
    p.add_argument("--eps-start", type=float, default=1.0, help="epsilon-greedy exploration at the start")
    p.add_argument("--eps-end", type=float, default=0.05, help="... decayed linearly to this")
    p.add_argument("--eps-decay", type=float, default=0.5, help="... over this fraction of --steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.players not in load_map(args.map).players:
        p.error(f"--players {args.players}: {args.map} is played by {list(load_map(args.map).players)} players")
    for name in ("steps", "envs", "collect", "updates", "batch", "buffer", "hidden", "n_step", "torch_threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if not (0 <= args.eps_end <= 1 and 0 <= args.eps_start <= 1 and 0 < args.eps_decay <= 1):
        p.error("--eps-start and --eps-end must lie in [0, 1], --eps-decay in (0, 1]")
    return args


def within_training_step(algorithm: OffPolicyAlgorithm) -> contextlib.ExitStack:
    """Tianshou's ``policy_within_training_step`` for the policy and, in the MARL setup, every seat's
    policy. Tianshou 2.0.1's ``MultiAgentPolicy`` does not pass the flag on to the seats' policies,
    so without this the learner explores with ``eps_inference`` (here 0: greedy) while collecting."""
    stack = contextlib.ExitStack()
    stack.enter_context(policy_within_training_step(algorithm.policy))
    for policy in getattr(algorithm.policy, "policies", {}).values():
        stack.enter_context(policy_within_training_step(policy))
    return stack


def epsilon(args: argparse.Namespace, steps: int) -> float:
    """Linear decay: an untrained greedy Q-network repeats its favourite moves, and a game played so
    can last thousands of card plays where random play ends it in a few hundred."""
    done = min(1.0, steps / (args.eps_decay * args.steps))
    return args.eps_start + done * (args.eps_end - args.eps_start)


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the recipe; print and return its figures."""
    args = parse_args(argv)
    np.random.seed(args.seed)  # Tianshou's random player and exploration draw from numpy's global generator
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    algorithm, learner, envs = (make_marl if args.setup == "marl" else make_single)(args)
    envs.seed(args.seed)
    buffer = VectorReplayBuffer(args.buffer, len(envs))
    collector = Collector[CollectStats](algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    steps, env_time, losses = 0, 0.0, []
    with within_training_step(algorithm):
        while steps < args.steps:
            learner.policy.set_eps_training(epsilon(args, steps))
            start = time.perf_counter()
            steps += collector.collect(n_step=min(args.collect, args.steps - steps)).n_collected_steps
            env_time += time.perf_counter() - start
            for _ in range(args.updates):
                stats = algorithm.update(buffer=buffer, sample_size=args.batch)
                losses += [v for k, v in stats.get_loss_stats_dict().items() if k.endswith("loss")]
    games = game_ends(buffer)
    finals = [rewards for rewards, _ in games]
    every_seat = args.setup == "marl" and bool(finals) and all(np.all(r != 0) for r in finals)
    figures = {"setup": args.setup, "steps": steps, "steps_per_s": steps / env_time, "games_finished": len(games),
               "credited_1_step": credited(games, 1), "credited_n_step": credited(games, args.n_step),
               "every_seat_final_reward_in_the_last_step": every_seat,
               "learner_mean_final_reward": float(np.mean([r[0] for r in finals])) if finals else float("nan"),
               "last_loss": losses[-1] if losses else float("nan")}
    print(f"{args.setup}: {steps} env steps, {figures['steps_per_s']:.0f} steps/s collecting (policy included)")
    print(f"{len(games)} games finished; learner's final reward mean {figures['learner_mean_final_reward']:+.3f}")
    if args.setup == "marl":
        print(f"every seat's final reward in the last step's reward vector: {every_seat}")
    print(f"learner's final rewards reaching its own returns: {figures['credited_1_step']} of {len(games)} "
          f"with 1-step returns, {figures['credited_n_step']} of {len(games)} with {args.n_step}-step returns")
    print(f"last DQN loss {figures['last_loss']:.4f}")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
