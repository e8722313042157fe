"""Speed benchmarks: ``python -m concordia_env.tools.bench core``, ``... env``, ``... cuda`` and ``... picture``.

``core`` plays whole games of uniformly random legal play through the public
Python API (``legal_actions()`` + ``apply()`` every decision, single process)
for every map and player count and prints decisions/s and games/s, each the
median of several runs. It also prints the compiled kernel's own speed
(``engine.random_playout``, no Python per decision) as an upper bound for
search rollouts.

``env`` plays random legal games through the wrapped PettingZoo AEC env the
way a training loop does (``agent_iter()``, ``last()`` building the observation
and mask every step, ``step()``), then PettingZoo's ``connect_four_v3`` with
the same loop in the same run, and prints both and their ratio. It then times
the batched env (:class:`concordia_env.vector.ConcordiaVecEnv`) for several
``num_envs``, choosing random legal actions with numpy each step (that cost
is included).

``cuda`` times the GPU env (:class:`concordia_env.cuda.ConcordiaCudaVecEnv`, ``pip install
".[cuda]"``) for N = 8,192 / 32,768 / 131,072 games (``--num-envs``): steps/s of
``step`` with the observation and the mask of every game written, random legal actions chosen
on the device (:meth:`~concordia_env.cuda.ConcordiaCudaVecEnv.random_legal_actions`, included);
then kernel-only random playouts (decisions/s); then the CPU batched env on the same host in
the same run (one process, 1,024 games), with the ratios. Without a GPU it says so and exits
with status 2; ``--simulator`` runs it on numba's CUDA simulator with tiny batches, to check
the command works (its figures mean nothing).

``picture`` times the board picture (:func:`concordia_env.display.picture.render_rgb`, what
``render_mode="rgb_array"`` returns) over every state of whole games of random legal play, for
the fewest and the most players of each map: the cold first frame (every cache emptied: label
placement, the static layer of the map, sprites) apart, then frames/s over all the game's
states.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time

import numpy as np

from .. import engine as E
from ..arguments import positive_int
from ..data import MAP_NAMES, load_map
from ..state import new_game

COMBOS = [(m, n) for m in MAP_NAMES for n in load_map(m).players]


def machine_description() -> str:
    """One line naming the machine, for the figures in docs/benchmarks.md."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}"


def time_python_api(map_name: str, players: int, games: int, seed: int) -> tuple[float, float, float]:
    """(decisions/s, games/s, mean decisions per game) of random play through the Python API."""
    rng = random.Random(seed)
    decisions = 0
    start = time.perf_counter()
    for g in range(games):
        state = new_game(map_name, players, seed=seed + g)
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply(legal[rng.randrange(len(legal))])
            decisions += 1
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed, decisions / games


def time_kernel(map_name: str, players: int, games: int, seed: int) -> tuple[float, float]:
    """(decisions/s, games/s) of the compiled random playout, no Python per decision."""
    states = [new_game(map_name, players, seed=seed + g) for g in range(games)]
    decisions = 0
    start = time.perf_counter()
    for g, st in enumerate(states):
        decisions += E.random_playout(st.s, st.game.tables, st._mask, seed + g, 1_000_000)
    elapsed = time.perf_counter() - start
    return decisions / elapsed, games / elapsed


def bench_core(games: int, repeats: int, seed: int, out=sys.stdout) -> list[dict]:
    """Run the core benchmark and print a table; returns the rows."""
    # warm up: compile (or load from cache) the kernel outside the timings
    time_python_api("italia", 2, 1, seed)
    time_kernel("italia", 2, 1, seed)
    print(f"machine: {machine_description()}", file=out)
    print(f"random legal play, {games} games x {repeats} runs per row, median shown\n", file=out)
    print(f"{'map':<9} {'players':>7} {'decisions/game':>14} {'API decisions/s':>16} {'API games/s':>12}"
          f" {'kernel decisions/s':>19} {'kernel games/s':>15}", file=out)
    rows = []
    for map_name, players in COMBOS:
        api = [time_python_api(map_name, players, games, seed + 1000 * r) for r in range(repeats)]
        ker = [time_kernel(map_name, players, games, seed + 1000 * r) for r in range(repeats)]
        row = {
            "map": map_name, "players": players,
            "decisions_per_game": statistics.median(x[2] for x in api),
            "api_decisions_per_s": statistics.median(x[0] for x in api),
            "api_games_per_s": statistics.median(x[1] for x in api),
            "kernel_decisions_per_s": statistics.median(x[0] for x in ker),
            "kernel_games_per_s": statistics.median(x[1] for x in ker),
        }
        rows.append(row)
        print(f"{map_name:<9} {players:>7} {row['decisions_per_game']:>14.0f} {row['api_decisions_per_s']:>16,.0f}"
              f" {row['api_games_per_s']:>12.1f} {row['kernel_decisions_per_s']:>19,.0f}"
              f" {row['kernel_games_per_s']:>15.1f}", file=out, flush=True)
    return rows


