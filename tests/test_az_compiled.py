"""az's compiled simulations: the network's forward pass over the non-zero inputs, and the whole
simulation in one kernel, make the search the numpy loop makes."""

from __future__ import annotations

import numpy as np
import pytest

from concordia_env import encoding
from concordia_env.agents.az import AZAgent, released_net
from concordia_env.agents.base import make_agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.net_kernels import ACTIVATION_IDS, CompiledNet
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.agents.value_net import ValueNet
from concordia_env.game import get_game
from concordia_env.state import GameState, new_game

OBS = encoding.OBSERVATION_SIZE


def deep_net(activation: str, seed: int = 0) -> ValueNet:
    """Three trunk layers of different widths, so every layer of the compiled pass is exercised."""
    rng = np.random.default_rng(seed)
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game("imperium").tables)[1])
    widths = [OBS, 24, 16, 8]
    trunk = [(rng.normal(0, 0.1, (o, i)), rng.normal(0, 0.1, o)) for i, o in zip(widths, widths[1:])]
    heads = {"win": (rng.normal(0, 0.5, (5, 8)), rng.normal(0, 0.1, 5))}
    return ValueNet(trunk, heads, activation, scale, unbounded, map_name="imperium")


def advanced(map_name: str, players: int, seed: int, moves: int) -> GameState:
    """A position some heuristic moves into a game."""
    st = new_game(map_name, players, seed=seed)
    h = HeuristicAgent(seed)
    for _ in range(moves):
        st.apply(h.act(encoding.observation(st, st.current_player), st.legal_action_mask(), st))
    return st


def positions(map_name: str, players: int, count: int = 6) -> list[np.ndarray]:
    out = []
    for k in range(count):
        st = advanced(map_name, players, seed=k, moves=15 * k)
        out.append(encoding.observation(st, st.current_player).astype(np.float32))
    return out


@pytest.mark.parametrize("activation", sorted(ACTIVATION_IDS))
def test_the_compiled_pass_gives_the_nets_win_shares(activation: str) -> None:
    net = deep_net(activation)
    rows = np.stack(positions("imperium", 4))
    compiled = CompiledNet.of(net)
    got = np.stack([compiled.values(r) for r in rows])
    want = net.values(rows)
    assert np.abs(got - want).max() < 1e-6
    assert np.allclose(got.sum(axis=1), 1.0) and (got[:, 4] == 0).all()  # four seats present


def _hidden_by_dot_products(net: ValueNet, x: np.ndarray) -> np.ndarray:
    """The last trunk layer's output as the compiled pass must compute it: the first layer summed over the
    non-zero inputs in input order (float32 products into float64), every deeper output as a float64 dot
    product over its inputs in order, each rounded to float32 before its activation (ReLU)."""
    import math

    h = np.zeros(net.trunk[0][0].shape[0])
    for i in np.flatnonzero(x):
        v = np.float32(math.log1p(max(float(x[i]), 0.0))) if net.unbounded[i] else x[i] * net.scale[i]
        h += (v * net.trunk[0][0][:, i]).astype(np.float64)
    h = np.maximum(np.float32(h + net.trunk[0][1]), 0).astype(np.float64)
    for w, b in net.trunk[1:]:
        out = np.zeros(w.shape[0])
        for j in range(w.shape[0]):
            acc = 0.0
            for i in range(w.shape[1]):
                acc += float(w[j, i]) * h[i]
            out[j] = max(float(np.float32(acc + b[j])), 0.0)
        h = out
    return h


def test_deeper_layers_keep_each_sum_in_input_order() -> None:
    """Values bit for bit as dot products in input order would give them (the layout may vectorise the
    loop over outputs, never reorder a sum)."""
    net = deep_net("ReLU", seed=3)
    compiled = CompiledNet.of(net)
    for row in positions("imperium", 4, count=3):
        h = _hidden_by_dot_products(net, row)
        w, b = net.heads["win"]
        z = np.array([sum(float(w[k, i]) * h[i] for i in range(h.shape[0])) + float(b[k]) for k in range(4)])
        want = np.exp(z - z.max())
        want /= want.sum()
        assert compiled.values(row)[:4].tolist() == want.tolist()


@pytest.mark.parametrize("map_name, players", [("italia", 2), ("imperium", 3)])
def test_the_compiled_pass_of_a_released_net(map_name: str, players: int) -> None:
    net = released_net(map_name)
    rows = np.stack(positions(map_name, players))
    got = np.stack([CompiledNet.of(net).values(r) for r in rows])
    assert np.abs(got - net.values(rows)).max() < 1e-6
    assert (got[:, players:] == 0).all()


@pytest.mark.parametrize("map_name, players, spec", [
    ("italia", 2, "az:simulations=150"),
    ("imperium", 4, "az:simulations=120:leaf_mix=0.3:end_stake=0.5"),
    ("italia", 3, "az:simulations=100:root_noise=0.25:move_temperature=1.0"),
])
def test_compiled_and_numpy_simulations_make_the_same_search(map_name: str, players: int, spec: str) -> None:
    for k in range(3):
        st = advanced(map_name, players, seed=10 + k, moves=20 + 30 * k)
        fast, slow = make_agent(spec, k), make_agent(spec + ":compiled=0", k)
        a, b = fast.search(st.clone()), slow.search(st.clone())
        assert a.action == b.action and np.array_equal(a.visits, b.visits)
        assert np.abs(a.value - b.value).max() < 1e-6
        assert fast.rng.bit_generator.state == slow.rng.bit_generator.state  # the same decks drawn


def test_the_network_s_own_priors_run_the_numpy_loop() -> None:
    agent = make_agent("az:simulations=40:prior_mix=0.5", 0)
    assert isinstance(agent, AZAgent) and agent.compiled
    agent.search(advanced("italia", 2, 3, 40))
    assert agent._compiled_nets == {}  # prior_mix < 1: nothing compiled was built or used


@pytest.mark.parametrize("value", [2, -1, 0.5, "yes"])
def test_compiled_is_a_flag(value) -> None:
    with pytest.raises(ValueError, match="compiled must be 0 or 1"):
        AZAgent(compiled=value)
