"""OpenSpiel: Concordia registered with pyspiel as the Python game ``python_concordia``.

::

    import pyspiel
    from concordia_env.integrations import openspiel   # registers the game

    game = pyspiel.load_game("python_concordia", {"map_name": "italia", "players": 2})
    state = game.new_initial_state()                    # a chance node: the deal

Needs OpenSpiel: ``pip install ".[openspiel]"`` in the source folder (the ``openspiel`` extra). The
rules are the package's own: every player decision is :meth:`GameState.apply
<concordia_env.state.GameState.apply>` on the core state, with the same 402 action ids and
names (:mod:`concordia_env.actions`), so nothing here re-implements a rule.

The game, as OpenSpiel sees it:

* **Sequential, explicit chance, imperfect information.** The only thing no player knows is the
  order of the undrawn cards of the stacked decks (deck I on top, then II, ...; each shuffled on
  its own). Everything else is public: the city tokens, the start player, every card bought
  (hands, discard piles and the Senator's display are known to a player with perfect memory).
* **Chance, in two steps.** (1) *Setup*: one of ``num_setups`` equally likely outcomes
  (default 1,000), outcome *k* being the package's seeded setup ``new_game(map, players, seed=k)``
  (city tokens, bonus markers, start player; public). This is the simplification: the real game
  has far more distinct setups than that, but a setup is public and fixes no hidden information.
  (2) *Deal*: one chance node per position of the stacked decks, top to bottom, choosing
  uniformly which of the cards of that position's deck not yet placed goes there (outcome = the
  card id, 0-29; the last card of a deck is a node with one outcome). The first 7 positions are
  the display (public); the rest is the hidden draw order. Dealing the order that seed *k*
  shuffled reproduces ``new_game(..., seed=k)`` exactly (:func:`deal_outcomes`,
  :func:`seeded_state`), so a game played here from those outcomes is the package's game for
  that seed, move for move. Because the deal is drawn by chance and never observed, the hidden
  order is genuinely unknown to the players (a setup seed that also fixed the deck order would
  let a player who knows the seed table infer it).
* **Resampling** (:meth:`ConcordiaState.resample_from_infostate`, for IS-MCTS): shuffles the
  undrawn cards within each stacked deck, which is exactly the belief of any player (the same
  draw the package's own MCTS makes, :func:`concordia_env.agents.mcts.resample_deck`). The
  result is a state of the same information set (same information state string, observations,
  legal actions and current player) that a different deal reaches. OpenSpiel's Python-game API
  cannot rewrite a state's history, so the resampled state's ``history()`` still lists the
  original deal; its position is exact.
* **Utilities** (zero-sum, terminal rewards) are the env's final rewards (:mod:`concordia_env.rewards`):
  ``reward="win"`` (default) +1 for the winner after the rules' tie-break and -1/(n-1) for every
  other player; ``reward="rank"`` linear from +1 (first) to -1 (last). A game truncated after
  ``max_turns`` card plays (the env's cap, 2,000 by default; OpenSpiel needs a bounded game) ends
  with 0 for everyone, as the env's truncation pays.
* **Observations.** ``observation_tensor(p)`` is the package's per-seat observation vector
  (:mod:`concordia_env.encoding`, 2,378 floats, seat-relative rows, named blocks in
  ``make_observation(game).dict``). ``information_state_string(p)`` is an exact, compact key: the
  seat and the state array with the undrawn cards of each deck in sorted order, in hex. It is a
  sufficient statistic (all moves are public, so the position minus the deck order is all a
  player knows), not a perfect-recall history: two move orders that reach the same position
  share it, which suits search (IS-MCTS merges transpositions). ``observation_string(p)`` is the
  same key after a readable line (turn, who decides). No information-state tensor is provided.
  During the chance steps the observation tensor is all zero.
* ``str(state)`` is that readable line and the whole state array in hex, hidden deck order
  included (a god's view, exact and cheap: OpenSpiel's tests compare states by it, thousands of
  times per game). ``print(core_state(state))`` shows the position as the package's text.

:class:`PlayoutEvaluator` is an MCTS evaluator for ``MCTSBot`` and ``ISMCTSBot`` that plays its
random playouts in the compiled kernel (OpenSpiel's ``RandomRolloutEvaluator`` steps every move
through Python, about 50 times slower here: docs/openspiel.md). ``MCTSBot`` searches the true state, deck order
included: a perfect-information baseline that cheats; ``ISMCTSBot`` with the resampler is the
honest search. :func:`require_two_players` refuses 2-player-only algorithms (AlphaZero,
minimax) on a game with more players, in one line that names the fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from concordia_env import engine as E
from concordia_env.agents.mcts import deck_blocks, random_result, resample_deck
from concordia_env.data import MAP_NAMES
from concordia_env.encoding import OBSERVATION_FIELDS, OBSERVATION_LAYOUT, OBSERVATION_SIZE, encode, map_id
from concordia_env.env import DEFAULT_MAX_TURNS
from concordia_env.extras import install_hint
from concordia_env.game import check_setup_args, get_game
from concordia_env.rewards import seat_rewards
from concordia_env.state import GameState, new_game

#: what to install when OpenSpiel is missing
INSTALL_HINT = install_hint("openspiel", "pip install open-spiel")

try:
    import pyspiel
    from open_spiel.python.algorithms import mcts as os_mcts
except ImportError as _exc:  # pragma: no cover - exercised by the test that hides pyspiel
    raise ImportError(f"concordia_env.integrations.openspiel needs OpenSpiel ({_exc}); install it: "
                      f"{INSTALL_HINT}") from None

__all__ = ["DECISIONS_PER_CARD_PLAY", "DEFAULT_SETUPS", "GAME_NAME", "GAME_TYPE", "INSTALL_HINT", "MAX_SETUPS",
           "PARAMETERS", "REWARDS", "ConcordiaGame", "ConcordiaState", "PlayoutEvaluator", "Resampler", "benchmark",
           "core_state", "deal_outcomes", "load_game", "require_two_players", "seeded_state", "time_bots",
           "time_evaluators", "time_random_play"]

#: the short name the game is registered under
GAME_NAME = "python_concordia"
#: equally likely setups of the first chance node (setup k = the package's seed k)
DEFAULT_SETUPS = 1000
#: the most num_setups may be (the setup node lists every outcome)
MAX_SETUPS = 100_000
#: utilities OpenSpiel may be given: the env's zero-sum reward modes ("vp" is unbounded)
REWARDS = ("win", "rank")
#: a bound on the decisions of one card play, for OpenSpiel's max_game_length: the card (1), a
#: Diplomat's choice (1), then at most an Architectus' 6 moves + 15 builds + done, a Mercator's
#: 12 sales + 12 purchases + done, or a production with up to 5 owners keeping up to 12 goods one
#: at a time (61); 100 leaves room
DECISIONS_PER_CARD_PLAY = 100
#: the game's parameters and their defaults
PARAMETERS: dict[str, Any] = {"map_name": "imperium", "players": 4, "intermediate_scoring": False,
                              "max_turns": DEFAULT_MAX_TURNS, "reward": "win", "num_setups": DEFAULT_SETUPS}

GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Concordia (concordia-env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=E.MAXP,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


# ---------------------------------------------------------------- configuration

@dataclass(frozen=True)
class _Config:
    """The checked parameters of one loaded game. Shared, never copied, by every state of it."""

    map_name: str
    players: int
    intermediate_scoring: bool
    max_turns: int
    reward: str
    num_setups: int
    blocks: tuple[tuple[int, int], ...]  # (start, stop) of each stacked deck in the deck array

    @property
    def deck_len(self) -> int:
        return self.blocks[-1][1]

    def __deepcopy__(self, memo: dict) -> _Config:
        return self


def _positive_int(name: str, value: Any, top: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1 \
            or (top is not None and value > top):
        bound = f" no more than {top:,}" if top is not None else ""
        raise ValueError(f"python_concordia: {name} must be a positive int{bound}, got {value!r}")
    return int(value)


def _config(params: Mapping[str, Any]) -> _Config:
    """Check the parameters (``ValueError`` in one line naming what is wrong and what is allowed)."""
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"python_concordia: unknown parameter(s) {unknown}; known: {sorted(PARAMETERS)}")
    p = {**PARAMETERS, **params}
    map_name, players = p["map_name"], p["players"]
    if map_name not in MAP_NAMES:
        raise ValueError(f"python_concordia: unknown map_name {map_name!r}; allowed: {list(MAP_NAMES)}")
    try:
        check_setup_args(map_name, players)
    except ValueError as exc:
        raise ValueError(f"python_concordia: {exc}") from None
    if not isinstance(p["intermediate_scoring"], (bool, np.bool_)):
        raise ValueError(f"python_concordia: intermediate_scoring must be a bool, got {p['intermediate_scoring']!r}")
    if p["max_turns"] is None:
        raise ValueError("python_concordia: max_turns must be a positive int: OpenSpiel needs a bounded game")
    max_turns = _positive_int("max_turns", p["max_turns"])
    if p["reward"] not in REWARDS:
        raise ValueError(f"python_concordia: reward must be one of {list(REWARDS)}, got {p['reward']!r}")
    setups = _positive_int("num_setups", p["num_setups"], MAX_SETUPS)
    blocks = tuple(deck_blocks(new_game(map_name, int(players), seed=0)))  # the same for every seed
    return _Config(map_name, int(players), bool(p["intermediate_scoring"]), int(max_turns), p["reward"], setups,
                   blocks)


def _utility_range(cfg: _Config) -> tuple[float, float]:
    """(min, max) utility: -1/(n-1) is the least a "win" loser gets, -1 the last place's "rank"."""
    low = -1.0 if cfg.reward == "rank" or cfg.players == 2 else -1.0 / (cfg.players - 1)
    return low, 1.0


