"""The speed of the OpenSpiel game: random play through pyspiel against the core's Python API and
compiled kernel, the two MCTS evaluators, and the bots' time per decision (docs/openspiel.md).

Every figure is CPU time of this process (time.process_time): all of it is single-threaded work,
and CPU time holds still on a machine shared with other jobs, where wall-clock time does not."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from open_spiel.python.algorithms import mcts as os_mcts

from concordia_env import engine as E
from concordia_env.state import new_game

from .helpers import load_game, seeded_state
from .search import PlayoutEvaluator, Resampler


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
