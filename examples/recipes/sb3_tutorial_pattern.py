"""PettingZoo's SB3 action-mask tutorial pattern on this env, and why to use the single-learner env instead.

The pattern (PettingZoo's tutorial ``sb3_connect_four_action_mask.py``, re-created here in a few lines):
one gymnasium env over the AEC env in which a single ``MaskablePPO`` learner plays *every* seat in turn.
``step(action)`` plays the seat to move, then returns the *next* seat's observation with the reward,
termination and info of the seat that just moved. It runs, and it trains without an error, on this
env. But a game pays every seat at once, on the step that ends it, and that step returns only the
reward of the seat that made the last move: the other seats' final rewards are never returned, and the
episode is over before any of them moves again. The learner sees one seat's final reward per game,
out of ``players`` paid.

The single-learner env (``gymnasium.make("concordia/Italia-v0", ...)``) gives the learner one seat
and plays the others inside ``step()``, so every episode ends on the learner's own step with its
own final reward: it sees all of them.

The script trains ``MaskablePPO`` briefly on the tutorial pattern (``ActionMasker`` + ``MaskablePPO``,
as the tutorial does), then plays ``--games`` games with that policy through both envs and prints the
fraction of the final rewards paid that reached the learner, by count of seats and by absolute value.
Run ``python examples/recipes/sb3_tutorial_pattern.py`` (10 games) or ``--games 40 --players 4``.
Tested with stable-baselines3 and sb3-contrib 2.9 and gymnasium 1.4.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, cast

import gymnasium
import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.wrappers import ActionMasker

import concordia_env
from concordia_env.data import load_map
from concordia_env.training.nets import ObservationScaler

ENV_IDS = {"italia": "concordia/Italia-v0", "imperium": "concordia/Imperium-v0"}


class EverySeatEnv(gymnasium.Env):
    """The tutorial pattern: one learner plays every seat of an AEC game, one seat per step."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, map_name: str, players: int) -> None:
        self.aec = concordia_env.env(map_name=map_name, num_players=players)
        first = self.aec.possible_agents[0]
        self.observation_space = self.aec.observation_space(first)["observation"]
        self.action_space = self.aec.action_space(first)
        #: the rewards ``step`` returned this game, by the seat they belong to (for the measurement)
        self.returned = dict.fromkeys(self.aec.possible_agents, 0.0)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self.aec.reset(seed=seed)
        self.returned = dict.fromkeys(self.aec.possible_agents, 0.0)
        return self._observe(), {}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The tutorial's step: the next seat's observation; the reward, flags and info of the mover.
        When the game ends, every seat is paid, but only the mover's reward comes back."""
        mover = self.aec.agent_selection
        self.aec.step(int(action))
        reward = float(self.aec._cumulative_rewards[mover])  # the tutorial reads this private dict
        self.returned[mover] += reward
        return self._observe(), reward, self.aec.terminations[mover], self.aec.truncations[mover], \
            self.aec.infos[mover]

    def action_masks(self) -> np.ndarray:
        return self.aec.observe(self.aec.agent_selection)["action_mask"].astype(bool)

    def paid(self) -> dict[str, float]:
        """Every seat's final reward (after the game ended): what the game paid."""
        return dict(self.aec.rewards)

    def _observe(self) -> np.ndarray:
        return self.aec.observe(self.aec.agent_selection)["observation"]


def train(map_name: str, players: int, steps: int, seed: int) -> MaskablePPO:
    """MaskablePPO on the tutorial pattern, as the tutorial trains it (one env, every seat)."""
    # a function of the env, as the tutorial's mask_fn (ActionMasker also calls a method named by a
    # string with the env as its argument, which action_masks() does not take)
    env = ActionMasker(EverySeatEnv(map_name, players), lambda env: cast(EverySeatEnv, env).action_masks())
    model = MaskablePPO("MlpPolicy", env, n_steps=min(steps, 128), batch_size=64, n_epochs=1, seed=seed,
                        device="cpu", verbose=0,
                        policy_kwargs={"features_extractor_class": ObservationScaler, "net_arch": [64]})
    model.learn(steps)
    return model


