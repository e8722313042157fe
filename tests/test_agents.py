"""The baseline agents: random, heuristic (greedy one-turn planner) and MCTS.

Every spec finishes legal games on every map and player count; seeded agents
replay identically; the heuristic chooses as it would from the observation alone
(as in the PettingZoo env), state or not; bad masks, states and options are
refused with a ValueError;
MCTS's deck re-sampling keeps exactly what every player knows; its time budget
and its evaluation behave as documented; and the heuristic clearly beats
random players.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

import concordia_env as ce
from concordia_env import engine as E
from concordia_env.agents import make_agent, parse_spec
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent, deck_blocks, evaluate, resample_deck
from concordia_env.agents.random_agent import RandomAgent
from concordia_env.arena.records import play_game, verify_record
from concordia_env.board import deck_card_ids
from concordia_env.encoding import observation
from concordia_env.game import get_game
from concordia_env.state import GameState, new_game
from concordia_env.validation import check_invariants

COMBOS = [("italia", 2), ("italia", 3), ("italia", 4), ("imperium", 3), ("imperium", 4), ("imperium", 5)]
SPECS = ["random", "heuristic", "mcts:iterations=30", "mcts:iterations=20:rollout=random"]


def random_states(map_name="imperium", n=4, seed=0, every=7, limit=60, min_legal=2):
    """Copies of states along a random game: every ``every``-th decision with at least
    ``min_legal`` legal actions, at most ``limit`` of them."""
    st = new_game(map_name, n, seed)
    rng = random.Random(seed)
    out, step = [], 0
    while not st.is_terminal() and len(out) < limit:
        if step % every == 0 and len(st.legal_actions()) >= min_legal:
            out.append(st.clone())
        st.apply(rng.choice(st.legal_actions()))
        step += 1
    return out


def finished_game(map_name="imperium", n=4, seed=0) -> GameState:
    st = new_game(map_name, n, seed)
    rng = random.Random(seed)
    while not st.is_terminal():
        st.apply(rng.choice(st.legal_actions()))
    return st


def act(agent, state):
    """The agent's action for the deciding seat of ``state``, as play_game asks for it."""
    return agent.act(observation(state, state.current_player), state.legal_action_mask(), state)


# ---------------------------------------------------------------- full games
@pytest.mark.parametrize("map_name,n", COMBOS)
@pytest.mark.parametrize("spec", SPECS)
def test_every_agent_finishes_legal_games(spec, map_name, n):
    seed = 11 + n
    seats = [make_agent(spec)] + [make_agent("random") for _ in range(n - 1)]
    record = play_game(map_name, n, seed, seats)  # raises AgentError on an illegal action
    result = record["result"]
    assert not result["truncated"] and result["winner"] is not None
    assert record["agents"] == [spec] + ["random"] * (n - 1)
    verify_record(record)  # the actions replay to the same result


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_heuristic_self_play_finishes(map_name, n):
    record = play_game(map_name, n, 5, [make_agent("heuristic") for _ in range(n)])
    assert not record["result"]["truncated"]
    verify_record(record)


# ---------------------------------------------------------------- determinism
def test_heuristic_same_seed_same_game():
    first = play_game("imperium", 4, 21, [HeuristicAgent(seed=0) for _ in range(4)])
    again = play_game("imperium", 4, 21, [HeuristicAgent(seed=99) for _ in range(4)])  # play_game reseeds
    assert first["actions"] == again["actions"] and first["result"] == again["result"]
    # and the same agent object, reseeded by reset(), repeats its choices on the same states
    agent = HeuristicAgent()
    states = random_states("italia", 3, seed=4, limit=30)
    agent.reset(5)
    one = [act(agent, s) for s in states]
    agent.reset(5)
    assert [act(agent, s) for s in states] == one


@pytest.mark.parametrize("spec", ["mcts:iterations=15", "mcts:iterations=10:rollout=random"])
def test_mcts_with_iterations_is_deterministic(spec):
    games = [play_game("italia", 3, 8, [make_agent(spec), make_agent("random"), make_agent("random")])
             for _ in range(2)]
    assert games[0]["actions"] == games[1]["actions"]
    states = random_states("imperium", 4, seed=2, limit=15)
    _, options = parse_spec(spec)
    a, b = MCTSAgent(seed=3, **options), MCTSAgent(seed=3, **options)
    assert [act(a, s) for s in states] == [act(b, s) for s in states]