# ---------------------------------------------------------------- the core state, copied cheaply

class _Core:
    """Holds the core :class:`GameState`. OpenSpiel clones a Python state by deep-copying its
    attributes and serializes it by pickling them: this copies only the two small arrays (the
    map's tables are shared) and pickles as (map name, state bytes)."""

    __slots__ = ("state",)

    def __init__(self, state: GameState) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict) -> _Core:
        return _Core(self.state.clone())

    def __reduce__(self) -> tuple[Callable[[str, bytes], _Core], tuple[str, bytes]]:
        return _restore_core, (self.state.map_name, self.state.s.tobytes())


def _restore_core(map_name: str, data: bytes) -> _Core:
    return _Core(GameState(get_game(map_name), np.frombuffer(data, np.int32).copy()))


# ---------------------------------------------------------------- the game

class ConcordiaGame(pyspiel.Game):
    """The registered game; ``pyspiel.load_game("python_concordia", {...})`` builds one."""

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        cfg = _config(dict(params or {}))
        low, high = _utility_range(cfg)
        info = pyspiel.GameInfo(
            num_distinct_actions=E.NUM_ACTIONS,
            max_chance_outcomes=max(cfg.num_setups, E.NCARD),
            num_players=cfg.players,
            min_utility=low,
            max_utility=high,
            utility_sum=0.0,
            max_game_length=cfg.max_turns * DECISIONS_PER_CARD_PLAY,
        )
        super().__init__(GAME_TYPE, info, {**PARAMETERS, **dict(params or {})})
        self.config = cfg

    def new_initial_state(self) -> ConcordiaState:
        """The empty table: a chance node choosing the setup."""
        return ConcordiaState(self)

    def max_chance_nodes_in_history(self) -> int:
        return 1 + self.config.deck_len

    def make_py_observer(self, iig_obs_type: Any = None, params: Mapping[str, Any] | None = None) -> Any:
        """The observation (tensor + readable string) or, for perfect-recall types, the information
        state (string key only). Every player sees the same public information, so the private /
        public parts of ``iig_obs_type`` select nothing else."""
        if isinstance(iig_obs_type, Mapping):  # OpenSpiel passes the parameters alone when no type is given
            iig_obs_type, params = None, iig_obs_type
        if params:
            raise ValueError(f"python_concordia: observation parameters are not supported; got {dict(params)}")
        if getattr(iig_obs_type, "perfect_recall", False):
            return _InfoStateObserver()
        return _Observer()