def play(model: MaskablePPO, env: gymnasium.Env, seed: int) -> tuple[float, bool, dict]:
    """One episode with the model (sampling); returns its last reward, whether it terminated, its last info."""
    obs, _ = env.reset(seed=seed)
    mask_of = env.get_wrapper_attr("action_masks")
    while True:
        action, _ = model.predict(obs, action_masks=mask_of(), deterministic=False)
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return float(reward), bool(terminated), info


def measure_every_seat(model: MaskablePPO, map_name: str, players: int, games: int, seed: int) -> dict[str, float]:
    """The final rewards the tutorial pattern returns to the learner, against those the games paid."""
    env = EverySeatEnv(map_name, players)
    seen_seats = paid_seats = 0
    seen_abs = paid_abs = 0.0
    for g in range(games):
        _, terminated, _ = play(model, env, seed + g)
        if not terminated:  # truncated: nobody is paid
            continue
        for seat, paid in env.paid().items():
            seen = np.isclose(env.returned[seat], paid)
            seen_seats += int(seen)
            paid_seats += 1
            seen_abs += abs(paid) if seen else 0.0
            paid_abs += abs(paid)
    return {"seats": seen_seats / paid_seats, "abs": seen_abs / paid_abs, "games": paid_seats // players}


def measure_single_learner(model: MaskablePPO, map_name: str, players: int, games: int,
                           seed: int) -> dict[str, float]:
    """The same for the single-learner env: the learner's seat's final reward against what the game paid
    it (the ``"win"`` reward: +1 to the winner, -1/(n-1) to the others; no shaping, so the last
    reward is exactly the final one)."""
    env = gymnasium.make(ENV_IDS[map_name], num_players=players, reward="win", shaping=0.0)
    seen_seats = paid_seats = 0
    seen_abs = paid_abs = 0.0
    for g in range(games):
        reward, terminated, info = play(model, env, seed + g)
        if not terminated:
            continue
        paid = 1.0 if info["rank"] == 1 else -1.0 / (players - 1)
        seen = np.isclose(reward, paid)
        seen_seats += int(seen)
        paid_seats += 1
        seen_abs += abs(paid) if seen else 0.0
        paid_abs += abs(paid)
    return {"seats": seen_seats / paid_seats, "abs": seen_abs / paid_abs, "games": paid_seats}


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--map", default="italia", choices=sorted(ENV_IDS))
    p.add_argument("--players", type=int, default=2)
    p.add_argument("--steps", type=int, default=256, help="MaskablePPO training steps on the tutorial pattern")
    p.add_argument("--games", type=int, default=10, help="games measured in each env")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    args = p.parse_args(argv)
    if args.players not in load_map(args.map).players:
        p.error(f"--players {args.players}: {args.map} is played by {list(load_map(args.map).players)} players")
    for name in ("steps", "games", "torch_threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Run the recipe; print and return its figures."""
    args = parse_args(argv)
    torch.set_num_threads(args.torch_threads)
    model = train(args.map, args.players, args.steps, args.seed)
    every = measure_every_seat(model, args.map, args.players, args.games, args.seed)
    single = measure_single_learner(model, args.map, args.players, args.games, args.seed)
    print(f"{args.map}, {args.players} players, MaskablePPO trained {args.steps} steps on the tutorial pattern")
    print(f"tutorial pattern: the learner saw {every['seats']:.0%} of the final rewards paid by seat, "
          f"{every['abs']:.0%} by absolute value ({every['games']} games)")
    print(f"single-learner env: the learner saw {single['seats']:.0%} by seat, "
          f"{single['abs']:.0%} by absolute value ({single['games']} games)")
    return {"map": args.map, "players": args.players, "tutorial_pattern": every, "single_learner": single}


if __name__ == "__main__":
    main(sys.argv[1:])
