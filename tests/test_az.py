"""Learned agents: afterstate encoding, the value net's policy head, ``az`` search and the ``net`` agent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from concordia_env import encoding
from concordia_env.agents.afterstates import legal_afterstates
from concordia_env.agents.az import AZAgent, NetAgent, afterstate_logits, released_net, released_net_path
from concordia_env.agents.base import make_agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent, priors
from concordia_env.agents.numpy_policy import observation_scaling, scale_observation
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.records import play_game
from concordia_env.game import get_game
from concordia_env.state import GameState, new_game

OBS = encoding.OBSERVATION_SIZE


def random_net(seed: int = 0, hidden: int = 16, policy: bool = True, map_name: str = "italia") -> ValueNet:
    """A small untrained net with the map's observation scaling."""
    rng = np.random.default_rng(seed)
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(map_name).tables)[1])
    trunk = [(rng.normal(0, 0.05, (hidden, OBS)), rng.normal(0, 0.05, hidden))]
    heads = {"win": (rng.normal(0, 0.3, (5, hidden)), rng.normal(0, 0.1, 5))}
    if policy:
        heads["policy"] = (rng.normal(0, 0.3, (1, hidden)), rng.normal(0, 0.1, 1))
    return ValueNet(trunk, heads, "ReLU", scale, unbounded, map_name=map_name)


def advanced(map_name: str = "italia", players: int = 2, seed: int = 3, moves: int = 40) -> GameState:
    """A position some heuristic moves into a game."""
    st = new_game(map_name, players, seed=seed)
    h = HeuristicAgent(seed)
    for _ in range(moves):
        st.apply(h.act(encoding.observation(st, st.current_player), st.legal_action_mask(), st))
    return st


# ------------------------------------------------------------ afterstates
@pytest.mark.parametrize("map_name,players", [("italia", 2), ("imperium", 4), ("imperium", 5)])
def test_afterstates_are_the_observations_after_each_legal_action(map_name: str, players: int) -> None:
    st = advanced(map_name, players, moves=25)
    before = st.s.copy()
    ids, rows = legal_afterstates(st)
    assert np.array_equal(ids, st.legal_actions()) and rows.shape == (len(ids), OBS)
    for a, row in zip(ids.tolist(), rows):
        after = st.clone()
        after.apply(a)
        assert np.array_equal(row, encoding.observation(after, st.current_player)), a
    assert np.array_equal(st.s, before), "encoding afterstates leaves the state untouched"


# ------------------------------------------------------------ policy head
def test_policy_head_forward_and_file_round_trip(tmp_path: Path) -> None:
    net = random_net(1)
    x = np.stack([encoding.observation(advanced(moves=m), 0) for m in (0, 10)]).astype(np.float32)
    h = np.maximum(scale_observation(x, net.scale, net.unbounded) @ net.trunk[0][0].T + net.trunk[0][1], 0)
    w, b = net.heads["policy"]
    values, logits = net.forward(x)
    assert np.allclose(logits, (h @ w.T + b)[:, 0], atol=1e-5)
    assert np.allclose(values, net.values(x)) and np.allclose(values.sum(axis=1), 1, atol=1e-6)
    net.save(tmp_path / "n")
    back = ValueNet.load(tmp_path / "n")
    assert back.has_policy and np.array_equal(back.policy_logits(x), logits)
    assert json.loads((tmp_path / "n.json").read_text())["architecture"]["heads"] == ["win", "policy"]
    assert not random_net(policy=False).has_policy
    with pytest.raises(ValueError, match="no policy head"):
        random_net(policy=False).policy_logits(x)


def test_policy_head_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    net = random_net()
    w, b = net.heads["policy"]
    with pytest.raises(ValueError, match=r"head 'policy' has weight \(5, 16\)"):
        ValueNet(net.trunk, {"win": net.heads["win"], "policy": (np.zeros((5, 16)), np.zeros(5))}, "ReLU",
                 net.scale, net.unbounded)
    net.save(tmp_path / "n")
    header = json.loads((tmp_path / "n.json").read_text())
    header["architecture"]["heads"] = ["win", "value"]
    (tmp_path / "n.json").write_text(json.dumps(header))
    with pytest.raises(ValueError, match=r"n\.json: architecture heads must be"):
        ValueNet.load(tmp_path / "n")


