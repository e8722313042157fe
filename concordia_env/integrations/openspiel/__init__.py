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
* **Structs and JSON** (OpenSpiel 2): ``state.to_struct()`` / ``to_json()`` / ``to_dict()``, the
  position in board terms with the raw ids beside the names; ``to_observation_struct(p)`` and
  ``observation_json(p)``, seat ``p``'s view (also the string of the observer made with
  ``params={"format": "json"}``); ``action_to_struct(a)`` for any chance outcome or decision, and
  back with ``apply_action_struct`` / ``validate_action_struct`` or :func:`action_from_struct`
  (which also takes a partial dict or JSON text). None of them shows the hidden deck order
  (:mod:`.structs`).
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

from concordia_env._internal.extras import install_hint

#: what to install when OpenSpiel is missing
INSTALL_HINT = install_hint("openspiel", "pip install open-spiel")

try:
    import pyspiel
    from open_spiel.python.algorithms import mcts as os_mcts  # noqa: F401 - checked here, used by .search
except ImportError as _exc:  # pragma: no cover - exercised by the test that hides pyspiel
    raise ImportError(f"concordia_env.integrations.openspiel needs OpenSpiel ({_exc}); install it: "
                      f"{INSTALL_HINT}") from None

# imported after the check above, so that a missing OpenSpiel is the one line it raises; the three
# private names too, as states pickled by earlier versions name them in this module
from .config import (  # noqa: E402
    DECISIONS_PER_CARD_PLAY,
    DEFAULT_SETUPS,
    GAME_NAME,
    GAME_TYPE,
    MAX_SETUPS,
    PARAMETERS,
    REWARDS,
)
from .config import _Config as _Config  # noqa: E402
from .game import ConcordiaGame  # noqa: E402
from .helpers import core_state, deal_outcomes, load_game, require_two_players, seeded_state  # noqa: E402
from .search import PlayoutEvaluator, Resampler  # noqa: E402
from .speed import benchmark, time_bots, time_evaluators, time_random_play  # noqa: E402
from .state import ConcordiaState  # noqa: E402
from .state import _Core as _Core  # noqa: E402
from .state import _restore_core as _restore_core  # noqa: E402
from .structs import action_from_struct  # noqa: E402

__all__ = ["DECISIONS_PER_CARD_PLAY", "DEFAULT_SETUPS", "GAME_NAME", "GAME_TYPE", "INSTALL_HINT", "MAX_SETUPS",
           "PARAMETERS", "REWARDS", "ConcordiaGame", "ConcordiaState", "PlayoutEvaluator", "Resampler",
           "action_from_struct", "benchmark", "core_state", "deal_outcomes", "load_game", "require_two_players", "seeded_state", "time_bots",
           "time_evaluators", "time_random_play"]

if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(GAME_TYPE, ConcordiaGame)

