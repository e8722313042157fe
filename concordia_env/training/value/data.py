"""Self-play positions with their final outcomes, for training a value network.

``python -m concordia_env.training.value.data --map imperium --games 1000
--agents heuristic,mcts:iterations=200 --out runs/value-data/imperium --workers 2``

(Moved here from ``concordia_env/training/value_data.py``, whose command still works.)

What a game is
--------------
Game ``g`` of a data set is drawn from ``SeedSequence([seed, g])`` alone: its player count
(uniform over ``--players``, default every count the map allows), the agent at each seat
(drawn independently per seat from ``--agents`` with ``--agent-weights``, so games mix the
agents), the game seed and the offset of the recorded positions. So the same arguments give
the same data, whatever ``--workers`` and however often a run was restarted.

What is recorded
----------------
Every ``--every``-th decision of every game (default 1: every decision), starting at an offset
drawn per game in ``[0, every)``; a decision is any state where an agent is asked to act, forced
ones included. Per position, from the **deciding player's view** (``encoding.observation(state,
seat)``), or with ``--views all`` once from every seat's view (n entries per position, the same
``step``: augmentation that shows the net the same position with the rows rotated). Row ``k``
of every per-player target is seat ``(seat + k) % n``, the observation's own row order (``seat``
is the viewer); rows of absent seats are 0:

* ``obs`` int16 ``(P, OBSERVATION_SIZE)``: the observation (all of its values are integer counts
  and flags; the loader turns them back into float32 exactly);
* ``win`` float32 ``(P, 5)``: 1 for the winner after tie-break, else 0;
* ``rank`` float32 ``(P, 5)``: rank reward, +1 first ... -1 last (``rewards.seat_rewards``);
* ``vp`` int16 ``(P, 5)``: final VP; ``margin`` float32 ``(P, 5)``: final VP minus the best
  other player's final VP;
* ``heuristic`` float32 ``(P, 5)``: the heuristic's leaf evaluation of the position
  (``agents.mcts.evaluate``, softmax of position values at temperature 8, the MCTS default),
  the baseline a value net must beat;
* ``game`` int32 (global game index), ``step`` int32 (decision index in the game),
  ``decisions`` int32 (decisions of the whole game), ``turn`` int16 (card plays so far),
  ``num_players`` int8, ``seat`` int8 (the absolute seat of row 0): enough to order a game's
  positions and convert rows between viewpoints for bootstrapped targets.

Games cut off by ``--max-turns`` are listed (``game_truncated``) but contribute no positions.

Every game is also kept whole, truncated ones too (:mod:`concordia_env.training.game_log`): its
action ids (``game_actions``, int16, with ``game_action_offsets``) and its setup, agent specs by
seat and result (``game_records``), so ``concordia dataset export`` replays and exports it. A
shard written before games were kept lacks these three members and still loads.

Shards and resuming
-------------------
Games are written in shards of ``--shard-size`` games, ``shard_{i:05d}.npz`` holding games
``[i*K, (i+1)*K)``, each written atomically (temporary file, fsync, ``os.replace``), with the
data set's settings in its ``meta`` entry. The directory is a run folder
(:mod:`concordia_env.arena.run_folder`): ``dataset.json`` holds its settings and a restart with
other settings is refused. A restart keeps every shard that loads and matches, and regenerates
the missing ones and any that is truncated, corrupt or foreign (one warning line each; a bad
shard is kept aside as ``shard_NNNNN.npz.invalid``).
:func:`load_shards` (used by training) likewise skips, with one warning line, a shard it cannot
read. Ctrl-C (status 130) and a write that fails (a full disk: one line, status 1) keep every
complete shard; the same command again resumes.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from concordia_env import encoding
from concordia_env._internal.files import write_bytes_atomic
from concordia_env.agents import make_agent
from concordia_env.agents.mcts import evaluate
from concordia_env.arena.game_result import GameResult
from concordia_env.arena.pools import Interrupted, process_pool
from concordia_env.arena.records import play_game
from concordia_env.arena.run_folder import RunFolder, keep
from concordia_env.arena.runner import Runner
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.engine import MAXP
from concordia_env.state import GameState
from concordia_env.training.game_log import game_entry, log_arrays

#: version of the shard layout; part of every shard's settings
DATA_VERSION = 1
#: temperature of the heuristic baseline (``MCTSAgent``'s default)
HEURISTIC_TEMPERATURE = 8.0
#: per-position arrays of a shard
POSITION_KEYS = ("obs", "win", "rank", "vp", "margin", "heuristic", "game", "step", "decisions", "turn",
                 "num_players", "seat")
#: per-game arrays of a shard
GAME_KEYS = ("game_index", "game_seed", "game_players", "game_agents", "game_truncated", "game_decisions")


@dataclass(frozen=True)
class DataConfig:
    """Everything that decides the contents of a data set (``dataset.json``); ``games`` is not
    part of it: more games can be added to a directory later."""

    map: str
    agents: tuple[str, ...]
    agent_weights: tuple[float, ...]
    players: tuple[int, ...]
    seed: int
    shard_size: int
    every: int
    max_turns: int
    views: str = "decider"
    version: int = DATA_VERSION

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}


def shard_path(out: Path, index: int) -> Path:
    return out / f"shard_{index:05d}.npz"


def game_plan(cfg: DataConfig, g: int) -> tuple[int, list[int], int, int]:
    """``(players, agent index per seat, game seed, record offset)`` of game ``g``."""
    rng = np.random.default_rng(np.random.SeedSequence([cfg.seed, g]))
    n = int(rng.choice(cfg.players))
    p = np.asarray(cfg.agent_weights) / sum(cfg.agent_weights)
    agents = [int(a) for a in rng.choice(len(cfg.agents), size=n, p=p)]
    return n, agents, int(rng.integers(2**31 - 1)), int(rng.integers(cfg.every))


def _relative(values: Sequence[float] | np.ndarray, seat: int, n: int) -> np.ndarray:
    """Absolute per-seat values -> rows from ``seat``'s view (row k = seat (seat+k) % n), padded to 5."""
    out = np.zeros(MAXP, np.float64)
    for k in range(n):
        out[k] = values[(seat + k) % n]
    return out


