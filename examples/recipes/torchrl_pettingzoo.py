"""TorchRL on the PettingZoo AEC env: ``PettingZooWrapper`` (turn-based, ``use_mask=True``) and masked PPO.

What it shows:

* ``torchrl.envs.PettingZooWrapper`` takes ``concordia_env.env(...)`` unchanged. With every seat in one
  group (``MarlGroupMapType.ALL_IN_ONE_GROUP``) a step's tensordict holds, per seat, its observation,
  its legal-action mask (``("agents", "action_mask")``; TorchRL fills the rows of seats that are not
  deciding with ``True``), ``("agents", "mask")`` (True for the one seat that decides) and its reward.
* The policy is a ``ProbabilisticActor`` with ``MaskedCategorical``, so only legal actions are sampled;
  the env applies the deciding seat's action and ignores the others'.
* The step that ends a game pays every seat its final reward (``("next", "agents", "reward")``) and
  marks every seat done: nothing is lost for the seats that did not make the last move. The script
  checks this for every game it finishes.
* A few PPO updates (``ClipPPOLoss``) with one network shared by all seats: advantages by GAE per seat
  over the whole trajectory (each seat's value of its own view), then the loss on the deciding seat's
  rows only (``("agents", "mask")``), since the other rows' actions were never played.

Run ``python examples/recipes/torchrl_pettingzoo.py`` (tiny defaults, a few seconds) or, e.g.,
``--map imperium --players 4 --frames 200000 --frames-per-batch 4000``. Tested with torchrl 0.14.1,
tensordict 0.14.3 and torch 2.13.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from tensordict.nn import InteractionType, TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.envs.utils import MarlGroupMapType
from torchrl.modules import MaskedCategorical, ProbabilisticActor
from torchrl.objectives import ClipPPOLoss, ValueEstimators

import concordia_env
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.data import load_map

#: where the wrapper puts each seat's observation vector (the AEC observation's "observation" entry)
OBS = ("agents", "observation", "observation")
ACTION_MASK = ("agents", "action_mask")
DECIDING = ("agents", "mask")


class Scale(nn.Module):
    """The observation scaling of the project's networks: bounded features / bound, unbounded log1p.

    Raw observations hold coins and VP without a bound; an MLP learns poorly from them."""

    def __init__(self, high: np.ndarray) -> None:
        super().__init__()
        scale, unbounded = observation_scaling(high)
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.where(self.get_buffer("unbounded"), torch.log1p(x.clamp(min=0.0)), x * self.get_buffer("scale"))


def make_env(map_name: str, players: int, seed: int) -> PettingZooWrapper:
    """The AEC env in TorchRL: all seats in one group ``"agents"``, turn-based (``use_mask=True``)."""
    with warnings.catch_warnings():  # the wrapper warns that AEC envs need use_mask, which we set
        warnings.simplefilter("ignore", UserWarning)
        aec = concordia_env.env(map_name=map_name, num_players=players, reward="win")
        return PettingZooWrapper(env=aec, use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP,
                                 categorical_actions=True, seed=seed)


def mlp(high: np.ndarray, hidden: int, out: int, out_gain: float = 1.0) -> nn.Module:
    """Scale, one tanh hidden layer, a linear head whose initial weights are multiplied by ``out_gain``."""
    head = nn.Linear(hidden, out)
    with torch.no_grad():
        head.weight.mul_(out_gain)
        head.bias.zero_()
    return nn.Sequential(Scale(high), nn.Linear(len(high), hidden), nn.Tanh(), head)


def make_actor_critic(env: PettingZooWrapper, hidden: int) -> tuple[ProbabilisticActor, TensorDictModule]:
    """One actor and one critic shared by every seat; each seat is evaluated on its own observation."""
    high = env.observation_spec[OBS].space.high[0].numpy()
    n_actions = int(env.full_action_spec["agents", "action"].space.n)
    # a near-uniform initial policy (small head), as is usual for PPO
    logits = TensorDictModule(mlp(high, hidden, n_actions, out_gain=0.01), in_keys=[OBS],
                              out_keys=[("agents", "logits")])
    actor = ProbabilisticActor(logits, in_keys={"logits": ("agents", "logits"), "mask": ACTION_MASK},
                               out_keys=[("agents", "action")], distribution_class=MaskedCategorical,
                               return_log_prob=True, default_interaction_type=InteractionType.RANDOM)
    critic = TensorDictModule(mlp(high, hidden, 1), in_keys=[OBS], out_keys=[("agents", "state_value")])
    return actor, critic


def make_loss(actor: ProbabilisticActor, critic: TensorDictModule, gamma: float, lmbda: float) -> ClipPPOLoss:
    loss = ClipPPOLoss(actor, critic, clip_epsilon=0.2, entropy_coeff=0.01, normalize_advantage=True)
    loss.set_keys(reward=("agents", "reward"), action=("agents", "action"), value=("agents", "state_value"),
                  done=("agents", "done"), terminated=("agents", "terminated"),
                  advantage=("agents", "advantage"), value_target=("agents", "value_target"),
                  sample_log_prob=("agents", "action_log_prob"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=gamma, lmbda=lmbda)
    return loss


def deciding_rows(data: TensorDictBase) -> TensorDict:
    """The rows of the seat that decided at each step, as a batch of shape (steps,).

    The wrapper samples an action for every seat, but the env plays only the deciding seat's; the
    loss must not learn from the others."""
    rows = data["agents"][data[DECIDING]]
    return TensorDict({"agents": rows}, batch_size=rows.batch_size)


def final_rewards(data: TensorDictBase) -> list[np.ndarray]:
    """Every seat's reward on each step that ended a game (one array per finished game; a game
    truncated by ``max_turns`` pays nobody and is left out)."""
    ended = data["next", "terminated"].squeeze(-1)
    return [r.squeeze(-1).numpy() for r in data["next", "agents", "reward"][ended]]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--map", default="italia", choices=["italia", "imperium"])
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--frames", type=int, default=2000, help="env steps (decisions) in all")
    p.add_argument("--frames-per-batch", type=int, default=500)
    p.add_argument("--epochs", type=int, default=2, help="PPO passes over each batch")
    p.add_argument("--minibatch", type=int, default=250)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=1.0, help="the game pays only at its end")
    p.add_argument("--lmbda", type=float, default=0.95)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1,
                   help="batch-1 forward passes are slower with more threads on a busy machine")
    args = p.parse_args(argv)
    if args.players not in load_map(args.map).players:
        p.error(f"--players {args.players}: {args.map} is played by {list(load_map(args.map).players)} players")
    for name in ("frames", "frames_per_batch", "epochs", "minibatch", "hidden", "torch_threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def update(loss: ClipPPOLoss, optimiser: torch.optim.Optimizer, data: TensorDictBase, epochs: int,
           minibatch: int) -> float:
    """PPO epochs over the deciding rows of one batch; returns the last minibatch's total loss."""
    with torch.no_grad():
        loss.value_estimator(data, params=loss.critic_network_params, target_params=loss.target_critic_network_params)
    rows = deciding_rows(data)
    total = torch.zeros(())
    for _ in range(epochs):
        for index in torch.randperm(rows.shape[0]).split(minibatch):
            out = loss(rows[index])
            total = out["loss_objective"] + out["loss_critic"] + out["loss_entropy"]
            optimiser.zero_grad()
            total.backward()
            nn.utils.clip_grad_norm_(loss.parameters(), 1.0)
            optimiser.step()
    return float(total.detach())


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the recipe; print and return its figures."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    env = make_env(args.map, args.players, args.seed)
    actor, critic = make_actor_critic(env, args.hidden)
    loss = make_loss(actor, critic, args.gamma, args.lmbda)
    optimiser = torch.optim.Adam(loss.parameters(), lr=args.lr)
    collector = Collector(env, actor, frames_per_batch=args.frames_per_batch, total_frames=args.frames,
                          auto_register_policy_transforms=False)  # (no recurrent module to prime)
    finals: list[np.ndarray] = []
    frames, env_time, last_loss = 0, 0.0, float("nan")
    start = time.perf_counter()
    for data in collector:  # the collector resets a finished game itself
        env_time += time.perf_counter() - start
        frames += data.numel()
        finals += final_rewards(data)
        last_loss = update(loss, optimiser, data, args.epochs, args.minibatch)
        collector.update_policy_weights_()
        start = time.perf_counter()
    collector.shutdown()
    # the "win" reward pays every seat something (+1, or -1/(players-1)), summing to 0
    every_seat = bool(finals) and all(np.all(r != 0) and abs(float(r.sum())) < 1e-6 for r in finals)
    figures = {"frames": frames, "steps_per_s": frames / env_time, "games_finished": len(finals),
               "every_seat_got_its_final_reward": every_seat,
               "final_rewards": [r.tolist() for r in finals], "last_loss": last_loss}
    print(f"{frames} env steps, {figures['steps_per_s']:.0f} steps/s collecting (policy included)")
    print(f"{len(finals)} games finished; every seat got its final reward on the last step: {every_seat}")
    for r in finals:
        print("  final rewards by seat:", np.round(r, 3).tolist())
    print(f"last PPO loss {last_loss:.4f}")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