# ------------------------------------------------------------ az
def test_az_search_spends_its_budget_and_is_reproducible() -> None:
    st = advanced(moves=30)
    net = random_net(2)
    results = [AZAgent(seed=5, net=net, simulations=40).search(st) for _ in range(2)]
    r = results[0]
    assert r.visits.sum() == 40 and st.legal_action_mask()[r.action]
    assert set(np.flatnonzero(r.visits)) <= set(st.legal_actions())
    assert r.value.shape == (2,) and abs(r.value.sum() - 1) < 1e-6
    assert r.action == results[1].action and np.array_equal(r.visits, results[1].visits)
    assert r.visits[r.action] == r.visits.max()


def test_az_priors_are_the_softmax_of_afterstate_logits() -> None:
    st = advanced(moves=12)
    net = random_net(3)
    agent = AZAgent(seed=0, net=net, simulations=1, prior_temperature=2.0, prior_mix=0.0)
    agent.search(st)  # sets up the map's encoder
    mask = st.legal_action_mask().astype(np.int8)
    node = agent._new_node(st.s, st.game.tables, mask, root=True)
    assert node.prior is None, "priors wait for the node's first search"
    agent._ensure_prior(node, st.s, st.game.tables, mask)
    ids, rows = legal_afterstates(st)
    z = net.policy_logits(rows) / 2.0
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    assert node.prior is not None and np.allclose(node.prior[ids], want, atol=1e-6)
    assert node.prior.sum() == pytest.approx(1.0)
    # the leaf value is the win head of the node's own observation, rotated to absolute seats
    shares = net.values(encoding.observation(st, st.current_player)[None])[0]
    p = st.current_player
    assert agent._leaf[p] == pytest.approx(shares[0]) and agent._leaf[1 - p] == pytest.approx(shares[1])


def test_prior_mix_blends_the_heuristics_priors_into_the_nets() -> None:
    st = advanced(moves=12)
    net = random_net(3)
    mask = st.legal_action_mask().astype(np.int8)
    heuristic = np.empty(mask.size)
    priors(st.s, st.game.tables, mask, heuristic)
    found = {}
    for mix in (0.0, 0.25, 1.0):
        agent = AZAgent(seed=0, net=net, simulations=1, prior_mix=mix)
        agent.search(st)
        node = agent._new_node(st.s, st.game.tables, mask, root=True)
        agent._ensure_prior(node, st.s, st.game.tables, mask)
        assert node.prior is not None and node.prior.sum() == pytest.approx(1.0)
        assert not node.prior[mask == 0].any(), "no prior on an illegal action"
        found[mix] = node.prior
    assert np.allclose(found[1.0], heuristic), "prior_mix=1: exactly MCTS's priors"
    assert not np.allclose(found[0.0], heuristic)
    assert np.allclose(found[0.25], 0.75 * found[0.0] + 0.25 * heuristic)
    assert make_agent("az:simulations=4:prior_mix=0.5").prior_mix == 0.5  # type: ignore[attr-defined]


def test_a_net_without_policy_head_scores_afterstates_by_win_share() -> None:
    st = advanced(moves=5)
    net = random_net(4, policy=False)
    _, rows = legal_afterstates(st)
    assert np.allclose(afterstate_logits(net, rows), np.log(net.values(rows)[:, 0]), atol=1e-6)
    assert st.legal_action_mask()[AZAgent(net=net, simulations=8, prior_mix=0.0).search(st).action]


def test_az_scores_a_finished_game_by_the_rules() -> None:
    st = new_game("italia", 2, seed=0)
    play_game("italia", 2, 0, [make_agent("heuristic", seed=0), make_agent("heuristic", seed=1)])
    agents = [HeuristicAgent(0), HeuristicAgent(1)]
    while not st.is_terminal():
        st.apply(agents[st.current_player].act(encoding.observation(st, st.current_player),
                                                st.legal_action_mask(), st))
    agent = AZAgent(net=random_net(), simulations=4, end_stake=0.0)
    agent.search(new_game("italia", 2, seed=0))
    out = np.zeros(5)
    agent._leaf_value(st.s, st.game.tables, st.legal_action_mask().astype(np.int8), None, out)  # type: ignore[arg-type]
    assert out[st.winner()] == 1.0 and out.sum() == 1.0


