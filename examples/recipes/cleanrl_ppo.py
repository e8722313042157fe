"""A CleanRL-style masked PPO in one file, over ``gymnasium.vector`` envs of the single-learner env.

What it shows:

* ``gymnasium.make("concordia/Italia-v0", ...)``: the learner takes one seat, random opponents play
  the others inside ``step()``, and every episode ends on the learner's own step with its own final
  reward (the ``"rank"`` reward plus the VP-lead shaping, as in ``concordia_env.training.ppo``).
* **The autoreset mode, set explicitly.** gymnasium 1.x vector envs default to ``NEXT_STEP``: the
  step that ends an episode returns its last observation, and the env resets on the *next* call,
  ignoring that call's action. The env's ``action_masks()`` is all zero once its episode is over, so
  a sampler asked for a legal move there has none (a masked softmax of nothing: NaN, or an error).
  With ``AutoresetMode.SAME_STEP`` the env resets inside the step that ends the episode, so the mask
  read after every step is the next decision's. The script asserts that no all-zero mask ever
  reaches the sampler.
* Masks come from ``envs.call("action_masks")`` (the vector env reaches through gymnasium's wrappers).
  Illegal logits are set to the dtype's minimum before the softmax, as in CleanRL's masked PPO variants.
* Truncated episodes (``max_turns``) are treated as ended, as CleanRL's PPO does.

Run ``python examples/recipes/cleanrl_ppo.py`` (1,024 steps, seconds), or, e.g.,
``--map imperium --players 4 --envs 8 --steps 1000000``. Tested with gymnasium 1.4 and torch 2.13.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import Any, cast

import gymnasium
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical

import concordia_env  # noqa: F401  (registers the gymnasium ids)
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.data import load_map

ENV_IDS = {"italia": "concordia/Italia-v0", "imperium": "concordia/Imperium-v0"}


class Agent(nn.Module):
    """Separate actor and critic MLPs on the scaled observation (bounded features / bound, the rest log1p)."""

    def __init__(self, high: np.ndarray, n_actions: int, hidden: int) -> None:
        super().__init__()
        scale, unbounded = observation_scaling(high)
        self.register_buffer("scale", torch.as_tensor(scale))
        self.register_buffer("unbounded", torch.as_tensor(unbounded))
        self.critic = nn.Sequential(self._layer(len(high), hidden), nn.Tanh(), self._layer(hidden, 1, 1.0))
        self.actor = nn.Sequential(self._layer(len(high), hidden), nn.Tanh(), self._layer(hidden, n_actions, 0.01))

    @staticmethod
    def _layer(n_in: int, n_out: int, gain: float = np.sqrt(2)) -> nn.Linear:
        layer = nn.Linear(n_in, n_out)
        nn.init.orthogonal_(layer.weight, gain)
        nn.init.zeros_(layer.bias)
        return layer

    def _scaled(self, obs: torch.Tensor) -> torch.Tensor:
        unbounded, scale = self.get_buffer("unbounded"), self.get_buffer("scale")
        return torch.where(unbounded, torch.log1p(obs.clamp(min=0.0)), obs * scale)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(self._scaled(obs)).squeeze(-1)

    def act(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(action, its log-probability, entropy, value); samples a legal action when none is given."""
        x = self._scaled(obs)
        logits = self.actor(x).masked_fill(~mask, torch.finfo(torch.float32).min)
        dist = Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x).squeeze(-1)


def make_envs(args: argparse.Namespace) -> gymnasium.vector.SyncVectorEnv:
    def make(i: int) -> Any:
        return lambda: gymnasium.make(ENV_IDS[args.map], num_players=args.players)
    return gymnasium.vector.SyncVectorEnv([make(i) for i in range(args.envs)],
                                          autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)