def test_mcts_seed_changes_random_playouts():
    """The seed drives the deck samples and the random playouts. With random playouts
    different seeds choose differently on some states; with the (deterministic) heuristic
    evaluation a shallow search rarely reaches a deck draw, so choices may well agree."""
    states = random_states("imperium", 4, seed=0, every=5, limit=12, min_legal=4)
    differ = sum(len({act(MCTSAgent(seed=seed, iterations=20, rollout="random"), s) for seed in range(4)}) > 1
                 for s in states)
    assert differ >= 1
    # the seed is consumed either way (one deck sample per iteration)
    agent = MCTSAgent(seed=0, iterations=5)
    before = agent.rng.bit_generator.state
    act(agent, states[0])
    assert agent.rng.bit_generator.state != before


# ---------------------------------------------------------------- observation only
def test_heuristic_ignores_state():
    """Passing the state saves rebuilding the position from the observation and changes nothing
    (tests/test_fast_baselines.py checks thousands of decisions)."""
    checked = 0
    for map_name, n in COMBOS:
        for st in random_states(map_name, n, seed=n, every=9, limit=25):
            obs, mask = observation(st, st.current_player), st.legal_action_mask()
            a = HeuristicAgent(seed=1).act(obs, mask, st)
            assert HeuristicAgent(seed=1).act(obs, mask, None) == a
            assert HeuristicAgent(seed=1).act(obs, mask) == a
            assert mask[a] == 1
            checked += 1
    assert checked >= 100


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 5)])
def test_heuristic_plays_the_pettingzoo_env(map_name, n):
    env = ce.env(map_name=map_name, num_players=n)
    env.reset(seed=3)
    players = {a: HeuristicAgent(seed=k) for k, a in enumerate(env.possible_agents)}
    decisions = 0
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        mask = obs["action_mask"]
        action = players[agent].act(obs["observation"], mask)
        assert mask[action] == 1
        if decisions % 50 == 0:  # a seat that is not deciding gets an all-zero mask, and is told so
            other = next(a for a in env.possible_agents if a != agent)
            other_obs = env.unwrapped.observe(other)
            assert not other_obs["action_mask"].any()
            with pytest.raises(ValueError, match="allows no action"):
                players[other].act(other_obs["observation"], other_obs["action_mask"])
        env.step(action)
        decisions += 1
    assert all(env.unwrapped.terminations.values()) and not any(env.unwrapped.truncations.values())
    assert decisions > 100


# ---------------------------------------------------------------- refusals
@pytest.fixture(scope="module")
def position():
    """A decision with several legal actions, its observation and mask."""
    st = next(s for s in random_states("imperium", 4, seed=1, every=3) if len(s.legal_actions()) >= 3)
    return st, observation(st, st.current_player), st.legal_action_mask()


def test_heuristic_refuses_a_mask_that_does_not_match(position):
    st, obs, mask = position
    fewer = mask.copy()
    fewer[np.flatnonzero(mask)[0]] = 0  # one legal action less, still a choice
    with pytest.raises(ValueError, match="does not match the observation"):
        HeuristicAgent().act(obs, fewer)
    more = mask.copy()
    more[np.flatnonzero(mask == 0)[0]] = 1
    with pytest.raises(ValueError, match="does not match the observation"):
        HeuristicAgent().act(obs, more)
    with pytest.raises(ValueError, match="action_mask does not match state"):  # the state path checks it too
        HeuristicAgent().act(obs, more, st)


@pytest.mark.parametrize("spec", SPECS)
def test_every_agent_refuses_an_all_zero_mask(position, spec):
    st, obs, mask = position
    with pytest.raises(ValueError, match="allows no action"):
        make_agent(spec).act(obs, np.zeros_like(mask), st)