def test_az_and_net_play_whole_games_through_specs(tmp_path: Path) -> None:
    random_net(6, map_name="imperium").save(tmp_path / "imp")
    specs = [f"az:net={tmp_path / 'imp'}:simulations=6", f"net:net={tmp_path / 'imp'}", "heuristic"]
    record = play_game("imperium", 3, 11, [make_agent(s, seed=i) for i, s in enumerate(specs)])
    assert not record["result"]["truncated"] and len(record["result"]["scores"]) == 3


def test_net_agent_plays_the_best_scored_afterstate_with_or_without_state() -> None:
    st = advanced(moves=20)
    net = random_net(7)
    ids, rows = legal_afterstates(st)
    best = int(ids[np.argmax(net.policy_logits(rows))])
    obs, mask = encoding.observation(st, st.current_player), st.legal_action_mask()
    assert NetAgent(net=net).act(obs, mask, st) == best
    assert NetAgent(net=net).act(obs, mask) == best  # rebuilt from the observation
    sampled = {NetAgent(seed=s, net=net, temperature=5.0).act(obs, mask, st) for s in range(30)}
    assert len(sampled) > 1 and sampled <= set(ids.tolist())


def test_net_agent_by_the_win_head_plays_the_best_win_share() -> None:
    st = advanced(moves=20)
    net = random_net(8)
    ids, rows = legal_afterstates(st)
    best = int(ids[np.argmax(net.values(rows)[:, 0])])
    obs, mask = encoding.observation(st, st.current_player), st.legal_action_mask()
    assert NetAgent(net=net, head="win").act(obs, mask, st) == best
    assert make_agent("net:head=win").head == "win"  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="head must be one of policy, win"):
        NetAgent(head="value")


def test_bad_options_are_refused() -> None:
    for kwargs, word in [({"simulations": 0}, "iterations"), ({"leaf_mix": 2}, "leaf_mix"), ({"prior_mix": -0.1}, "prior_mix"),
                         ({"prior_temperature": 0}, "prior_temperature"), ({"root_noise": -1}, "root_noise"),
                         ({"net": 3}, "net must be")]:
        with pytest.raises(ValueError, match=word):
            AZAgent(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="temperature"):
        NetAgent(temperature=-1)
    with pytest.raises(FileNotFoundError, match="value net header not found|not found"):
        make_agent("az:net=/nonexistent/net")


def test_a_missing_released_net_says_how_to_make_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from concordia_env.agents import az
    monkeypatch.setattr(az, "POLICIES", tmp_path)
    st = new_game("italia", 2, seed=0)
    with pytest.raises(FileNotFoundError, match="expert_iteration"):
        AZAgent(simulations=2).search(st)
    assert released_net_path("italia").name == "az_italia.npz"


# ------------------------------------------------------------ exploration options shared with MCTS
def test_root_noise_and_move_temperature_explore_reproducibly() -> None:
    st = advanced(moves=30)
    plain = MCTSAgent(seed=1, iterations=60).search(st)
    noisy = [MCTSAgent(seed=s, iterations=60, root_noise=0.5, move_temperature=1.0).search(st) for s in range(8)]
    assert all(r.visits.sum() == 60 for r in noisy)
    assert len({r.action for r in noisy}) > 1, "sampling from visits explores"
    assert all(r.visits[r.action] > 0 for r in noisy)
    again = MCTSAgent(seed=3, iterations=60, root_noise=0.5, move_temperature=1.0).search(st)
    assert again.action == noisy[3].action and np.array_equal(again.visits, noisy[3].visits)
    assert plain.visits[plain.action] == plain.visits.max()


