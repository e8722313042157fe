"""OpenSpiel: the registered ``python_concordia`` game passes pyspiel's random simulation test,
reproduces the package's seeded games move for move, resamples the hidden deck within the
information set, and MCTSBot / ISMCTSBot play it (concordia_env.integrations.openspiel).

Needs the ``openspiel`` extra; skipped without it."""

from __future__ import annotations

import importlib
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is not installed: pip install '.[openspiel]'")

from open_spiel.python.algorithms.ismcts import ISMCTSBot  # noqa: E402
from open_spiel.python.algorithms.mcts import MCTSBot, RandomRolloutEvaluator  # noqa: E402
from open_spiel.python.observation import INFO_STATE_OBS_TYPE, make_observation  # noqa: E402

from concordia_env import engine as E  # noqa: E402
from concordia_env.encoding import OBSERVATION_FIELDS, observation  # noqa: E402
from concordia_env.integrations import openspiel  # noqa: E402
from concordia_env.rewards import seat_rewards  # noqa: E402
from concordia_env.state import IllegalActionError, new_game  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the smallest and largest player count of each map (Imperium has no 2-player game, Italia no 5-player one)
COMBOS = [("italia", 2), ("italia", 4), ("imperium", 3), ("imperium", 5)]


def play_random(state, rng: np.random.Generator, moves: int) -> None:
    """Up to ``moves`` uniformly random decisions (chance nodes by their distribution)."""
    for _ in range(moves):
        if state.is_terminal():
            return
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(outcomes, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])


def hidden_part(state) -> list[int]:
    """The undrawn deck, in order."""
    s = openspiel.core_state(state).s
    return s[E.O_DECK + int(s[E.O_DECK_POS]):E.O_DECK + int(s[E.O_DECK_LEN])].tolist()


# ---------------------------------------------------------------- OpenSpiel's own test

@pytest.mark.parametrize("map_name, players", COMBOS)
def test_random_sim_test_passes(map_name: str, players: int) -> None:
    game = openspiel.load_game(map_name, players)
    assert str(game).startswith("python_concordia(") and game.num_players() == players
    assert game.num_distinct_actions() == E.NUM_ACTIONS and game.max_chance_outcomes() == openspiel.DEFAULT_SETUPS
    assert game.observation_tensor_shape() == [sum(math.prod(shape) for _, shape, _ in OBSERVATION_FIELDS)]
    assert game.max_game_length() == 2000 * openspiel.DECISIONS_PER_CARD_PLAY
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_random_sim_test_passes_with_truncation_and_rank_utilities() -> None:
    game = openspiel.load_game("italia", 3, max_turns=9, reward="rank", intermediate_scoring=True)
    assert game.max_game_length() == 9 * openspiel.DECISIONS_PER_CARD_PLAY
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    pyspiel.random_sim_test(game, num_sims=3, serialize=True, verbose=False)
    state = openspiel.seeded_state(game, 4)
    play_random(state, np.random.default_rng(0), 10_000)
    core = openspiel.core_state(state)
    assert state.is_terminal() and not core.is_terminal() and int(core.s[E.O_TURN]) == 9
    assert state.current_player() == pyspiel.PlayerId.TERMINAL and state.returns() == [0.0, 0.0, 0.0]
    assert state.legal_actions() == [] and "truncated after 9 card plays" in str(state)


def test_rank_utilities_of_a_finished_game() -> None:
    game = openspiel.load_game("imperium", 4, reward="rank")
    state = openspiel.seeded_state(game, 2)
    play_random(state, np.random.default_rng(2), 100_000)
    assert state.is_terminal()
    core = openspiel.core_state(state)
    assert core.is_terminal() and sorted(state.returns()) == pytest.approx([-1.0, -1 / 3, 1 / 3, 1.0])
    assert state.returns() == seat_rewards(core, "rank").tolist()


# ---------------------------------------------------------------- chance

