"""A stable-baselines3 ``VecEnv`` over the batched env: one learner, random opponents played in the kernel.

::

    from sb3_contrib import MaskablePPO
    from concordia_env.integrations.sb3 import LearnerVecEnv

    env = LearnerVecEnv(num_envs=16, map_name="italia", num_players=2, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256, device="cpu")
    model.learn(10_000)

Design
------
:class:`LearnerVecEnv` is the batched counterpart of
:class:`concordia_env.training.selfplay.SingleLearnerEnv` with ``opponents="random=1"``:
row ``i`` is one game of a :class:`concordia_env.vector.ConcordiaVecEnv` (same seeds: game
``i`` plays episode ``k`` from ``seed + i + k * num_envs``) in which the learner holds one
seat; every other seat plays a uniformly random legal action. ``step(actions)`` applies the
learner's action in every game and then plays the opponents, all in one compiled call over
the batch, until each game is back at the learner's decision or over. So the learner sees an
ordinary single-agent episode per row and always receives its own end-of-game reward (unlike
self-play with one shared trajectory, where seats that did not make the final move miss it).

* **Seat**: ``learner_seat`` fixed, or (None, default) drawn uniformly per episode from the
  env's seeded generator.
* **Rewards**: as ``SingleLearnerEnv``: the learner's seat reward in the ``reward`` mode
  ("win", "rank", "vp") when the game ends, plus ``shaping * (phi(after) - phi(before))``
  every step, ``phi`` the learner's VP lead / 50 (0 at the start). A game reaching
  ``max_turns`` card plays is truncated (no terminal reward; ``info["TimeLimit.truncated"]``
  so PPO bootstraps it).
* **Episode ends**: as SB3's own vec envs: the row's ``done`` is True, the returned
  observation is the next game's first one, ``info["terminal_observation"]`` the learner's
  last view, and the info holds ``is_success``, ``vp``, ``rank``, ``seat``,
  ``num_players``, ``turns``, ``seed`` and ``opponent`` ("random"). Wrap the env in SB3's
  ``VecMonitor`` for episode returns in the logs.
* **Masks**: :meth:`action_masks` (and ``env_method("action_masks")``, which sb3-contrib's
  ``MaskablePPO`` calls) gives the learner's legal actions per row. An illegal action raises
  :class:`~concordia_env.state.IllegalActionError` naming the game before any game moves.
* **Spaces**: those of ``SingleLearnerEnv`` (``observation_bounds`` "rules" or "finite"), so a
  model trained here loads against ``SingleLearnerEnv`` and plays in the PettingZoo env.

Opponents are random only: frozen snapshots or the heuristic (``SingleLearnerEnv``'s
``"self"`` and ``"heuristic"`` kinds) are not batched yet. Needs stable-baselines3 (the
``train`` extra); the env itself never imports torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from concordia_env._internal.extras import requires

with requires("train", "concordia_env.integrations.sb3"):
    from stable_baselines3.common.vec_env import VecEnv

from concordia_env import engine as E
from concordia_env._internal.jit import kernel
from concordia_env.encoding import OBSERVATION_SIZE, encode
from concordia_env.env import check_max_turns
from concordia_env.rewards import VP_SCALE
from concordia_env.training.selfplay import TRAINING_MAX_TURNS, observation_space
from concordia_env.vector import _ENDED, _TRUNCATED, ConcordiaVecEnv

#: what ``opponent`` accepts (opponents played inside the compiled step)
OPPONENTS = ("random",)

__all__ = ["OPPONENTS", "LearnerVecEnv"]


@kernel(inline="always")
def _lead(s, T, seat, vp):
    """The learner's VP lead over the mean of the others, in units of VP_SCALE (``phi``)."""
    n = s[E.O_NPLAYERS]
    own = 0.0
    others = 0.0
    for p in range(n):
        total = E.score_player(s, T, np.int64(p), vp)
        if p == seat:
            own = total
        else:
            others += total
    return (own - others / (n - 1)) / VP_SCALE


@kernel("int32[:, ::1], int32[::1], int8[:, ::1], int64[::1], int64[::1], int64[::1], int64, int64, int64, "
        "int64, float32[:, ::1], int64[::1], int64[::1], float64[::1]")