def _random_play(env, seconds: float, seed: int, play) -> tuple[int, float]:
    """Random legal play through an AEC env for ``seconds`` (at least one game): at each decision
    ``play(env, legal, rng)`` steps the env. Returns (decisions, wall seconds)."""
    rng = random.Random(seed)
    steps, games = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds or games == 0:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            obs, reward, terminated, truncated, info = env.last()
            if terminated or truncated:
                env.step(None)
                continue
            play(env, obs["action_mask"].nonzero()[0], rng)
            steps += 1
        games += 1
    return steps, time.perf_counter() - start


def aec_steps_per_second(make_env, seconds: float, seed: int) -> float:
    """Steps/s of random legal play through an AEC env, observation and mask built every step."""
    steps, wall = _random_play(make_env(), seconds, seed,
                               lambda env, legal, rng: env.step(int(legal[rng.randrange(len(legal))])))
    return steps / wall


def turn_decisions_per_second(map_name: str, players: int, seconds: float, seed: int) -> tuple[float, float, float]:
    """(decisions/s, atomic actions/s, mean candidates a decision) of random play through the
    turn-level AEC env (``decisions="turn"``): candidates found and encoded at every decision."""
    from ..env import raw_env

    counts = {"actions": 0, "candidates": 0}

    def play(env, legal, rng):
        k = int(legal[rng.randrange(len(legal))])
        counts["actions"] += len(env.candidate_actions()[k])
        counts["candidates"] += len(legal)
        env.step(k)

    decisions, wall = _random_play(raw_env(map_name, players, decisions="turn"), seconds, seed, play)
    return decisions / wall, counts["actions"] / wall, counts["candidates"] / decisions


def vector_steps_per_second(num_envs: int, map_name: str, players: int, seconds: float, seed: int) -> float:
    """Game steps/s of the batched env (num_envs games per call), random legal actions via numpy."""
    from ..vector import ConcordiaVecEnv

    vec = ConcordiaVecEnv(num_envs, map_name, players, seed=seed)
    rng = np.random.default_rng(seed)
    masks = vec.masks
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        _, masks, _, _, _ = vec.step(actions)
        steps += num_envs
    return steps / (time.perf_counter() - start)


def _connect_four():
    """PettingZoo's connect_four_v3 constructor: from the registry where there is one (PettingZoo
    >= 1.27 deprecates importing env modules directly), else by import."""
    os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # connect_four imports pygame, which greets
    import pettingzoo

    if hasattr(pettingzoo, "make"):
        return lambda: pettingzoo.make("aec", "classic/connect_four_v3")
    from pettingzoo.classic import connect_four_v3

    return connect_four_v3.env