class ConcordiaState(pyspiel.State):
    """One game: the chance steps of the setup and the deal, then the core :class:`GameState`."""

    def __init__(self, game: ConcordiaGame) -> None:
        super().__init__(game)
        self._cfg: _Config = game.config
        self._core: _Core | None = None  # None until the setup chance node is resolved
        self._dealt = 0  # deck positions dealt by chance so far

    # ------------------------------------------------------------ phases
    def _dealing(self) -> bool:
        return self._core is None or self._dealt < self._cfg.deck_len

    def _over(self, core: GameState) -> bool:
        return core.is_terminal() or int(core.s[E.O_TURN]) >= self._cfg.max_turns

    def current_player(self) -> int:
        if self._dealing():
            return int(pyspiel.PlayerId.CHANCE)
        core = self._require_core()
        if self._over(core):
            return int(pyspiel.PlayerId.TERMINAL)
        return core.current_player

    def is_terminal(self) -> bool:
        return not self._dealing() and self._over(self._require_core())

    def _require_core(self) -> GameState:
        if self._core is None:
            raise ValueError("python_concordia: the setup chance node is not resolved yet")
        return self._core.state

    # ------------------------------------------------------------ chance
    def _block(self, position: int) -> tuple[int, int]:
        return next(b for b in self._cfg.blocks if b[0] <= position < b[1])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """Setup: every seed below ``num_setups``, equally likely. Deal: the card ids of this
        position's deck not yet placed, equally likely."""
        if self._core is None:
            return [(k, 1.0 / self._cfg.num_setups) for k in range(self._cfg.num_setups)]
        if not self._dealing():
            raise ValueError("python_concordia: chance_outcomes() outside the deal")
        cards = self._undealt()
        return [(c, 1.0 / len(cards)) for c in cards]

    def _undealt(self) -> list[int]:
        """Card ids still to place in the deck of the next deal position, ascending."""
        _, stop = self._block(self._dealt)
        s = self._require_core().s
        return sorted(int(c) for c in s[E.O_DECK + self._dealt:E.O_DECK + stop])

    def _apply_chance(self, outcome: int) -> None:
        if self._core is None:
            if not 0 <= outcome < self._cfg.num_setups:
                raise ValueError(f"python_concordia: setup outcome must be 0..{self._cfg.num_setups - 1}, got {outcome}")
            self._core = _Core(new_game(self._cfg.map_name, self._cfg.players, seed=outcome,
                                        intermediate_scoring=self._cfg.intermediate_scoring))
            return
        s, i = self._core.state.s, self._dealt
        _, stop = self._block(i)
        deck = s[E.O_DECK:E.O_DECK + stop]
        where = np.flatnonzero(deck[i:] == outcome)
        if where.size == 0:
            raise ValueError(f"python_concordia: card {outcome} is not among the cards left to deal at deck "
                             f"position {i}: {self._undealt()}")
        j = i + int(where[0])
        deck[i], deck[j] = deck[j], deck[i]  # Fisher-Yates, in place: the deck stays a permutation
        if i < E.NDISP:
            s[E.O_DISPLAY + i] = outcome
        self._dealt += 1
        if not self._dealing():
            self._core.state.refresh()

    # ------------------------------------------------------------ decisions
    def _legal_actions(self, player: int) -> list[int]:
        return self._require_core().legal_actions()

    def _apply_action(self, action: int) -> None:
        if self._dealing():
            self._apply_chance(int(action))
        else:
            self._require_core().apply(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._core is None:
                return f"setup {action} (the package's seed {action})"
            where = "display position" if self._dealt < E.NDISP else "deck position"
            index = self._dealt + 1 if self._dealt < E.NDISP else self._dealt - E.NDISP + 1
            return f"deal {_card_name(self._cfg.map_name, int(action))} (card {action}) to {where} {index}"
        return self._require_core().action_to_string(int(action))

    def returns(self) -> list[float]:
        """The env's final rewards once the game is over; 0 for everyone before, and after a
        truncation at ``max_turns`` card plays."""
        if not self.is_terminal():
            return [0.0] * self._cfg.players
        return _returns(self._require_core(), self._cfg)

    # ------------------------------------------------------------ information
    def resample_from_infostate(self, player: int, probability_sampler: Any) -> ConcordiaState:
        """A state of ``player``'s information set: this one with the undrawn cards of every
        stacked deck shuffled (within its deck). ``probability_sampler()`` (e.g.
        ``pyspiel.UniformProbabilitySampler`` or a :class:`Resampler`) gives the randomness, so a
        seeded sampler gives reproducible samples. Every player knows the same, so ``player``
        only has to be a seat."""
        if isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
                or not 0 <= player < self._cfg.players:
            raise ValueError(f"python_concordia: player must be a seat 0..{self._cfg.players - 1}, got {player!r}")
        new = self.clone()
        if new._core is not None:
            seed = int(float(probability_sampler()) * 2.0**53)
            resample_deck(new._core.state.s, list(self._cfg.blocks), np.random.default_rng(seed))
        return new

    def _info_key(self, player: int) -> str:
        if self._core is None:
            return f"p{player} setup"
        s = self._core.state.s.copy()
        pos = int(s[E.O_DECK_POS])
        for start, stop in self._cfg.blocks:  # the undrawn order is hidden: keep only each deck's content
            lo = max(start, pos)
            s[E.O_DECK + lo:E.O_DECK + stop].sort()
        if self._dealing() and self._dealt < E.NDISP:  # display positions not dealt yet
            s[E.O_DISPLAY + self._dealt:E.O_DISPLAY + E.NDISP] = -1
        return f"p{player} d{self._dealt} " + s.tobytes().hex()

    def _header(self) -> str:
        """One readable line: the game, the turn and who decides (or the result)."""
        cfg = self._cfg
        head = f"Concordia ({cfg.map_name}, {cfg.players} players)"
        if self._core is None:
            return f"{head}: setup to draw"
        if self._dealing():
            return f"{head}: dealing the decks, {self._dealt} of {cfg.deck_len} positions dealt"
        core = self._core.state
        head += f", turn {int(core.s[E.O_TURN])}"
        if core.is_terminal():
            return f"{head}, game over, VP {core.scores()}, returns {self.returns()}"
        if self._over(core):
            return f"{head}, truncated after {cfg.max_turns} card plays, VP {core.scores()}"
        return f"{head}, player {core.current_player} to decide: {core.phase_name}"

    def __str__(self) -> str:
        """The header line, then the whole state array in hex, hidden deck order included (a god's
        view, exact, cheap: OpenSpiel's tests compare states by it). ``print(core_state(state))``
        shows the position as readable text."""
        if self._core is None:
            return self._header()
        return f"{self._header()}\nstate {self._dealt} {self._core.state.s.tobytes().hex()}"


def _card_name(map_name: str, card_id: int) -> str:
    game = get_game(map_name)
    return game.components.card_types[int(game.tables[E.T_CARD_TYPE + card_id])].name


def _returns(core: GameState, cfg: _Config) -> list[float]:
    """The utilities of a finished (or truncated: all 0) game."""
    if not core.is_terminal():
        return [0.0] * cfg.players
    return [float(r) for r in seat_rewards(core, cfg.reward)]


# ---------------------------------------------------------------- observers

class _Observer:
    """The package's per-seat observation vector (named blocks in ``dict``) and the readable
    public position (the PyObserver interface of ``open_spiel.python.observation``)."""

    def __init__(self) -> None:
        self.tensor = np.zeros(OBSERVATION_SIZE, np.float32)
        self.dict = {name: self.tensor[OBSERVATION_LAYOUT[name]].reshape(shape)
                     for name, shape, _ in OBSERVATION_FIELDS}

    def set_from(self, state: ConcordiaState, player: int) -> None:
        if state._dealing():
            self.tensor.fill(0.0)
            return
        core = state._require_core()
        encode(core.s, core.game.tables, map_id(core.map_name), int(player), self.tensor)

    def string_from(self, state: ConcordiaState, player: int) -> str:
        return f"seat {player}: {state._header()}\n{state._info_key(int(player))}"


class _InfoStateObserver:
    """The information state: a string key only (see the module docstring)."""

    def __init__(self) -> None:
        self.tensor = None
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: ConcordiaState, player: int) -> None:
        pass

    def string_from(self, state: ConcordiaState, player: int) -> str:
        return state._info_key(int(player))


