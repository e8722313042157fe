"""Board features (per-seat tables computed from the observation) and value networks that read them."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import numpy as np
import pytest
from test_az import advanced, random_net

from concordia_env import encoding, new_game
from concordia_env import engine as E
from concordia_env import scenario as sc
from concordia_env.agents.az import AZAgent
from concordia_env.agents.net_kernels import CompiledNet
from concordia_env.agents.value_net import ValueNet
from concordia_env.board_features import _SCALE, BOARD_V1, FEATURE_LAYOUT, FEATURE_SIZE, PER_SEAT, board_features
from concordia_env.encoding import observation

F = FEATURE_LAYOUT


def raw(features: np.ndarray) -> np.ndarray:
    """One observation's features unscaled, one row per seat row."""
    return features.reshape(5, PER_SEAT) * _SCALE


@pytest.fixture
def italia():
    """Player 0: houses in Ancona and Hadria (wine, Umbria) and Neapolis (food, Campania), a land
    colonist on Roma-Spoletum. Player 1: a house in Casinum (cloth, Campania), a land and a sea
    colonist in Roma."""
    st = new_game("italia", 2, seed=0)
    for city, good in (("Ancona", "wine"), ("Hadria", "wine"), ("Neapolis", "food"), ("Casinum", "cloth"),
                       ("Spoletum", "brick"), ("Cosa", "tools"), ("Florentia", "food"), ("Olbia", "brick"),
                       ("Panormus", "tools")):
        sc.set_city_good(st, city, good)
    for city in ("Ancona", "Hadria", "Neapolis"):
        sc.add_house(st, 0, city)
    sc.add_house(st, 1, "Casinum")
    sc.set_colonists(st, 0, land=[("Roma", "Spoletum")], sea=[])
    sc.set_colonists(st, 1, land=["Roma"], sea=["Roma"])
    return st


def test_houses_provinces_and_reach_of_each_seat_in_an_exact_position(italia):
    umbria, campania = (italia.game.map.province_names.index(p) for p in ("Umbria", "Campania"))
    mine, theirs = raw(board_features(observation(italia, 0)[None])[0])[:2]
    assert mine[F["houses_by_good"]].tolist() == [0, 1, 0, 2, 0]  # brick food tools wine cloth
    assert mine[F["provinces"]].tolist() == [2]
    by_province = mine[F["houses_by_province"]]
    assert by_province[umbria] == 2 and by_province[campania] == 1 and by_province.sum() == 3
    # next to Roma-Spoletum: Spoletum (Roma never counts); one move on: Casinum, Cosa, Florentia
    # (Ancona and Hadria have the seat's houses); two moves: 8 cities
    assert mine[F["reach"]].tolist() == [1, 4, 8]
    assert mine[F["reach_by_good"]].tolist() == [1, 1, 1, 0, 1]  # Spoletum, Florentia, Cosa, Casinum
    assert theirs[F["houses_by_good"]].tolist() == [0, 0, 0, 0, 1]
    assert theirs[F["provinces"]].tolist() == [1] and theirs[F["houses_by_province"]][campania] == 1
    # colonists in a city stand next to no city; one move from Roma by land: Cosa, Spoletum
    # (Casinum has the seat's house), by sea: Cosa, Neapolis, Olbia, Panormus
    assert theirs[F["reach"]][:2].tolist() == [0, 5]
    assert theirs[F["reach_by_good"]].tolist() == [2, 1, 2, 0, 0]
    # the other seat's view has the same rows the other way round
    np.testing.assert_array_equal(raw(board_features(observation(italia, 1)[None])[0])[:2], [theirs, mine])


def _reach_by_search(st, p: int, moves: int) -> set[int]:
    """Cities (not Roma, without ``p``'s house) next to a route that one of ``p``'s colonists can
    stand on within ``moves`` moves of its kind, by breadth-first search over the map's routes."""
    m = st.game.map
    houses, col = st.field("houses"), st.field("colonist")[p]
    found: set[int] = set()
    for kind, routes in ((0, m.land_routes), (1, m.sea_routes)):
        ids = [st.game.route_id(m.city_names[a], m.city_names[b], ("land", "sea")[kind]) for a, b in routes]
        ends = {r: pair for r, pair in zip(ids, routes)}
        for loc in col[3 * kind:3 * kind + 3]:
            if loc < 0:
                continue
            start = [loc - E.NC] if loc >= E.NC else [r for r, (a, b) in ends.items() if loc in (a, b)]
            cost = 0 if loc >= E.NC else 1
            seen = {r: cost for r in start}
            todo = deque(start)
            while todo:
                r = todo.popleft()
                for r2, (a, b) in ends.items():
                    if r2 not in seen and set(ends[r]) & {a, b}:
                        seen[r2] = seen[r] + 1
                        todo.append(r2)
            found |= {c for r, d in seen.items() if d <= moves for c in ends[r]}
    return {c for c in found if c > 0 and not (int(houses[c]) >> p) & 1}


