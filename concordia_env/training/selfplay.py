"""Single-learner self-play: a gymnasium env in which one seat learns and the others are played inside ``step()``.

Why not the PettingZoo env with an SB3 wrapper
----------------------------------------------
The usual PettingZoo -> SB3 recipe treats every seat as the same learner and
resets the batch when the game ends, so the seats that did not make the final
move never receive their terminal reward, and one rollout mixes every seat's
point of view. Here the learner takes exactly one seat of each game; every
other seat is played by an opponent from an :class:`OpponentPool` inside
:meth:`SingleLearnerEnv.step`, which returns only when the learner must decide
again or the game is over. The learner therefore sees an ordinary
single-agent episode and always gets its own end-of-game reward.

Episodes
--------
At each :meth:`~SingleLearnerEnv.reset` the env draws (from its own seeded
generator, so ``reset(seed=s)`` replays the same episode): the player count
(uniform over ``num_players``, by default every count the map allows), the
learner's seat (uniform, unless ``learner_seat`` is fixed), the game's setup
seed, and one opponent *kind* for all other seats (``"random"``,
``"heuristic"`` or ``"self"``, by the pool's weights). ``"self"`` opponents are
frozen snapshots of the learner (:class:`FrozenPolicy`, added during training
with :meth:`~SingleLearnerEnv.add_snapshot`); each such seat draws its own
snapshot, the newest with probability 1/2, otherwise uniformly. While the pool
holds no snapshot, ``"self"`` falls back to ``"random"``.

Rewards
-------
At the end of the game the learner receives its seat's reward in the env's
reward mode (``"win"``, ``"rank"`` or ``"vp"``, as in
:mod:`concordia_env.rewards`). With ``shaping > 0`` it also receives, at every
step, ``shaping * (phi(after) - phi(before))`` where ``phi`` is the learner's
VP lead as final scoring would count it now (own VP minus the mean of the
others', divided by 50). That is potential-based shaping: the shaped rewards
of an episode add up to ``shaping * phi(end)`` (``phi`` is 0 at setup), so the
sum of all rewards is the terminal reward plus ``shaping`` times the final VP
lead, but the credit arrives when the VP are earned. A game reaching
``max_turns`` card plays is truncated (``truncated=True``, no terminal
reward), which PPO bootstraps from the value of the last observation.

The finished episode's ``info`` holds ``is_success`` (the learner won, after
the rules' tie-break), ``vp``, ``rank``, ``num_players``, ``seat`` and
``opponent`` (the kind). Every ``info``, on reset and on every step, holds
``action_mask``: the learner's legal actions (int8, all zero once the episode is
over), the mask of the observation returned with it.

Illegal actions
---------------
``illegal_action`` says what a move the rules do not allow does (masked
learners never make one; generic tools such as gymnasium's and SB3's
``check_env`` step unmasked random actions):

* ``"raise"`` (default): :class:`~concordia_env.state.IllegalActionError`
  naming the action, the seat and the phase; the game is unchanged.
* ``"terminate"``: the episode ends (``terminated=True``) with reward
  ``illegal_penalty`` (default :data:`ILLEGAL_PENALTY`, -1.0: the worst
  terminal reward of the ``"win"`` and ``"rank"`` modes; no shaping term, the
  game is unchanged), and ``info`` holds the outcome fields above as the game
  stood (``is_success`` False) plus ``illegal_action`` (what was passed) and
  ``error`` (the message ``"raise"`` would give).
* ``"random_legal"``: a uniformly random legal action (from the env's seeded
  generator) is played instead and the episode goes on; that step's ``info``
  holds ``illegal_action`` and ``played_action``.

Observation bounds
------------------
``observation_bounds="rules"`` (default) gives the PettingZoo env's Box: the
rules' bounds, and ``inf`` for what the rules leave open (the turn counter,
coins, VP, intermediate scores). Trained models and the released policies are
made with it: :class:`concordia_env.training.nets.ObservationScaler` log-scales
exactly the ``inf`` features, so changing them changes the network's input.
``observation_bounds="finite"`` caps those features at :data:`FINITE_BOUND`
(2**31, the range of the int32 state they are read from, far above what
:mod:`concordia_env.validation` accepts: 1,000,000 sestertii, card plays and VP)
so the space has no ``inf`` and ``check_env`` does not warn; every observation
a game can produce lies inside either space. A model saved with one kind of
bounds does not load against an env with the other (SB3 compares the spaces).

This module needs numpy only; :meth:`FrozenPolicy.from_policy` reads a torch
policy but does not import torch itself. :class:`FrozenPolicy` is
:class:`concordia_env.agents.numpy_policy.NumpyPolicy` (the observation scaling
and the forward pass live there, shared with the ``ppo`` agent).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from concordia_env.data import MAP_NAMES, load_map
from concordia_env.encoding import OBSERVATION_SIZE, observation, observation_bounds
from concordia_env.engine import NUM_ACTIONS
from concordia_env.env import FINITE_BOUND, ILLEGAL_REWARD, check_max_turns
from concordia_env.game import get_game
from concordia_env.rewards import VP_SCALE, check_reward_mode, seat_rewards
from concordia_env.state import GameState, IllegalActionError, new_game

from ..agents.base import Agent
from ..agents.heuristic import HeuristicAgent
from ..agents.numpy_policy import NumpyPolicy, observation_scaling, scale_observation
from ..agents.random_agent import RandomAgent

OPPONENT_KINDS = ("random", "heuristic", "self")

#: card plays after which a training game is truncated (random games take about 300)
TRAINING_MAX_TURNS = 1000

#: what ``SingleLearnerEnv(illegal_action=...)`` accepts (see the module docstring)
ILLEGAL_ACTION_MODES = ("raise", "terminate", "random_legal")
#: the default reward of an episode ended by an illegal action (``illegal_action="terminate"``)
ILLEGAL_PENALTY = ILLEGAL_REWARD
#: what ``observation_bounds`` accepts: the rules' bounds (``inf`` where open) or finite caps
OBSERVATION_BOUNDS = ("rules", "finite")
#: seconds per frame a viewer should use for ``render()`` (that of the PettingZoo env)
RENDER_FPS = 2

#: a frozen copy of the learner's actor, evaluated with numpy: the class the released ``ppo``
#: files load into (one forward pass for both, so a snapshot plays exactly like its export)
FrozenPolicy = NumpyPolicy

__all__ = ["FINITE_BOUND", "ILLEGAL_ACTION_MODES", "ILLEGAL_PENALTY", "OBSERVATION_BOUNDS", "OPPONENT_KINDS",
           "TRAINING_MAX_TURNS", "FrozenPolicy", "FrozenPolicyAgent", "OpponentPool",
           "SingleLearnerEnv", "observation_scaling", "observation_space", "parse_weights", "scale_observation"]


def observation_space(map_name: str, bounds: str = "rules") -> spaces.Box:
    """The Box of raw observations on ``map_name``.

    ``bounds="rules"``: the PettingZoo env's Box (rule bounds, ``inf`` where the rules set
    none); ``"finite"``: the same with every ``inf`` replaced by :data:`FINITE_BOUND`.
    ``ValueError`` naming the allowed values for anything else."""
    if bounds not in OBSERVATION_BOUNDS:
        raise ValueError(f"observation_bounds must be one of {', '.join(map(repr, OBSERVATION_BOUNDS))}; "
                         f"got {bounds!r}")
    low, high = observation_bounds(get_game(map_name).tables)
    if bounds == "finite":
        high = np.where(np.isfinite(high), high, np.float32(FINITE_BOUND)).astype(np.float32)
    return spaces.Box(low, high, (OBSERVATION_SIZE,), np.float32)


class FrozenPolicyAgent(Agent):
    """A :class:`FrozenPolicy` behind the :class:`~concordia_env.agents.base.Agent` interface (samples its moves)."""

    def __init__(self, policy: FrozenPolicy, seed: int = 0) -> None:
        self.policy = policy
        self.name = policy.name
        self.reset(seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        return self.policy.choose(observation, action_mask, self.rng)


def parse_weights(text: str | dict[str, float]) -> dict[str, float]:
    """``"random=0.5,heuristic=0.2,self=0.3"`` (or a dict) -> normalised weights per opponent kind.

    ``ValueError`` naming the problem for an unknown kind, a negative or non-numeric weight, or
    weights summing to zero."""
    if isinstance(text, str):
        items: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            kind, eq, val = part.partition("=")
            if not eq:
                kind, val = part, "1"
            try:
                items[kind.strip()] = float(val)
            except ValueError:
                raise ValueError(f"opponent weight {part!r}: {val!r} is not a number") from None
    else:
        items = {str(k): float(v) for k, v in dict(text).items()}
    for kind, w in items.items():
        if kind not in OPPONENT_KINDS:
            raise ValueError(f"unknown opponent kind {kind!r}; known: {', '.join(OPPONENT_KINDS)}")
        if not np.isfinite(w) or w < 0:
            raise ValueError(f"opponent weight for {kind!r} must be a finite number >= 0, got {w}")
    total = sum(items.values())
    if total <= 0:
        raise ValueError(f"opponent weights {text!r} give no opponent a positive weight")
    return {k: items.get(k, 0.0) / total for k in OPPONENT_KINDS}


class OpponentPool:
    """Who plays the other seats: a weight per opponent kind and the frozen snapshots of the learner.

    ``max_snapshots`` bounds the pool; the oldest snapshot is dropped first."""

    def __init__(self, weights: str | dict[str, float] = "random=1", max_snapshots: int = 10) -> None:
        if isinstance(max_snapshots, bool) or not isinstance(max_snapshots, (int, np.integer)) or max_snapshots < 1:
            raise ValueError(f"max_snapshots must be an int >= 1, got {max_snapshots!r}")
        self.weights = parse_weights(weights)
        self.max_snapshots = int(max_snapshots)
        self.snapshots: list[FrozenPolicy] = []
        self._kinds = list(self.weights)
        self._p = np.array([self.weights[k] for k in self._kinds])

    def add(self, policy: FrozenPolicy) -> None:
        self.snapshots.append(policy)
        del self.snapshots[:-self.max_snapshots]

    def draw_kind(self, rng: np.random.Generator) -> str:
        kind = self._kinds[int(rng.choice(len(self._kinds), p=self._p))]
        return "random" if kind == "self" and not self.snapshots else kind

    def draw_snapshot(self, rng: np.random.Generator) -> FrozenPolicy:
        if rng.random() < 0.5:
            return self.snapshots[-1]
        return self.snapshots[int(rng.integers(len(self.snapshots)))]


def _player_counts(map_name: str, num_players: int | Iterable[int] | None) -> tuple[int, ...]:
    allowed = tuple(load_map(map_name).players)
    if num_players is None:
        return allowed
    counts = (num_players,) if isinstance(num_players, (int, np.integer)) else tuple(num_players)
    bad = [n for n in counts if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n not in allowed]
    if not counts or bad:
        raise ValueError(f"num_players {num_players!r}: {map_name} is played by {list(allowed)} players")
    return tuple(int(n) for n in counts)


class SingleLearnerEnv(gymnasium.Env):
    """One learning seat of a Concordia game; see the module docstring.

    Args:
        map_name: "imperium" or "italia".
        num_players: a player count, a list of them (one drawn per episode), or None for
            every count the map allows.
        learner_seat: the learner's seat (0 = start player), or None for a random seat per
            episode. A fixed seat must exist in every drawn player count.
        opponents: an :class:`OpponentPool`, or its weights (``"random=0.5,self=0.5"``).
        reward: terminal reward mode, "win", "rank" or "vp".
        shaping: weight of the potential-based VP-lead shaping (0 turns it off).
        max_turns: truncate after this many card plays (0: never).
        render_mode: None or "ansi" (``render()`` returns the game as text).
        illegal_action: "raise" (default), "terminate" or "random_legal": what an action
            the rules do not allow does (see the module docstring).
        illegal_penalty: the reward of an episode ended by an illegal action
            (``illegal_action="terminate"`` only); default -1.0.
        observation_bounds: "rules" (default: the PettingZoo env's Box, ``inf`` where the
            rules set no bound) or "finite" (those capped at :data:`FINITE_BOUND`).

    Observations are the PettingZoo env's raw vectors of the learner's seat; legal
    actions come from :meth:`action_masks` (what sb3-contrib's ``MaskablePPO`` asks for) and,
    as int8, ``info["action_mask"]`` on reset and every step (all zero once the episode is over).
    With ``illegal_action`` "terminate" or "random_legal" and ``observation_bounds="finite"``
    the env passes ``gymnasium.utils.env_checker.check_env`` and SB3's ``check_env``
    without warnings; ``gymnasium.make("concordia/Concordia-v0", ...)`` builds it (see
    :mod:`concordia_env.integrations.gym_registration`).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": RENDER_FPS}

    def __init__(self, map_name: str = "imperium", num_players: int | Iterable[int] | None = None,
                 learner_seat: int | None = None, opponents: OpponentPool | str | dict = "random=1",
                 reward: str = "rank", shaping: float = 1.0, max_turns: int = TRAINING_MAX_TURNS,
                 render_mode: str | None = None, illegal_action: str = "raise",
                 illegal_penalty: float = ILLEGAL_PENALTY, observation_bounds: str = "rules") -> None:
        if map_name not in MAP_NAMES:
            raise ValueError(f"unknown map {map_name!r}; choose one of {list(MAP_NAMES)}")
        self.map_name = map_name
        self.player_counts = _player_counts(map_name, num_players)
        if learner_seat is not None:
            if isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) \
                    or not 0 <= learner_seat < min(self.player_counts):
                raise ValueError(f"learner_seat {learner_seat!r} does not exist in a "
                                 f"{min(self.player_counts)}-player game")
            learner_seat = int(learner_seat)
        self.learner_seat = learner_seat
        self.pool = opponents if isinstance(opponents, OpponentPool) else OpponentPool(opponents)
        self.reward_mode = check_reward_mode(reward)
        if not np.isfinite(shaping) or shaping < 0:
            raise ValueError(f"shaping must be a finite number >= 0, got {shaping!r}")
        self.shaping = float(shaping)
        self.max_turns = check_max_turns(max_turns)
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTION_MODES))}; "
                             f"got {illegal_action!r}")
        self.illegal_action = illegal_action
        if isinstance(illegal_penalty, bool) or not isinstance(illegal_penalty, (int, float, np.integer, np.floating)) \
                or not np.isfinite(illegal_penalty):
            raise ValueError(f"illegal_penalty must be a finite number; got {illegal_penalty!r}")
        self.illegal_penalty = float(illegal_penalty)
        self.observation_bounds = observation_bounds
        self.observation_space = observation_space(map_name, observation_bounds)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._random = RandomAgent()
        self._heuristic = HeuristicAgent()
        self.state: GameState | None = None
        self.seat = 0
        self.opponent_kind = ""
        self._opponents: list[Agent | None] = []
        self._potential = 0.0
        self._done = True

    # ------------------------------------------------------------ training hooks
    def add_snapshot(self, policy: FrozenPolicy) -> None:
        """Put a frozen learner into the pool of ``"self"`` opponents (from the next episode)."""
        self.pool.add(policy)

    def num_snapshots(self) -> int:
        return len(self.pool.snapshots)

    # ------------------------------------------------------------ gymnasium API
    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        rng = self.np_random
        n = int(rng.choice(self.player_counts))
        self.seat = int(rng.integers(n)) if self.learner_seat is None else self.learner_seat
        self.state = new_game(self.map_name, n, seed=int(rng.integers(2**31)))
        self.opponent_kind = self.pool.draw_kind(rng)
        shared = {"random": self._random, "heuristic": self._heuristic}.get(self.opponent_kind)
        if shared is not None:  # one agent plays every other seat: it keeps no per-seat memory
            shared.reset(int(rng.integers(2**31)))
        self._opponents = [
            None if p == self.seat
            else shared or FrozenPolicyAgent(self.pool.draw_snapshot(rng), seed=int(rng.integers(2**31)))
            for p in range(n)]
        self._done = False
        self._potential = 0.0
        ended = self._play_opponents()
        if ended:  # cannot happen in a legal game: every seat plays a card before anyone can end it
            raise RuntimeError("the game ended before the learner's first decision")
        return self._observe(), {"num_players": n, "seat": self.seat, "opponent": self.opponent_kind,
                                 "action_mask": self._info_mask()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's ``action``, then the other seats until the learner decides again or
        the game ends. An illegal action does what ``illegal_action`` says (module docstring)."""
        if self._done or self.state is None:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        action = int(action) if isinstance(action, np.ndarray) and action.ndim == 0 else action
        info: dict[str, Any] = {}
        try:
            self.state.apply(action)
        except IllegalActionError as err:
            if self.illegal_action == "raise":
                raise
            if self.illegal_action == "terminate":
                return self._terminate_illegal(action, err)
            played = int(self.np_random.choice(np.flatnonzero(self.state.legal_action_mask())))
            self.state.apply(played)
            info = {"illegal_action": action, "played_action": played}
        truncated = self._play_opponents()
        terminated = self.state.is_terminal()
        potential = self._lead() if self.shaping else 0.0  # (scoring every player costs; skip it unused)
        reward = self.shaping * (potential - self._potential)
        self._potential = potential
        if terminated or truncated:
            self._done = True
            info = {**info, **self._outcome(truncated)}
            if terminated:
                reward += float(seat_rewards(self.state, self.reward_mode)[self.seat])
        info["action_mask"] = self._info_mask()
        return self._observe(), float(reward), bool(terminated), bool(truncated), info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions (bool, NUM_ACTIONS); all False once the episode is over."""
        if self._done or self.state is None:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.state.legal_action_mask().astype(bool)

    def _info_mask(self) -> np.ndarray:
        """``info["action_mask"]``: :meth:`action_masks` as int8, as PettingZoo's and gymnasium's masks are."""
        return self.action_masks().astype(np.int8)

    def render(self) -> str | None:
        if self.render_mode == "ansi" and self.state is not None:
            return str(self.state)
        return None

    # ------------------------------------------------------------ internals
    def _terminate_illegal(self, action: Any, err: IllegalActionError) -> tuple[np.ndarray, float, bool, bool, dict]:
        """``illegal_action="terminate"``: end the episode with the penalty; the game is unchanged."""
        self._done = True
        info = {**self._outcome(False), "is_success": False, "illegal_action": action, "error": str(err),
                "action_mask": self._info_mask()}
        return self._observe(), self.illegal_penalty, True, False, info

    def _game(self) -> GameState:
        """The game in progress; a clear error before the first ``reset()``."""
        if self.state is None:
            raise RuntimeError("the env has no game yet: call reset() first")
        return self.state

    def _observe(self) -> np.ndarray:
        return observation(self._game(), self.seat)

    def _lead(self) -> float:
        vp = np.asarray(self._game().scores(), dtype=np.float64)
        others = np.delete(vp, self.seat)
        return float(vp[self.seat] - others.mean()) / VP_SCALE

    def _truncated(self) -> bool:
        return self.max_turns > 0 and int(self._game().field("turn")) >= self.max_turns

    def _play_opponents(self) -> bool:
        """Play other seats until the learner decides or the game is over; True if truncated."""
        state = self._game()
        while not state.is_terminal():
            if self._truncated():
                return True
            p = state.current_player
            if p == self.seat:
                return False
            opponent = self._opponents[p]
            assert opponent is not None  # every seat but the learner's has one after reset()
            # passing the state lets the heuristic search it directly instead of rebuilding it
            state.apply(opponent.act(observation(state, p), state.legal_action_mask(), state))
        return False

    def _outcome(self, truncated: bool) -> dict[str, Any]:
        ranking = self._game().ranking()
        return {
            "is_success": bool(not truncated and ranking[0] == self.seat),
            "vp": int(self._game().scores()[self.seat]),
            "rank": ranking.index(self.seat) + 1,
            "num_players": self._game().num_players,
            "seat": self.seat,
            "opponent": self.opponent_kind,
            "turns": int(self._game().field("turn")),
        }