# ---------------------------------------------------------------- helpers

def load_game(map_name: str = "imperium", players: int = 4, **params: Any) -> ConcordiaGame:
    """``pyspiel.load_game("python_concordia", {...})`` with the parameters as keywords."""
    return pyspiel.load_game(GAME_NAME, {"map_name": map_name, "players": players, **params})


def _config_of(game: Any) -> _Config:
    cfg = getattr(game, "config", None)
    if not isinstance(cfg, _Config):
        raise TypeError(f"expected a python_concordia game, got {game!r}")
    return cfg


def deal_outcomes(game: ConcordiaGame, seed: int) -> list[int]:
    """The chance outcomes (setup, then one card per deck position) that deal
    ``new_game(map, players, seed)`` exactly; ``seed`` must be below the game's ``num_setups``."""
    cfg = _config_of(game)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < cfg.num_setups:
        raise ValueError(f"python_concordia: seed must be a setup outcome 0..{cfg.num_setups - 1}, got {seed!r}")
    core = new_game(cfg.map_name, cfg.players, seed=int(seed), intermediate_scoring=cfg.intermediate_scoring)
    return [int(seed)] + core.s[E.O_DECK:E.O_DECK + cfg.deck_len].tolist()


def seeded_state(game: ConcordiaGame, seed: int) -> ConcordiaState:
    """The first decision of the game ``new_game(map, players, seed)``, reached through the
    chance nodes (:func:`deal_outcomes`)."""
    state = game.new_initial_state()
    for outcome in deal_outcomes(game, seed):
        state.apply_action(outcome)
    return state


