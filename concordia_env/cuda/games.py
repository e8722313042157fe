"""One game's part of a batched step, as numba kernels: the body each GPU thread runs.

These are plain :func:`concordia_env._internal.jit.kernel` functions calling the rules' own kernels
(:func:`concordia_env.engine.step`, :func:`~concordia_env.engine.legal_mask`,
:func:`concordia_env.encoding.encode`, :func:`~concordia_env.rules.scoring.score_total`): numba-cuda
compiles a CPU dispatcher called from a ``cuda.jit`` kernel as a device function of the same
Python source, so :mod:`concordia_env.cuda.kernels` only adds the thread indexing. Nothing here
allocates; the CPU compile of the same functions is what the simulator runs and what the tests
check against :class:`concordia_env.vector.ConcordiaVecEnv`.
"""

from __future__ import annotations

import numpy as np

from .. import engine as E
from .._internal.jit import kernel
from ..encoding import encode
from ..rewards import VP_SCALE
from ..rules.kernel import nth_legal
from ..rules.scoring import final_place, score_total
from ..rules.setup import setup_state, splitmix_below

#: reward modes as the kernels number them (the order of :data:`concordia_env.rewards.REWARD_MODES`)
REWARD_WIN, REWARD_RANK, REWARD_VP = 0, 1, 2
#: what :func:`step_game` returns: the game goes on, it ended by the rules, it hit ``max_turns``
RUNNING, ENDED, TRUNCATED = 0, 1, 2

O_PHASE, O_TURN, O_CURRENT, O_NPLAYERS, O_PM = E.O_PHASE, E.O_TURN, E.O_CURRENT, E.O_NPLAYERS, E.O_PM
PH_OVER, STATE_SIZE = E.PH_OVER, E.STATE_SIZE


@kernel(group="cuda")
def start_game(s, T, mask, obs, template, R, map_id, seed):
    """Set up the game of ``seed`` in ``s`` (:func:`~concordia_env.rules.setup.setup_state`), fill its
    legal ``mask`` and the deciding seat's observation ``obs``; returns that seat."""
    setup_state(s, template, R, seed)
    E.legal_mask(s, T, mask)
    p = np.int64(s[O_CURRENT])
    encode(s, T, map_id, p, obs)
    return p


@kernel(group="cuda")
def seat_rewards_into(s, T, mode, out):
    """Every seat's reward for the finished game ``s`` into ``out`` (float, one per seat), exactly as
    :func:`concordia_env.rewards.seat_rewards` computes it (in float64, then stored in ``out``'s type):
    places by VP, ties broken by the Praefectus Magnus (its holder first, then the seats before it)."""
    n = s[O_NPLAYERS]
    if mode == REWARD_VP:
        total = 0.0
        for p in range(n):
            total += score_total(s, T, p)
        mean = total / n
        for p in range(n):
            out[p] = (score_total(s, T, p) - mean) / VP_SCALE
        return
    for p in range(n):
        place = final_place(s, T, p)
        if mode == REWARD_WIN:
            out[p] = 1.0 if place == 0 else -1.0 / (n - 1)
        else:
            out[p] = 1.0 - 2.0 * place / (n - 1)


@kernel(group="cuda")
def step_game(s, T, mask, obs, reward, final, template, R, map_id, max_turns, mode, action, next_seed):
    """Apply legal ``action`` to game ``s``; returns (:data:`RUNNING`, :data:`ENDED` or :data:`TRUNCATED`,
    the seat now deciding).

    ``reward`` (one per seat) is zeroed, and filled for a game the rules ended. An ended game
    (either way) is copied to ``final`` (when it has room: a zero-length row skips the copy)
    and replaced by the new game of ``next_seed``; ``mask`` and ``obs`` always end up describing
    the next decision, of the new game where one just ended."""
    E.step(s, T, mask, action)
    if s[O_PHASE] == PH_OVER:
        ended = ENDED
    elif max_turns > 0 and s[O_TURN] >= max_turns:
        ended = TRUNCATED
    else:
        ended = RUNNING
    for p in range(reward.shape[0]):
        reward[p] = 0.0
    if ended == RUNNING:
        p = np.int64(s[O_CURRENT])
        encode(s, T, map_id, p, obs)
        return ended, p
    if ended == ENDED:
        seat_rewards_into(s, T, mode, reward)
    if final.shape[0] == STATE_SIZE:
        for k in range(STATE_SIZE):
            final[k] = s[k]
    return ended, start_game(s, T, mask, obs, template, R, map_id, next_seed)


@kernel(group="cuda")
def playout_game(s, T, mask, seed, max_steps):
    """Uniformly random legal actions from ``s`` until the game ends (or ``max_steps``); returns the
    number of actions. The generator is SplitMix64 seeded with ``seed``, kept in a register (a
    device has no numpy generator), so a playout is reproducible but differs from
    :func:`concordia_env.engine.random_playout`'s."""
    rng = np.uint64(seed)
    m = E.legal_mask(s, T, mask)
    count = 0
    while s[O_PHASE] != PH_OVER and count < max_steps:
        rng, k = splitmix_below(rng, m)
        m = E.step(s, T, mask, nth_legal(mask, k))
        count += 1
    return count


@kernel(group="cuda")
def random_legal_action(mask, seed):
    """A uniformly random legal action of ``mask`` (SplitMix64 seeded with ``seed``); -1 if none."""
    m = 0
    for a in range(E.NUM_ACTIONS):
        if mask[a]:
            m += 1
    if m == 0:
        return -1
    _, k = splitmix_below(np.uint64(seed), m)
    return nth_legal(mask, k)


@kernel(group="cuda")
def action_is_legal(mask, action):
    """Whether ``action`` is an action id that ``mask`` allows."""
    return 0 <= action < E.NUM_ACTIONS and mask[action] != 0