def _advance(S, T, M, rows, actions, seats, map_id, max_turns, seed, shaping, obs, current, ended, lead):
    """For each game ``i`` of ``rows``: apply the learner's ``actions[i]`` (none if negative), then
    uniformly random legal actions for the other seats until seat ``seats[i]`` decides or the
    game ends (``ended[i]``: 0, _ENDED or _TRUNCATED, as :mod:`concordia_env.vector`). Writes the
    learner's observation into ``obs[i]`` (its last view, if the game ended) and, if ``shaping``,
    its VP lead into ``lead[i]``. Random moves come from numba's generator seeded with ``seed``."""
    np.random.seed(seed)
    vp = np.zeros(E.NGODS, np.int32)
    for j in range(rows.shape[0]):
        i = rows[j]
        s, mask, seat = S[i], M[i], seats[i]
        if actions[i] >= 0:
            E.step(s, T, mask, actions[i])
        while True:
            if s[E.O_PHASE] == E.PH_OVER:
                ended[i] = _ENDED
                break
            if max_turns > 0 and s[E.O_TURN] >= max_turns:
                ended[i] = _TRUNCATED
                break
            ended[i] = 0
            current[i] = s[E.O_CURRENT]
            if current[i] == seat:
                break
            n = 0
            for a in range(E.NUM_ACTIONS):
                if mask[a]:
                    n += 1
            k = np.random.randint(0, n)
            for a in range(E.NUM_ACTIONS):
                if mask[a]:
                    if k == 0:
                        E.step(s, T, mask, a)
                        break
                    k -= 1
        encode(s, T, map_id, seat, obs[i])
        if shaping:
            lead[i] = _lead(s, T, seat, vp)





def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}; got {value!r}")
    return int(value)