def test_playing_az_and_net_never_imports_torch(tmp_path: Path) -> None:
    random_net(8).save(tmp_path / "n")
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from concordia_env.agents.base import make_agent\n"
        "from concordia_env.arena.records import play_game\n"
        f"r = play_game('italia', 3, 1, [make_agent('az:net={tmp_path / 'n'}:simulations=4'), "
        f"make_agent('net:net={tmp_path / 'n'}'), make_agent('heuristic')])\n"
        "print(r['result']['winner'], 'torch' in sys.modules and sys.modules['torch'] is not None)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    winner, torch_loaded = out.stdout.split()
    assert winner in {"0", "1", "2"} and torch_loaded == "False"


# ------------------------------------------------------------ the released networks
def test_released_az_and_net_play_every_map_and_player_count_without_torch() -> None:
    """``concordia tournament`` with the released networks (az at a small budget), torch blocked."""
    code = """
import sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
from concordia_env.cli import main
from concordia_env.data import MAP_NAMES, load_map
for map_name in MAP_NAMES:
    for n in load_map(map_name).players:
        specs = ["az:simulations=8", "net"] + ["heuristic"] * (n - 2)
        rc = main(["tournament", "--map", map_name, "--players", str(n), "--agents", ",".join(specs),
                   "--games", str(n), "--seed", "3", "--max-turns", "150", "--no-progress"])
        assert rc == 0, (map_name, n, rc)
assert sys.modules.get("torch") is None
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")
    for map_name in ("imperium", "italia"):
        net = ValueNet.load(released_net_path(map_name))
        assert net.has_policy and net.map_name == map_name


def test_the_value_net_learned_at_scale_plays_a_tournament_without_torch() -> None:
    """``azv2`` of the strength table (``az:net=v2``: a 256-128 trunk with win and margin heads,
    released with the package), through ``concordia tournament`` with torch blocked, compiled and
    numpy searches alike, on both maps."""
    code = """
import sys
sys.modules["torch"] = None
from concordia_env.cli import main
for map_name, players in (("italia", "2"), ("imperium", "4")):
    for compiled in (1, 0):
        field = ",heuristic" * (int(players) - 1)
        rc = main(["tournament", "--map", map_name, "--players", players, "--agents",
                   "az:net=v2:simulations=8:compiled=" + str(compiled) + field,
                   "--games", players, "--seed", "3", "--max-turns", "100", "--no-progress"])
        assert rc == 0, rc
assert sys.modules.get("torch") is None
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().endswith("ok")


@pytest.mark.parametrize("map_name", ["italia", "imperium"])
def test_the_released_v2_network_is_the_one_trained_at_scale(map_name: str) -> None:
    """``net=v2`` resolves by the game's map to the package's copy of results/az_values, byte for byte."""
    root = Path(__file__).resolve().parents[1]
    released = released_net_path(map_name, "v2")
    for suffix in (".npz", ".json"):
        assert released.with_suffix(suffix).read_bytes() == \
            (root / "results" / "az_values" / f"value_{map_name}{suffix}").read_bytes()
    agent = AZAgent(net="v2")
    net = agent.net_for(map_name)
    assert net is released_net(map_name, "v2") and net.map_name == map_name
    assert net.layer_sizes == [encoding.OBSERVATION_SIZE, 256, 128] and set(net.heads) == {"win", "margin"}
    assert AZAgent().net_for(map_name) is released_net(map_name)  # v1 stays the default


def test_an_unknown_release_name_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(FileNotFoundError, match="v1, v2"):
        AZAgent(net="v3")
    with pytest.raises(ValueError, match="unknown released network 'v3'"):
        released_net_path("italia", "v3")


# ------------------------------------------------------------ broken weights never play, never spin
def _saved_net(tmp_path: Path, name: str = "n", **changes: object) -> Path:
    """A small net saved as ``tmp_path/name``, its arrays then changed (``key=(index, value)``) with the
    header's hash kept matching, so loading reaches the value checks."""
    import hashlib

    from concordia_env._internal.files import npz_bytes

    stem = tmp_path / name
    random_net().save(stem)
    with np.load(stem.with_suffix(".npz")) as z:
        arrays = {k: z[k] for k in z.files}
    for key, (index, value) in changes.items():
        arrays[key.replace("__", ".")][index] = value
    data = npz_bytes(arrays)
    stem.with_suffix(".npz").write_bytes(data)
    header = json.loads(stem.with_suffix(".json").read_text())
    header["npz_sha256"] = hashlib.sha256(data).hexdigest()
    stem.with_suffix(".json").write_text(json.dumps(header))
    return stem