def legal_masks(envs: gymnasium.vector.SyncVectorEnv) -> torch.Tensor:
    """Every env's mask for its next decision; refuses an all-zero mask (see the module docstring)."""
    masks = np.stack(envs.call("action_masks"))
    empty = np.flatnonzero(~masks.any(axis=1))
    if len(empty):
        raise AssertionError(f"all-zero action mask in envs {empty.tolist()}: an ended episode was not reset "
                             "(autoreset_mode must be SAME_STEP)")
    return torch.as_tensor(masks)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--map", default="italia", choices=sorted(ENV_IDS))
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--steps", type=int, default=1024, help="learner decisions in all (all envs)")
    p.add_argument("--envs", type=int, default=2)
    p.add_argument("--rollout", type=int, default=128, help="steps per env per update")
    p.add_argument("--minibatches", type=int, default=4)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--gamma", type=float, default=0.995)
    p.add_argument("--gae-lambda", type=float, default=0.95)
    p.add_argument("--clip", type=float, default=0.2)
    p.add_argument("--ent-coef", type=float, default=0.01)
    p.add_argument("--vf-coef", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.players not in load_map(args.map).players:
        p.error(f"--players {args.players}: {args.map} is played by {list(load_map(args.map).players)} players")
    for name in ("steps", "envs", "rollout", "minibatches", "epochs", "hidden", "torch_threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.envs * args.rollout < args.minibatches:
        p.error("--envs x --rollout must be at least --minibatches")
    return args


def gae(rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, next_value: torch.Tensor,
        next_done: torch.Tensor, gamma: float, lam: float) -> torch.Tensor:
    """Advantages; ``dones[t]`` says the episode had ended before step t's observation (a reset one)."""
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(len(rewards))):
        alive = 1.0 - (next_done if t == len(rewards) - 1 else dones[t + 1])
        following = next_value if t == len(rewards) - 1 else values[t + 1]
        delta = rewards[t] + gamma * following * alive - values[t]
        last = delta + gamma * lam * alive * last
        advantages[t] = last
    return advantages


def ppo_update(agent: Agent, optimiser: torch.optim.Optimizer, batch: dict[str, torch.Tensor],
               args: argparse.Namespace) -> float:
    """The clipped PPO epochs over one rollout; returns the last minibatch's loss."""
    size = len(batch["actions"])
    loss = torch.zeros(())
    for _ in range(args.epochs):
        for index in torch.randperm(size).chunk(args.minibatches):
            _, logp, entropy, value = agent.act(batch["obs"][index], batch["masks"][index], batch["actions"][index])
            ratio = (logp - batch["logp"][index]).exp()
            adv = batch["advantages"][index]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(index) > 1 else adv
            policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
            value_loss = 0.5 * (value - batch["returns"][index]).pow(2).mean()
            loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy.mean()
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
            optimiser.step()
    return float(loss.detach())


def collect(envs: gymnasium.vector.SyncVectorEnv, agent: Agent, state: dict[str, Any], args: argparse.Namespace,
            episodes: list[dict[str, float]]) -> dict[str, torch.Tensor]:
    """One rollout of ``args.rollout`` steps per env; ``state`` carries the next obs, mask and done."""
    keys = ("obs", "masks", "actions", "logp", "values", "rewards", "dones")
    store: dict[str, list[torch.Tensor]] = {k: [] for k in keys}
    for _ in range(args.rollout):
        obs, masks, dones = state["obs"], state["masks"], state["done"]
        with torch.no_grad():
            action, logp, _, value = agent.act(obs, masks)
        next_obs, reward, terminated, truncated, info = envs.step(action.numpy())
        for k, v in zip(keys, (obs, masks, action, logp, value, torch.as_tensor(reward, dtype=torch.float32), dones)):
            store[k].append(v)
        ended = np.logical_or(terminated, truncated)
        for i in np.flatnonzero(ended):  # SAME_STEP: the ended episode's info is under "final_info"
            final = info["final_info"]
            episodes.append({"rank": float(final["rank"][i]), "won": float(final["is_success"][i])})
        state.update(obs=torch.as_tensor(next_obs), masks=legal_masks(envs),
                     done=torch.as_tensor(ended, dtype=torch.float32))
    rollout = {k: torch.stack(v) for k, v in store.items()}
    with torch.no_grad():
        next_value = agent.value(state["obs"])
    advantages = gae(rollout["rewards"], rollout["values"], rollout["dones"], next_value, state["done"],
                     args.gamma, args.gae_lambda)
    flat = {k: v.flatten(0, 1) for k, v in rollout.items()}
    flat.update(advantages=advantages.flatten(), returns=(advantages + rollout["values"]).flatten())
    return flat


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the recipe; print and return its figures."""
    args = parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.torch_threads)
    envs = make_envs(args)
    obs_space = cast(gymnasium.spaces.Box, envs.single_observation_space)
    n_actions = int(cast(gymnasium.spaces.Discrete, envs.single_action_space).n)
    agent = Agent(obs_space.high, n_actions, args.hidden)
    optimiser = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    obs, _ = envs.reset(seed=args.seed)
    state: dict[str, Any] = {"obs": torch.as_tensor(obs), "masks": legal_masks(envs),
                             "done": torch.zeros(args.envs)}
    episodes: list[dict[str, float]] = []
    steps, updates, masks_checked, loss = 0, 0, 0, float("nan")
    start = time.perf_counter()
    while steps < args.steps:
        batch = collect(envs, agent, state, args, episodes)
        steps += len(batch["actions"])
        masks_checked += len(batch["actions"])
        loss = ppo_update(agent, optimiser, batch, args)
        updates += 1
    elapsed = time.perf_counter() - start
    envs.close()
    figures = {"steps": steps, "updates": updates, "steps_per_s": steps / elapsed, "episodes": len(episodes),
               "masks_checked": masks_checked, "all_zero_masks": 0,
               "win_rate": float(np.mean([e["won"] for e in episodes])) if episodes else float("nan"),
               "last_loss": loss}
    print(f"{steps} learner steps in {updates} PPO updates, {figures['steps_per_s']:.0f} steps/s (training included)")
    print(f"{len(episodes)} episodes ended, learner win rate {figures['win_rate']:.2f}")
    print(f"{masks_checked} masks sampled from, {len(episodes)} of them right after an autoreset; "
          "all-zero masks: 0 (autoreset_mode=SAME_STEP)")
    print(f"last PPO loss {loss:.4f}")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
