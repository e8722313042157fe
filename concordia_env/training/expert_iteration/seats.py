"""The players of self-play: the search (:class:`RecordingSeat`) or the heuristic teacher
(:class:`TeacherSeat`) at every seat, each recording its decisions as :data:`Row` tuples."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from concordia_env import engine as E
from concordia_env.agents.base import Agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent, evaluate, priors
from concordia_env.agents.value_net import ROWS, ValueNet
from concordia_env.state import GameState

from .settings import Expert, SelfPlayConfig, file_sha256

#: the heuristic teacher stores its priors as counts in these units (thousandths)
PRIOR_SCALE = 1000
#: temperature of the heuristic teacher's win shares (``root_value``), in VP-like units
TEACHER_VALUE_TEMPERATURE = 8.0
#: second word of the exploration generator's seed (after the game's setup seed)
EXPLORE_STREAM = 1


#: networks this process has loaded, by (stem, sha256): each worker reads a file once
_NET_CACHE: dict[tuple[str, str], ValueNet] = {}


def _expert_net(expert: Expert) -> ValueNet:
    """The expert's network, loaded once per process and file content."""
    assert expert.stem is not None
    key = (expert.stem, expert.sha256)
    if key not in _NET_CACHE:
        net = ValueNet.load(expert.stem)
        if file_sha256(Path(expert.stem + ".npz")) != expert.sha256:
            raise ValueError(f"{expert.stem}.npz changed while the run was using it")
        _NET_CACHE[key] = net
    return _NET_CACHE[key]


def make_expert(cfg: SelfPlayConfig, expert: Expert) -> MCTSAgent:
    """The search agent that plays every seat of a self-play game."""
    if expert.stem is None:
        return MCTSAgent(iterations=cfg.simulations, c_puct=cfg.c_puct, max_turns=cfg.max_turns,
                         root_noise=cfg.root_noise, root_noise_alpha=cfg.root_noise_alpha)
    from concordia_env.agents.az import AZAgent

    # the search trains the priors it plays (prior_mix=0), not the heuristic's (the agent's default)
    return AZAgent(net=_expert_net(expert), simulations=cfg.simulations, leaf_mix=cfg.leaf_mix, prior_mix=0.0,
                   c_puct=cfg.c_puct, max_turns=cfg.max_turns, root_noise=cfg.root_noise,
                   root_noise_alpha=cfg.root_noise_alpha)


#: one recorded decision: state, seat, decision index, card plays so far, legal actions, their
#: counts, win shares per absolute seat
Row = tuple[np.ndarray, int, int, int, np.ndarray, np.ndarray, np.ndarray]


class _RecordingSeat(Agent):
    """Plays every seat of a self-play game and records each decision with more than one legal
    action as a :data:`Row`; a subclass says how it chooses (:meth:`_decide`)."""

    def _start(self) -> None:
        self.rows: list[Row] = []
        self.decisions = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        assert state is not None, "self-play passes the state"
        legal = np.flatnonzero(action_mask)
        step = self.decisions
        self.decisions += 1
        if legal.size == 1:
            return int(legal[0])
        row = (state.s.copy(), state.current_player, step, int(state.s[E.O_TURN]), legal)
        action, counts, shares = self._decide(observation, action_mask, state, legal)
        value = np.zeros(ROWS, np.float32)
        value[:state.num_players] = shares[:state.num_players]
        self.rows.append((*row, counts, value))
        return action

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """The move, the policy target's counts over ``legal`` and the win shares per absolute seat."""
        raise NotImplementedError


class RecordingSeat(_RecordingSeat):
    """Plays every seat of a self-play game with one search agent and records each searched decision."""

    name = "expert"

    def __init__(self, expert: MCTSAgent, cfg: SelfPlayConfig) -> None:
        self.expert = expert
        self.cfg = cfg
        self._start()
        self.searched = 0

    def reset(self, seed: int | None = None) -> None:
        self.expert.reset(seed)
        self._start()
        self.searched = 0

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        explore = self.searched < self.cfg.temperature_decisions
        self.expert.move_temperature = self.cfg.move_temperature if explore else 0.0
        self.searched += 1
        result = self.expert.search(state)
        return int(result.action), result.visits[legal], result.value


class TeacherSeat(_RecordingSeat):
    """Plays every seat of a self-play game with the heuristic and records, at each decision with
    more than one legal action, the heuristic's priors (in thousandths) and win shares (the
    module doc's "heuristic teacher").

    One :class:`HeuristicAgent` plays all seats, reset by ``play_game`` as it would reset it
    there, so with ``epsilon`` 0 the game is ``play_game`` of that agent at every seat. The
    exploration generator is seeded from ``game_seed`` alone and draws once per recorded decision
    (whether or not it explores), so a game is the same wherever it is played."""

    name = "heuristic-teacher"

    def __init__(self, epsilon: float, game_seed: int) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"teacher epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self.game_seed = game_seed
        self.heuristic = HeuristicAgent()
        self.prior = np.zeros(E.NUM_ACTIONS, np.float64)
        self.value = np.zeros(E.MAXP, np.float64)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.heuristic.reset(seed)
        self.explore = np.random.default_rng([self.game_seed, EXPLORE_STREAM])
        self._start()

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        mask = np.ascontiguousarray(action_mask, dtype=np.int8)
        tables = state.game.tables
        priors(state.s, tables, mask, self.prior)
        evaluate(state.s, tables, TEACHER_VALUE_TEMPERATURE, self.value)
        p = self.prior[legal]
        counts = np.rint(PRIOR_SCALE * p).astype(np.int32)
        if self.explore.random() < self.epsilon:
            return int(self.explore.choice(legal, p=p / p.sum())), counts, self.value
        return self.heuristic.act(observation, action_mask, state), counts, self.value
