"""`SingleLearnerVectorEnv`: the single-learner env as a ``gymnasium.vector.VectorEnv`` over the batched games.

::

    import gymnasium
    import concordia_env  # noqa: F401  (registers the ids)

    envs = gymnasium.make_vec("concordia/Italia-v0", num_envs=16, num_players=2)
    obs, infos = envs.reset(seed=0)                      # (16, 2378) float32
    masks = infos["action_mask"]                         # (16, 402) int8, never all zero
    obs, rewards, terminations, truncations, infos = envs.step(actions)

Contract
--------
* **The game.** Row ``i`` is one game of :class:`concordia_env.training.selfplay.SingleLearnerEnv`'s
  kind: the learner holds one seat, and every other seat is played inside :meth:`step`, which
  returns only when the learner must decide again or the game is over. The constructor takes
  ``SingleLearnerEnv``'s arguments and checks them with it (same errors): player count drawn per
  episode from ``num_players`` (None: every count the map allows), the learner's seat (uniform
  unless ``learner_seat``), one opponent kind per episode from ``opponents`` (random, heuristic,
  frozen snapshots of the learner), the same rewards (``reward`` mode at the end, plus the
  ``shaping`` VP-lead term every step), ``max_turns`` truncation and ``illegal_action`` modes.
* **Seeds.** Row ``i`` plays its episode ``k`` from the core seed ``seed + i + k * num_envs``:
  the game :class:`concordia_env.vector.ConcordiaVecEnv` plays in row ``i`` (and
  ``new_game(map_name, n, seed=that)``). ``reset(seed=s)`` also seeds :attr:`np_random`, the
  generator behind the counts, seats, opponents and random moves, so a seed and the learner's
  actions replay every row exactly; ``reset()`` without a seed continues that generator.
* **Batched work.** The moves of every row are applied by the batched env's compiled step over
  all rows that move, and random opponents choose for all their rows in one numpy operation;
  only heuristic and snapshot opponents decide one row at a time.
* **Autoreset** is ``AutoresetMode.SAME_STEP`` (``metadata["autoreset_mode"]``): a row whose
  episode ends on a step returns ``terminated``/``truncated`` True, that episode's last reward,
  and already the *next* episode's first observation. gymnasium's keys then hold the end:
  ``infos["final_obs"]`` (object array, the learner's last view where an episode ended, None
  elsewhere, mask ``infos["_final_obs"]``) and ``infos["final_info"]`` (a dict of arrays of the
  ended episodes' infos, each key with its ``_key`` mask; mask ``infos["_final_info"]``): what
  ``SingleLearnerEnv.step`` returns on its last step (``is_success``, ``vp``, ``rank``,
  ``num_players``, ``seat``, ``opponent``, ``turns``, ``action_mask`` all zero) plus ``seed``,
  the core seed of the game. A truncated episode can therefore be bootstrapped from
  ``final_obs``. The new episode's start info (``num_players``, ``seat``, ``opponent``,
  ``seed``) is in ``infos`` at those rows, as gymnasium's ``SyncVectorEnv`` puts it.
* **Masks.** ``infos["action_mask"]`` (int8, (num_envs, 402), on reset and every step) is the
  learner's legal actions in the observation returned, so after an autoreset the new game's;
  it is never all zero. :meth:`action_masks` gives the same as bool.
* **Bad input.** Actions must be an integer array of shape ``(num_envs,)`` (``ValueError``
  otherwise). With ``illegal_action="raise"`` (default) an illegal action raises
  :class:`~concordia_env.state.IllegalActionError` naming the game, the action, the seat and
  the phase before any row moves; ``"terminate"`` ends that row's episode with
  ``illegal_penalty`` (its game unchanged, ``final_info`` holding ``illegal_action`` and
  ``error``); ``"random_legal"`` plays a random legal action instead (``illegal_action`` and
  ``played_action`` in that row's info).

Returned arrays are new arrays, never the env's buffers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from concordia_env import engine as E
from concordia_env.agents.base import Agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.encoding import OBSERVATION_LAYOUT, OBSERVATION_SIZE, encode_batch, map_id, observation
from concordia_env.game import check_seed, get_game, initial_state
from concordia_env.rewards import VP_SCALE, seat_rewards
from concordia_env.state import GameState, IllegalActionError
from concordia_env.training.selfplay import (
    ILLEGAL_PENALTY,
    RENDER_FPS,
    TRAINING_MAX_TURNS,
    FrozenPolicy,
    FrozenPolicyAgent,
    OpponentPool,
    SingleLearnerEnv,
)
from concordia_env.vector import _ENDED, _TRUNCATED, _step_batch

__all__ = ["SingleLearnerVectorEnv"]

#: the observation's final-scoring VP block, (MAXP seats from the observer's, NGODS)
_VP = OBSERVATION_LAYOUT["victory_points"]


class SingleLearnerVectorEnv(VectorEnv):
    """``num_envs`` single-learner games stepped together; see the module docstring.

    Args:
        num_envs: games in the batch (rows).
        Every other argument is :class:`~concordia_env.training.selfplay.SingleLearnerEnv`'s,
        with its defaults and its checks.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": ["ansi"],
                                "render_fps": RENDER_FPS}

    def __init__(self, num_envs: int, map_name: str = "imperium", num_players: int | Iterable[int] | None = None,
                 learner_seat: int | None = None, opponents: OpponentPool | str | dict = "random=1",
                 reward: str = "rank", shaping: float = 1.0, max_turns: int | None = TRAINING_MAX_TURNS,
                 render_mode: str | None = None, illegal_action: str = "raise",
                 illegal_penalty: float = ILLEGAL_PENALTY, observation_bounds: str = "rules") -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int; got {num_envs!r}")
        #: the settings, checked by the single env itself (it is never reset: it only holds them)
        self.settings = SingleLearnerEnv(map_name, num_players, learner_seat, opponents, reward, shaping,
                                         cast(int, max_turns), render_mode, illegal_action, illegal_penalty,
                                         observation_bounds)
        most = max(self.settings.player_counts)
        if 0 < self.settings.max_turns < most:
            raise ValueError(f"max_turns must be None or at least the largest player count ({most}), so that "
                             f"the learner reaches its first decision; got {max_turns!r}")
        self.num_envs = int(num_envs)
        self.map_name = map_name
        self.render_mode = render_mode
        self.single_observation_space = self.settings.observation_space
        self.single_action_space = self.settings.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._game = get_game(map_name)
        self._map_id = map_id(map_name)
        self._allocate(self.num_envs)

    def _allocate(self, n: int) -> None:
        """The batch's buffers: row ``i`` of each array belongs to game ``i``."""
        self._states = np.zeros((n, E.STATE_SIZE), np.int32)
        self._masks = np.zeros((n, E.NUM_ACTIONS), np.int8)
        self._obs = np.zeros((n, OBSERVATION_SIZE), np.float32)  # the learner's views
        self._scratch = np.zeros((n, OBSERVATION_SIZE), np.float32)  # what the compiled step encodes (unused)
        self._current = np.zeros(n, np.int64)
        self._ended = np.zeros(n, np.int64)
        #: per row: the learner's seat, the player count and the episode number (0 at reset)
        self.seats = np.zeros(n, np.int64)
        self.players = np.zeros(n, np.int64)
        self.episodes = np.zeros(n, np.int64)
        self._lead = np.zeros(n)  # the shaping potential phi of the learner's last view
        self._random_rows = np.zeros(n, bool)
        self._kinds: list[str] = [""] * n
        self._opponents: list[list[Agent | None]] = [[] for _ in range(n)]
        self._rows = np.arange(n, dtype=np.int64)
        self.seed = 0
        self._started = False

    # ------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Start episode 0 of every row, from ``seed`` (an int >= 0) if given; ``options`` is
        accepted and unused (``reset_mask`` is refused: rows restart themselves)."""
        if options and "reset_mask" in options:
            raise ValueError("options['reset_mask'] is for vector envs without autoreset; this one restarts "
                             "every ended game itself (AutoresetMode.SAME_STEP)")
        if seed is not None and (check_seed(seed) < 0):
            raise ValueError(f"seed must be an int >= 0; got {seed!r}")
        super().reset(seed=None if seed is None else int(seed))  # (gymnasium's seeding takes Python ints only)
        self.seed = int(seed) if seed is not None else int(self.np_random.integers(2**31))
        self.episodes[:] = 0
        infos: dict[str, Any] = {}
        self._start(self._rows, infos)
        self._started = True
        infos["action_mask"], infos["_action_mask"] = self._masks.copy(), np.ones(self.num_envs, bool)
        return self._obs.copy(), infos

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every row, then the other seats; see the module docstring."""
        if not self._started:
            raise RuntimeError("reset() must be called before step()")
        acts = self._checked(actions)
        row_infos: dict[int, dict[str, Any]] = {}
        quit_ = self._illegal(acts, row_infos)
        moving = self._rows[~quit_]
        before = self._lead.copy()
        if moving.size:
            self._advance(moving, acts[moving])
            self._play_opponents(moving)
        self._encode()
        rewards = np.zeros(self.num_envs)
        if self.settings.shaping:
            self._lead = self._leads()
            rewards = self.settings.shaping * (self._lead - before)
        terminated = (self._ended == _ENDED) | quit_
        truncated = self._ended == _TRUNCATED
        infos: dict[str, Any] = {}
        done = np.flatnonzero(terminated | truncated)
        if done.size:
            self._end_episodes(done, quit_, rewards, row_infos, infos)
        for i, info in row_infos.items():  # rows whose episode goes on
            infos = self._add_info(infos, info, i)
        infos["action_mask"], infos["_action_mask"] = self._masks.copy(), np.ones(self.num_envs, bool)
        return self._obs.copy(), rewards, terminated, truncated, infos

    def render(self) -> tuple[str, ...] | None:
        """``render_mode="ansi"``: every game as text (the learner's seat is ``seats[i]``); else None."""
        if self.render_mode != "ansi" or not self._started:
            return None
        return tuple(str(self.state(i)) for i in range(self.num_envs))

    # ------------------------------------------------------------ extras
    def action_masks(self) -> np.ndarray:
        """bool (num_envs, NUM_ACTIONS): the learner's legal actions in every row (``infos["action_mask"]``)."""
        return self._masks.astype(bool)

    def state(self, i: int) -> GameState:
        """A copy of row ``i``'s game as a core :class:`GameState`."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be 0..{self.num_envs - 1}; got {i!r}")
        return GameState(self._game, self._states[i].copy())

    def game_seed(self, i: int, episode: int) -> int:
        """Core seed of episode ``episode`` of row ``i`` (:meth:`ConcordiaVecEnv.game_seed`'s rule)."""
        return self.seed + i + episode * self.num_envs

    def add_snapshot(self, policy: FrozenPolicy) -> None:
        """Put a frozen learner into the pool of ``"self"`` opponents (from each row's next episode)."""
        self.settings.add_snapshot(policy)

    def num_snapshots(self) -> int:
        return self.settings.num_snapshots()

    # ------------------------------------------------------------ episodes
    def _start(self, rows: np.ndarray, infos: dict[str, Any]) -> None:
        """New episodes in ``rows``: draw each, set it up, play up to the learner's first decision."""
        for i in rows.tolist():
            self._draw(i)
        self._play_opponents(rows)
        if self._ended[rows].any():  # cannot happen: max_turns >= every player count
            raise RuntimeError("a game ended before the learner's first decision")
        self._encode()
        self._lead[rows] = 0.0  # phi is 0 at the start of every episode
        for i in rows.tolist():
            start = {"num_players": int(self.players[i]), "seat": int(self.seats[i]),
                     "opponent": self._kinds[i], "seed": self.game_seed(i, int(self.episodes[i]))}
            self._add_info(infos, start, i)

    def _draw(self, i: int) -> None:
        """Row ``i``'s episode as ``SingleLearnerEnv.reset`` draws one: player count, seat, opponents."""
        rng, settings = self.np_random, self.settings
        n = int(rng.choice(settings.player_counts))
        seat = int(rng.integers(n)) if settings.learner_seat is None else settings.learner_seat
        kind = settings.pool.draw_kind(rng)
        if kind == "random":  # played for all such rows at once, from this env's generator
            seats: list[Agent | None] = []
        elif kind == "heuristic":  # one agent plays every other seat: it keeps no per-seat memory
            shared = HeuristicAgent(int(rng.integers(2**31)))
            seats = [None if p == seat else shared for p in range(n)]
        else:
            seats = [None if p == seat else
                     FrozenPolicyAgent(settings.pool.draw_snapshot(rng), seed=int(rng.integers(2**31)))
                     for p in range(n)]
        self.players[i], self.seats[i], self._kinds[i], self._opponents[i] = n, seat, kind, seats
        self._random_rows[i] = kind == "random"
        s = self._states[i]
        s[:] = initial_state(self._game, n, self.game_seed(i, int(self.episodes[i])), False)
        E.legal_mask(s, self._game.tables, self._masks[i])
        self._current[i], self._ended[i] = int(s[E.O_CURRENT]), 0

    def _end_episodes(self, done: np.ndarray, quit_: np.ndarray, rewards: np.ndarray,
                      row_infos: dict[int, dict[str, Any]], infos: dict[str, Any]) -> None:
        """The ended rows: terminal rewards, gymnasium's ``final_obs`` and ``final_info``, next episodes."""
        final_obs = np.full(self.num_envs, None, dtype=object)
        final_info: dict[str, Any] = {}
        for i in done.tolist():
            final_obs[i] = self._obs[i].copy()
            st = GameState(self._game, self._states[i].copy())
            info = {**self._outcome(i, st), **row_infos.pop(i, {})}
            if quit_[i]:  # illegal_action="terminate": the penalty, no shaping term
                rewards[i] = self.settings.illegal_penalty
            elif self._ended[i] == _ENDED:
                rewards[i] += float(seat_rewards(st, self.settings.reward_mode)[self.seats[i]])
            final_info = self._add_info(final_info, info, i)
        ended = np.zeros(self.num_envs, bool)
        ended[done] = True
        infos["final_obs"], infos["_final_obs"] = final_obs, ended
        infos["final_info"], infos["_final_info"] = final_info, ended.copy()
        self.episodes[done] += 1
        self._start(done, infos)

    def _outcome(self, i: int, st: GameState) -> dict[str, Any]:
        """``SingleLearnerEnv``'s info at the end of an episode, plus the game's core seed."""
        seat = int(self.seats[i])
        ranking = st.ranking()
        truncated = self._ended[i] == _TRUNCATED
        return {
            "is_success": bool(not truncated and ranking[0] == seat),
            "vp": int(st.scores()[seat]),
            "rank": ranking.index(seat) + 1,
            "num_players": int(self.players[i]),
            "seat": seat,
            "opponent": self._kinds[i],
            "turns": int(st.field("turn")),
            "action_mask": np.zeros(E.NUM_ACTIONS, np.int8),  # no decision after the end
            "seed": self.game_seed(i, int(self.episodes[i])),
        }

    # ------------------------------------------------------------ actions
    def _checked(self, actions: Any) -> np.ndarray:
        """``actions`` as a new int64 (num_envs,) array; ``ValueError`` for a wrong shape or type and,
        with ``illegal_action="raise"``, ``IllegalActionError`` naming the first illegal one."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers, shape ({self.num_envs},), one per "
                             f"game; got shape {acts.shape} dtype {acts.dtype}")
        acts = acts.astype(np.int64)
        if self.settings.illegal_action == "raise":
            bad = np.flatnonzero(~self._legal(acts))
            if bad.size:
                i = int(bad[0])
                err = self._core_error(i, int(acts[i]))
                raise IllegalActionError(f"game {i}: {err}", err.action, err.player, err.phase)
        return acts

    def _legal(self, acts: np.ndarray) -> np.ndarray:
        in_range = (acts >= 0) & (acts < E.NUM_ACTIONS)
        return in_range & (self._masks[self._rows, np.clip(acts, 0, E.NUM_ACTIONS - 1)] != 0)

    def _core_error(self, i: int, action: int) -> IllegalActionError:
        """The core's error for ``action`` in row ``i`` (found on a copy: the row is unchanged)."""
        try:
            self.state(i).apply(action)
        except IllegalActionError as err:
            return err
        raise AssertionError("unreachable: the action was legal")  # pragma: no cover

    def _illegal(self, acts: np.ndarray, row_infos: dict[int, dict[str, Any]]) -> np.ndarray:
        """Apply ``illegal_action`` "terminate" or "random_legal" to the illegal entries of ``acts``;
        returns the rows whose episode an illegal action ends."""
        quit_ = np.zeros(self.num_envs, bool)
        for i in np.flatnonzero(~self._legal(acts)).tolist():
            action = int(acts[i])
            if self.settings.illegal_action == "terminate":
                quit_[i] = True
                row_infos[i] = {"is_success": False, "illegal_action": action,
                                "error": str(self._core_error(i, action))}
            else:  # "random_legal" ("raise" was handled by _checked)
                acts[i] = self._random_actions(np.array([i]))[0]
                row_infos[i] = {"illegal_action": action, "played_action": int(acts[i])}
        return quit_

    # ------------------------------------------------------------ playing
    def _play_opponents(self, rows: np.ndarray) -> None:
        """Play the other seats of ``rows`` until each is at the learner's decision or over."""
        while True:
            rows = rows[(self._ended[rows] == 0) & (self._current[rows] != self.seats[rows])]
            if not rows.size:
                return
            self._advance(rows, self._opponent_actions(rows))

    def _opponent_actions(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty(rows.size, np.int64)
        random = self._random_rows[rows]
        if random.any():
            out[random] = self._random_actions(rows[random])
        for j in np.flatnonzero(~random):
            out[j] = self._agent_action(int(rows[j]))
        return out

    def _random_actions(self, rows: np.ndarray) -> np.ndarray:
        """A uniformly random legal action for each of ``rows`` (one draw of the env's generator each)."""
        legal = self._masks[rows] != 0
        pick = (self.np_random.random(rows.size) * legal.sum(axis=1)).astype(np.int64)
        return (np.cumsum(legal, axis=1) > pick[:, None]).argmax(axis=1).astype(np.int64)

    def _agent_action(self, i: int) -> int:
        """The move of row ``i``'s deciding opponent (a heuristic or a snapshot), checked."""
        p = int(self._current[i])
        agent = self._opponents[i][p]
        assert agent is not None, "the learner's seat is never played by an opponent"
        st = self.state(i)
        action = int(agent.act(observation(st, p), self._masks[i].copy(), st))
        if not (0 <= action < E.NUM_ACTIONS and self._masks[i, action]):
            raise RuntimeError(f"the {self._kinds[i]} opponent in seat {p} of game {i} chose the illegal action "
                               f"{action}")
        return action

    def _advance(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Apply ``actions[j]`` to game ``rows[j]`` with the batched env's compiled step."""
        T, turns = self._game.tables, self.settings.max_turns
        acts = np.ascontiguousarray(actions, dtype=np.int64)
        if rows.size == self.num_envs:  # every row (rows are increasing and distinct): the buffers themselves
            _step_batch(self._states, T, self._masks, acts, self._map_id, turns, self._scratch, self._current,
                        self._ended)
            return
        S, M, cur, end = self._states[rows], self._masks[rows], self._current[rows], self._ended[rows]
        _step_batch(S, T, M, acts, self._map_id, turns, self._scratch[:rows.size], cur, end)
        self._states[rows], self._masks[rows], self._current[rows], self._ended[rows] = S, M, cur, end

    def _encode(self) -> None:
        """Every row's observation from the learner's seat (its last view where a game just ended)."""
        encode_batch(self._states, self._game.tables, self._map_id, self.seats, self._obs)

    def _leads(self) -> np.ndarray:
        """phi per row: the learner's VP lead over the others' mean, / VP_SCALE, read from its view
        (the observation's ``victory_points`` are final scoring's, seat-relative: row 0 is the learner)."""
        vp = self._obs[:, _VP].reshape(self.num_envs, E.MAXP, E.NGODS).sum(axis=2, dtype=np.float64)
        return (vp[:, 0] - vp[:, 1:].sum(axis=1) / (self.players - 1)) / VP_SCALE