def core_state(state: ConcordiaState) -> GameState:
    """A copy of the package's :class:`GameState` under ``state`` (once the deal is complete)."""
    if not isinstance(state, ConcordiaState):
        raise TypeError(f"expected a python_concordia state, got {state!r}")
    if state._dealing():
        raise ValueError("python_concordia: the deal is not complete yet: no core game state")
    return state._require_core().clone()


def require_two_players(game: Any, algorithm: str) -> None:
    """``ValueError`` in one line unless ``game`` has 2 players: for OpenSpiel algorithms that only
    play 2-player games (AlphaZero, minimax / alpha-beta, ...). Only Italia allows 2 players."""
    n = game.num_players()
    if n != 2:
        raise ValueError(f"OpenSpiel's {algorithm} needs a 2-player game; this {GAME_NAME} game has {n} players: "
                         f"load it with map_name='italia', players=2 (Italia is the map for 2 players)")


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


# ---------------------------------------------------------------- speed
# Every figure is CPU time of this process (time.process_time): all of it is single-threaded work,
# and CPU time holds still on a machine shared with other jobs, where wall-clock time does not.

def _random_games(states: list, apply: Callable[[Any, int], None], rng: np.random.Generator) -> tuple[int, float]:
    """Play every state to its end by uniformly random legal actions: (decisions, CPU seconds)."""
    decisions, start = 0, time.process_time()
    for state in states:
        while not state.is_terminal():
            legal = state.legal_actions()
            apply(state, legal[int(rng.integers(len(legal)))])
            decisions += 1
    return decisions, time.process_time() - start


