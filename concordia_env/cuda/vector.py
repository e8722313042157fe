"""`ConcordiaCudaVecEnv`: N games on a GPU, one thread per game, with the batched CPU env's contract.

The contract is :class:`concordia_env.vector.ConcordiaVecEnv`'s (see that module): game ``i``
plays episode ``k`` from seed ``seed + i + k * num_envs`` (the same game as on the CPU), every
row is always at a decision, ``step(actions)`` returns ``(obs, masks, rewards, dones, infos)``
and an ended game is reset in the same call. The differences:

* The arrays live on the device. With ``output="torch"`` (the default when torch sees a CUDA
  device) they are torch CUDA tensors sharing the env's buffers (``torch.as_tensor`` on the
  numba device arrays, through ``__cuda_array_interface__``: no copy), and actions may be a
  CUDA tensor; ``output="numba"`` gives the numba device arrays; ``output="numpy"`` host
  copies (the only choice under numba's CUDA simulator, where there is no device memory).
  Like the CPU env's, the returned buffers are overwritten by the next call.
* ``rewards`` are float32 (N, num_players): the CPU env's float64 rewards rounded to float32
  (computed in float64 on the device, as :func:`concordia_env.rewards.seat_rewards` does).
* ``infos`` (``infos=True``, the default) are built on the host for the games that ended, from
  their last states gathered in one transfer, by the same functions as the CPU env's; with
  ``infos=False`` the list is empty and nothing is copied to the host (the fast path).
* A new game is set up on the device (:func:`concordia_env.rules.setup.setup_state`, the host's
  own setup), so an auto-reset never goes through the host.
* Illegal actions are checked on the device (one flag read back per step); with
  ``check_actions=False`` that read is skipped and an illegal action is undefined behaviour.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import engine as E
from ..encoding import OBSERVATION_SIZE, encode, map_id
from ..env import DEFAULT_MAX_TURNS, check_max_turns
from ..game import check_seed, check_setup_args, get_game, setup_table, template_state
from ..rewards import REWARD_MODES, check_reward_mode, outcome_infos, seat_rewards
from ..state import GameState, IllegalActionError
from . import games as G
from .backend import require_cuda, simulator_requested, to_host, torch_cuda

OUTPUTS = ("torch", "numba", "numpy")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class ConcordiaCudaVecEnv:
    """``num_envs`` games of one map and player count on the GPU; see the module docstring.

    Args:
        num_envs, map_name, num_players, seed, intermediate_scoring, reward, max_turns: as for
            :class:`concordia_env.vector.ConcordiaVecEnv`.
        output: "torch", "numba" or "numpy" (default: torch when torch sees a CUDA device,
            else numba; numpy under the simulator).
        infos: build the ended games' info dicts on the host (default True).
        check_actions: check every action against its game's mask on the device first (default True).
        keep_final_states: keep each ended game's last state on the device (default: ``infos``);
            :meth:`final_state` reads it.
        threads_per_block: CUDA block size of the kernels (default 128).

    Raises:
        CudaUnavailableError: numba-cuda is missing or no CUDA device is usable.
        ValueError: a bad argument (named).
    """

    def __init__(self, num_envs: int, map_name: str = "imperium", num_players: int = 4, seed: int = 0,
                 intermediate_scoring: bool = False, reward: str = "win",
                 max_turns: int | None = DEFAULT_MAX_TURNS, *, output: str | None = None, infos: bool = True,
                 check_actions: bool = True, keep_final_states: bool | None = None,
                 threads_per_block: int = 128) -> None:
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int; got {num_envs!r}")
        check_setup_args(map_name, num_players)
        if isinstance(threads_per_block, bool) or not isinstance(threads_per_block, int) \
                or not 1 <= threads_per_block <= 1024:
            raise ValueError(f"threads_per_block must be an int in 1..1024; got {threads_per_block!r}")
        self.cuda = require_cuda()
        from . import kernels  # imports numba.cuda: only once it is known to work

        self._k = kernels
        self.simulator = simulator_requested()
        self.output = self._check_output(output)
        self._torch: Any = torch_cuda() if self.output == "torch" else None
        self.num_envs = int(num_envs)
        self.map_name = map_name
        self.num_players = int(num_players)
        self.intermediate_scoring = bool(intermediate_scoring)
        self.reward_mode = check_reward_mode(reward)
        self.max_turns = check_max_turns(max_turns)
        self.infos = bool(infos)
        self.check_actions = bool(check_actions)
        keep = self.infos if keep_final_states is None else bool(keep_final_states)
        self.threads_per_block = threads_per_block
        self.game = get_game(map_name)
        self.agent_names = [f"player_{p}" for p in range(self.num_players)]
        self._map_id = map_id(map_name)
        self._mode = REWARD_MODES.index(self.reward_mode)
        self._seed = 0
        cu, n = self.cuda, self.num_envs
        self._T = cu.to_device(self.game.tables)
        self._template = cu.to_device(template_state(self.game, self.num_players, self.intermediate_scoring))
        self._R = cu.to_device(setup_table(self.game, self.num_players))
        self._S = cu.device_array((n, E.STATE_SIZE), np.int32)
        self._M = cu.device_array((n, E.NUM_ACTIONS), np.int8)
        self._obs = cu.device_array((n, OBSERVATION_SIZE), np.float32)
        self._rewards = cu.to_device(np.zeros((n, self.num_players), np.float32))
        self._finals = cu.device_array((n, E.STATE_SIZE) if keep else (1, 1), np.int32)
        self._ended = cu.to_device(np.zeros(n, np.int8))
        self._dones = cu.to_device(np.zeros(n, np.bool_))
        self._current = cu.device_array(n, np.int64)
        self._episodes = cu.to_device(np.zeros(n, np.int64))
        self._first_bad = cu.device_array(1, np.int64)
        self._playout: tuple[Any, Any, Any] | None = None
        self._actions: Any = None
        self._views: dict[str, Any] = {}
        if self._torch is not None:
            torch = self._torch
            self.device = torch.device("cuda", cu.get_current_device().id)
            for name in ("_obs", "_M", "_rewards", "_dones", "_current"):
                self._views[name] = torch.as_tensor(getattr(self, name), device=self.device)
        self.reset(seed)

    # ------------------------------------------------------------ arguments and arrays
    def _check_output(self, output: str | None) -> str:
        if output is None:
            if self.simulator:
                return "numpy"
            return "torch" if torch_cuda() is not None else "numba"
        if output not in OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(map(repr, OUTPUTS))}; got {output!r}")
        if self.simulator and output != "numpy":
            raise ValueError(f"under numba's CUDA simulator (NUMBA_ENABLE_CUDASIM=1) there is no device memory: "
                             f"output must be 'numpy', not {output!r}")
        if output == "torch" and torch_cuda() is None:
            raise ValueError("output='torch' needs torch with CUDA (torch.cuda.is_available() is False or "
                             "torch is not installed); use output='numba'")
        return output

    def _stream(self) -> Any:
        """The stream kernels run on: torch's current one when handing tensors to torch (so torch's
        later work is ordered after them), else numba's default."""
        if self._torch is not None:
            return self.cuda.external_stream(self._torch.cuda.current_stream(self.device).cuda_stream)
        return 0

    def _launch(self, kernel: Any, count: int, *args: Any) -> None:
        if count == 0:
            return
        tpb = min(self.threads_per_block, count)
        kernel[(count + tpb - 1) // tpb, tpb, self._stream()](*args)

    def _out(self, name: str) -> Any:
        """The buffer ``name`` as this env hands it out (a torch view, the device array, a host copy)."""
        if self.output == "torch":
            return self._views[name]
        array = getattr(self, name)
        return array if self.output == "numba" else array.copy_to_host()

    @property
    def obs(self) -> Any:
        """float32 (N, OBSERVATION_SIZE): the deciding seat's observation in every game."""
        return self._out("_obs")

    @property
    def masks(self) -> Any:
        """int8 (N, NUM_ACTIONS): the legal actions of every game's current decision."""
        return self._out("_M")

    @property
    def current_players(self) -> Any:
        """int64 (N,): the seat that decides now in every game."""
        return self._out("_current")

    @property
    def episodes(self) -> np.ndarray:
        """int64 (N,) on the host: how many games each row has finished since the last reset."""
        return self._episodes.copy_to_host()

    @property
    def truncated(self) -> Any:
        """bool (N,): whether the last step ended each game by ``max_turns`` (rather than by the rules)."""
        trunc = self._ended.copy_to_host() == G.TRUNCATED
        if self.output == "torch":
            return self._torch.as_tensor(trunc, device=self.device)
        return trunc if self.output == "numpy" else self.cuda.to_device(trunc)

    def action_masks(self) -> Any:
        """bool (N, NUM_ACTIONS): the masks as booleans (a view for torch and numba outputs)."""
        if self.output == "torch":
            return self._views["_M"].view(self._torch.bool)
        if self.output == "numba":
            return self._M.view(np.bool_)
        return self._M.copy_to_host().view(np.bool_)

    # ------------------------------------------------------------ seeds
    @property
    def seed(self) -> int:
        """The seed of the last reset: game ``i``'s episode ``k`` is ``seed + i + k * num_envs``."""
        return self._seed

    def game_seed(self, i: int, episode: int) -> int:
        """Core seed of episode ``episode`` of game ``i``."""
        return self._seed + i + episode * self.num_envs

    # ------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None) -> tuple[Any, Any]:
        """Restart every game (episode 0), from ``seed`` if given; returns (obs, masks)."""
        if seed is not None:
            seed = check_seed(seed)
            if not (_INT64_MIN <= seed and seed + self.num_envs <= _INT64_MAX):
                raise ValueError(f"seed must fit a 64-bit signed integer with room for {self.num_envs} games; "
                                 f"got {seed}")
            self._seed = seed
        self._launch(self._k.reset_kernel, self.num_envs, self._S, self._T, self._M, self._obs, self._current,
                     self._episodes, self._template, self._R, self._map_id, self._seed)
        return self.obs, self.masks

    def step(self, actions: Any) -> tuple[Any, Any, Any, Any, list[dict]]:
        """One action per game (any integer array of shape (N,): numpy, a numba device array or, with
        torch, a CUDA tensor on the env's device); see the module docstring for what comes back.

        Raises:
            ValueError: ``actions`` of the wrong shape, dtype or device (nothing moved).
            IllegalActionError: an action its game does not allow, naming the game, the seat and the
                action (checked on all games before any moves; with ``check_actions``).
        """
        acts = self._device_actions(actions)
        if self.check_actions:
            self._first_bad.copy_to_device(np.array([self.num_envs], np.int64), stream=self._stream())
            self._launch(self._k.check_kernel, self.num_envs, self._M, acts, self._first_bad)
            bad = int(self._first_bad.copy_to_host(stream=self._stream())[0])
            if bad < self.num_envs:
                self._raise_illegal(bad, int(to_host(acts[bad:bad + 1])[0]))
        self._launch(self._k.step_kernel, self.num_envs, self._S, self._T, self._M, self._obs, self._rewards,
                     self._finals, self._ended, self._dones, self._current, self._episodes, acts,
                     self._template, self._R, self._map_id, self.max_turns, self._mode, self._seed)
        infos = self._infos() if self.infos else []
        return self.obs, self.masks, self._out("_rewards"), self._out("_dones"), infos

    def _device_actions(self, actions: Any) -> Any:
        """``actions`` as an int64 device array of shape (N,), or ``ValueError`` naming the problem."""
        n = self.num_envs
        if type(actions).__module__.startswith("torch"):
            shape, dtype = tuple(actions.shape), actions.dtype
            if shape != (n,) or dtype.is_floating_point or dtype.is_complex or str(dtype) == "torch.bool":
                raise ValueError(f"actions must be {n} integers (one per game); got a tensor of shape "
                                 f"{shape} dtype {dtype}")
            if self.simulator or not actions.is_cuda:
                if not self.simulator:
                    raise ValueError(f"actions must be on the env's device {self.device}; got a tensor on "
                                     f"{actions.device} (move it with .to({str(self.device)!r}))")
                return self.cuda.to_device(actions.detach().cpu().numpy().astype(np.int64))
            if self._torch is None or actions.device != self.device:
                where = self.device if self._torch is not None else f"cuda:{self.cuda.get_current_device().id}"
                raise ValueError(f"actions must be on the env's device {where}; got a tensor on {actions.device}")
            return self.cuda.as_cuda_array(actions.detach().to(self._torch.int64).contiguous())
        if self.simulator and hasattr(actions, "copy_to_host"):  # a simulator device array
            actions = actions.copy_to_host()
        elif hasattr(actions, "__cuda_array_interface__"):  # numba device arrays, CuPy ...
            array = self.cuda.as_cuda_array(actions)
            if array.shape != (n,) or array.dtype.kind not in "iu":
                raise ValueError(f"actions must be {n} integers (one per game); got shape {array.shape} "
                                 f"dtype {array.dtype}")
            if array.dtype == np.int64:
                return array
            return self.cuda.to_device(array.copy_to_host().astype(np.int64))
        acts = np.asarray(actions)
        if acts.shape != (n,) or acts.dtype.kind not in "iu":
            raise ValueError(f"actions must be {n} integers (one per game); got shape {acts.shape} dtype {acts.dtype}")
        return self.cuda.to_device(np.ascontiguousarray(acts, dtype=np.int64), stream=self._stream())

    def _raise_illegal(self, i: int, action: int) -> None:
        st = self.get_state(i)
        try:
            st.apply(action)
        except IllegalActionError as err:
            raise IllegalActionError(f"game {i}: {err}", action, err.player, err.phase) from None
        raise AssertionError(f"game {i}: the device found action {action} illegal, the host legal")

    def _infos(self) -> list[dict]:
        """The info dicts of the games that ended on the last step (empty dicts for the others)."""
        infos: list[dict] = [{} for _ in range(self.num_envs)]
        ended = self._ended.copy_to_host(stream=self._stream())
        rows = np.flatnonzero(ended).astype(np.int64)
        if len(rows) == 0:
            return infos
        if self._finals.shape[0] != self.num_envs:
            raise RuntimeError("infos need the final states: do not pass keep_final_states=False with infos=True")
        states = self.cuda.device_array((len(rows), E.STATE_SIZE), np.int32)
        episodes = self.cuda.device_array(len(rows), np.int64)
        self._launch(self._k.gather_kernel, len(rows), self._finals, self._episodes,
                     self.cuda.to_device(rows, stream=self._stream()), states, episodes)
        states_h, episodes_h = states.copy_to_host(stream=self._stream()), episodes.copy_to_host(stream=self._stream())
        for j, i in enumerate(rows.tolist()):
            infos[i] = self._info(i, GameState(self.game, states_h[j]), int(episodes_h[j]) - 1,
                                  truncated=ended[i] == G.TRUNCATED)
        return infos

    def _info(self, i: int, st: GameState, episode: int, truncated: bool) -> dict:
        """The CPU env's info dict for game ``i``'s finished ``episode`` (last state ``st``)."""
        rewards = np.zeros(self.num_players) if truncated else seat_rewards(st, self.reward_mode)
        per_seat = outcome_infos(st, self.agent_names)
        ranks = [d["rank"] for d in per_seat]
        return {
            "terminated": not truncated, "truncated": bool(truncated),
            "seed": self.game_seed(i, episode),
            "rewards": rewards.tolist(),
            "winner": ranks.index(1),
            "turns": per_seat[0]["turns"],
            **{k: [d[k] for d in per_seat] for k in ("vp", "rank", "vp_breakdown")},
        }

    # ------------------------------------------------------------ single games
    def _check_index(self, i: int) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= i < self.num_envs:
            raise IndexError(f"game index must be 0..{self.num_envs - 1}; got {i!r}")
        return int(i)

    def get_state(self, i: int) -> GameState:
        """A host copy of game ``i`` as a core :class:`GameState`."""
        i = self._check_index(i)
        return GameState(self.game, self._S[i].copy_to_host(stream=self._stream()))

    state = get_state  # the CPU env's name

    def final_state(self, i: int) -> GameState:
        """The last state of the game that most recently ended in row ``i`` (needs ``keep_final_states``)."""
        i = self._check_index(i)
        if self._finals.shape[0] != self.num_envs:
            raise RuntimeError("final states are not kept: create the env with keep_final_states=True")
        return GameState(self.game, self._finals[i].copy_to_host(stream=self._stream()))

    def set_state(self, i: int, state: GameState) -> None:
        """Put ``state`` (same map and player count, not finished) in row ``i``; its mask, observation and
        deciding seat follow. The row's episode count, and so its next seeds, are unchanged."""
        i = self._check_index(i)
        if not isinstance(state, GameState):
            raise ValueError(f"state must be a GameState; got {type(state).__name__}")
        if state.map_name != self.map_name or state.num_players != self.num_players:
            raise ValueError(f"state is a {state.num_players}-player {state.map_name} game; this env plays "
                             f"{self.num_players}-player {self.map_name}")
        if state.is_terminal():
            raise ValueError("state is a finished game: every row of the env must be at a decision")
        s = np.ascontiguousarray(state.s, dtype=np.int32)
        mask = np.zeros(E.NUM_ACTIONS, np.int8)
        E.legal_mask(s, self.game.tables, mask)
        obs = np.zeros(OBSERVATION_SIZE, np.float32)
        p = int(s[E.O_CURRENT])
        encode(s, self.game.tables, self._map_id, p, obs)
        stream = self._stream()
        self._S[i].copy_to_device(s, stream=stream)
        self._M[i].copy_to_device(mask, stream=stream)
        self._obs[i].copy_to_device(obs, stream=stream)
        self._current[i:i + 1].copy_to_device(np.array([p], np.int64), stream=stream)

    # ------------------------------------------------------------ random play
    def random_legal_actions(self, seed: int) -> Any:
        """A uniformly random legal action for every game (game ``i``'s drawn with seed ``seed + i``),
        chosen on the device: int64 (N,), in this env's output flavour (what :meth:`step` takes)."""
        seed = check_seed(seed)
        if self._actions is None:
            self._actions = self.cuda.device_array(self.num_envs, np.int64)
        self._launch(self._k.random_actions_kernel, self.num_envs, self._M, seed, self._actions)
        if self.output == "torch":
            return self._torch.as_tensor(self._actions, device=self.device)
        return self._actions if self.output == "numba" else self._actions.copy_to_host()

    def random_playouts(self, seed: int, max_steps: int = 1_000_000) -> Any:
        """Play a copy of every game to its end with uniformly random legal actions (game ``i``'s
        generator seeded with ``seed + i``); the env's games are untouched. Returns the number of
        actions each playout took (int64, N); :meth:`playout_state` reads a playout's last state."""
        seed = check_seed(seed)
        if self._playout is None:
            n = self.num_envs
            self._playout = (self.cuda.device_array((n, E.STATE_SIZE), np.int32),
                             self.cuda.device_array((n, E.NUM_ACTIONS), np.int8), self.cuda.device_array(n, np.int64))
        S, M, counts = self._playout
        S.copy_to_device(self._S, stream=self._stream())
        self._launch(self._k.playout_kernel, self.num_envs, S, self._T, M, seed, int(max_steps), counts)
        if self.output == "torch":
            return self._torch.as_tensor(counts, device=self.device)
        return counts if self.output == "numba" else counts.copy_to_host()

    def playout_state(self, i: int) -> GameState:
        """The last state of game ``i``'s latest :meth:`random_playouts`."""
        i = self._check_index(i)
        if self._playout is None:
            raise RuntimeError("no playout yet: call random_playouts first")
        return GameState(self.game, self._playout[0][i].copy_to_host(stream=self._stream()))

    def synchronize(self) -> None:
        """Wait for the env's kernels to finish (for timing)."""
        if self._torch is not None:
            self._torch.cuda.current_stream(self.device).synchronize()
        else:
            self.cuda.synchronize()

    def close(self) -> None:
        """Drop the device buffers."""
        self._views.clear()
        self._playout = None