def bench_env(seconds: float, repeats: int, map_name: str, players: int, batch_sizes: list[int], seed: int,
              out=sys.stdout) -> dict:
    """Run the env benchmark and print it; returns the figures."""
    connect_four = _connect_four()
    from ..env import env as concordia_env

    def ours():
        return concordia_env(map_name=map_name, num_players=players)

    aec_steps_per_second(ours, 0.2, seed)  # warm up (compile or load the kernels)
    vector_steps_per_second(4, map_name, players, 0.2, seed)
    print(f"machine: {machine_description()}", file=out)
    print(f"random legal play, {seconds:g} s x {repeats} runs per figure, median shown\n", file=out)
    conc = statistics.median(aec_steps_per_second(ours, seconds, seed + r) for r in range(repeats))
    c4 = statistics.median(aec_steps_per_second(connect_four, seconds, seed + r) for r in range(repeats))
    print(f"AEC env ({map_name}, {players} players), obs + mask every step: {conc:>10,.0f} steps/s", file=out)
    print(f"PettingZoo connect_four_v3, same loop:              {c4:>10,.0f} steps/s", file=out)
    print(f"ratio concordia / connect_four:                     {conc / c4:>10.2f}", file=out)
    turn_decisions_per_second(map_name, players, 0.2, seed)  # warm up
    turns = sorted((turn_decisions_per_second(map_name, players, seconds, seed + r) for r in range(repeats)),
                   key=lambda row: row[0])[repeats // 2]
    print(f"turn-level AEC env, candidates + their obs every step: {turns[0]:>7,.0f} decisions/s "
          f"({turns[1]:,.0f} atomic actions/s, {turns[2]:.1f} candidates a decision)\n", file=out)
    rows = {}
    print(f"batched env ({map_name}, {players} players)   num_envs   steps/s", file=out)
    for n in batch_sizes:
        rows[n] = statistics.median(vector_steps_per_second(n, map_name, players, seconds, seed + r)
                                    for r in range(repeats))
        print(f"{'':<34}{n:>8} {rows[n]:>10,.0f}", file=out, flush=True)
    return {"aec_steps_per_s": conc, "connect_four_steps_per_s": c4, "ratio": conc / c4, "batched": rows,
            "turn_decisions_per_s": turns[0], "turn_atomic_per_s": turns[1], "turn_candidates": turns[2]}


def cuda_steps_per_second(env, seconds: float, seed: int) -> tuple[float, int]:
    """(game steps/s, steps) of ``env.step`` with random legal actions chosen on the device, observation
    and mask written every step; at least one step, the device synchronised before the clock stops."""
    step = 0
    env.synchronize()
    start = time.perf_counter()
    while step == 0 or time.perf_counter() - start < seconds:
        env.step(env.random_legal_actions(seed + step * env.num_envs))
        step += 1
        if step % 16 == 0:
            env.synchronize()  # keep the host from queueing far ahead of the clock
    env.synchronize()
    return step * env.num_envs / (time.perf_counter() - start), step


def cuda_playout_decisions_per_second(env, seed: int) -> tuple[float, float]:
    """(decisions/s, games/s) of random playouts of all the env's games (from their current positions)."""
    env.synchronize()
    start = time.perf_counter()
    counts = env.random_playouts(seed)
    env.synchronize()
    elapsed = time.perf_counter() - start
    return float(counts.sum()) / elapsed, env.num_envs / elapsed


def bench_cuda(batch_sizes: list[int], seconds: float, map_name: str, players: int, seed: int,
               cpu_num_envs: int = 1024, out=sys.stdout) -> dict:
    """Run the GPU benchmark and print it; returns the figures. Raises
    :class:`concordia_env.cuda.CudaUnavailableError` without numba-cuda or a device."""
    from ..cuda import ConcordiaCudaVecEnv, require_cuda

    cuda = require_cuda()
    simulator = ConcordiaCudaVecEnv(1, map_name, players).simulator
    device = "numba's CUDA simulator (figures mean nothing)" if simulator else cuda.get_current_device().name
    if isinstance(device, bytes):
        device = device.decode()
    print(f"machine: {machine_description()}", file=out)
    print(f"device: {device}", file=out)
    print(f"{map_name}, {players} players; random legal actions chosen on the device; infos and the action check "
          f"off (infos=False, check_actions=False); {seconds:g} s per figure\n", file=out)
    print(f"{'num_envs':>9} {'steps/s (obs + mask)':>21} {'playout decisions/s':>20} {'playout games/s':>16}",
          file=out, flush=True)
    rows: dict[int, dict[str, float]] = {}
    for n in batch_sizes:
        env = ConcordiaCudaVecEnv(n, map_name, players, seed=seed, infos=False, check_actions=False)
        cuda_steps_per_second(env, 0.0, seed)  # compile (first size only) and warm up
        steps, _ = cuda_steps_per_second(env, seconds, seed)
        env.reset(seed)
        cuda_playout_decisions_per_second(env, seed)  # compile the playout kernel (first size only)
        env.reset(seed)
        decisions, games = cuda_playout_decisions_per_second(env, seed + 1)
        rows[n] = {"steps_per_s": steps, "playout_decisions_per_s": decisions, "playout_games_per_s": games}
        print(f"{n:>9,} {steps:>21,.0f} {decisions:>20,.0f} {games:>16,.1f}", file=out, flush=True)
        env.close()
        del env
    vector_steps_per_second(4, map_name, players, 0.2, seed)  # warm up the CPU env and kernel
    time_kernel(map_name, players, 1, seed)
    cpu = vector_steps_per_second(cpu_num_envs, map_name, players, max(seconds, 0.1), seed)  # >= 1 step
    cpu_playout = time_kernel(map_name, players, 4, seed)[0]
    best = max(rows.values(), key=lambda r: r["steps_per_s"])
    best_playout = max(r["playout_decisions_per_s"] for r in rows.values())
    print(f"\nCPU batched env ({cpu_num_envs} games, one process): {cpu:>12,.0f} steps/s", file=out)
    print(f"CPU kernel random playout (one core):      {cpu_playout:>12,.0f} decisions/s", file=out)
    print(f"ratio GPU / CPU, env steps (best N):       {best['steps_per_s'] / cpu:>12.1f}", file=out)
    print(f"ratio GPU / CPU, playout decisions:        {best_playout / cpu_playout:>12.1f}", file=out, flush=True)
    return {"device": device, "gpu": rows, "cpu_steps_per_s": cpu, "cpu_playout_decisions_per_s": cpu_playout}


PICTURE_COMBOS = [(m, n) for m in MAP_NAMES for n in (min(load_map(m).players), max(load_map(m).players))]


def game_states(map_name: str, players: int, seed: int) -> list:
    """Every state of one game of random legal play (copies), from the setup to the end."""
    rng = random.Random(seed)
    state = new_game(map_name, players, seed=seed)
    states = [state.clone()]
    while not state.is_terminal():
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
        states.append(state.clone())
    return states


def bench_picture(games: int, seed: int, dpi: int = 80, combos: list[tuple[str, int]] | None = None,
                  out=sys.stdout) -> list[dict]:
    """Time :func:`concordia_env.display.picture.render_rgb` over whole games and print a table; returns the rows."""
    from ..display.picture import clear_cache, frame_size, render_rgb

    width, height = frame_size(dpi)
    print(f"machine: {machine_description()}", file=out)
    print(f"render_rgb at {width}x{height} (dpi {dpi}) over every state of {games} game(s) of random legal play "
          f"per row; cold: the first frame with every cache emptied\n", file=out)
    print(f"{'map':<9} {'players':>7} {'frames':>7} {'cold first frame':>17} {'ms/frame':>9} {'frames/s':>9}",
          file=out)
    rows = []
    for map_name, players in combos or PICTURE_COMBOS:
        states = [st for g in range(games) for st in game_states(map_name, players, seed + g)]
        clear_cache()
        start = time.perf_counter()
        render_rgb(states[0], dpi)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        for st in states:
            render_rgb(st, dpi)
        elapsed = time.perf_counter() - start
        row = {"map": map_name, "players": players, "frames": len(states), "cold_s": cold,
               "ms_per_frame": 1000 * elapsed / len(states), "frames_per_s": len(states) / elapsed}
        rows.append(row)
        print(f"{map_name:<9} {players:>7} {len(states):>7} {cold:>15.2f} s {row['ms_per_frame']:>9.1f}"
              f" {row['frames_per_s']:>9.1f}", file=out, flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m concordia_env.tools.bench", description="Speed benchmarks.")
    sub = parser.add_subparsers(dest="what", required=True)
    core = sub.add_parser("core", help="rules core: random play through the Python API and the kernel")
    core.add_argument("--games", type=int, default=40, help="games per run (default 40)")
    core.add_argument("--repeats", type=int, default=5, help="runs per row; the median is shown (default 5)")
    core.add_argument("--seed", type=int, default=0)
    env = sub.add_parser("env", help="PettingZoo AEC env vs connect_four_v3, and the batched env")
    env.add_argument("--seconds", type=float, default=3.0, help="seconds per run (default 3)")
    env.add_argument("--repeats", type=int, default=3, help="runs per figure; the median is shown (default 3)")
    env.add_argument("--map", default="imperium", choices=MAP_NAMES)
    env.add_argument("--players", type=int, default=4)
    env.add_argument("--num-envs", default="1,16,64,256,1024",
                     help="comma-separated batch sizes for the batched env (default 1,16,64,256,1024)")
    env.add_argument("--seed", type=int, default=0)
    gpu = sub.add_parser("cuda", help="the GPU env (numba-cuda): steps/s and random playouts, against the CPU batched env")
    gpu.add_argument("--num-envs", default=None,
                     help="comma-separated batch sizes (default 8192,32768,131072; 2,3 with --simulator)")
    gpu.add_argument("--seconds", type=float, default=None, help="seconds per figure (default 3; 0.2 with --simulator)")
    gpu.add_argument("--map", default="imperium", choices=MAP_NAMES)
    gpu.add_argument("--players", type=int, default=4)
    gpu.add_argument("--cpu-num-envs", type=int, default=1024, help="games of the CPU batched env (default 1024)")
    gpu.add_argument("--simulator", action="store_true",
                     help="run on numba's CUDA simulator with tiny batches: checks the command, measures nothing")
    gpu.add_argument("--seed", type=int, default=0)
    search = sub.add_parser("search", help="microseconds per simulation: az (compiled and numpy) against MCTS")
    search.add_argument("--simulations", type=positive_int, default=400, help="simulations per search (default 400)")
    search.add_argument("--repeats", type=positive_int, default=3, help="runs per figure; the median is shown (default 3)")
    search.add_argument("--seed", type=int, default=0)
    search.add_argument("--net", metavar="STEM", default=None,
                        help="also az with this value network (its .npz/.json stem), on the map it was trained for")
    pic = sub.add_parser("picture", help="the board picture (render_mode='rgb_array'): cold first frame and frames/s")
    pic.add_argument("--games", type=int, default=1, help="games per row (default 1)")
    pic.add_argument("--dpi", type=int, default=80, help="picture resolution (default 80: 1280x800)")
    pic.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.what == "cuda":
        return _main_cuda(parser, args)
    if args.what == "picture":
        return _main_picture(parser, args)
    if args.what == "search":
        return _main_search(parser, args)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.what == "core":
        if args.games < 1:
            parser.error("--games must be at least 1")
        bench_core(args.games, args.repeats, args.seed)
        return 0
    if args.players not in load_map(args.map).players:
        parser.error(f"--players: the {args.map} map is for {load_map(args.map).players} players")
    try:
        sizes = [int(x) for x in args.num_envs.split(",")]
    except ValueError:
        parser.error(f"--num-envs must be comma-separated integers; got {args.num_envs!r}")
    if args.seconds <= 0 or any(n < 1 for n in sizes):
        parser.error("--seconds and every --num-envs value must be positive")
    bench_env(args.seconds, args.repeats, args.map, args.players, sizes, args.seed)
    return 0


def _main_picture(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from ..display.picture import MAX_DPI, MIN_DPI

    if args.games < 1:
        parser.error("--games must be at least 1")
    if not MIN_DPI <= args.dpi <= MAX_DPI:
        parser.error(f"--dpi must be from {MIN_DPI} to {MAX_DPI}")
    bench_picture(args.games, args.seed, args.dpi)
    return 0


def _main_search(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``bench search``; a bad ``--net`` is one line (status 2)."""
    from .bench_search import bench_search  # (imports the agents, which the other benchmarks do not need)

    try:
        bench_search(args.simulations, args.repeats, args.seed, net=args.net)
    except (ValueError, FileNotFoundError) as exc:
        parser.error(f"--net: {exc}")
    return 0


def _main_cuda(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.players not in load_map(args.map).players:
        parser.error(f"--players: the {args.map} map is for {load_map(args.map).players} players")
    default_sizes = "2,3" if args.simulator else "8192,32768,131072"
    try:
        sizes = [int(x) for x in (args.num_envs or default_sizes).split(",")]
    except ValueError:
        parser.error(f"--num-envs must be comma-separated integers; got {args.num_envs!r}")
    seconds = args.seconds if args.seconds is not None else (0.2 if args.simulator else 3.0)
    if seconds < 0 or any(n < 1 for n in sizes) or args.cpu_num_envs < 1:
        parser.error("--seconds must be >= 0, and every --num-envs and --cpu-num-envs value positive")
    if args.simulator:
        from ..cuda.backend import enable_simulator

        try:
            enable_simulator()
        except RuntimeError as err:
            parser.error(f"--simulator: {err}")
    from ..cuda import CudaUnavailableError

    try:
        bench_cuda(sizes, seconds, args.map, args.players, args.seed,
                   cpu_num_envs=4 if args.simulator else args.cpu_num_envs)
    except CudaUnavailableError as err:
        print(f"bench cuda: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