def _bounded_index() -> int:
    return int(np.flatnonzero(~random_net().unbounded)[0])


@pytest.mark.parametrize("change, message", [
    ({"observation__scale": ((0,), np.nan)}, "array 'observation.scale' has non-finite values"),
    ({"observation__scale": ((5,), np.inf)}, "array 'observation.scale' has non-finite values"),
    ({"observation__scale": ((_bounded_index(),), 0.0)}, "observation.scale is zero or negative"),
    ({"trunk__0__weight": ((3, 7), 1e30)}, "trunk layer 0 weight has a value of magnitude 1e\\+30"),
    ({"win__bias": ((1,), -3e5)}, "head 'win' bias has a value of magnitude 3e\\+05"),
])
def test_broken_value_net_files_are_refused_at_load(tmp_path: Path, change: dict, message: str) -> None:
    stem = _saved_net(tmp_path, **change)
    with pytest.raises(ValueError, match=message) as info:
        ValueNet.load(stem)
    assert str(stem.with_suffix(".npz")) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match=message):
        make_agent(f"az:net={stem}")


def test_a_value_net_header_nested_deep_is_one_line(tmp_path: Path) -> None:
    stem = _saved_net(tmp_path)
    stem.with_suffix(".json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"n\.json: corrupt JSON header \(lists and objects nest 100000 deep") as info:
        ValueNet.load(stem)
    assert "\n" not in str(info.value)


def test_a_net_for_another_map_or_player_count_is_refused_naming_the_file(tmp_path: Path) -> None:
    random_net(map_name="imperium").save(tmp_path / "imp")
    italia = advanced(moves=6)
    for agent in (make_agent(f"az:net={tmp_path / 'imp'}:simulations=4"), make_agent(f"net:net={tmp_path / 'imp'}")):
        with pytest.raises(ValueError, match=rf"{tmp_path / 'imp.npz'}: trained for the imperium map, but this "
                                             rf"game is on italia"):
            agent.act(encoding.observation(italia, italia.current_player), italia.legal_action_mask(), italia)
    net = random_net()
    ValueNet(net.trunk, net.heads, "ReLU", net.scale, net.unbounded, map_name="italia", players=[3, 4]).save(tmp_path / "p34")
    assert json.loads((tmp_path / "p34.json").read_text())["players"] == [3, 4]
    with pytest.raises(ValueError, match=r"p34\.npz: trained for 3, 4 players, but this game has 2"):
        AZAgent(net=tmp_path / "p34", simulations=4).search(italia)
    assert AZAgent(net=tmp_path / "p34", simulations=4).search(advanced(players=3, moves=6)).visits.sum() == 4


@pytest.mark.parametrize("prior_mix", [1.0, 0.0])
def test_a_search_on_non_finite_values_stops_with_an_error(prior_mix: float) -> None:
    """A net whose outputs turn NaN after loading (here its scale, changed in memory) must not send the
    search into an endless loop: NaN compares false, so no action would ever be chosen."""
    net = random_net()
    net.scale[:] = np.nan
    st = advanced(moves=10)
    with pytest.raises(ValueError, match="the network gave non-finite"):
        AZAgent(net=net, simulations=8, prior_mix=prior_mix).search(st)
    with pytest.raises(ValueError, match="the network gave non-finite"):
        NetAgent(net=net).act(encoding.observation(st, st.current_player), st.legal_action_mask(), st)


def test_the_tree_walk_stops_where_no_action_can_be_chosen() -> None:
    from concordia_env import engine as E
    from concordia_env.agents.tree import NO_CHOICE, SearchTree, descend

    st = advanced(moves=10)
    tree = SearchTree(4)
    tree.add(st.current_player).prior = np.full(E.NUM_ACTIONS, np.nan)
    s, mask = st.s.copy(), st.legal_action_mask().astype(np.int8)
    tree.path[0] = 0
    a, depth = descend(tree.arrays, s, st.game.tables, mask, tree.path, 1, 1.5)
    assert (a, depth) == (NO_CHOICE, 1) and np.array_equal(s, st.s), "nothing applied"
