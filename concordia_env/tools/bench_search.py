"""Search speed: microseconds per simulation of ``az`` (compiled, numpy, and over whole turns) against
one MCTS iteration, on the same positions in the same run (``python -m concordia_env.tools.bench
search``); ``--net STEM`` adds ``az`` with that network (on its map).

The positions are heuristic games' positions at fixed move counts (seeded), so every agent
searches the same ones; each agent searches each position ``repeats`` times after one warm-up
search (compiling and loading the network), and the median is shown.
"""

from __future__ import annotations

import statistics
import sys
import time
from typing import TextIO

from ..agents.base import make_agent
from ..agents.heuristic import HeuristicAgent
from ..agents.mcts import MCTSAgent
from ..agents.value_net import ValueNet
from ..encoding import observation
from ..state import GameState, new_game

#: (map, players) the figures are given for
GAMES = (("italia", 2), ("imperium", 4))
#: where in a game the positions are: heuristic moves from the start
MOVES = (10, 60, 120, 200)
#: the candidate turns of the search over whole turns (``az:turns=K``), whose simulation walks whole
#: turns and finds a new node's candidates: dearer than an atomic one, but it covers a turn
TURNS = 16


def bench_positions(map_name: str, players: int, seed: int) -> list[GameState]:
    """The positions a search benchmark searches: one heuristic game's, at each of :data:`MOVES`."""
    st, agent, out = new_game(map_name, players, seed=seed), HeuristicAgent(seed), []
    for move in range(max(MOVES) + 1):
        if st.is_terminal():
            break
        if move in MOVES:
            out.append(st.clone())
        st.apply(agent.act(observation(st, st.current_player), st.legal_action_mask(), st))
    return out


def us_per_simulation(spec: str, simulations: int, states: list[GameState], repeats: int) -> float:
    """The median over ``repeats`` of the microseconds per simulation of ``spec`` over ``states``."""
    agent = make_agent(spec, 0)
    if not isinstance(agent, MCTSAgent):
        raise ValueError(f"{spec}: not a search agent")
    agent.search(states[0].clone())  # compiles and loads what the search needs
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for st in states:
            agent.search(st.clone())
        times.append((time.perf_counter() - start) / (simulations * len(states)) * 1e6)
    return statistics.median(times)


def bench_search(simulations: int, repeats: int, seed: int, out: TextIO = sys.stdout,
                 net: str | None = None) -> list[dict]:
    """Print and return the microseconds per simulation of MCTS and ``az`` on every game of :data:`GAMES`;
    with ``net`` (a value net's stem), also ``az`` with that network on the map it was trained for
    (a wider network makes a simulation dearer: this row says how much)."""
    specs = (f"mcts:iterations={simulations}", f"az:simulations={simulations}",
             f"az:simulations={simulations}:compiled=0", f"az:simulations={simulations}:turns={TURNS}")
    net_map = ValueNet.load(net).map_name if net is not None else None
    extra_specs = (f"az:net={net}:simulations={simulations}",) if net is not None else ()
    from .bench import machine_description

    print(f"machine: {machine_description()}", file=out)
    width = max(len(spec) for spec in specs + extra_specs) + 2
    print(f"{'game':<12} {'agent':<{width}} {'us/simulation':>14} {'x mcts':>8}", file=out, flush=True)
    rows = []
    for map_name, players in GAMES:
        states = bench_positions(map_name, players, seed)
        base = None
        for spec in specs + (extra_specs if net_map in (None, map_name) else ()):
            us = us_per_simulation(spec, simulations, states, repeats)
            base = base if base is not None else us
            rows.append({"map": map_name, "players": players, "agent": spec, "us_per_simulation": round(us, 1),
                         "vs_mcts": round(us / base, 2)})
            print(f"{map_name + str(players):<12} {spec:<{width}} {us:>14.1f} {us / base:>8.2f}", file=out, flush=True)
    return rows