def test_chance_nodes_are_distributions_over_the_setups_and_the_undealt_cards() -> None:
    for map_name, players in (("italia", 2), ("imperium", 5)):
        game = openspiel.load_game(map_name, players, num_setups=20)
        assert game.max_chance_outcomes() == E.NCARD  # outcome ids: 20 setups, 30 card ids
        state = game.new_initial_state()
        rng = np.random.default_rng(0)
        assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE
        outcomes = state.chance_outcomes()
        assert [a for a, _ in outcomes] == list(range(20))
        nodes = 0
        while state.is_chance_node():
            outcomes = state.chance_outcomes()
            actions = [a for a, _ in outcomes]
            assert actions == sorted(set(actions)) == state.legal_actions()
            assert math.isclose(sum(p for _, p in outcomes), 1.0) and len({p for _, p in outcomes}) == 1
            if nodes:  # the cards of this position's deck not yet placed
                start, stop = next(b for b in state._cfg.blocks if b[0] <= nodes - 1 < b[1])
                assert len(actions) == stop - (nodes - 1)
            state.apply_action(int(rng.choice(actions)))
            nodes += 1
        assert nodes == game.max_chance_nodes_in_history() == 1 + sum(b - a for a, b in state._cfg.blocks)
        deck = openspiel.core_state(state).s[E.O_DECK:E.O_DECK + nodes - 1]
        for start, stop in state._cfg.blocks:  # a permutation of each stacked deck
            want = new_game(map_name, players, seed=0).s[E.O_DECK + start:E.O_DECK + stop]
            assert sorted(deck[start:stop]) == sorted(want)


def test_seeded_state_reproduces_the_package_game_move_for_move() -> None:
    for map_name, players, seed in (("italia", 2, 7), ("imperium", 5, 999)):
        game = openspiel.load_game(map_name, players)
        outcomes = openspiel.deal_outcomes(game, seed)
        state = openspiel.seeded_state(game, seed)
        assert state.history() == outcomes and outcomes[0] == seed
        core = new_game(map_name, players, seed=seed)
        rng = np.random.default_rng(seed)
        moves = 0
        while not core.is_terminal():
            assert np.array_equal(openspiel.core_state(state).s, core.s)
            assert state.current_player() == core.current_player
            legal = core.legal_actions()
            assert state.legal_actions() == legal
            action = legal[int(rng.integers(len(legal)))]
            assert state.action_to_string(action) == core.action_to_string(action)
            state.apply_action(action)
            core.apply(action)
            moves += 1
        assert state.is_terminal() and np.array_equal(openspiel.core_state(state).s, core.s)
        assert state.returns() == seat_rewards(core, "win").tolist() and sum(state.returns()) == pytest.approx(0)
        assert len(state.history()) == len(outcomes) + moves


# ---------------------------------------------------------------- information

def test_observations_are_the_packages_encoding() -> None:
    game = openspiel.load_game("imperium", 4)
    state = game.new_initial_state()
    assert not any(state.observation_tensor(0))  # the setup is still to draw
    state = openspiel.seeded_state(game, 1)
    play_random(state, np.random.default_rng(1), 25)
    core = openspiel.core_state(state)
    obs = make_observation(game)
    info = make_observation(game, INFO_STATE_OBS_TYPE)
    assert list(obs.dict) == [name for name, _, _ in OBSERVATION_FIELDS] and info.tensor is None
    for p in range(4):
        want = observation(core, p)
        assert np.array_equal(np.asarray(state.observation_tensor(p), np.float32), want)
        obs.set_from(state, p)
        assert np.array_equal(obs.tensor, want)
        assert info.string_from(state, p) == state.information_state_string(p)
        assert state.observation_string(p).endswith(state.information_state_string(p))
    assert state.information_state_string(0) != state.information_state_string(1)
    assert f"turn {int(core.s[E.O_TURN])}, player {core.current_player} to decide" in state.observation_string(0)
    assert str(state).startswith("Concordia (imperium, 4 players)") and core.s.tobytes().hex() in str(state)


