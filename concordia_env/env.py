"""The PettingZoo AEC environment: ``concordia_env.env()`` (wrapped) and ``concordia_env.raw_env``.

One agent per seat, ``player_0`` … ``player_{n-1}``, in turn order. The agent
to act is whoever must decide in the core game: usually the player whose turn
it is, but the owner of the goods when a storehouse overflows during someone
else's turn (that choice appears as that agent's turn in ``agent_iter()``).

Observations are ``{"observation": float32 vector, "action_mask": int8 vector}``
(see :mod:`concordia_env.encoding` and ``observation_layout``); the mask is all
zero for agents who are not deciding. Rewards are paid to every seat when the
game ends, through the usual AEC accumulation (each seat sees its reward in
``last()`` on its final, dead step).

``state()`` is the global state for centralised critics: a float32 vector of
:data:`GLOBAL_STATE_SIZE` numbers in ``state_space`` (finite: what the rules
leave unbounded is capped at :data:`FINITE_BOUND`), the same for every seat.
Its first :data:`~concordia_env.encoding.OBSERVATION_SIZE` numbers are the
observation as seat 0 sees it, so per-player rows are in absolute seat order
(row k is ``player_k``) and ``deciding_seat`` names the absolute seat; then
``colonist_slots`` (MAXP x 6 x 110, one-hot): the location of colonist slot i
of every seat, which the observation gives for the observer only. Together
that is everything in the game but the order of the undrawn deck (its
composition by card type is ``deck_cards``). :data:`GLOBAL_STATE_LAYOUT`
names the two parts.

Turn-level mode (``decisions="turn"``): each step chooses one of at most ``max_candidates``
(K) whole turns, found by :mod:`concordia_env.turns` (a card with its action completed; a
decision out of turn, such as the good to keep when a storehouse overflows, offers its atomic
actions). The observation then also holds ``candidates``, float32 (K, OBSERVATION_SIZE): the
deciding seat's view of the position each candidate ends in, zero rows past the candidates;
``action_mask`` is int8 (K,) and the action space ``Discrete(K)``. :meth:`raw_env.candidate_actions`
gives each candidate's atomic actions (what the game's records show). The atomic mode is the
default.

Rules-silent choice: a game that reaches ``max_turns`` card plays is truncated
(all seats, reward 0) so an agent that never buys cards or builds cannot stall
training forever. The default cap is :data:`DEFAULT_MAX_TURNS` (2,000) card plays.
Uniformly random play usually ends far sooner, but its game lengths spread widely:
random games of more than 1,700 card plays have been seen, so a rare one may reach
the cap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import logger, spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine as E
from ._internal.extras import require_installed, requires
from .display.render import state_to_text
from .encoding import OBSERVATION_LAYOUT, OBSERVATION_SIZE, encode, map_id, observation_bounds
from .game import check_seed, check_setup_args, get_game
from .rewards import check_reward_mode, outcome_infos, seat_rewards
from .state import GameState, IllegalActionError, new_game
from .turns import DEFAULT_CANDIDATES, TurnDecision, check_candidates, check_decisions

ILLEGAL_ACTION_MODES = ("raise", "terminate")
RENDER_MODES = ("ansi", "rgb_array", "human")
#: what needs matplotlib (the ``plot`` extra), in its missing-package message
HUMAN_WINDOW = 'render_mode="human" (a matplotlib window)'
DEFAULT_MAX_TURNS = 2000
ILLEGAL_REWARD = -1.0

#: the cap of the features the rules leave unbounded (turn counter, coins, VP, intermediate
#: scores) in finite Boxes (``state_space``, the single-learner env's ``observation_bounds="finite"``):
#: they are read from the int32 state, so no value can exceed it (validation accepts at most 1,000,000)
FINITE_BOUND = float(2**31)

#: the parts of ``raw_env.state()``: seat 0's observation, then every seat's colonist slots
GLOBAL_STATE_LAYOUT: dict[str, slice] = {
    "observation_of_seat_0": slice(0, OBSERVATION_SIZE),
    "colonist_slots": slice(OBSERVATION_SIZE, OBSERVATION_SIZE + E.MAXP * E.NCOL * E.NLOC),
}
#: length of ``raw_env.state()``
GLOBAL_STATE_SIZE = GLOBAL_STATE_LAYOUT["colonist_slots"].stop


def check_max_turns(max_turns: int | None) -> int:
    """``max_turns`` as an int (0 = no limit); ``ValueError`` unless None or a positive int."""
    if max_turns is None:
        return 0
    if isinstance(max_turns, bool) or not isinstance(max_turns, (int, np.integer)) or max_turns < 1:
        raise ValueError(f"max_turns must be a positive int or None (no limit); got {max_turns!r}")
    return int(max_turns)


def as_action(action: Any) -> Any:
    """Plain int for int-like actions (Python/numpy ints, 0-d integer arrays); anything else unchanged,
    so the core's check names it in its error."""
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        return int(action.reshape(()))
    if isinstance(action, np.integer):
        return int(action)
    return action


