"""PPO on the GPU env, in plain torch (CleanRL-style, one file): ``python -m concordia_env.training.ppo.cuda``.

(Moved here from ``concordia_env/training/ppo_cuda.py``; ``python -m concordia_env.training.ppo.cuda``
runs it too.)

Self-play: every seat of every game is played by the same network, and every decision of the
batch (whichever seat is deciding in each game) goes through it in one forward pass. Rollouts
stay on the GPU: observations, masks and rewards come from
:class:`concordia_env.cuda.ConcordiaCudaVecEnv` as torch tensors without a copy, and actions
go back as a CUDA tensor.

Credit assignment across seats: a game's rewards arrive for all seats on the step that ends it.
Each seat's decisions form their own chain, so GAE runs backwards per (game, seat): a decision's
successor is the same seat's next decision in that game (or the game's end, with that seat's
reward). A seat's last decision in a rollout with no successor yet is left out of the loss
(its advantage is not known) rather than bootstrapped from another seat's view.

Prints, per update, env steps/s (rollout only: network forward, sampling, env step) and
training steps/s (the whole update: rollout, advantages and every epoch of minibatch updates).
``--simulator`` runs a tiny smoke run on numba's CUDA simulator (torch on the CPU).

Example::

    python -m concordia_env.training.ppo.cuda --map imperium --players 4 --num-envs 32768 --updates 50
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from concordia_env._internal.extras import requires

PROG = "python -m concordia_env.training.ppo.cuda"


@dataclass
class Config:
    """Hyperparameters (CleanRL's PPO defaults where they apply)."""

    map_name: str = "imperium"
    players: int = 4
    num_envs: int = 32768
    num_steps: int = 16  # env steps per rollout (each is num_envs decisions)
    updates: int = 50
    epochs: int = 2
    minibatches: int = 8
    lr: float = 3e-4
    gamma: float = 1.0  # episodic, reward only at the end
    gae_lambda: float = 0.95
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    hidden: int = 512
    seed: int = 0
    max_turns: int = 2000


def make_agent(torch: Any, obs_high: np.ndarray, num_actions: int, hidden: int) -> Any:
    """Actor-critic MLP; the raw observation is scaled inside (bounded features / bound, others log1p)."""
    from concordia_env.agents.numpy_policy import observation_scaling

    nn = torch.nn
    module: Any = nn.Module
    scale, unbounded = observation_scaling(obs_high)

    class Agent(module):
        def __init__(self) -> None:
            super().__init__()
            self.register_buffer("scale", torch.as_tensor(scale))
            self.register_buffer("unbounded", torch.as_tensor(unbounded))
            size = len(scale)
            self.body = nn.Sequential(nn.Linear(size, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
            self.actor = nn.Linear(hidden, num_actions)
            self.critic = nn.Linear(hidden, 1)

        def forward(self, obs: Any, mask: Any) -> tuple[Any, Any]:
            x = torch.where(self.unbounded, torch.log1p(torch.clamp(obs, min=0.0)), obs * self.scale)
            h = self.body(x)
            logits = self.actor(h).masked_fill(~mask, -1e9)
            return logits, self.critic(h).squeeze(-1)

    return Agent()


def seat_advantages(torch: Any, values: Any, seats: Any, rewards: Any, dones: Any, gamma: float,
                    lam: float) -> tuple[Any, Any]:
    """GAE per (game, seat) over a rollout: ``values``/``seats`` (T, N), ``rewards`` (T, N, P) and
    ``dones`` (T, N) of each step. Returns (advantages (T, N), valid (T, N)): ``valid`` is False
    for a seat's last decision with no successor in the rollout (left out of the loss)."""
    T, N = values.shape
    P = rewards.shape[2]
    rows = torch.arange(N, device=values.device)
    next_value = torch.zeros(N, P, device=values.device)
    pending = torch.zeros(N, P, device=values.device)  # reward due to the seat's latest decision seen
    gae = torch.zeros(N, P, device=values.device)
    nonterminal = torch.zeros(N, P, device=values.device)
    have_next = torch.zeros(N, P, dtype=torch.bool, device=values.device)
    adv = torch.zeros(T, N, device=values.device)
    valid = torch.zeros(T, N, dtype=torch.bool, device=values.device)
    for t in range(T - 1, -1, -1):
        ended = dones[t].unsqueeze(1)  # the game ended on this step: every seat's chain ends here
        pending = torch.where(ended, rewards[t], pending)
        next_value = torch.where(ended, torch.zeros_like(next_value), next_value)
        nonterminal = torch.where(ended, torch.zeros_like(nonterminal), nonterminal)
        gae = torch.where(ended, torch.zeros_like(gae), gae)
        have_next = have_next | ended
        p = seats[t]
        delta = pending[rows, p] + gamma * next_value[rows, p] * nonterminal[rows, p] - values[t]
        known = have_next[rows, p]
        # no successor yet: advantage unknown (0, left out of the loss); earlier decisions bootstrap on its value
        a = torch.where(known, delta + gamma * lam * nonterminal[rows, p] * gae[rows, p], torch.zeros_like(delta))
        adv[t] = a
        valid[t] = known
        gae[rows, p] = a
        next_value[rows, p] = values[t]
        nonterminal[rows, p] = 1.0
        pending[rows, p] = 0.0
        have_next[rows, p] = True
    return adv, valid


def train(cfg: Config, out=sys.stdout) -> dict[str, float]:
    """Run PPO for ``cfg.updates`` updates; returns the last update's figures."""
    with requires("train", "PPO on the GPU env (concordia_env.training.ppo.cuda)"):
        import torch

    from concordia_env.cuda import ConcordiaCudaVecEnv
    from concordia_env.encoding import observation_bounds

    torch.manual_seed(cfg.seed)
    env = ConcordiaCudaVecEnv(cfg.num_envs, cfg.map_name, cfg.players, seed=cfg.seed, infos=False,
                              max_turns=cfg.max_turns, check_actions=False)
    device = env.device if env.output == "torch" else torch.device("cpu")
    tensor = _tensor_of(torch, device)
    _, high = observation_bounds(env.game.tables)
    agent = make_agent(torch, high, env.masks.shape[1], cfg.hidden).to(device)
    optim = torch.optim.Adam(agent.parameters(), lr=cfg.lr, eps=1e-5)
    buf = _buffers(torch, cfg, env, device)
    state = tensor(env.obs), tensor(env.masks), tensor(env.current_players)
    figures: dict[str, float] = {}
    games = 0
    for update in range(1, cfg.updates + 1):
        sync(torch, device)
        start = time.perf_counter()
        state = _rollout(torch, agent, env, buf, state, tensor)
        sync(torch, device)
        rollout_s = time.perf_counter() - start
        games += int(buf["done"].sum())
        pg_loss, v_loss, entropy = _update(torch, cfg, agent, optim, buf, device)
        sync(torch, device)
        total_s = time.perf_counter() - start
        steps = cfg.num_steps * cfg.num_envs
        figures = {"update": update, "env_steps_per_s": steps / rollout_s, "train_steps_per_s": steps / total_s,
                   "games": games, "pg_loss": pg_loss.item(), "v_loss": v_loss.item(), "entropy": entropy.item()}
        _report(figures, out)
    return figures


def _tensor_of(torch: Any, device: Any) -> Callable[[Any], Any]:
    """A function giving its argument as a torch tensor on ``device`` (a tensor as it is)."""

    def tensor(x: Any) -> Any:
        return x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x), device=device)

    return tensor


def _buffers(torch: Any, cfg: Config, env: Any, device: Any) -> dict[str, Any]:
    """The rollout's tensors, one row per env step: observations, masks, actions, their log-probabilities,
    values, deciding seats, every seat's rewards and the games' ends."""
    T, N, P = cfg.num_steps, cfg.num_envs, cfg.players
    return {"obs": torch.zeros((T, N, env.obs.shape[1]), device=device),
            "mask": torch.zeros((T, N, env.masks.shape[1]), dtype=torch.bool, device=device),
            "act": torch.zeros((T, N), dtype=torch.int64, device=device),
            "logp": torch.zeros((T, N), device=device),
            "val": torch.zeros((T, N), device=device),
            "seat": torch.zeros((T, N), dtype=torch.int64, device=device),
            "rew": torch.zeros((T, N, P), device=device),
            "done": torch.zeros((T, N), dtype=torch.bool, device=device)}


def _rollout(torch: Any, agent: Any, env: Any, buf: dict[str, Any], state: tuple[Any, Any, Any],
             tensor: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
    """Fill ``buf`` with one rollout from ``state`` (observations, masks, deciding seats); the state after it."""
    obs, masks, seats = state
    with torch.no_grad():
        for t in range(buf["obs"].shape[0]):
            buf["obs"][t].copy_(obs)
            buf["mask"][t].copy_(masks.bool())
            buf["seat"][t].copy_(seats)
            logits, value = agent(buf["obs"][t], buf["mask"][t])
            dist = torch.distributions.Categorical(logits=logits)
            action = dist.sample()
            buf["act"][t], buf["logp"][t], buf["val"][t] = action, dist.log_prob(action), value
            o, m, r, d, _ = env.step(action)
            buf["rew"][t].copy_(tensor(r))
            buf["done"][t].copy_(tensor(d))
            obs, masks, seats = tensor(o), tensor(m), tensor(env.current_players)
    return obs, masks, seats


def _update(torch: Any, cfg: Config, agent: Any, optim: Any, buf: dict[str, Any], device: Any) -> tuple[Any, Any, Any]:
    """The epochs of minibatch updates on a rollout; the last minibatch's policy loss, value loss and entropy."""
    T, N = cfg.num_steps, cfg.num_envs
    adv, valid = seat_advantages(torch, buf["val"], buf["seat"], buf["rew"], buf["done"], cfg.gamma, cfg.gae_lambda)
    returns = adv + buf["val"]
    idx = torch.nonzero(valid.reshape(-1)).squeeze(1)
    b_obs, b_mask = buf["obs"].reshape(T * N, -1), buf["mask"].reshape(T * N, -1)
    b_act, b_logp = buf["act"].reshape(-1), buf["logp"].reshape(-1)
    b_adv, b_ret = adv.reshape(-1), returns.reshape(-1)
    size = max(1, len(idx) // cfg.minibatches)
    for _epoch in range(cfg.epochs):
        perm = idx[torch.randperm(len(idx), device=device)]
        for k in range(0, len(perm), size):
            mb = perm[k:k + size]
            logits, value = agent(b_obs[mb], b_mask[mb])
            dist = torch.distributions.Categorical(logits=logits)
            ratio = torch.exp(dist.log_prob(b_act[mb]) - b_logp[mb])
            a = b_adv[mb]
            a = (a - a.mean()) / (a.std() + 1e-8) if len(mb) > 1 else a
            pg_loss = torch.max(-a * ratio, -a * torch.clamp(ratio, 1 - cfg.clip, 1 + cfg.clip)).mean()
            v_loss = 0.5 * ((value - b_ret[mb]) ** 2).mean()
            entropy = dist.entropy().mean()
            loss = pg_loss + cfg.vf_coef * v_loss - cfg.ent_coef * entropy
            pg_loss, v_loss, entropy = pg_loss.detach(), v_loss.detach(), entropy.detach()
            optim.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(agent.parameters(), cfg.max_grad_norm)
            optim.step()
    return pg_loss, v_loss, entropy


def _report(figures: dict[str, float], out: Any) -> None:
    """The line printed per update."""
    print(f"update {figures['update']:>4}  env {figures['env_steps_per_s']:>13,.0f} steps/s  "
          f"training {figures['train_steps_per_s']:>13,.0f} steps/s  games {figures['games']:>9,}  "
          f"pg {figures['pg_loss']:+.4f}  v {figures['v_loss']:.4f}  entropy {figures['entropy']:.3f}",
          file=out, flush=True)


def sync(torch: Any, device: Any) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None, prog: str = PROG) -> int:
    """Train as the command line ``argv`` says; the exit status. ``prog`` is the command named in its messages."""
    d = Config()
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    parser.add_argument("--map", dest="map_name", default=d.map_name, choices=["imperium", "italia"])
    for name in ("players", "num_envs", "num_steps", "updates", "epochs", "minibatches", "hidden", "seed", "max_turns"):
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=int, default=getattr(d, name))
    for name in ("lr", "gamma", "gae_lambda", "clip", "ent_coef", "vf_coef", "max_grad_norm"):
        parser.add_argument(f"--{name.replace('_', '-')}", dest=name, type=float, default=getattr(d, name))
    parser.add_argument("--simulator", action="store_true",
                        help="tiny smoke run on numba's CUDA simulator (4 games, 4 steps, 2 updates, torch on the CPU)")
    args = vars(parser.parse_args(argv))
    simulator = args.pop("simulator")
    if simulator:
        from concordia_env.cuda.backend import enable_simulator

        try:
            enable_simulator()
        except RuntimeError as err:
            parser.error(f"--simulator: {err}")
        args.update(num_envs=min(args["num_envs"], 4), num_steps=min(args["num_steps"], 4),
                    updates=min(args["updates"], 2), hidden=min(args["hidden"], 32), minibatches=2)
    cfg = Config(**args)
    from concordia_env.game import check_setup_args

    try:
        check_setup_args(cfg.map_name, cfg.players)
    except ValueError as err:
        parser.error(str(err))
    if min(cfg.num_envs, cfg.num_steps, cfg.updates, cfg.epochs, cfg.minibatches, cfg.hidden) < 1:
        parser.error("--num-envs, --num-steps, --updates, --epochs, --minibatches and --hidden must be positive")
    from concordia_env.cuda import CudaUnavailableError

    try:
        train(cfg)
    except CudaUnavailableError as err:
        print(f"ppo_cuda: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