@pytest.mark.parametrize("map_name, players", [("italia", 2), ("imperium", 4)])
def test_reach_agrees_with_a_search_over_the_routes_and_houses_with_the_board(map_name, players):
    for seed in (1, 2):
        st = advanced(map_name, players, seed=seed, moves=120)
        feats = raw(board_features(observation(st, 0)[None])[0])
        houses = st.field("houses")
        goods = st.field("city_good")
        for k in range(players):
            p = k  # observer 0: row k is seat k
            for moves in range(3):
                assert feats[k, F["reach"]][moves] == len(_reach_by_search(st, p, moves)), (seed, k, moves)
            own = [c for c in range(1, st.game.map.num_cities) if (int(houses[c]) >> p) & 1]
            assert feats[k, F["houses_by_good"]].tolist() == np.bincount(goods[own], minlength=5).tolist()
            assert feats[k, F["provinces"]][0] == len({st.game.map.city_province[c] for c in own})
        assert not feats[players:].any()  # absent seats


def test_bad_batches_are_refused():
    with pytest.raises(ValueError, match="batch"):
        board_features(np.zeros(encoding.OBSERVATION_SIZE))
    with pytest.raises(ValueError, match="names no map"):
        board_features(np.zeros((1, encoding.OBSERVATION_SIZE)))
    assert board_features(np.zeros((0, encoding.OBSERVATION_SIZE))).shape == (0, FEATURE_SIZE)


def feature_net(seed: int = 0) -> ValueNet:
    """``random_net`` widened to read the board features, with weights on them."""
    net = random_net(seed, policy=False)
    w, b = net.trunk[0]
    extra = np.random.default_rng(seed + 1).normal(0, 0.2, (w.shape[0], FEATURE_SIZE)).astype(np.float32)
    return ValueNet([(np.concatenate([w, extra], axis=1), b)], net.heads, net.activation, net.scale,
                    net.unbounded, map_name="italia", features=BOARD_V1)


def test_a_network_with_features_reads_them_saves_them_and_refuses_bad_files(tmp_path: Path, italia):
    net = feature_net()
    obs = np.stack([observation(italia, 0), observation(advanced(), 0)])
    h = np.concatenate([obs * net.scale, board_features(obs)], axis=1)
    h[:, net.unbounded.nonzero()[0]] = np.log1p(obs[:, net.unbounded])
    z = np.maximum(h @ net.trunk[0][0].T + net.trunk[0][1], 0) @ net.heads["win"][0].T + net.heads["win"][1]
    z = np.where(obs[:, encoding.OBSERVATION_LAYOUT["seat_present"]] > 0, z, -np.inf)
    np.testing.assert_allclose(net.values(obs), np.exp(z) / np.exp(z).sum(axis=1, keepdims=True), atol=1e-6)
    net.save(tmp_path / "f")
    header = json.loads((tmp_path / "f.json").read_text())
    assert header["architecture"]["features"] == BOARD_V1 and header["architecture"]["layer_sizes"][0] == 2378
    loaded = ValueNet.load(tmp_path / "f")
    assert loaded.features == BOARD_V1 and "features=board-v1" in repr(loaded)
    np.testing.assert_array_equal(loaded.values(obs), net.values(obs))
    header["architecture"]["features"] = "board-v9"
    (tmp_path / "f.json").write_text(json.dumps(header))
    with pytest.raises(ValueError, match=r"f\.json: architecture features must be one of \['board-v1'\]"):
        ValueNet.load(tmp_path / "f")
    del header["architecture"]["features"]  # the first layer no longer matches the header
    (tmp_path / "f.json").write_text(json.dumps(header))
    with pytest.raises(ValueError, match="trunk.0.weight"):
        ValueNet.load(tmp_path / "f")
    with pytest.raises(ValueError, match=r"trunk layer 0 has weight \(16, 2378\)"):
        ValueNet(random_net().trunk, random_net().heads, "ReLU", net.scale, net.unbounded, features=BOARD_V1)


def test_az_searches_a_network_with_features_in_numpy():
    net = feature_net()
    with pytest.raises(ValueError, match="reads the observation alone"):
        CompiledNet.of(net)
    st = advanced()
    agent = AZAgent(net=net, simulations=40, seed=1)
    a = agent.act(observation(st, st.current_player), st.legal_action_mask(), st)
    assert st.legal_action_mask()[a]
    plain = AZAgent(net=net, simulations=40, seed=1, compiled=False)
    assert plain.act(observation(st, st.current_player), st.legal_action_mask(), st) == a


def test_turns_are_not_completed_by_a_network_with_features():
    from concordia_env.turns import completion_weights

    with pytest.raises(ValueError, match="observation alone; it also reads 'board-v1' features"):
        completion_weights(feature_net())