def test_mcts_needs_the_state_and_a_matching_mask(position):
    st, obs, mask = position
    with pytest.raises(ValueError, match="pass the core GameState"):
        MCTSAgent(iterations=5).act(obs, mask)
    fewer = mask.copy()
    fewer[np.flatnonzero(mask)[0]] = 0
    with pytest.raises(ValueError, match="does not match"):
        MCTSAgent(iterations=5).act(obs, fewer, st)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"iterations": 0}, "iterations"), ({"iterations": -3}, "iterations"), ({"iterations": 2.5}, "iterations"),
    ({"iterations": True}, "iterations"), ({"ms": -1}, "ms"), ({"ms": 0}, "ms"), ({"ms": "fast"}, "ms"),
    ({"rollout": "x"}, "rollout"), ({"c_puct": 0}, "c_puct"), ({"temperature": -1}, "temperature"),
    ({"end_stake": -1}, "end_stake"), ({"end_stake": "big"}, "end_stake"), ({"max_turns": 0}, "max_turns"),
    ({"max_turns": 2.5}, "max_turns"),
])
def test_mcts_refuses_bad_options(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        MCTSAgent(**kwargs)


@pytest.mark.parametrize("spec,fragment", [("mcts:iterations=0", "iterations"), ("mcts:ms=-1", "ms"),
                                           ("mcts:rollout=x", "rollout")])
def test_make_agent_refuses_bad_mcts_options(spec, fragment):
    with pytest.raises(ValueError, match=fragment):
        make_agent(spec)


def test_make_agent_names_an_unknown_option_and_the_known_agents():
    with pytest.raises(ValueError) as info:
        make_agent("mcts:foo=1")
    assert "foo" in str(info.value) and "mcts:foo=1" in str(info.value)
    with pytest.raises(ValueError) as info:
        make_agent("nope")
    msg = str(info.value)
    assert "unknown agent 'nope'" in msg
    for known in ("random", "heuristic", "mcts"):
        assert known in msg
    with pytest.raises(ValueError, match="not key=value"):
        make_agent("mcts:iterations")


def test_make_agent_builds_the_named_agents():
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    agent = make_agent("mcts:iterations=7:rollout=random")
    assert isinstance(agent, MCTSAgent) and agent.iterations == 7 and agent.rollout == "random"
    assert agent.name == "mcts:iterations=7:rollout=random"
    assert make_agent("mcts:ms=50").ms == 50
    agent = make_agent("mcts:end_stake=0:max_turns=500")
    assert agent.end_stake == 0 and agent.max_turns == 500
    assert make_agent("mcts").end_stake > 0 and make_agent("mcts").max_turns == 2000


def test_the_registry_imports_an_agent_only_when_it_is_made(monkeypatch):
    import subprocess
    import sys

    from concordia_env.agents import base

    code = ("import sys; from concordia_env.agents import make_agent; make_agent('random'); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('concordia_env.agents.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "concordia_env.agents.random_agent" in out
    assert not {"concordia_env.agents.mcts", "concordia_env.agents.policy", "concordia_env.agents.turn"} & set(out)
    assert base.AGENT_NAMES == tuple(base.AGENTS)
    for name in base.AGENT_NAMES:  # every entry resolves to a constructor
        assert callable(base.agent_factory(name))
    monkeypatch.setitem(base.AGENTS, "broken", "no_such_module:Agent")
    with pytest.raises(ModuleNotFoundError, match="no_such_module"):  # not swallowed
        make_agent("broken")


# ---------------------------------------------------------------- resample_deck
def _block_of_position(state) -> list[int]:
    """Deck index (0: deck I, ...) of each position of the deck array."""
    out = []
    for k, (start, stop) in enumerate(deck_blocks(state)):
        out += [k] * (stop - start)
    return out


def _deck_of_card(state) -> dict[int, int]:
    ids = deck_card_ids(state.game.components)
    decks = state.game.components.decks_per_player_count[state.num_players]
    return {cid: k for k, d in enumerate(decks) for cid in ids[d]}


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_resample_deck_shuffles_only_within_the_undrawn_part_of_each_deck(map_name, n):
    blocks_seen_shuffled = 0
    for st in [new_game(map_name, n, 2)] + random_states(map_name, n, seed=2, every=40, limit=12, min_legal=1):
        s0 = st.s.copy()
        pos, length = int(s0[E.O_DECK_POS]), int(s0[E.O_DECK_LEN])
        blocks = deck_blocks(st)
        assert blocks[-1][1] == length
        block_of, deck_of = _block_of_position(st), _deck_of_card(st)
        # the real deck is stacked by deck: the card at each position belongs to that position's deck
        assert [deck_of[int(c)] for c in s0[E.O_DECK:E.O_DECK + length]] == block_of
        orders = set()
        for seed in range(12):
            s = s0.copy()
            resample_deck(s, blocks, np.random.default_rng(seed))
            deck, deck0 = s[E.O_DECK:E.O_DECK + E.NCARD], s0[E.O_DECK:E.O_DECK + E.NCARD]
            # nothing but the undrawn part of the deck changes
            assert np.array_equal(s[:E.O_DECK], s0[:E.O_DECK])
            assert np.array_equal(s[E.O_DECK + E.NCARD:], s0[E.O_DECK + E.NCARD:])
            assert np.array_equal(deck[:pos], deck0[:pos]) and np.array_equal(deck[length:], deck0[length:])
            # the same cards, each still in its own deck
            assert sorted(deck[pos:length]) == sorted(deck0[pos:length])
            assert [deck_of[int(c)] for c in deck[:length]] == block_of
            orders.add(tuple(deck[pos:length].tolist()))
            resampled = GameState(st.game, s)
            assert check_invariants(resampled) == []
            np.testing.assert_array_equal(resampled.legal_action_mask(), st.legal_action_mask())
            for seat in range(n):  # the deck order is hidden: no observation changes
                np.testing.assert_array_equal(observation(resampled, seat), observation(st, seat))
        undrawn_per_block = [stop - max(start, pos) for start, stop in blocks]
        if max(undrawn_per_block) > 1:
            assert len(orders) > 1, "different seeds never gave a different deck order"
            blocks_seen_shuffled += 1
        else:
            assert len(orders) == 1
    assert blocks_seen_shuffled >= 1


# ---------------------------------------------------------------- MCTS budget and evaluation
class _StepClock:
    """A clock that moves on ``step`` seconds at every read: the search's deadline logic on a
    known timeline, whatever the machine's speed."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_mcts_time_budget(monkeypatch):
    import concordia_env.agents.mcts as mcts_module

    states = random_states("imperium", 5, seed=6, every=11, limit=8, min_legal=3)
    for rollout in ("heuristic", "random"):
        agent = MCTSAgent(ms=30, rollout=rollout)
        for st in states:
            # 10 ms a read: deadline at 30 ms; a 1-iteration chunk ends at 20 ms, the next
            # (sized to half the 10 ms left, at least one) at 40 ms, past it: two iterations
            monkeypatch.setattr(mcts_module, "time", _StepClock(0.010))
            a = act(agent, st)
            assert agent.last_iterations == 2, rollout
            assert st.legal_action_mask()[a] == 1
    fixed = MCTSAgent(iterations=17)
    act(fixed, states[1])
    assert fixed.last_iterations == 17


def test_mcts_evaluate_shares():
    out = np.full(E.MAXP, -1.0)
    for map_name, n in COMBOS:
        game = get_game(map_name)
        for st in random_states(map_name, n, seed=n, every=25, limit=20, min_legal=1):
            for temperature in (1.0, 8.0, 100.0):
                evaluate(st.s, game.tables, temperature, out)
                assert abs(out[:n].sum() - 1.0) < 1e-9
                assert (out[:n] >= 0).all() and (out[n:] == 0).all()
        for seed in range(3):
            st = finished_game(map_name, n, seed)
            evaluate(st.s, game.tables, 8.0, out)
            expected = np.zeros(E.MAXP)
            expected[st.winner()] = 1.0  # the winner after the Praefectus Magnus tie-break
            np.testing.assert_array_equal(out, expected)


def test_mcts_evaluate_favours_the_better_position():
    """A player with far more VP-like value gets the larger share."""
    st = random_states("imperium", 3, seed=9, every=200, limit=1, min_legal=1)[-1]
    rich = st.clone()
    rich.field("coins")[0] += 200
    out = np.zeros(E.MAXP)
    evaluate(rich.s, rich.game.tables, 8.0, out)
    assert out[0] > 0.9


# ---------------------------------------------------------------- strength
def test_heuristic_beats_random_players():
    """Six seeded 4-player Imperium games, the heuristic in a rotating seat against three
    random players. A random player in its place wins 1/4 of the time (at least 5 of 6 with
    probability below 0.5%); the heuristic wins practically every game."""
    wins = 0
    for game in range(6):
        seat = game % 4
        seats = [make_agent("random") for _ in range(4)]
        seats[seat] = make_agent("heuristic")
        record = play_game("imperium", 4, 100 + game, seats)
        assert not record["result"]["truncated"]
        wins += record["result"]["winner"] == seat
    assert wins >= 5, f"the heuristic won only {wins} of 6 games against random players"
