"""The turn agent: whole turns scored by a value network (and the heuristic's value)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_az import advanced, random_net

from concordia_env import encoding
from concordia_env.agents.az import load_net
from concordia_env.agents.base import make_agent
from concordia_env.agents.turn import TurnAgent
from concordia_env.arena.records import play_game
from concordia_env.state import new_game
from concordia_env.turns import TurnGenerator, completion_weights, whole_turns


def _decide(agent, st, with_state=True):
    return agent.act(encoding.observation(st, st.current_player), st.legal_action_mask(), st if with_state else None)


def test_by_the_heuristics_value_alone_it_plays_the_best_valued_turn():
    st = advanced(moves=20)
    while st.phase != 0:  # a card choice
        st.apply(st.legal_actions()[0])
    turns = whole_turns(st)
    by_actions = {t.actions: t.value for t in turns}
    agent = TurnAgent(net="none", w=1.0)
    played = []
    seat = st.current_player
    while not st.is_terminal() and st.active_player == seat and (not played or st.phase != 0):
        a = _decide(agent, st)
        played.append(a)
        st.apply(a)
    # the whole planned turn, action by action: a candidate of the best value (ties by the seed's noise)
    assert by_actions[tuple(played)] == max(by_actions.values())


def test_by_a_network_alone_it_plays_the_best_win_share_and_sees_no_more_with_the_state():
    net = random_net(5)
    st = advanced(moves=30)
    gen = TurnGenerator("italia")
    n = gen.generate(st.s, st.game.tables)
    rows = gen.observations(st.game.tables, st.current_player)[:n]
    best = int(np.argmax(net.values(rows)[:, 0]))
    a = TurnAgent(net=net, w=0.0)
    b = TurnAgent(net=net, w=0.0)
    assert _decide(a, st) == _decide(b, st, with_state=False) == gen.sequence(best)[0]


def test_a_blend_adds_the_weighted_terms():
    net = random_net(6)
    st = advanced(moves=12)
    agent = TurnAgent(net=net, w=0.5, win=10.0)
    gen = agent.generator_for("italia", 2)
    n = gen.generate(st.s, st.game.tables)
    rows = gen.observations(st.game.tables, st.current_player)[:n]
    expected = 0.5 * gen.values[:n] + 10.0 * net.values(rows)[:, 0]
    np.testing.assert_allclose(agent.scores(st, gen, rows), expected, rtol=1e-6)


def test_exploration_is_reproducible_by_seed():
    def game(seed):
        return play_game("italia", 2, 4, [TurnAgent(seed, net="none", w=1, explore=0.5), make_agent("heuristic")],
                         max_turns=30)["actions"]
    assert game(1) == game(1)
    assert game(1) != play_game("italia", 2, 4, [TurnAgent(1, net="none", w=1), make_agent("heuristic")],
                                max_turns=30)["actions"]


@pytest.mark.parametrize("spec, message", [
    ("turn:w=-1", "w must be"), ("turn:explore=2", "explore must be"), ("turn:net=none:w=0", "w > 0"),
    ("turn:candidates=0", "max_candidates"), ("turn:depth=3", "unexpected keyword"),
    ("turn:net=az:margin=1", "margin head"), ("turn:net=/nonexistent/x", "x"),
])
def test_bad_options_are_refused(spec, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        agent = make_agent(spec)
        st = new_game("italia", 2, seed=0)
        _decide(agent, st)


def test_a_net_for_another_map_is_refused_naming_the_file(tmp_path: Path):
    random_net(map_name="imperium").save(tmp_path / "imp")
    st = advanced(moves=6)
    with pytest.raises(ValueError, match=r"imp\.npz: trained for the imperium map"):
        _decide(make_agent(f"turn:net={tmp_path / 'imp'}"), st)


def test_turn_agents_play_tournaments_without_torch(tmp_path: Path):
    random_net(3).save(tmp_path / "n")
    code = f"""
import sys
sys.modules["torch"] = None
from concordia_env.cli import main
netv2 = "turn:net=none:w=1:complete=net:completer=value"  # the strength table's network alone
for map_name, specs in (("italia", ["turn:net={tmp_path / 'n'}:w=0.5", netv2]),
                        ("imperium", ["turn", "turn:net=az:w=0", netv2, "heuristic"])):
    n = len(specs)
    rc = main(["tournament", "--map", map_name, "--players", str(n), "--agents", ",".join(specs),
               "--games", str(n), "--seed", "5", "--max-turns", "60", "--no-progress"])
    assert rc == 0, (map_name, rc)
assert sys.modules.get("torch") is None
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")


@pytest.mark.parametrize("policy", [True, False])
def test_a_learned_completion_scores_turn_ends_as_the_numpy_network_does(policy):
    net = random_net(9, policy=policy)
    st = advanced(moves=16)
    gen = TurnGenerator("italia", completion=net)
    n = gen.generate(st.s, st.game.tables)
    rows = gen.observations(st.game.tables, st.current_player)[:n]
    expected = net.policy_logits(rows) if policy else net.values(rows)[:, 0]
    np.testing.assert_allclose(gen.values[:n], expected, rtol=1e-4, atol=1e-5)
    for k in range(n):  # still whole turns of legal actions
        c = st.clone()
        for a in gen.sequence(k):
            c.apply(a)
        assert np.array_equal(c.s, gen.states[k])


