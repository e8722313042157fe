"""`ConcordiaVecEnv`: N independent games stepped together, for throughput.

Contract
--------
* Game ``i`` of the batch plays episode ``k`` (0, 1, ...) from the core seed
  ``seed + i + k * num_envs`` — exactly the game ``raw_env.reset(seed=that)`` or
  ``new_game(map_name, num_players, seed=that)`` plays, so any batch game can be
  replayed one at a time (:meth:`ConcordiaVecEnv.game_seed`).
* Every row is always at a decision. ``current_players[i]`` is the seat that
  must decide in game ``i``; ``obs[i]`` is that seat's observation and
  ``action_masks()[i]`` its legal actions.
* ``step(actions)`` takes one action per game (for its current decision maker)
  and returns ``(obs, masks, rewards, dones, infos)``:

  - ``obs`` float32 (N, OBSERVATION_SIZE), ``masks`` int8 (N, NUM_ACTIONS): the
    next decision of every game (of the *new* game where one just ended);
  - ``rewards`` float64 (N, num_players): every seat's reward, in absolute seat
    order, nonzero only on the step that ends a game;
  - ``dones`` bool (N,): the game ended on this step (terminated or truncated)
    and the row was reset;
  - ``infos`` list of N dicts: empty, except for an ended game:
    ``{"terminated", "truncated", "seed", "rewards", "vp", "rank", "winner",
    "turns", "vp_breakdown"}`` (per-seat lists, winner as a seat index).

  The returned arrays are the env's own buffers, overwritten by the next call:
  copy them to keep them.
* Turn-level mode (``decisions="turn"``, see :mod:`concordia_env.turns`): each action is the
  index of one of at most ``max_candidates`` (K) whole turns; ``obs`` is then float32
  (N, K, OBSERVATION_SIZE), the deciding seat's view of the position each candidate ends in
  (zero rows past the candidates), and ``masks`` int8 (N, K) marks the candidates;
  :meth:`ConcordiaVecEnv.candidate_actions` gives their atomic actions. Rewards, ``dones``
  and ``infos`` are as above, on the step whose turn ends the game.
* An illegal action raises :class:`IllegalActionError` naming the game, the
  seat and the action before any game is stepped, so the batch is unchanged.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import engine as E
from ._internal.jit import kernel
from .encoding import OBSERVATION_SIZE, encode, map_id
from .env import DEFAULT_MAX_TURNS, check_max_turns
from .game import check_seed, check_setup_args, get_game, initial_state
from .rewards import check_reward_mode, outcome_infos, seat_rewards
from .state import GameState, IllegalActionError
from .turns import DEFAULT_CANDIDATES, TurnDecision, check_candidates, check_decisions

_ENDED, _TRUNCATED = 1, 2


@kernel("int32[:, ::1], int32[::1], int8[:, ::1], int64[::1], int64, int64, float32[:, ::1], int64[::1], int64[::1]")
def _step_batch(S, T, M, actions, map_id, max_turns, obs, current, ended):
    """Apply ``actions[i]`` to game ``i``; encode the next decision of the games still running."""
    for i in range(S.shape[0]):
        E.step(S[i], T, M[i], actions[i])
        if S[i, E.O_PHASE] == E.PH_OVER:
            ended[i] = _ENDED
        elif max_turns > 0 and S[i, E.O_TURN] >= max_turns:
            ended[i] = _TRUNCATED
        else:
            ended[i] = 0
            current[i] = S[i, E.O_CURRENT]
            encode(S[i], T, map_id, current[i], obs[i])





class ConcordiaVecEnv:
    """``num_envs`` games of one map and player count, stepped in one compiled call.

    See the module docstring for the full contract. Rewards use the same modes
    as the AEC env ("win", "rank", "vp"); games reaching ``max_turns`` card
    plays are truncated with zero reward.
    """

    def __init__(self, num_envs: int, map_name: str = "imperium", num_players: int = 4, seed: int = 0,
                 intermediate_scoring: bool = False, reward: str = "win",
                 max_turns: int | None = DEFAULT_MAX_TURNS, decisions: str = "atomic",
                 max_candidates: int = DEFAULT_CANDIDATES) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int; got {num_envs!r}")
        check_setup_args(map_name, num_players)
        self.num_envs = int(num_envs)
        self.map_name = map_name
        self.num_players = int(num_players)
        self.intermediate_scoring = bool(intermediate_scoring)
        self.reward_mode = check_reward_mode(reward)
        self.max_turns = check_max_turns(max_turns)
        self.decisions = check_decisions(decisions)
        self.max_candidates = check_candidates(max_candidates)
        self.game = get_game(map_name)
        self._map_id = map_id(map_name)
        self.agent_names = [f"player_{p}" for p in range(self.num_players)]
        n = self.num_envs
        self.states = np.zeros((n, E.STATE_SIZE), np.int32)
        self.masks = np.zeros((n, E.NUM_ACTIONS), np.int8)
        self.obs = np.zeros((n, OBSERVATION_SIZE), np.float32)
        #: turn-level mode: every game's candidates, their observations and mask (what step returns)
        self._turns = ([TurnDecision(map_name, self.max_candidates) for _ in range(n)]
                       if self.decisions == "turn" else [])
        self.candidate_obs = np.zeros((n, self.max_candidates, OBSERVATION_SIZE) if self._turns else (0,), np.float32)
        self.candidate_masks = np.zeros((n, self.max_candidates) if self._turns else (0,), np.int8)
        self.current_players = np.zeros(n, np.int64)
        self.rewards = np.zeros((n, self.num_players))
        self.episodes = np.zeros(n, np.int64)
        self._ended = np.zeros(n, np.int64)
        self._rows = np.arange(n)
        self.reset(seed)

    # ------------------------------------------------------------ seeds
    def game_seed(self, i: int, episode: int) -> int:
        """Core seed of episode ``episode`` of game ``i``."""
        return self.seed + i + episode * self.num_envs

    def _start(self, i: int) -> None:
        self.states[i] = initial_state(self.game, self.num_players, self.game_seed(i, int(self.episodes[i])),
                                       self.intermediate_scoring)
        E.legal_mask(self.states[i], self.game.tables, self.masks[i])
        p = int(self.states[i, E.O_CURRENT])
        self.current_players[i] = p
        encode(self.states[i], self.game.tables, self._map_id, p, self.obs[i])
        self._candidates(i)

    def _candidates(self, i: int) -> None:
        """Turn-level mode: the candidates of game ``i``'s decision into the returned buffers."""
        if self._turns:
            turn = self._turns[i]
            turn.refresh(self.states[i], self.game.tables)
            self.candidate_obs[i] = turn.observations
            self.candidate_masks[i] = turn.mask()

    # ------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Restart every game (episode 0), from ``seed`` if given; returns (obs, masks)."""
        if seed is not None:
            self.seed = check_seed(seed)
        self.episodes[:] = 0
        for i in range(self.num_envs):
            self._start(i)
        return self._returned()

    def _returned(self) -> tuple[np.ndarray, np.ndarray]:
        """(obs, masks) of the mode: atomic observations and masks, or the candidates'."""
        if self._turns:
            return self.candidate_obs, self.candidate_masks
        return self.obs, self.masks

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One action per game; see the module docstring for what comes back."""
        acts = np.asarray(actions)
        if acts.shape != (self.num_envs,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be {self.num_envs} integers (one per game); "
                             f"got shape {acts.shape} dtype {acts.dtype}")
        acts = acts.astype(np.int64, copy=False)
        if self._turns:
            return self._step_turns(acts)
        in_range = (acts >= 0) & (acts < E.NUM_ACTIONS)
        legal = in_range & (self.masks[self._rows, np.clip(acts, 0, E.NUM_ACTIONS - 1)] != 0)
        if not legal.all():
            self._raise_illegal(int(np.flatnonzero(~legal)[0]), int(acts[~legal][0]))
        _step_batch(self.states, self.game.tables, self.masks, acts, self._map_id, self.max_turns,
                    self.obs, self.current_players, self._ended)
        self.rewards[:] = 0.0
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(self._ended):
            infos[i] = self._finish(int(i))
        return self.obs, self.masks, self.rewards, self._ended != 0, infos

    def _step_turns(self, acts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """Turn-level step: every game's chosen candidate (all checked first), then the next decisions."""
        sequences = []
        for i, k in enumerate(acts):
            try:
                sequences.append(self._turns[i].sequence(int(k)))
            except IllegalActionError as err:
                raise IllegalActionError(f"game {i}: {err}", err.action, err.player, err.phase) from None
        self.rewards[:] = 0.0
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        T = self.game.tables
        for i, seq in enumerate(sequences):
            s = self.states[i]
            for a in seq:
                E.step(s, T, self.masks[i], a)
            if s[E.O_PHASE] == E.PH_OVER:
                self._ended[i] = _ENDED
            elif self.max_turns > 0 and s[E.O_TURN] >= self.max_turns:
                self._ended[i] = _TRUNCATED
            else:
                self._ended[i] = 0
                self.current_players[i] = int(s[E.O_CURRENT])
                encode(s, T, self._map_id, int(self.current_players[i]), self.obs[i])
                self._candidates(i)
                continue
            infos[i] = self._finish(i)
        return self.candidate_obs, self.candidate_masks, self.rewards, self._ended != 0, infos

    def candidate_actions(self, i: int) -> list[tuple[int, ...]]:
        """Turn-level mode: the atomic actions of each candidate of game ``i``'s decision."""
        if not self._turns:
            raise RuntimeError("candidate_actions() is for the turn-level mode: make the env with decisions='turn'")
        if not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be 0..{self.num_envs - 1}; got {i}")
        turn = self._turns[i]
        return [turn.sequence(k) for k in range(turn.generator.count)]

    def _finish(self, i: int) -> dict:
        st = GameState(self.game, self.states[i].copy())
        truncated = self._ended[i] == _TRUNCATED
        if not truncated:
            self.rewards[i] = seat_rewards(st, self.reward_mode)
        per_seat = outcome_infos(st, self.agent_names)
        ranks = [d["rank"] for d in per_seat]
        info = {
            "terminated": not truncated, "truncated": bool(truncated),
            "seed": self.game_seed(i, int(self.episodes[i])),
            "rewards": self.rewards[i].tolist(),
            "winner": ranks.index(1),
            "turns": per_seat[0]["turns"],
            **{k: [d[k] for d in per_seat] for k in ("vp", "rank", "vp_breakdown")},
        }
        self.episodes[i] += 1
        self._start(i)
        return info

    def _raise_illegal(self, i: int, action: int) -> None:
        st = GameState(self.game, self.states[i].copy())
        try:
            st.apply(action)
        except IllegalActionError as err:
            raise IllegalActionError(f"game {i}: {err}", action, err.player, err.phase) from None
        raise AssertionError("unreachable: the action was legal")  # pragma: no cover

    def action_masks(self) -> np.ndarray:
        """bool (N, NUM_ACTIONS), or (N, K) in turn-level mode: every game's current choices (for sb3-contrib)."""
        return (self.candidate_masks if self._turns else self.masks).view(np.bool_)

    def state(self, i: int) -> GameState:
        """A copy of game ``i`` as a core :class:`GameState` (for search agents, rendering, saving)."""
        if not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be 0..{self.num_envs - 1}; got {i}")
        return GameState(self.game, self.states[i].copy())

    def close(self) -> None:
        """Nothing to release; present for the usual vector-env interface."""
