"""The ``cuda.jit`` kernels of the GPU env: one thread per game, each calling the per-game kernels
of :mod:`concordia_env.cuda.games` (and through them the rules) on its game's rows.

Importing this module imports ``numba.cuda``: :func:`concordia_env.cuda.backend.require_cuda`
first. On a GPU, numba-cuda compiles each per-game kernel (a CPU dispatcher) from its Python
source as a device function, so the rules exist once, as Python, and are compiled twice. Under
the simulator the same names are the CPU-compiled kernels behind :func:`~.backend.on_host`.
"""

from __future__ import annotations

from typing import Any

from numba import cuda as _cuda

from . import games as G
from .backend import on_host, simulator_requested

cuda: Any = _cuda  # numba-cuda's typing stubs do not describe its kernel intrinsics
SIMULATOR = simulator_requested()

if SIMULATOR:
    start_game = on_host(G.start_game)
    step_game = on_host(G.step_game)
    playout_game = on_host(G.playout_game)
    action_is_legal = on_host(G.action_is_legal)
    random_legal_action = on_host(G.random_legal_action)
else:
    start_game = G.start_game
    step_game = G.step_game
    playout_game = G.playout_game
    action_is_legal = G.action_is_legal
    random_legal_action = G.random_legal_action


@cuda.jit
def reset_kernel(S, T, M, obs, current, episodes, template, R, map_id, seed):
    """Start episode 0 of every game: game ``i`` from ``seed + i``."""
    i = cuda.grid(1)
    if i < S.shape[0]:
        episodes[i] = 0
        current[i] = start_game(S[i], T, M[i], obs[i], template, R, map_id, seed + i)


@cuda.jit
def check_kernel(M, actions, first_bad):
    """``first_bad[0]``: the lowest game whose action its mask does not allow (left as is if none)."""
    i = cuda.grid(1)
    if i < M.shape[0]:
        if not action_is_legal(M[i], actions[i]):
            cuda.atomic.min(first_bad, 0, i)


@cuda.jit
def step_kernel(S, T, M, obs, rewards, finals, ended, dones, current, episodes, actions,
                template, R, map_id, max_turns, mode, seed):
    """Step game ``i`` with ``actions[i]``; an ended game restarts from ``seed + i + k * N`` (episode k).

    ``finals`` has a row per game (the ended games' last states are kept there) or one row of
    length 1 (they are not kept)."""
    i = cuda.grid(1)
    n = S.shape[0]
    if i < n:
        next_seed = seed + i + (episodes[i] + 1) * n
        e, p = step_game(S[i], T, M[i], obs[i], rewards[i], finals[i % finals.shape[0]], template, R,
                         map_id, max_turns, mode, actions[i], next_seed)
        ended[i] = e
        dones[i] = e != 0
        current[i] = p
        if e != 0:
            episodes[i] += 1


@cuda.jit
def playout_kernel(S, T, M, seed, max_steps, counts):
    """Random playout of game ``i`` in place, its generator seeded with ``seed + i``."""
    i = cuda.grid(1)
    if i < S.shape[0]:
        counts[i] = playout_game(S[i], T, M[i], seed + i, max_steps)


@cuda.jit
def gather_kernel(finals, episodes, rows, out_states, out_episodes):
    """Rows ``rows`` of ``finals`` and ``episodes``, packed (one transfer to the host for the infos)."""
    j = cuda.grid(1)
    if j < rows.shape[0]:
        i = rows[j]
        for k in range(finals.shape[1]):
            out_states[j, k] = finals[i, k]
        out_episodes[j] = episodes[i]


@cuda.jit
def random_actions_kernel(M, seed, actions):
    """``actions[i]``: a uniformly random legal action of game ``i`` (its generator seeded ``seed + i``)."""
    i = cuda.grid(1)
    if i < M.shape[0]:
        actions[i] = random_legal_action(M[i], seed + i)