@pytest.mark.parametrize("map_name, players", [("italia", 2), ("imperium", 4)])
def test_a_learned_completion_ranks_each_position_once_and_finds_the_same_turns(map_name, players):
    """The cache of ranked positions (all, a full table of 8, none) changes no candidate, bit for bit."""
    from concordia_env.agents.turn import released_completion
    net = released_completion(map_name)
    st = new_game(map_name, players, seed=11)
    heuristic = make_agent("heuristic")
    found, choices = [], 0
    while len(found) < 4 and not st.is_terminal():
        choices += st.phase == 0
        if st.phase == 0 and choices % 5 == 0:
            per_size = []
            for slots in (4096, 8, 1):
                gen = TurnGenerator(map_name, 64, completion=net)
                gen.rank_slots = slots
                n = gen.generate(st.s, st.game.tables)
                per_size.append((n, gen.states[:n].copy(), gen.actions[:n].copy(), gen.values[:n].copy()))
            for other in per_size[1:]:
                assert other[0] == per_size[0][0]
                assert all(np.array_equal(a, b) for a, b in zip(other[1:], per_size[0][1:]))
            found.append(per_size[0][0])
        st.apply(_decide(heuristic, st))
    assert len(found) == 4 and max(found) > 8


def test_with_a_learned_completion_w_weighs_the_completing_networks_value_of_each_end():
    agent = make_agent("turn:w=0.5:win=40:complete=net")  # the released az network completes, values and wins
    st = advanced(moves=16)
    gen = agent.generator_for("italia", 2)
    n = gen.generate(st.s, st.game.tables)
    rows = gen.observations(st.game.tables, st.current_player)[:n]
    net = agent.net_for("italia", 2)
    end = net.policy_logits(rows) if net.has_policy else net.values(rows)[:, 0]
    assert n > 1 and np.ptp(end) > 0
    np.testing.assert_allclose(agent.scores(st, gen, rows), 0.5 * end + 40 * net.values(rows)[:, 0],
                               rtol=1e-4, atol=1e-4)
    assert _decide(agent, st) in st.legal_actions()


@pytest.mark.parametrize("map_name, players", [("italia", 2), ("imperium", 4)])
def test_completer_value_is_the_released_value_completion_of_the_games_map(map_name, players):
    """``completer=value`` (``net`` v2 of the strength table) completes with the map's packaged copy
    of the network trained in releases/ and measured in results/value_completion/."""
    from concordia_env.agents.turn import released_completion_path
    packaged = released_completion_path(map_name)
    trained = Path(__file__).resolve().parents[1] / "releases" / f"turn_{map_name}" / "completion_value" / map_name
    for ext in (".npz", ".json"):
        assert packaged.with_suffix(ext).read_bytes() == trained.with_suffix(ext).read_bytes()
    agent = make_agent("turn:net=none:w=1:complete=net:completer=value")
    expected = completion_weights(load_net(packaged))
    got = agent.generator_for(map_name, players).completion
    assert len(got) == len(expected) and all(np.array_equal(a, b) for a, b in zip(got, expected))
    with pytest.raises(ValueError, match=f"trained for {players} players"):
        agent.generator_for(map_name, 3)


def test_a_missing_value_completion_says_how_to_make_one(monkeypatch, tmp_path):
    from concordia_env.agents import turn
    monkeypatch.setattr(turn, "POLICIES", tmp_path)
    with pytest.raises(FileNotFoundError, match="turn_td.completion --target value"):
        make_agent("turn:net=none:w=1:complete=net:completer=value").generator_for("italia", 2)


def test_a_learned_completion_needs_one_relu_layer():
    with pytest.raises(ValueError, match="net=none scores turns"):
        make_agent("turn:net=none:w=0:complete=net")
    with pytest.raises(ValueError, match="complete must be"):
        make_agent("turn:complete=mcts")
    two = random_net(1)
    deep = type(two)(two.trunk + [(np.zeros((4, 16)), np.zeros(4))], {"win": (np.zeros((5, 4)), np.zeros(5))},
                     "ReLU", two.scale, two.unbounded)
    with pytest.raises(ValueError, match="one ReLU trunk layer"):
        TurnGenerator("italia", completion=deep)


def test_the_released_turn_network_plays_and_a_missing_one_says_how_to_make_it(monkeypatch, tmp_path):
    st = advanced(moves=4)
    assert _decide(make_agent("turn:net=turn:w=0"), st) in st.legal_actions()
    from concordia_env.agents import turn
    monkeypatch.setattr(turn, "POLICIES", tmp_path)
    with pytest.raises(FileNotFoundError, match="turn_td --map italia"):
        _decide(make_agent("turn:net=turn:w=0"), st)