def time_random_play(map_name: str, players: int, games: int, seed: int = 0) -> tuple[float, float, float, float]:
    """Uniformly random games from setups ``seed``, ``seed + 1``, ... (setup and deal not timed):
    (decisions/s and games/s through pyspiel, ``legal_actions()`` + ``apply_action()`` on this
    Python game; decisions/s through the core ``GameState`` API; games/s of the compiled random
    playout, ``engine.random_playout``, no Python per decision)."""
    game = load_game(map_name, players)
    ps_states = [seeded_state(game, seed + g) for g in range(games)]
    ps_decisions, ps_time = _random_games(ps_states, lambda st, a: st.apply_action(a), np.random.default_rng(seed))
    core = [new_game(map_name, players, seed=seed + g) for g in range(games)]
    api_decisions, api_time = _random_games(core, lambda st, a: st.apply(a), np.random.default_rng(seed))
    core = [new_game(map_name, players, seed=seed + g) for g in range(games)]
    start = time.process_time()
    for g, st in enumerate(core):
        E.random_playout(st.s, st.game.tables, st._mask, seed + g, 1_000_000)
    kernel_time = time.process_time() - start
    return ps_decisions / ps_time, games / ps_time, api_decisions / api_time, games / kernel_time


def time_evaluators(map_name: str, players: int, playouts: int, seed: int = 0) -> tuple[float, float]:
    """Seconds per evaluation from the first decision: (:class:`PlayoutEvaluator`, OpenSpiel's
    ``RandomRolloutEvaluator``), each the mean of ``playouts`` random playouts."""
    state = seeded_state(load_game(map_name, players), seed)
    out = []
    for evaluator in (PlayoutEvaluator(seed=seed), os_mcts.RandomRolloutEvaluator(random_state=np.random.RandomState(seed))):
        start = time.process_time()
        for _ in range(playouts):
            evaluator.evaluate(state)
        out.append((time.process_time() - start) / playouts)
    return out[0], out[1]