def test_resampled_states_share_the_information_state() -> None:
    game = openspiel.load_game("imperium", 5)
    state = openspiel.seeded_state(game, 3)
    for moves in (0, 120):
        play_random(state, np.random.default_rng(moves), moves)
        core = openspiel.core_state(state)
        pos = int(core.s[E.O_DECK_POS])
        orders = set()
        for p in range(5):
            resampler = openspiel.Resampler(seed=p)
            for _ in range(8):
                other = state.resample_from_infostate(p, resampler)
                other_core = openspiel.core_state(other)
                for q in range(5):
                    assert other.information_state_string(q) == state.information_state_string(q)
                    assert other.observation_tensor(q) == state.observation_tensor(q)
                assert other.legal_actions() == state.legal_actions()
                assert other.current_player() == state.current_player()
                differs = np.flatnonzero(other_core.s != core.s)
                assert ((differs >= E.O_DECK + pos) & (differs < E.O_DECK + E.NCARD)).all()
                for start, stop in state._cfg.blocks:  # shuffled within each deck only
                    lo = max(start, pos)
                    assert sorted(other_core.s[E.O_DECK + lo:E.O_DECK + stop]) == \
                        sorted(core.s[E.O_DECK + lo:E.O_DECK + stop])
                orders.add(tuple(hidden_part(other)))
        assert len(orders) > (30 if moves == 0 else 1)  # 40 samples; at the start 23 hidden cards
    # a seeded resampler repeats; OpenSpiel's sampler works too
    one = state.resample_from_infostate(0, openspiel.Resampler(9))
    two = state.resample_from_infostate(0, openspiel.Resampler(9))
    assert hidden_part(one) == hidden_part(two)
    three = state.resample_from_infostate(2, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    assert three.information_state_string(2) == state.information_state_string(2)


# ---------------------------------------------------------------- bots

def test_ismcts_bot_searches_a_five_player_game() -> None:
    """ISMCTSBot with OpenSpiel's own (unseeded) sampler for 20 decisions of Imperium with 5 players,
    every seat searched; it asserts that each world sample keeps the root's information state."""
    game = openspiel.load_game("imperium", 5)
    bot = ISMCTSBot(game, openspiel.PlayoutEvaluator(seed=0), 2.0, 16, random_state=np.random.RandomState(0))
    state = openspiel.seeded_state(game, 5)
    for _ in range(20):
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(int(action))
    assert len(state.history()) == game.max_chance_nodes_in_history() + 20


def test_mcts_bot_takes_openspiels_random_rollouts() -> None:
    game = openspiel.load_game("italia", 2)
    state = openspiel.seeded_state(game, 0)
    bot = MCTSBot(game, 2.0, 2, RandomRolloutEvaluator(random_state=np.random.RandomState(0)),
                  random_state=np.random.RandomState(0))
    assert bot.step(state) in state.legal_actions()


def test_playout_evaluator_scores_finished_and_truncated_games() -> None:
    game = openspiel.load_game("italia", 2, max_turns=4)
    evaluator = openspiel.PlayoutEvaluator(n_rollouts=3, seed=0)
    start = openspiel.seeded_state(game, 0)
    assert evaluator.evaluate(start).tolist() == [0.0, 0.0]  # every playout truncated after 4 card plays
    assert evaluator.prior(start) == [(a, 1 / len(start.legal_actions())) for a in start.legal_actions()]
    assert evaluator.prior(game.new_initial_state())[0] == (0, 1 / openspiel.DEFAULT_SETUPS)
    values = openspiel.PlayoutEvaluator(n_rollouts=4, seed=0).evaluate(openspiel.seeded_state(openspiel.load_game(
        "italia", 2), 0))
    assert values.sum() == pytest.approx(0) and set(values * 4) <= {-4, -2, 0, 2, 4}
    dealing = openspiel.PlayoutEvaluator(seed=1).evaluate(game.new_initial_state())  # finishes the deal first
    assert dealing.tolist() == [0.0, 0.0]


# ---------------------------------------------------------------- bad input

def test_bad_parameters_are_one_line_errors() -> None:
    cases = [
        ({"map_name": "italia", "players": 5}, "italia cannot be played by 5 players; allowed: imperium with"),
        ({"players": 2}, "imperium cannot be played by 2 players"),
        ({"map_name": "rome"}, "unknown map_name 'rome'; allowed: ['imperium', 'italia']"),
        ({"reward": "vp"}, "reward must be one of ['win', 'rank']"),
        ({"max_turns": 0}, "max_turns must be a positive int"),
        ({"num_setups": 0}, "num_setups must be a positive int no more than 100,000"),
        ({"num_setups": 100_001}, "num_setups must be a positive int"),
    ]
    for params, message in cases:
        with pytest.raises(ValueError, match=re.escape(message)) as exc:
            pyspiel.load_game("python_concordia", params)
        assert len(str(exc.value).splitlines()) == 1 and str(exc.value).startswith("python_concordia: ")
    with pytest.raises(ValueError, match="OpenSpiel needs a bounded game"):
        openspiel.ConcordiaGame({"max_turns": None})
    with pytest.raises(pyspiel.SpielError, match="Unknown parameter 'seed'"):
        pyspiel.load_game("python_concordia", {"seed": 1})
    game = openspiel.load_game("italia", 2)
    for args in ((None, {"x": 1}), ({"x": 1},)):  # OpenSpiel passes the parameters alone when no type is given
        with pytest.raises(ValueError, match=re.escape("the only observation parameter is format='text' or 'json'")):
            game.make_py_observer(*args)
    assert game.make_py_observer({}).tensor.shape == tuple(game.observation_tensor_shape())


def test_bad_actions_and_helpers_are_refused() -> None:
    game = openspiel.load_game("italia", 2)
    state = game.new_initial_state()
    with pytest.raises(ValueError, match=r"setup outcome must be 0\.\.999, got 1000"):
        state.apply_action(1000)
    with pytest.raises(ValueError, match="the deal is not complete yet"):
        openspiel.core_state(state)
    state.apply_action(0)
    first = state.chance_outcomes()[0][0]
    absent = next(c for c in range(E.NCARD) if c not in dict(state.chance_outcomes()))
    with pytest.raises(ValueError, match=f"card {absent} is not among the cards left to deal"):
        state.apply_action(absent)
    state.apply_action(first)
    state = openspiel.seeded_state(game, 0)
    before = str(state)
    with pytest.raises(IllegalActionError, match="illegal action 17"):
        state.apply_action(17)  # 'done' is not legal when a card must be played
    assert str(state) == before
    with pytest.raises(ValueError, match=r"player must be a seat 0\.\.1, got 2"):
        state.resample_from_infostate(2, openspiel.Resampler(0))
    for seed in (-1, 1000, True):
        with pytest.raises(ValueError, match=r"seed must be a setup outcome 0\.\.999"):
            openspiel.deal_outcomes(game, seed)
    with pytest.raises(TypeError, match="expected a python_concordia game"):
        openspiel.deal_outcomes(pyspiel.load_game("tic_tac_toe"), 0)
    with pytest.raises(TypeError, match="expected a python_concordia state"):
        openspiel.core_state(pyspiel.load_game("tic_tac_toe").new_initial_state())
    with pytest.raises(ValueError, match="n_rollouts must be a positive int"):
        openspiel.PlayoutEvaluator(n_rollouts=0)


def test_two_player_algorithms_are_refused_on_other_counts() -> None:
    openspiel.require_two_players(openspiel.load_game("italia", 2), "AlphaZero")
    with pytest.raises(ValueError) as exc:
        openspiel.require_two_players(openspiel.load_game("imperium", 4), "AlphaZero")
    assert str(exc.value) == ("OpenSpiel's AlphaZero needs a 2-player game; this python_concordia game has 4 players: "
                              "load it with map_name='italia', players=2 (Italia is the map for 2 players)")


def test_missing_openspiel_is_one_line_naming_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "concordia_env.integrations.openspiel")
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # as if OpenSpiel were not installed
    with pytest.raises(ImportError) as exc:
        importlib.import_module("concordia_env.integrations.openspiel")
    assert len(str(exc.value).splitlines()) == 1
    assert 'pip install ".[openspiel]" in the concordia-env source folder' in str(exc.value)


# ---------------------------------------------------------------- docs

def test_the_docs_example_mcts_and_ismcts_play_a_whole_game(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/openspiel.md's example: MCTSBot (seat 0) against ISMCTSBot (seat 1) on Italia, 8
    simulations each, a whole game (434 decisions, about 3 s of CPU). ISMCTSBot itself asserts that
    every world sample keeps the root's information state."""
    text = (ROOT / "docs" / "openspiel.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"^```py\n(.*?)^```", text, flags=re.S | re.M) if "ISMCTSBot" in b]
    scope: dict = {"__name__": "__doc_example__"}
    exec(compile(block, "docs/openspiel.md example", "exec"), scope)
    state, game = scope["state"], scope["game"]
    core = openspiel.core_state(state)
    decisions = len(state.history()) - game.max_chance_nodes_in_history()
    assert core.is_terminal() and decisions == 434  # every bot and sampler is seeded: the documented game
    assert sorted(state.returns()) == [-1.0, 1.0] and state.returns() == seat_rewards(core, "win").tolist()
    assert capsys.readouterr().out == f"{state.returns()} {core.scores()}\n"