class LearnerVecEnv(VecEnv):
    """``num_envs`` games stepped together, the learner in one seat of each; see the module docstring.

    Args:
        num_envs: games in the batch (rows).
        map_name: "imperium" (3-5 players) or "italia" (2-4).
        num_players: seats in every game of the batch.
        learner_seat: the learner's seat (0 = start player), or None for a random seat per episode.
        reward: terminal reward mode, "win", "rank" (default) or "vp".
        shaping: weight of the potential-based VP-lead shaping (0 turns it off).
        max_turns: truncate after this many card plays (None or 0: never; else at least
            ``num_players``, so the learner always reaches its first decision).
        seed: seed of the games (``ConcordiaVecEnv``'s contract), the seats and the opponents;
            ``seed()`` and ``MaskablePPO(seed=...)`` replace it at the next ``reset()``.
        intermediate_scoring: play the intermediate-scoring variant.
        observation_bounds: "rules" (default) or "finite", as ``SingleLearnerEnv``.
        opponent: who plays the other seats; only "random" (uniform legal moves, in the kernel).
    """

    def __init__(self, num_envs: int, map_name: str = "imperium", num_players: int = 4,
                 learner_seat: int | None = None, reward: str = "rank", shaping: float = 1.0,
                 max_turns: int | None = TRAINING_MAX_TURNS, seed: int = 0, intermediate_scoring: bool = False,
                 observation_bounds: str = "rules", opponent: str = "random") -> None:
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {', '.join(map(repr, OPPONENTS))}; got {opponent!r}")
        self.games = ConcordiaVecEnv(num_envs, map_name, num_players, seed=seed,
                                     intermediate_scoring=intermediate_scoring, reward=reward, max_turns=max_turns)
        n = self.games.num_players
        if learner_seat is not None:
            learner_seat = _check_int("learner_seat", learner_seat, 0)
            if learner_seat >= n:
                raise ValueError(f"learner_seat must be 0..{n - 1} in a {n}-player game; got {learner_seat}")
        self.learner_seat = learner_seat
        turns = check_max_turns(max_turns)
        if 0 < turns < n:
            raise ValueError(f"max_turns must be None or at least num_players ({n}), so that the learner "
                             f"reaches its first decision; got {max_turns!r}")
        if isinstance(shaping, bool) or not isinstance(shaping, (int, float, np.integer, np.floating)) \
                or not np.isfinite(shaping) or shaping < 0:
            raise ValueError(f"shaping must be a finite number >= 0; got {shaping!r}")
        self.shaping = float(shaping)
        self.map_name, self.num_players, self.reward_mode = map_name, n, self.games.reward_mode
        self.opponent = opponent
        self.render_mode: str | None = None
        self.observation_bounds = observation_bounds
        super().__init__(int(num_envs), observation_space(map_name, observation_bounds), spaces.Discrete(E.NUM_ACTIONS))
        rows = self.num_envs
        self.seats = np.zeros(rows, np.int64)
        self._obs = np.zeros((rows, OBSERVATION_SIZE), np.float32)
        self._lead = np.zeros(rows)
        self._all_rows = np.arange(rows, dtype=np.int64)
        self._no_actions = np.full(rows, -1, np.int64)
        self._actions: np.ndarray | None = None
        self._base_seed = int(seed)
        self._rng = np.random.default_rng(self._base_seed)
        self._needs_reset = True

    # ------------------------------------------------------------ VecEnv protocol
    def reset(self) -> np.ndarray:
        """Restart every game (episode 0) from the seed (the one ``seed()`` set, else the last);
        returns the learner's observations, (num_envs, OBSERVATION_SIZE)."""
        if self._seeds[0] is not None:
            self._base_seed = int(self._seeds[0])
        self._reset_seeds()
        self._reset_options()
        self._rng = np.random.default_rng(self._base_seed)
        self.games.reset(self._base_seed)
        self.seats[:] = self._draw_seats(self.num_envs)
        self._run(self._all_rows, self._no_actions)
        if self.games._ended.any():  # cannot happen: max_turns >= num_players and no game ends that soon
            raise RuntimeError("a game ended before the learner's first decision")
        self._lead[:] = 0.0  # phi is 0 at the start of every episode
        self.reset_infos = [{"seat": int(self.seats[i]), "num_players": self.num_players,
                             "seed": self.games.game_seed(i, 0)} for i in range(self.num_envs)]
        self._needs_reset = False
        return self._obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        if self._needs_reset:
            raise RuntimeError("reset() must be called before step()")
        if self._actions is None:
            raise RuntimeError("step_wait() called without step_async(actions)")
        acts, self._actions = self._checked_actions(self._actions), None
        before = self._lead.copy()
        self._run(self._all_rows, acts)
        rewards = self.shaping * (self._lead - before) if self.shaping else np.zeros(self.num_envs)
        dones = self.games._ended != 0
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        ended = np.flatnonzero(dones)
        if ended.size:
            for i in ended:
                rewards[i] += self._finish(int(i), infos[i])
            self._restart(ended)
        return self._obs.copy(), rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """bool (num_envs, NUM_ACTIONS): the learner's legal actions in every game."""
        return self.games.masks.astype(bool)

    def close(self) -> None:
        """Nothing to release."""

    # ------------------------------------------------------------ attributes and methods
    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """The adapter's attribute ``attr_name``, once per index (all rows share the settings);
        ``AttributeError`` for a name it does not have."""
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Only ``render_mode`` (None) may be set; the other settings are fixed at construction."""
        if attr_name != "render_mode" or value is not None:
            raise AttributeError(f"LearnerVecEnv's {attr_name!r} cannot be set after construction")

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list[Any]:
        """``"action_masks"``: each row's mask (what sb3-contrib asks for). Any other method of the
        adapter is called once and its result repeated per index."""
        rows = list(self._get_indices(indices))
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in rows]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type[gymnasium.Wrapper], indices: Any = None) -> list[bool]:
        """No row is a gymnasium env, so none is wrapped."""
        return [False for _ in self._get_indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]

    # ------------------------------------------------------------ internals
    def _draw_seats(self, count: int) -> np.ndarray:
        if self.learner_seat is not None:
            return np.full(count, self.learner_seat, np.int64)
        return self._rng.integers(self.num_players, size=count).astype(np.int64)

    def _run(self, rows: np.ndarray, actions: np.ndarray) -> None:
        g = self.games
        _advance(g.states, g.game.tables, g.masks, rows, actions, self.seats, g._map_id, g.max_turns,
                 int(self._rng.integers(2**31)), int(self.shaping > 0), self._obs, g.current_players,
                 g._ended, self._lead)

    def _checked_actions(self, actions: np.ndarray) -> np.ndarray:
        """``actions`` as int64 (num_envs,); ``ValueError`` for a wrong shape or type, and the batched
        env's ``IllegalActionError`` naming the game for an illegal one (no game has moved)."""
        if actions.shape not in ((self.num_envs,), (self.num_envs, 1)) or actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers (one per game); "
                             f"got shape {actions.shape} dtype {actions.dtype}")
        acts = actions.reshape(self.num_envs).astype(np.int64)
        in_range = (acts >= 0) & (acts < E.NUM_ACTIONS)
        legal = in_range & (self.games.masks[self._all_rows, np.clip(acts, 0, E.NUM_ACTIONS - 1)] != 0)
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            self.games._raise_illegal(bad, int(acts[bad]))
        return acts

    def _finish(self, i: int, info: dict[str, Any]) -> float:
        """Fill ``info`` for the game of row ``i`` that just ended; restart the row's game (the
        batched env's episode bookkeeping) and return the learner's terminal reward."""
        seat = int(self.seats[i])
        info["terminal_observation"] = self._obs[i].copy()
        self.games.rewards[i] = 0.0
        outcome = self.games._finish(i)  # the next game of row i starts here
        truncated = bool(outcome["truncated"])
        info.update({
            "is_success": bool(not truncated and outcome["winner"] == seat),
            "vp": int(outcome["vp"][seat]), "rank": int(outcome["rank"][seat]), "seat": seat,
            "num_players": self.num_players, "turns": int(outcome["turns"]), "seed": int(outcome["seed"]),
            "opponent": self.opponent, "TimeLimit.truncated": truncated,
        })
        return 0.0 if truncated else float(outcome["rewards"][seat])

    def _restart(self, rows: np.ndarray) -> None:
        """New seats for the new games of ``rows``; play their opponents up to the learner's decision."""
        rows = rows.astype(np.int64)
        self.seats[rows] = self._draw_seats(rows.size)
        self._run(rows, self._no_actions)
        if self.games._ended[rows].any():  # cannot happen: see reset()
            raise RuntimeError("a game ended before the learner's first decision")
        self._lead[rows] = 0.0