class raw_env(AECEnv, EzPickle):  # noqa: N801 (PettingZoo's naming convention)
    """Concordia (base game) for 2–5 players on the Imperium or Italia map.

    Args:
        map_name: "imperium" (3–5 players) or "italia" (2–4 players).
        num_players: seats in the game.
        render_mode: None, "ansi" (text), "rgb_array" (a 1280x800 picture, :mod:`concordia_env.display.picture`)
            or "human" (the same picture in a matplotlib window).
        intermediate_scoring: play with the intermediate-scoring variant.
        reward: "win" (+1 winner, -1/(n-1) others), "rank" (+1 first .. -1 last) or
            "vp" ((own VP - mean VP) / 50); paid at the end of the game.
        illegal_action: "raise" raises :class:`IllegalActionError` (state unchanged);
            "terminate" ends the game with -1 for the offender and 0 for the others.
        max_turns: truncate the game after this many card plays (None: never).
        decisions: "atomic" (one action id of the 402 per step) or "turn" (one of at most
            ``max_candidates`` whole turns per step; see the module docstring).
        max_candidates: K, the candidates of a turn-level decision (ignored in atomic mode).

    Pickling (``EzPickle``, as PettingZoo's classic games) re-creates the env
    from its constructor arguments, e.g. for subprocess vector envs; the game
    in progress is not carried over (use ``game_state.to_json()`` for that).
    """

    metadata: dict[str, Any] = {
        "name": "concordia_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(self, map_name: str = "imperium", num_players: int = 4, render_mode: str | None = None,
                 intermediate_scoring: bool = False, reward: str = "win", illegal_action: str = "raise",
                 max_turns: int | None = DEFAULT_MAX_TURNS, decisions: str = "atomic",
                 max_candidates: int = DEFAULT_CANDIDATES) -> None:
        AECEnv.__init__(self)
        EzPickle.__init__(self, map_name=map_name, num_players=num_players, render_mode=render_mode,
                          intermediate_scoring=intermediate_scoring, reward=reward,
                          illegal_action=illegal_action, max_turns=max_turns, decisions=decisions,
                          max_candidates=max_candidates)
        check_setup_args(map_name, num_players)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode must be None or one of {', '.join(map(repr, RENDER_MODES))}; "
                             f"got {render_mode!r}")
        if render_mode == "human":  # refused here, not at the first render(): the window needs matplotlib
            require_installed(("matplotlib",), "plot", HUMAN_WINDOW, "pip install matplotlib")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {', '.join(map(repr, ILLEGAL_ACTION_MODES))}; "
                             f"got {illegal_action!r}")
        if not isinstance(intermediate_scoring, (bool, np.bool_)):
            raise ValueError(f"intermediate_scoring must be a bool; got {intermediate_scoring!r}")
        self.map_name = map_name
        self.num_players = int(num_players)
        self.render_mode = render_mode
        self.intermediate_scoring = bool(intermediate_scoring)
        self.reward_mode = check_reward_mode(reward)
        self.illegal_action = illegal_action
        self.max_turns = check_max_turns(max_turns)
        self.decisions = check_decisions(decisions)
        self.max_candidates = check_candidates(max_candidates)
        self.game = get_game(map_name)
        self._map_id = map_id(map_name)
        self._turn: TurnDecision | None = TurnDecision(map_name, self.max_candidates) if decisions == "turn" else None

        self.possible_agents = [f"player_{p}" for p in range(self.num_players)]
        self._seat = {a: p for p, a in enumerate(self.possible_agents)}
        low, high = observation_bounds(self.game.tables)
        n_choices = E.NUM_ACTIONS if self._turn is None else self.max_candidates
        obs_space: dict[str, spaces.Space] = {"observation": spaces.Box(low, high, dtype=np.float32)}
        if self._turn is not None:
            k = self.max_candidates
            obs_space["candidates"] = spaces.Box(np.tile(low, (k, 1)), np.tile(high, (k, 1)), dtype=np.float32)
        obs_space["action_mask"] = spaces.Box(0, 1, (n_choices,), dtype=np.int8)
        self.observation_spaces = {a: spaces.Dict(obs_space) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(n_choices) for a in self.possible_agents}
        #: the Box of :meth:`state`: the observation's rule bounds with FINITE_BOUND where the rules
        #: set none (no ``inf``), then 0/1 for the colonist slots
        state_high = np.concatenate([np.where(np.isfinite(high), high, np.float32(FINITE_BOUND)),
                                     np.ones(GLOBAL_STATE_SIZE - OBSERVATION_SIZE)]).astype(np.float32)
        self.state_space = spaces.Box(np.zeros(GLOBAL_STATE_SIZE, np.float32), state_high, dtype=np.float32)
        #: name -> slice of the flat ``observation`` vector (see :mod:`concordia_env.encoding`).
        self.observation_layout: dict[str, slice] = dict(OBSERVATION_LAYOUT)
        self.game_state: GameState | None = None
        self._seed_rng = np.random.default_rng()
        self._no_mask = np.zeros(n_choices, np.int8)
        self._figure: Any = None  # matplotlib Figure of render_mode='human', made on first use

    # ------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------ protocol
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game. ``seed`` fixes it exactly (``new_game(..., seed=seed)``); without a
        seed the game seed is drawn from a generator seeded by the last explicit seed, so a
        seeded sequence of resets is reproducible. ``options`` is accepted and unused."""
        if seed is not None:
            game_seed = check_seed(seed)
            self._seed_rng = np.random.default_rng(game_seed & (2**64 - 1))
        else:
            game_seed = int(self._seed_rng.integers(0, 2**63 - 1))
        self.game_seed = game_seed
        self.game_state = new_game(self.map_name, self.num_players, seed=game_seed,
                                   intermediate_scoring=self.intermediate_scoring)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self._game_state().current_player]
        if self.render_mode == "human":
            self.render()

    def _game_state(self) -> GameState:
        """The game in progress; a clear error before the first ``reset()``."""
        if self.game_state is None:
            raise RuntimeError("the env has no game yet: call reset() first")
        return self.game_state

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        st = self._game_state()
        seat = self._seat[agent]
        obs = np.empty(OBSERVATION_SIZE, np.float32)
        encode(st.s, self.game.tables, self._map_id, seat, obs)
        deciding = seat == st.current_player
        if self._turn is None:
            return {"observation": obs, "action_mask": st.legal_action_mask() if deciding else self._no_mask.copy()}
        if not deciding:
            return {"observation": obs, "candidates": np.zeros_like(self._turn.observations),
                    "action_mask": self._no_mask.copy()}
        self._turn.refresh(st.s, self.game.tables)
        return {"observation": obs, "candidates": self._turn.observations.copy(), "action_mask": self._turn.mask()}

    def candidate_actions(self) -> list[tuple[int, ...]]:
        """Turn-level mode: the atomic actions of each candidate of the current decision (row k
        of ``candidates`` is where candidate k's actions lead); ``RuntimeError`` in atomic mode."""
        if self._turn is None:
            raise RuntimeError("candidate_actions() is for the turn-level mode: make the env with decisions='turn'")
        st = self._game_state()
        self._turn.refresh(st.s, self.game.tables)
        return [self._turn.sequence(k) for k in range(self._turn.generator.count)]

    def state(self) -> np.ndarray:
        """The global state (float32, :data:`GLOBAL_STATE_SIZE`): everything but the deck order.

        Seat 0's observation (absolute seat order), then the one-hot location of every seat's
        colonist slots; see the module docstring. A new array on every call; after the game
        ends it shows the final position. ``RuntimeError`` before the first ``reset()``."""
        st = self._game_state()
        out = np.zeros(GLOBAL_STATE_SIZE, np.float32)
        encode(st.s, self.game.tables, self._map_id, 0, out[GLOBAL_STATE_LAYOUT["observation_of_seat_0"]])
        slots = out[GLOBAL_STATE_LAYOUT["colonist_slots"]].reshape(E.MAXP, E.NCOL, E.NLOC)
        loc = st.s[E.O_COLONIST:E.O_COLONIST + self.num_players * E.NCOL].reshape(self.num_players, E.NCOL)
        seat, slot = np.nonzero(loc >= 0)
        slots[seat, slot, loc[seat, slot]] = 1.0
        return out

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        st = self._game_state()
        self._cumulative_rewards[agent] = 0.0
        action = as_action(action)
        try:
            if self._turn is None:
                st.apply(action)
            else:
                self._play_turn(st, action)
        except IllegalActionError as err:
            if self.illegal_action == "raise":
                raise
            self._terminate_illegal(agent, err)
            return
        if st.is_terminal():
            self._finish(seat_rewards(st, self.reward_mode), truncated=False)
        elif self.max_turns and int(st.s[E.O_TURN]) >= self.max_turns:
            self._finish(np.zeros(self.num_players), truncated=True)
        else:
            self.agent_selection = self.possible_agents[st.current_player]
        if self.render_mode == "human":
            self.render()

    def _play_turn(self, st: GameState, k: Any) -> None:
        """Candidate ``k``'s atomic actions, all checked before any is applied (a bad ``k`` leaves
        the game unchanged)."""
        turn = self._turn
        assert turn is not None, "only the turn-level mode plays candidates"
        turn.refresh(st.s, self.game.tables)
        for a in turn.sequence(k):
            st.apply(a)

    def _finish(self, rewards: np.ndarray, truncated: bool) -> None:
        infos = outcome_infos(self._game_state(), self.possible_agents)
        for p, a in enumerate(self.possible_agents):
            self.rewards[a] = float(rewards[p])
            self.infos[a] = infos[p]
            if truncated:
                self.truncations[a] = True
            else:
                self.terminations[a] = True
        self._accumulate_rewards()

    def _terminate_illegal(self, agent: str, err: IllegalActionError) -> None:
        """Mirror PettingZoo's TerminateIllegalWrapper: offender -1, others 0, game over."""
        logger.warn(f"illegal action by {agent}, game terminated: {err}")
        for a in self.agents:
            self.rewards[a] = ILLEGAL_REWARD if a == agent else 0.0
            self.terminations[a] = True
        self.infos[agent] = {"illegal_action": err.action, "error": str(err)}
        self._accumulate_rewards()

    # ------------------------------------------------------------ display
    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("render() called without a render_mode; pass render_mode='ansi', 'rgb_array' or 'human'.")
            return None
        if self.game_state is None:
            raise RuntimeError("call reset() before render()")
        if self.render_mode == "ansi":
            return state_to_text(self.game_state)
        if self.render_mode == "rgb_array":
            from .display.picture import render_rgb

            return render_rgb(self.game_state)
        self._render_human()
        return None

    def _render_human(self) -> None:
        with requires("plot", HUMAN_WINDOW, "pip install matplotlib"):
            import matplotlib.pyplot as plt

        from .display.picture import FIGSIZE, draw_state

        if self._figure is None or not plt.fignum_exists(self._figure.number):
            self._figure = plt.figure(figsize=FIGSIZE, dpi=80)  # 1280x800: fits a laptop screen
        draw_state(self._game_state(), self._figure)  # the rgb_array picture, shown in the figure
        if plt.get_backend().lower() != "agg":  # a screen exists: show the frame
            plt.pause(1.0 / self.metadata["render_fps"])

    def close(self) -> None:
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = None


def env(**kwargs: Any) -> AECEnv:
    """The environment wrapped like PettingZoo's classic games (order enforcement).

    Keyword arguments are those of :class:`raw_env`. PettingZoo's
    AssertOutOfBoundsWrapper is left out on purpose: the env itself answers an
    out-of-range action with an :class:`IllegalActionError` naming it."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
