"""For OpenSpiel's searches: :class:`Resampler`, a seeded world sampler for ``ISMCTSBot``, and
:class:`PlayoutEvaluator`, random playouts in the compiled kernel for ``MCTSBot`` and ``ISMCTSBot``."""

from __future__ import annotations

from typing import Any

import numpy as np
from open_spiel.python.algorithms import mcts as os_mcts

from concordia_env import engine as E
from concordia_env.agents.mcts import random_result
from concordia_env.state import GameState

from .config import _positive_int
from .state import ConcordiaState, _returns


class Resampler:
    """A seeded source of uniform numbers in [0, 1) for :meth:`ConcordiaState.resample_from_infostate`,
    and a resampler callback for ``ISMCTSBot.set_resampler`` (its default sampler is unseeded,
    so searches would not repeat)."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = np.random.default_rng(seed)

    def __call__(self, *args: Any) -> Any:
        """``()``: one uniform number (the sampler protocol); ``(state, player)``: a resampled state."""
        if not args:
            return float(self._rng.random())
        state, player = args
        return state.resample_from_infostate(player, self)


class PlayoutEvaluator(os_mcts.Evaluator):
    """MCTS evaluator: the mean utilities of ``n_rollouts`` uniformly random playouts, played in
    the compiled kernel (:func:`concordia_env.agents.mcts.random_result`) up to the game's end or
    its ``max_turns`` truncation (utility 0); uniform priors over the legal actions."""

    def __init__(self, n_rollouts: int = 1, seed: int = 0) -> None:
        self.n_rollouts = _positive_int("n_rollouts", n_rollouts)
        self._rng = np.random.default_rng(seed)
        self._mask = np.zeros(E.NUM_ACTIONS, np.int8)
        self._out = np.zeros(E.MAXP)

    def evaluate(self, state: ConcordiaState) -> np.ndarray:
        if state.is_chance_node():  # the deal: finish it at random first
            state = state.clone()
            while state.is_chance_node():
                cards, probs = zip(*state.chance_outcomes())
                state.apply_action(int(self._rng.choice(cards, p=probs)))
        cfg = state._cfg
        core = state._require_core()
        if state.is_terminal():
            return np.asarray(state.returns())
        total = np.zeros(cfg.players)
        for _ in range(self.n_rollouts):
            s = core.s.copy()
            random_result(s, core.game.tables, self._mask, int(self._rng.integers(2**62)), cfg.max_turns, 0.0,
                          self._out)
            total += _returns(GameState(core.game, s), cfg)
        return total / self.n_rollouts

    def prior(self, state: ConcordiaState) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]
