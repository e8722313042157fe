"""Self-play: one game of the expert against itself (:func:`play_selfplay_game`), and a
generation's games played in workers or Ray tasks and written as shards (:func:`run_selfplay`).

Each game is kept whole beside its positions (:mod:`concordia_env.training.game_log`): its action
ids, its setup and result, and at every seat the name :func:`expert_name` gives the expert, so
``concordia dataset export`` replays and exports it."""

from __future__ import annotations

import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import engine as E
from concordia_env.agents.value_net import ROWS
from concordia_env.arena.game_result import GameResult
from concordia_env.arena.pools import process_pool
from concordia_env.arena.records import play_game
from concordia_env.arena.runner import Runner
from concordia_env.training.game_log import game_entry

from .seats import RecordingSeat, TeacherSeat, _RecordingSeat, make_expert
from .settings import Expert, SelfPlayConfig, shard_games, shard_path
from .shards import shard_meta, shard_ok, write_shard


def game_seed(cfg: SelfPlayConfig, g: int, game: int) -> int:
    """The setup seed of self-play game ``game`` of generation ``g``."""
    return int(np.random.default_rng(np.random.SeedSequence([cfg.seed, g, game])).integers(2**31 - 1))


def expert_name(cfg: SelfPlayConfig, g: int, expert: Expert) -> str:
    """Who plays every seat of generation ``g``'s self-play, as its kept games name the seats (a
    description, not an agent spec): ``az-selfplay:gen=G:net=SHA12:simulations=S`` for a network's
    search (the first 12 hex digits of its ``.npz``'s sha256), ``mcts-heuristic-selfplay:gen=G:simulations=S``
    for the heuristic-guided search, ``heuristic-teacher:gen=G:epsilon=E`` for the heuristic teacher.
    No path enters it, so shards stay the same bytes wherever the run folder is."""
    if expert.is_teacher:
        return f"heuristic-teacher:gen={g}:epsilon={cfg.teacher_epsilon:g}"
    if expert.stem is None:
        return f"mcts-heuristic-selfplay:gen={g}:simulations={cfg.simulations}"
    return f"az-selfplay:gen={g}:net={expert.sha256[:12]}:simulations={cfg.simulations}"


def play_selfplay_game(cfg: SelfPlayConfig, g: int, game: int, expert: Expert) -> tuple[dict[str, np.ndarray],
                                                                                          dict[str, Any]]:
    """Play self-play game ``game`` of generation ``g``: its position arrays and its game-table row,
    with its ``game_record`` entry and ``actions`` (:mod:`~concordia_env.training.game_log`)."""
    seed = game_seed(cfg, g, game)
    seat: _RecordingSeat = (TeacherSeat(cfg.teacher_epsilon, seed) if expert.is_teacher
                                         else RecordingSeat(make_expert(cfg, expert), cfg))
    record = play_game(cfg.map, cfg.players, seed, [seat] * cfg.players, max_turns=cfg.max_turns)
    result = GameResult.from_json(record["result"])
    rows = [] if result.truncated else seat.rows
    m = len(rows)
    arrays: dict[str, np.ndarray] = {
        "state": np.asarray([r[0] for r in rows], np.int32).reshape(m, E.STATE_SIZE),
        "seat": np.asarray([r[1] for r in rows], np.int8),
        "game": np.full(m, game, np.int32),
        "step": np.asarray([r[2] for r in rows], np.int32),
        "turn": np.asarray([r[3] for r in rows], np.int16),
        "num_players": np.full(m, cfg.players, np.int8),
        "root_value": np.asarray([r[6] for r in rows], np.float32).reshape(m, ROWS),
        "visit_len": np.asarray([len(r[4]) for r in rows], np.int32),
        "visit_actions": np.concatenate([r[4] for r in rows] or [np.zeros(0)]).astype(np.int16),
        "visit_counts": np.concatenate([r[5] for r in rows] or [np.zeros(0)]).astype(np.int32),
    }
    scores = np.zeros(ROWS, np.int32)
    scores[:cfg.players] = result.scores
    info = {"game_index": game, "game_seed": seed, "game_players": cfg.players,
            "game_winner": -1 if result.truncated else result.ranking[0],
            "game_truncated": int(result.truncated), "game_decisions": seat.decisions,
            "game_positions": m, "game_turns": result.turns, "game_scores": scores,
            "game_record": game_entry(record, [expert_name(cfg, g, expert)] * cfg.players),
            "actions": record["actions"]}
    return arrays, info


def _selfplay_task(task: tuple[SelfPlayConfig, int, int, Expert]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    return play_selfplay_game(*task)


def _selfplay_pool(workers: int, backend: str, address: str | None) -> tuple[Executor | None, int]:
    """Where self-play games run and how many at once: this process, a process pool, or Ray tasks
    (``backend="ray"``, as many as the cluster has CPUs; every machine of the cluster reads the
    expert's net at the path this process gives)."""
    if backend == "ray":
        from concordia_env.integrations.ray_backend import RayGamePool

        pool = RayGamePool(address)
        return pool, pool.cpus()
    return process_pool(workers), workers


def run_selfplay(cfg: SelfPlayConfig, out: Path, g: int, expert: Expert, workers: int,
                 progress: bool, backend: str = "local", address: str | None = None) -> dict[str, Any] | None:
    """Write the missing shards of generation ``g``; None if every shard was complete already.

    Games come back to this process, which writes the shards, so they are the same bytes for any
    ``workers`` and either ``backend``. Ctrl-C or SIGTERM (:mod:`concordia_env.arena.pools`): the
    games in flight finish, the shards they complete are written, then
    :class:`~concordia_env.arena.pools.Interrupted`; a second one kills the games at once."""
    n_shards = -(-cfg.games // cfg.shard_size)
    todo = [i for i in range(n_shards) if not shard_ok(shard_path(out, g, i), shard_meta(cfg, g, i, expert))]
    if not todo:
        return None
    t0 = time.perf_counter()
    tasks = [(cfg, g, game, expert) for i in todo for game in shard_games(cfg, i)]
    pending: dict[int, list[tuple[dict[str, np.ndarray], dict[str, Any]]]] = {i: [] for i in todo}
    positions = truncated = 0
    # the task as the package names it now: scripts and tests replace it there (to slow the games down)
    from concordia_env.training import expert_iteration as package

    # the pool first: ray.init puts in its own SIGTERM handler, which stop_signals then replaces for a while;
    # BLAS threads stay as they are (training runs here between the generations)
    pool, window = _selfplay_pool(min(workers, len(tasks)), backend, address)
    with Runner(package._selfplay_task, tasks, workers=window, pool=pool, progress=progress,
                desc=f"gen {g} self-play", one_blas=False) as run:
        for k, played in run:
            index = tasks[k][2] // cfg.shard_size
            pending[index].append(played)
            truncated += played[1]["game_truncated"]
            if len(pending[index]) == len(shard_games(cfg, index)):
                positions += write_shard(shard_path(out, g, index), shard_meta(cfg, g, index, expert),
                                         pending.pop(index))
            run.bar.set_postfix(positions=positions)
        assert run.interrupts is not None
        run.interrupts.check()  # stopped: the complete shards are written
    wall = time.perf_counter() - t0
    return {"games": len(tasks), "shards": len(todo), "positions": positions, "truncated": truncated,
            "expert": expert.stem or expert.sha256, "seconds": round(wall, 2),
            "games_per_min": round(60 * len(tasks) / wall, 2) if wall else None}