def play_recorded(cfg: DataConfig, g: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Play game ``g`` and return its recorded positions (arrays of :data:`POSITION_KEYS`) and its row
    of the game table, with its ``game_record`` entry and ``actions`` (:mod:`~concordia_env.training.game_log`)."""
    n, agent_ids, game_seed, offset = game_plan(cfg, g)
    agents = [make_agent(cfg.agents[a], 0) for a in agent_ids]  # play_game reseeds them per seat
    obs, seats, steps, turns, heur = [], [], [], [], []
    buf = np.zeros(MAXP, np.float64)
    count = 0

    def on_step(state: GameState, seat: int, action: int) -> None:
        nonlocal count
        if count % cfg.every == offset:
            evaluate(state.s, state.game.tables, HEURISTIC_TEMPERATURE, buf)
            for view in [seat] if cfg.views == "decider" else range(n):
                obs.append(encoding.observation(state, view).astype(np.int16))
                heur.append(_relative(buf[:n], view, n))
                seats.append(view)
                steps.append(count)
                turns.append(int(state.field("turn")))
        count += 1

    record = play_game(cfg.map, n, game_seed, agents, max_turns=cfg.max_turns, on_step=on_step)
    result = GameResult.from_json(record["result"])
    info = {"game_index": g, "game_seed": game_seed, "game_players": n,
            "game_agents": agent_ids + [-1] * (MAXP - n), "game_truncated": result.truncated,
            "game_decisions": count, "game_record": game_entry(record, [cfg.agents[a] for a in agent_ids]),
            "actions": record["actions"]}
    if result.truncated:
        obs, seats, steps, turns, heur = [], [], [], [], []
    final = np.asarray(result.scores, np.float64)
    win, rank, margin = result.wins(), result.rewards("rank"), result.margins()
    m = len(steps)
    arrays: dict[str, np.ndarray] = {
        "obs": np.asarray(obs, np.int16).reshape(m, encoding.OBSERVATION_SIZE),
        "win": np.array([_relative(win, s, n) for s in seats], np.float32).reshape(m, MAXP),
        "rank": np.array([_relative(rank, s, n) for s in seats], np.float32).reshape(m, MAXP),
        "vp": np.array([_relative(final, s, n) for s in seats], np.int16).reshape(m, MAXP),
        "margin": np.array([_relative(margin, s, n) for s in seats], np.float32).reshape(m, MAXP),
        "heuristic": np.asarray(heur, np.float32).reshape(m, MAXP),
        "game": np.full(m, g, np.int32),
        "step": np.asarray(steps, np.int32),
        "decisions": np.full(m, count, np.int32),
        "turn": np.asarray(turns, np.int16),
        "num_players": np.full(m, n, np.int8),
        "seat": np.asarray(seats, np.int8),
    }
    return arrays, info


def shard_games(cfg: DataConfig, games: int, index: int) -> range:
    return range(index * cfg.shard_size, min(games, (index + 1) * cfg.shard_size))


def write_shard(cfg: DataConfig, out: Path, index: int, games: range) -> tuple[int, int, float]:
    """Play the games of shard ``index`` and write it atomically; ``(games, positions, seconds)``."""
    t0 = time.perf_counter()
    data, n_games, n_pos = build_shard(cfg, index, games)
    write_bytes_atomic(shard_path(out, index), data)
    return n_games, n_pos, time.perf_counter() - t0


def build_shard(cfg: DataConfig, index: int, games: range) -> tuple[bytes, int, int]:
    """Play the games of shard ``index``: ``(the shard file's bytes, games, positions)``.

    Workers run this and the caller writes the bytes, so a shard played on another machine of a
    Ray cluster lands in the caller's ``--out``."""
    parts: list[dict[str, np.ndarray]] = []
    infos: list[dict[str, Any]] = []
    for g in games:
        arrays, info = play_recorded(cfg, g)
        parts.append(arrays)
        infos.append(info)
    data = {k: np.concatenate([p[k] for p in parts]) for k in POSITION_KEYS}
    for k in GAME_KEYS:
        data[k] = np.asarray([i[k] for i in infos], np.int64 if k == "game_seed" else np.int32)
    data.update(log_arrays([i["game_record"] for i in infos], [i["actions"] for i in infos]))
    meta = dict(cfg.to_json(), shard=index, games=[games.start, games.stop])
    data["meta"] = np.array(json.dumps(meta, sort_keys=True))
    buf = io.BytesIO()
    np.savez_compressed(buf, **data)  # type: ignore[arg-type]  # numpy's stub mistypes **arrays
    return buf.getvalue(), len(games), len(data["step"])


def read_shard_arrays(path: Path, keys: Sequence[str]) -> tuple[dict[str, Any], Any]:
    """The arrays of a shard ``.npz`` and its JSON ``meta``; ``ValueError`` naming the file if it is
    truncated or corrupt, or lacks one of ``keys`` (shared by the value data and expert iteration's
    shards; each checks its own arrays' consistency after)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            data: dict[str, Any] = {k: z[k] for k in z.files}
        meta = json.loads(str(data.pop("meta")))
    except Exception as exc:  # noqa: BLE001 - BadZipFile, zlib.error, EOFError, KeyError...: all "corrupt"
        raise ValueError(f"{path}: corrupt or truncated shard ({type(exc).__name__}: {exc})") from None
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"{path}: shard lacks {', '.join(missing)}")
    return data, meta


def read_shard(path: Path) -> dict[str, Any]:
    """The arrays of one shard plus ``meta`` (a dict); ``ValueError`` naming the file if it is
    truncated, corrupt or incomplete."""
    data, meta = read_shard_arrays(path, POSITION_KEYS + GAME_KEYS)
    m = len(data["step"])
    bad = [k for k in POSITION_KEYS if len(data[k]) != m]
    if bad or data["obs"].shape[1:] != (encoding.OBSERVATION_SIZE,):
        raise ValueError(f"{path}: inconsistent arrays ({', '.join(bad) or 'obs width'})")
    data["meta"] = meta
    return data


def _shard_ok(cfg: DataConfig, path: Path, games: range) -> bool:
    """True if ``path`` holds exactly the shard these settings would write; a damaged or foreign
    shard is set aside with one warning line (:func:`~concordia_env.arena.run_folder.keep`)."""

    def problem(path: Path) -> str | None:
        try:
            meta = read_shard(path)["meta"]
        except ValueError as exc:
            return str(exc).removeprefix(f"{path}: ")
        expected = dict(cfg.to_json(), shard=meta.get("shard"), games=[games.start, games.stop])
        return None if meta == expected else "written with other settings"

    return bool(keep([path], problem, "regenerating it"))


def _observations(paths: Sequence[Path], parts: Sequence[dict[str, Any]]) -> np.ndarray:
    """The observations of the shards at ``paths``, read again straight into one array (``parts`` gives
    each shard's row count and whether its counts fit in a byte); ``ValueError`` naming a shard that
    changed since it was first read."""
    # counts that all fit in a byte (nearly every data set: 2-player Italia's largest is about 200) are
    # held as uint8, half the memory of int16 and exact; every reader converts to float32 anyway
    dtype = np.uint8 if all(p["obs_bytes"] for p in parts) else np.int16
    obs = np.empty((sum(p["obs_rows"] for p in parts), encoding.OBSERVATION_SIZE), dtype)
    at = 0
    for path, part in zip(paths, parts):
        rows = part["obs_rows"]
        try:
            with np.load(path, allow_pickle=False) as z:
                obs[at:at + rows] = z["obs"]
        except Exception as exc:  # noqa: BLE001 - changed since it was read: corrupt, or of another size
            raise ValueError(f"{path}: changed while the data set was loaded ({type(exc).__name__}: {exc})") from None
        at += rows
    return obs


def load_shards(directory: str | os.PathLike | Sequence[str | os.PathLike], quiet: bool = False) -> dict[str, Any]:
    """Every readable shard of ``directory`` concatenated (position and game arrays); a shard that
    cannot be read is skipped with one warning line. ``meta`` lists the shards used. The observations
    come back as uint8 when every one of them lies in 0..255, else as the shards' int16.

    ``directory`` may also be several data sets of one map and player count (expert iteration's
    window of generations): their games are renumbered after one another, so that a game id names
    one game of the whole, and ``meta``'s settings are the first set's (``ValueError`` if the maps or
    player counts differ, or a set has no readable shard)."""
    dirs = [directory] if isinstance(directory, (str, os.PathLike)) else list(directory)
    if not dirs:
        raise ValueError("no data directory given")
    parts: list[dict[str, Any]] = []
    used: list[Path] = []
    first = 0  # the first game id of the next data set
    for d in dirs:
        before, top = len(parts), -1  # parts so far, and this set's last game id
        for p in sorted(Path(d).glob("shard_*.npz")):
            try:
                part = read_shard(p)
            except ValueError as exc:
                if not quiet:
                    print(f"warning: skipping {exc}", file=sys.stderr)
                continue
            # the observations, nearly all of the memory, are read again below straight into one array,
            # so that loading needs their size once, not twice (the parts and their concatenation)
            obs = part.pop("obs")
            part["obs_rows"] = len(obs)
            part["obs_bytes"] = bool(obs.size == 0 or (obs.min() >= 0 and obs.max() <= 255))
            top = max(top, int(part["game_index"].max(initial=-1)))
            part["game"] = part["game"] + first
            part["game_index"] = part["game_index"] + first
            parts.append(part)
            used.append(p)
        if len(parts) == before:
            raise ValueError(f"{d}: no readable shard_*.npz")
        first += top + 1
    settings = parts[0]["meta"]
    for part, path in zip(parts, used):
        other = part["meta"]
        if (other.get("map"), other.get("players")) != (settings.get("map"), settings.get("players")):
            raise ValueError(f"{path}: map {other.get('map')!r}, {other.get('players')!r} players, where "
                             f"{used[0]} has {settings.get('map')!r}, {settings.get('players')!r}")
    keys = [k for k in POSITION_KEYS + GAME_KEYS if k != "obs"]
    data: dict[str, Any] = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    data["obs"] = _observations(used, parts)
    names = [p.name for p in used] if len(dirs) == 1 else [str(p) for p in used]
    data["meta"] = {"shards": names, "settings": settings}
    return data


def _check_backend(backend: str, address: str | None) -> None:
    """``ValueError`` for a backend this module does not know, or an address without Ray."""
    if backend not in ("local", "ray"):
        raise ValueError(f"backend must be 'local' or 'ray', got {backend!r}")
    if address is not None and backend != "ray":
        raise ValueError("--address needs --backend ray")


def _shard_pool(workers: int, backend: str, address: str | None) -> tuple[Executor | None, int]:
    """Where shards are played and how many at once: None (this process), a process pool, or Ray
    tasks (as many as the cluster has CPUs)."""
    if backend == "ray":
        from concordia_env.integrations.ray_backend import RayGamePool

        pool = RayGamePool(address)
        return pool, pool.cpus()
    return process_pool(workers), workers


def _build(task: tuple[DataConfig, int, range]) -> tuple[bytes, int, int]:
    """:func:`build_shard` of one ``(settings, index, games)`` task (in a worker)."""
    return build_shard(*task)


def generate(cfg: DataConfig, games: int, out: str | os.PathLike, workers: int = 1,
             progress: bool = True, backend: str = "local", address: str | None = None) -> dict[str, Any]:
    """Write the shards of ``games`` games to ``out`` (skipping complete ones); returns a summary.

    ``backend="ray"`` plays the shards as Ray tasks (``address``: the cluster, as for
    ``concordia tournament --backend ray``; ``workers`` is then ignored); the shards' bytes are
    the same whatever the backend and worker count, and this process writes every shard."""
    _check_backend(backend, address)
    out = RunFolder.open(out, cfg.to_json(), settings_name="dataset.json", units=("shard_*.npz",),
                         what="data set folder", owner="a data set of other settings").path
    n_shards = -(-games // cfg.shard_size)
    todo = [i for i in range(n_shards) if not _shard_ok(cfg, shard_path(out, i), shard_games(cfg, games, i))]
    skipped = n_shards - len(todo)
    # the pool before the signal handlers (ray.init puts in its own SIGTERM handler); a wrong address
    # fails here, before any game
    pool, window = _shard_pool(min(workers, len(todo)), backend, address) if todo else (None, 1)
    t0 = time.perf_counter()
    done_games = done_pos = 0
    tasks = [(cfg, i, shard_games(cfg, games, i)) for i in todo]
    with Runner(_build, tasks, workers=window, pool=pool, unit="shard", progress=progress, leave=True,
                sizes=[len(task[2]) for task in tasks], bar_unit="game", one_blas=False) as run:
        for k, (data, n_games, n_pos) in run:
            write_bytes_atomic(shard_path(out, todo[k]), data)
            done_games += n_games
            done_pos += n_pos
            run.bar.set_postfix(pos=done_pos)
    if run.cut_short:  # stopped: the shards in flight are written
        raise Interrupted()
    wall = time.perf_counter() - t0
    return {"shards": n_shards, "skipped_shards": skipped, "games": done_games, "positions": done_pos,
            "seconds": round(wall, 2), "positions_per_s": round(done_pos / wall, 1) if wall else None,
            "games_per_min": round(60 * done_games / wall, 2) if wall else None}


def _csv(text: str, kind: type) -> tuple:
    return tuple(kind(x) for x in text.split(",") if x.strip())


#: how the command is run, in messages
PROG = "python -m concordia_env.training.value.data"


def main(argv: Sequence[str] | None = None, prog: str = PROG) -> int:
    """Write the data set the command line ``argv`` describes; the exit status. ``prog`` is the
    command named in the messages."""
    argv = sys.argv[1:] if argv is None else list(argv)
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--map", required=True, choices=MAP_NAMES)
    ap.add_argument("--games", type=int, required=True, help="games in the data set (shards already there are kept)")
    ap.add_argument("--agents", default="heuristic", help="comma-separated agent specs drawn per seat")
    ap.add_argument("--agent-weights", default=None, help="comma-separated weights of --agents (default equal)")
    ap.add_argument("--players", default=None, help="comma-separated player counts (default: all the map allows)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shard-size", type=int, default=20, help="games per shard")
    ap.add_argument("--every", type=int, default=1, help="record every k-th decision (default every one)")
    ap.add_argument("--views", default="decider", choices=["decider", "all"],
                    help="record each position from the deciding seat's view, or from every seat's")
    ap.add_argument("--max-turns", type=int, default=1000, help="cut games off after this many card plays")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (default 1; ignored with --backend ray)")
    ap.add_argument("--backend", choices=("local", "ray"), default="local",
                    help="play shards in local processes, or as tasks on a Ray cluster (the ray extra)")
    ap.add_argument("--address", default=None,
                    help="with --backend ray: the cluster's HOST:PORT, ray://HOST:10001 or auto (default: a local "
                         "Ray instance)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    try:
        agents = tuple(a.strip() for a in args.agents.split(",") if a.strip())
        for a in agents:
            make_agent(a, 0)  # a bad spec fails here, not in a worker
        weights = _csv(args.agent_weights, float) if args.agent_weights else (1.0,) * len(agents)
        allowed = tuple(load_map(args.map).players)
        players = _csv(args.players, int) if args.players else allowed
        if len(weights) != len(agents) or min(weights) < 0 or sum(weights) <= 0:
            raise ValueError(f"--agent-weights needs {len(agents)} non-negative weights, got {args.agent_weights!r}")
        if not players or set(players) - set(allowed):
            raise ValueError(f"--players must be among {list(allowed)} for {args.map}, got {args.players!r}")
        if args.games < 1 or args.shard_size < 1 or args.every < 1:
            raise ValueError("--games, --shard-size and --every must be positive")
        cfg = DataConfig(args.map, agents, weights, players, args.seed, args.shard_size, args.every, args.max_turns,
                         args.views)
        summary = generate(cfg, args.games, args.out, args.workers, progress=not args.no_progress,
                           backend=args.backend, address=args.address)
    except (ValueError, ImportError) as exc:  # bad settings; Ray missing or its cluster unreachable
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a shard that could not be written (a full disk): the complete ones are intact
        where = f" {exc.filename}" if exc.filename else ""
        print(f"error: could not write{where}: {exc.strerror or exc}; complete shards are kept: run the same "
              f"command again to resume", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (concordia_env.arena.pools): the shards written are complete
        print(f"interrupted: complete shards are kept; resume with: {prog} {shlex.join(argv)}", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