def time_bots(map_name: str, players: int, simulations: int, decisions: int, seed: int = 0) -> tuple[float, float]:
    """Seconds per decision of ``MCTSBot`` and ``ISMCTSBot`` (``simulations`` each, UCT c = 2,
    :class:`PlayoutEvaluator`), over the first ``decisions`` decisions of a game from setup
    ``seed``: both decide every position; the seat's bot's move is played (MCTSBot seat 0)."""
    from open_spiel.python.algorithms.ismcts import ISMCTSBot

    game = load_game(map_name, players)
    mcts = os_mcts.MCTSBot(game, 2.0, simulations, PlayoutEvaluator(seed=seed), solve=False,
                           random_state=np.random.RandomState(seed))
    ismcts = ISMCTSBot(game, PlayoutEvaluator(seed=seed), 2.0, simulations, random_state=np.random.RandomState(seed))
    ismcts.set_resampler(Resampler(seed))
    spent = [0.0, 0.0]
    state = seeded_state(game, seed)
    for _ in range(decisions):
        if state.is_terminal():
            raise ValueError(f"the game ended before {decisions} decisions")
        actions = []
        for i, bot in enumerate((mcts, ismcts)):
            start = time.process_time()
            actions.append(bot.step(state))
            spent[i] += time.process_time() - start
        state.apply_action(actions[state.current_player() % 2])  # seat 0: MCTSBot's move; seat 1: ISMCTSBot's
    return spent[0] / decisions, spent[1] / decisions


def benchmark(games: int = 20, playouts: int = 20, seed: int = 0) -> None:
    """Print random play through pyspiel against the core's Python API and compiled kernel, the
    two MCTS evaluators, for every map and player count, then the time per decision of the bots."""
    from concordia_env.tools.bench import COMBOS, machine_description

    print(f"# {machine_description()}; CPU time; {games} random games per row, setups {seed}..{seed + games - 1}; "
          f"evaluators: mean of {playouts} playouts from the first decision")
    print("| map | players | pyspiel decisions/s | core API decisions/s | pyspiel games/s | "
          "compiled playout games/s | PlayoutEvaluator ms | RandomRolloutEvaluator ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for map_name, players in COMBOS:
        time_random_play(map_name, players, 1, seed)  # warm-up: compiled code loaded, caches filled
        time_evaluators(map_name, players, 1, seed)
        ps_dps, ps_gps, api_dps, kernel_gps = time_random_play(map_name, players, games, seed)
        fast, slow = time_evaluators(map_name, players, playouts, seed)
        print(f"| {map_name} | {players} | {ps_dps:,.0f} | {api_dps:,.0f} | {ps_gps:,.1f} | {kernel_gps:,.0f} | "
              f"{fast * 1e3:.1f} | {slow * 1e3:.0f} |")
    for simulations in (16, 64):
        mcts, ismcts = time_bots("italia", 2, simulations, 40, seed)
        print(f"# italia, 2 players, {simulations} simulations, first 40 decisions: MCTSBot {mcts * 1e3:.0f} ms, "
              f"ISMCTSBot {ismcts * 1e3:.0f} ms per decision")


if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(GAME_TYPE, ConcordiaGame)

