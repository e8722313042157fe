"""Expert iteration (AlphaZero-style): self-play with search, train a network on it, gate, repeat.

``python -m concordia_env.training.expert_iteration --map italia --players 2 --out runs/exit/italia2
--generations 3 --games 64 --simulations 100 --workers 2 --seed 0``

The loop
--------
Generation ``g`` has three steps, each finished by files under ``OUT/gen_{g:03d}/``:

1. **Self-play** (``selfplay/shard_*.npz``). Every seat is played by one *expert*: the search
   guided by the current best network (:class:`~concordia_env.agents.az.AZAgent`, PUCT with the
   network's policy priors and win-head leaf values, ``--simulations`` per decision, Dirichlet
   noise mixed into the root priors, ``--root-noise``), or, while there is no network yet
   (generation 0 without ``--init-net``), :class:`~concordia_env.agents.mcts.MCTSAgent` with the
   heuristic's priors and leaf values (``--teacher mcts``, the default), or the heuristic itself
   (``--teacher heuristic``, below). The first ``--temperature-decisions`` searched decisions
   of a game sample their move from ``visits ** (1 / --move-temperature)``, later ones play the
   most visited move. Game ``i`` is set up from ``SeedSequence([seed, g, i])`` alone, so the data
   do not depend on ``--workers`` or on restarts.
2. **Training** (``checkpoint.pt``, ``net.npz/.json``, ``train.json``) on the positions of the
   last ``--window`` generations (see below), then the numpy export, checked against torch.
3. **Gating** (``gate.json``, ``eval_*.json``). The new network, searching with
   ``--gate-simulations``, plays the current best one on ``--gate-deals`` paired deals with the
   seats rotated (:func:`~concordia_env.training.evaluation.run_evaluation`); it becomes the best
   if its *gate score* is at least ``--gate-threshold`` (default 0.55). Generation 0 without
   ``--init-net`` has no best to beat and is accepted. Every generation also plays the
   ``heuristic`` (``--eval-deals`` deals): the new network with search (``az``) and alone
   (``net``: the legal action of the highest policy logit), for the learning curves.

The gate line-up alternates the two networks over the seats (``new, best`` in 2-player games,
``new, best, new, best`` in 4-player ones); the gate score is the new network's share of the
wins per seat, ``(w_new / s_new) / (w_new / s_new + w_best / s_best)`` (``s``: seats held),
which is its plain win rate in 2-player games; games cut off at ``--max-turns`` are won by
nobody. The interval is Wilson's on the decided games.

The heuristic teacher
---------------------
``--teacher heuristic`` replaces generation 0's search by a much cheaper teacher, as AlphaGo's
supervised policy preceded its self-play: :class:`~concordia_env.agents.heuristic.HeuristicAgent`
(given the true state) plays every seat, and each decision with more than one legal action is
recorded as below, with the heuristic's own preferences as the policy target: the priors MCTS
uses, :func:`concordia_env.agents.mcts.priors` (a softmax of the heuristic's values over the legal
actions; its argmax is the heuristic's move up to the heuristic's tie-break noise), stored in
``visit_counts`` as ``round(1000 * prior)``: for this teacher the "counts" are priors in
thousandths. ``root_value`` is the heuristic's win shares,
:func:`concordia_env.agents.mcts.evaluate` at temperature 8 (VP-like units), per absolute seat.
So that the positions are not all on the heuristic's one line of play, a decision plays, with
probability ``--teacher-epsilon`` (default 0.1), a move sampled from the priors instead of the
heuristic's; the draws come from a generator seeded from the game's setup seed alone
(``default_rng([game_seed, 1])``), so the games do not depend on ``--workers`` either. With
``--teacher-epsilon 0`` a game is exactly :func:`~concordia_env.arena.records.play_game` of one
``HeuristicAgent`` at every seat. The shards name the expert ``heuristic-priors`` (and record
``teacher_epsilon``), so shards of the two teachers never mix. Only generation 0 without
``--init-net`` has this teacher; later generations, and a generation 0 with ``--init-net``, play
the network-guided search; the gate is unchanged. Measured on 2-player Italia, one core: 800
heuristic games (222,505 positions) took about 4 minutes, against about 80 minutes for 320
MCTS-100 games.

What is recorded
----------------
Per searched decision (forced decisions with a single legal action are neither searched nor
recorded): the raw int32 state array (``GameState.s``), the deciding seat, the decision index,
the root's visit counts (sparse: the legal action ids, ascending, and a count for each) and the
root's mean value per absolute seat; per game its seed, the winner after the tie-break, the
scores and whether it was truncated. A truncated game contributes no positions. Shards of
``--shard-size`` games are written atomically with the settings in their ``meta`` entry and
fixed zip time stamps: the same arguments give the same bytes.

The network
-----------
:class:`~concordia_env.agents.value_net.ValueNet`'s architecture: the observation scaled as for
the policies (``numpy_policy.observation_scaling``), an MLP trunk (``--hidden``, ``--activation``)
and two heads on the trunk's output:

* ``win`` (5 logits, one per seat row of the observation; row 0 the observer): softmax over the
  seats present in the game gives every player's share of a win;
* ``policy`` (1 logit): applied to the *afterstate* of every legal action (the observation, by
  the deciding seat, of the position the action leads to,
  :mod:`concordia_env.agents.afterstates`), so one shared scorer ranks the moves; the softmax over
  a decision's legal afterstates is the policy.

Losses, per position (the deciding seat's observation):

* value: cross-entropy between the win shares and the target: the game's outcome (1 for the
  winner) in the observation's row order, mixed with the root's search value
  (``(1 - m) z + m v``, ``m = --value-target-mix``; the search value clipped to [0, 1] and
  renormalised);
* policy: cross-entropy between the softmax of the legal afterstates' logits and the root's
  normalised visit counts;

total ``--value-weight * value + --policy-weight * policy``, AdamW (``--lr``,
``--weight-decay``), batches of ``--batch`` positions, ``--epochs`` passes over the window's
training positions. Observations and afterstate observations are rebuilt from the stored
states batch by batch (:func:`concordia_env.encoding.encode_batch` and the afterstate kernel;
afterstates padded per batch with a mask): storing them would take about 10 MB per game. The
afterstates are encoded with the undrawn cards reshuffled within their decks (seeded by the
position), as the search encodes them: the true deck would show the policy the display card a
purchase reveals, which no player knows when choosing.
Games (not positions) of the window are split into training and validation
(``--val-fraction``). Generation ``g`` starts from the weights of the previous generation's
network (``--warm-start previous``; ``best``: the best network's; ``none``: fresh), or at
generation 0 from ``--init-net`` when given. Training is seeded (batch order from
``(seed, g, epoch)``) and deterministic on one machine with the same ``--torch-threads``; it
uses the GPU when ``--device auto`` finds one. Self-play and evaluation games run with one numpy
BLAS thread per process (:func:`blas_threads`): OpenBLAS's threads on the network's small
products, one set per worker process, made the search several times slower on 2 cores.

Files and resuming
------------------
``OUT/run.json`` holds the arguments that decide the results; running again with other values
of them is refused (``--generations``, ``--workers``, ``--device``, ``--torch-threads`` may
change). ``OUT/log.jsonl`` gets one JSON line per completed step, ``OUT/best.npz/.json`` is the
current best network and ``OUT/curves.png`` plots, per generation, the training and validation
losses, the gate score with its interval and the win rates against the heuristic with theirs.

A run stops and continues across sessions: the same command with ``--resume`` skips every
complete step (a self-play shard that loads and matches the settings, a generation whose network
and ``train.json`` exist, a ``gate.json`` of the current network), regenerates a missing,
truncated or corrupt shard (one warning line), and continues training from
``gen_XXX/checkpoint.pt`` (written atomically every ``--checkpoint-every`` steps; a truncated
one is skipped with a warning and the generation is trained from its start), and trains again
a generation whose network is missing, truncated or not the one ``train.json`` records (one
warning line). ``--generations`` may be raised to extend a finished run. Ctrl-C keeps what is
complete (self-play shards, a training checkpoint saved on the spot) and exits with status 130
and one line. Every file is written atomically (:mod:`concordia_env.files`), so a kill or a full
disk never leaves a truncated file under its final name; a write that fails (a full disk, a
file size limit) stops the run with one line naming the file and status 1, and ``--resume``
goes on once there is room. ``--teacher`` and ``--teacher-epsilon`` are fixed arguments too; a
``run.json`` written before they existed counts as ``--teacher mcts --teacher-epsilon 0.1``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from concordia_env import encoding, files
from concordia_env import engine as E
from concordia_env.agents.afterstates import AfterstateEncoder
from concordia_env.agents.base import Agent
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import MCTSAgent, deck_blocks, evaluate, priors, resample_deck
from concordia_env.agents.numpy_policy import ACTIVATIONS, observation_scaling
from concordia_env.agents.value_net import ROWS, ValueNet
from concordia_env.arena.pools import PoolWork, pool_closed, process_pool, sigterm_as_ctrl_c, stop_signals
from concordia_env.arena.records import play_game
from concordia_env.arena.tournament import wilson_interval
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.files import write_bytes_atomic, write_json_atomic, write_text_atomic
from concordia_env.game import check_setup_args, get_game
from concordia_env.state import GameState, new_game
from concordia_env.threads import one_blas_thread
from concordia_env.training.value_data import read_shard_arrays
from concordia_env.training.value_train import load_torch_checkpoint, mlp_trunk, plain

PROG = "python -m concordia_env.training.expert_iteration"
RUN_FORMAT = "concordia-env/expert-iteration"
RUN_VERSION = 1
#: version of the self-play shard layout; part of every shard's settings
DATA_VERSION = 1
#: arguments that decide the results: a restart must repeat them (``run.json``)
FIXED_ARGS = ("map", "players", "seed", "games", "simulations", "shard_size", "max_turns", "c_puct", "leaf_mix",
              "root_noise", "root_noise_alpha", "move_temperature", "temperature_decisions", "init_net",
              "hidden", "activation", "window", "epochs", "batch", "lr", "weight_decay", "dropout",
              "value_target_mix", "value_weight", "policy_weight", "warm_start", "val_fraction",
              "gate_deals", "gate_simulations", "gate_threshold", "eval_deals", "teacher", "teacher_epsilon")
#: fixed arguments added after runs existed: a ``run.json`` (or a training checkpoint) without
#: them was started with these values
FIXED_DEFAULTS: dict[str, Any] = {"teacher": "mcts", "teacher_epsilon": 0.1}
#: per-position arrays of a shard
POSITION_KEYS = ("state", "seat", "game", "step", "turn", "num_players", "root_value", "visit_len")
#: per-visit-entry arrays of a shard (the positions' legal actions, concatenated)
VISIT_KEYS = ("visit_actions", "visit_counts")
#: per-game arrays of a shard
GAME_KEYS = ("game_index", "game_seed", "game_players", "game_winner", "game_truncated", "game_decisions",
             "game_positions", "game_turns", "game_scores")
#: the expert of a generation without a network (generation 0 without --init-net)
HEURISTIC_EXPERT = "mcts-heuristic"
#: the expert of generation 0 without --init-net with ``--teacher heuristic``
HEURISTIC_TEACHER = "heuristic-priors"
#: generation 0's teachers (``--teacher``)
TEACHERS = ("mcts", "heuristic")
#: the heuristic teacher stores its priors as counts in these units (thousandths)
PRIOR_SCALE = 1000
#: temperature of the heuristic teacher's win shares (``root_value``), in VP-like units
TEACHER_VALUE_TEMPERATURE = 8.0
#: second word of the exploration generator's seed (after the game's setup seed)
EXPLORE_STREAM = 1


# ============================================================ settings and files
@dataclass(frozen=True)
class SelfPlayConfig:
    """Everything that decides the contents of a generation's self-play shards except the expert."""

    map: str
    players: int
    seed: int
    games: int
    simulations: int
    shard_size: int
    max_turns: int
    c_puct: float
    leaf_mix: float
    root_noise: float
    root_noise_alpha: float
    move_temperature: float
    temperature_decisions: int
    version: int = DATA_VERSION
    #: the heuristic teacher's exploration rate; it enters only its shards' meta (:func:`shard_meta`),
    #: so the search's shards keep the bytes they had before the teacher existed
    teacher_epsilon: float = FIXED_DEFAULTS["teacher_epsilon"]

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        del doc["teacher_epsilon"]
        return doc


@dataclass(frozen=True)
class Expert:
    """The player of a generation's self-play: a network file (``stem``) with the sha256 of its
    ``.npz``, or (``stem`` None) the heuristic-guided MCTS (``sha256`` ``HEURISTIC_EXPERT``) or the
    heuristic teacher (``HEURISTIC_TEACHER``)."""

    stem: str | None = None
    sha256: str = HEURISTIC_EXPERT
    generation: int | None = None

    @property
    def is_teacher(self) -> bool:
        """The heuristic teacher (``--teacher heuristic``) rather than a search."""
        return self.stem is None and self.sha256 == HEURISTIC_TEACHER

    @staticmethod
    def of(stem: str | os.PathLike, generation: int | None) -> Expert:
        npz = Path(stem).with_suffix(".npz") if Path(stem).suffix in (".npz", ".json") else Path(f"{stem}.npz")
        return Expert(str(npz.with_suffix("")), hashlib.sha256(npz.read_bytes()).hexdigest(), generation)


def gen_dir(out: Path, g: int) -> Path:
    return out / f"gen_{g:03d}"


def shard_path(out: Path, g: int, index: int) -> Path:
    return gen_dir(out, g) / "selfplay" / f"shard_{index:05d}.npz"


def shard_games(cfg: SelfPlayConfig, index: int) -> range:
    return range(index * cfg.shard_size, min(cfg.games, (index + 1) * cfg.shard_size))


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ============================================================ self-play
_NET_CACHE: dict[tuple[str, str], ValueNet] = {}


def _expert_net(expert: Expert) -> ValueNet:
    """The expert's network, loaded once per process and file content."""
    assert expert.stem is not None
    key = (expert.stem, expert.sha256)
    if key not in _NET_CACHE:
        net = ValueNet.load(expert.stem)
        if file_sha256(Path(expert.stem + ".npz")) != expert.sha256:
            raise ValueError(f"{expert.stem}.npz changed while the run was using it")
        _NET_CACHE[key] = net
    return _NET_CACHE[key]


def make_expert(cfg: SelfPlayConfig, expert: Expert) -> MCTSAgent:
    """The search agent that plays every seat of a self-play game."""
    if expert.stem is None:
        return MCTSAgent(iterations=cfg.simulations, c_puct=cfg.c_puct, max_turns=cfg.max_turns,
                         root_noise=cfg.root_noise, root_noise_alpha=cfg.root_noise_alpha)
    from concordia_env.agents.az import AZAgent

    # the search trains the priors it plays (prior_mix=0), not the heuristic's (the agent's default)
    return AZAgent(net=_expert_net(expert), simulations=cfg.simulations, leaf_mix=cfg.leaf_mix, prior_mix=0.0,
                   c_puct=cfg.c_puct, max_turns=cfg.max_turns, root_noise=cfg.root_noise,
                   root_noise_alpha=cfg.root_noise_alpha)


#: one recorded decision: state, seat, decision index, card plays so far, legal actions, their
#: counts, win shares per absolute seat
Row = tuple[np.ndarray, int, int, int, np.ndarray, np.ndarray, np.ndarray]


class _RecordingSeat(Agent):
    """Plays every seat of a self-play game and records each decision with more than one legal
    action as a :data:`Row`; a subclass says how it chooses (:meth:`_decide`)."""

    def _start(self) -> None:
        self.rows: list[Row] = []
        self.decisions = 0

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState | None = None) -> int:
        assert state is not None, "self-play passes the state"
        legal = np.flatnonzero(action_mask)
        step = self.decisions
        self.decisions += 1
        if legal.size == 1:
            return int(legal[0])
        row = (state.s.copy(), state.current_player, step, int(state.s[E.O_TURN]), legal)
        action, counts, shares = self._decide(observation, action_mask, state, legal)
        value = np.zeros(ROWS, np.float32)
        value[:state.num_players] = shares[:state.num_players]
        self.rows.append((*row, counts, value))
        return action

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        """The move, the policy target's counts over ``legal`` and the win shares per absolute seat."""
        raise NotImplementedError


class RecordingSeat(_RecordingSeat):
    """Plays every seat of a self-play game with one search agent and records each searched decision."""

    name = "expert"

    def __init__(self, expert: MCTSAgent, cfg: SelfPlayConfig) -> None:
        self.expert = expert
        self.cfg = cfg
        self._start()
        self.searched = 0

    def reset(self, seed: int | None = None) -> None:
        self.expert.reset(seed)
        self._start()
        self.searched = 0

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        explore = self.searched < self.cfg.temperature_decisions
        self.expert.move_temperature = self.cfg.move_temperature if explore else 0.0
        self.searched += 1
        result = self.expert.search(state)
        return int(result.action), result.visits[legal], result.value


class TeacherSeat(_RecordingSeat):
    """Plays every seat of a self-play game with the heuristic and records, at each decision with
    more than one legal action, the heuristic's priors (in thousandths) and win shares (the
    module doc's "heuristic teacher").

    One :class:`HeuristicAgent` plays all seats, reset by ``play_game`` as it would reset it
    there, so with ``epsilon`` 0 the game is ``play_game`` of that agent at every seat. The
    exploration generator is seeded from ``game_seed`` alone and draws once per recorded decision
    (whether or not it explores), so a game is the same wherever it is played."""

    name = "heuristic-teacher"

    def __init__(self, epsilon: float, game_seed: int) -> None:
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"teacher epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon
        self.game_seed = game_seed
        self.heuristic = HeuristicAgent()
        self.prior = np.zeros(E.NUM_ACTIONS, np.float64)
        self.value = np.zeros(E.MAXP, np.float64)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self.heuristic.reset(seed)
        self.explore = np.random.default_rng([self.game_seed, EXPLORE_STREAM])
        self._start()

    def _decide(self, observation: np.ndarray, action_mask: np.ndarray, state: GameState,
                legal: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
        mask = np.ascontiguousarray(action_mask, dtype=np.int8)
        tables = state.game.tables
        priors(state.s, tables, mask, self.prior)
        evaluate(state.s, tables, TEACHER_VALUE_TEMPERATURE, self.value)
        p = self.prior[legal]
        counts = np.rint(PRIOR_SCALE * p).astype(np.int32)
        if self.explore.random() < self.epsilon:
            return int(self.explore.choice(legal, p=p / p.sum())), counts, self.value
        return self.heuristic.act(observation, action_mask, state), counts, self.value


def game_seed(cfg: SelfPlayConfig, g: int, game: int) -> int:
    """The setup seed of self-play game ``game`` of generation ``g``."""
    return int(np.random.default_rng(np.random.SeedSequence([cfg.seed, g, game])).integers(2**31 - 1))


def play_selfplay_game(cfg: SelfPlayConfig, g: int, game: int, expert: Expert) -> tuple[dict[str, np.ndarray],
                                                                                          dict[str, Any]]:
    """Play self-play game ``game`` of generation ``g``: its position arrays and its game-table row."""
    seed = game_seed(cfg, g, game)
    seat: _RecordingSeat = (TeacherSeat(cfg.teacher_epsilon, seed) if expert.is_teacher
                                         else RecordingSeat(make_expert(cfg, expert), cfg))
    record = play_game(cfg.map, cfg.players, seed, [seat] * cfg.players, max_turns=cfg.max_turns)
    result = record["result"]
    rows = [] if result["truncated"] else seat.rows
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
    scores[:cfg.players] = result["scores"]
    info = {"game_index": game, "game_seed": seed, "game_players": cfg.players,
            "game_winner": -1 if result["truncated"] else int(result["ranking"][0]),
            "game_truncated": int(result["truncated"]), "game_decisions": seat.decisions,
            "game_positions": m, "game_turns": int(result["turns"]), "game_scores": scores}
    return arrays, info


def _selfplay_task(task: tuple[SelfPlayConfig, int, int, Expert]) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    return play_selfplay_game(*task)


def shard_meta(cfg: SelfPlayConfig, g: int, index: int, expert: Expert) -> dict[str, Any]:
    """A shard's ``meta``: the settings, its place and its expert (with the heuristic teacher's
    exploration rate, which only that teacher's shards record)."""
    games = shard_games(cfg, index)
    meta = dict(cfg.to_json(), generation=g, shard=index, games=[games.start, games.stop], expert=expert.sha256)
    if expert.is_teacher:
        meta["teacher_epsilon"] = cfg.teacher_epsilon
    return meta


def write_shard(path: Path, meta: dict[str, Any], games: list[tuple[dict[str, np.ndarray], dict[str, Any]]]) -> int:
    """Write one shard atomically; returns its number of positions."""
    data = {k: np.concatenate([a[k] for a, _ in games]) for k in POSITION_KEYS + VISIT_KEYS}
    for k in GAME_KEYS:
        dtype = np.int64 if k == "game_seed" else np.int32
        data[k] = np.asarray([i[k] for _, i in games], dtype)
    data["meta"] = np.array(json.dumps(meta, sort_keys=True))
    write_bytes_atomic(path, files.npz_bytes(data, compresslevel=6))
    return len(data["step"])


def read_shard(path: Path) -> dict[str, Any]:
    """The arrays of one shard plus ``meta`` (a dict); ``ValueError`` naming the file if it is
    truncated, corrupt or inconsistent."""
    data, meta = read_shard_arrays(path, POSITION_KEYS + VISIT_KEYS + GAME_KEYS)
    m = len(data["step"])
    bad = [k for k in POSITION_KEYS if len(data[k]) != m]
    if bad or data["state"].shape[1:] != (E.STATE_SIZE,) or len(data["visit_actions"]) != data["visit_len"].sum() \
            or len(data["visit_counts"]) != len(data["visit_actions"]):
        raise ValueError(f"{path}: inconsistent arrays ({', '.join(bad) or 'state width or visits'})")
    data["meta"] = meta
    return data


def shard_ok(path: Path, meta: dict[str, Any]) -> bool:
    """True if ``path`` holds exactly the shard ``meta`` describes; warns about a bad file."""
    if not path.exists():
        return False
    try:
        found = read_shard(path)["meta"]
    except ValueError as exc:
        warn(f"{exc}; regenerating it")
        return False
    if found != meta:
        warn(f"{path}: written with other settings or another expert; regenerating it")
        return False
    return True


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
    from tqdm import tqdm

    # the pool first: ray.init puts in its own SIGTERM handler, which stop_signals then replaces for a while
    pool, window = _selfplay_pool(min(workers, len(tasks)), backend, address)
    with pool_closed(pool), stop_signals("game") as interrupts:
        # the first games are submitted before tqdm starts its thread; results come back in game order
        played_games = PoolWork(_selfplay_task, tasks, pool, window, interrupts)
        with tqdm(total=len(tasks), disable=not progress, unit="game", leave=False,
                  desc=f"gen {g} self-play") as bar:
            for k, played in played_games:
                index = tasks[k][2] // cfg.shard_size
                pending[index].append(played)
                truncated += played[1]["game_truncated"]
                if len(pending[index]) == len(shard_games(cfg, index)):
                    positions += write_shard(shard_path(out, g, index), shard_meta(cfg, g, index, expert),
                                             pending.pop(index))
                bar.update()
                bar.set_postfix(positions=positions)
        interrupts.check()  # stopped: the complete shards are written
    wall = time.perf_counter() - t0
    return {"games": len(tasks), "shards": len(todo), "positions": positions, "truncated": truncated,
            "expert": expert.stem or expert.sha256, "seconds": round(wall, 2),
            "games_per_min": round(60 * len(tasks) / wall, 2) if wall else None}


def load_positions(directories: Iterable[Path], quiet: bool = False) -> dict[str, Any]:
    """Every readable shard of ``directories`` concatenated; a shard that cannot be read is skipped
    with one warning line. Adds ``offset`` (start of each position's visits), ``winner`` (of the
    position's game) and ``game_key`` (generation and game, unique over the directories)."""
    parts: list[dict[str, Any]] = []
    used: list[str] = []
    for directory in directories:
        for path in sorted(Path(directory).glob("shard_*.npz")):
            try:
                shard = read_shard(path)
            except ValueError as exc:
                if not quiet:
                    warn(f"skipping {exc}")
                continue
            winners = dict(zip(shard["game_index"].tolist(), shard["game_winner"].tolist()))
            shard["winner"] = np.asarray([winners[g] for g in shard["game"].tolist()], np.int64)
            shard["game_key"] = shard["game"].astype(np.int64) + (1 << 32) * int(shard["meta"]["generation"])
            parts.append(shard)
            used.append(str(path))
    keys = POSITION_KEYS + VISIT_KEYS + ("winner", "game_key", "game_truncated", "game_positions")
    if not parts:
        return {"shards": [], "positions": 0}
    data: dict[str, Any] = {k: np.concatenate([p[k] for p in parts]) for k in keys}
    data["offset"] = np.concatenate([[0], np.cumsum(data["visit_len"])]).astype(np.int64)
    data["shards"] = used
    data["positions"] = len(data["step"])
    return data


# ============================================================ training data
def to_relative(values: np.ndarray, seat: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per-absolute-seat rows ``(P, 5)`` -> rows from each position's ``seat`` (row k = seat (seat+k) % n)."""
    out = np.zeros((len(seat), ROWS), np.float32)
    for k in range(ROWS):
        present = k < n
        src = (seat + k) % np.maximum(n, 1)
        out[present, k] = values[np.flatnonzero(present), src[present]]
    return out


def value_targets(data: dict[str, Any], mix: float) -> tuple[np.ndarray, np.ndarray]:
    """``(targets, outcomes)`` ``(P, 5)`` in each position's row order: the outcome (1 for the winner)
    mixed with weight ``mix`` with the root search value (clipped to [0, 1], renormalised)."""
    seat = data["seat"].astype(np.int64)
    n = data["num_players"].astype(np.int64)
    won = np.zeros((len(seat), ROWS), np.float32)
    won[np.arange(len(seat)), data["winner"]] = 1.0
    outcome = to_relative(won, seat, n)
    if mix == 0:
        return outcome, outcome
    v = np.clip(data["root_value"].astype(np.float64), 0.0, 1.0)
    for k in range(ROWS):
        v[k >= n, k] = 0.0
    total = v.sum(axis=1, keepdims=True)
    v = np.where(total > 0, v / np.maximum(total, 1e-12), outcome)  # no information: the outcome
    return ((1 - mix) * outcome + mix * to_relative(v.astype(np.float32), seat, n)).astype(np.float32), outcome


@dataclass
class Batch:
    """Numpy arrays of a batch: observations ``(B, OBS)``, afterstate observations ``(N, OBS)`` with
    the batch row ``seg`` and column ``col`` of each, visit shares ``pi`` padded to ``(B, L)``, and
    the value targets and outcomes ``(B, 5)``."""

    obs: np.ndarray
    after: np.ndarray
    seg: np.ndarray
    col: np.ndarray
    pi: np.ndarray
    value: np.ndarray
    outcome: np.ndarray


class Positions:
    """Training positions of a window: stored states, visits and targets; batches rebuilt on demand."""

    def __init__(self, data: dict[str, Any], map_name: str, mix: float, seed: int = 0) -> None:
        self.data = data
        self.n = int(data["positions"])
        self.game = get_game(map_name)
        self.map_index = encoding.map_id(map_name)
        self.encoder = AfterstateEncoder(map_name)
        self.mask = np.zeros(E.NUM_ACTIONS, np.int8)
        self.targets, self.outcomes = value_targets(data, mix)
        self.seed = seed
        self.blocks = {n: deck_blocks(new_game(map_name, n, 0)) for n in load_map(map_name).players}

    def sampled_deck(self, i: int, s: np.ndarray) -> np.ndarray:
        """A copy of state ``s`` of position ``i`` with its undrawn cards shuffled within their decks, drawn
        from (seed, game, decision) alone: the deck order a player knows no more of than the searcher did."""
        s = s.copy()
        key = [self.seed, int(self.data["game_key"][i]), int(self.data["step"][i])]
        resample_deck(s, self.blocks[int(self.data["num_players"][i])], np.random.default_rng(key))
        return s

    def visits(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.data["offset"][i], self.data["offset"][i + 1]
        return self.data["visit_actions"][a:b].astype(np.int64), self.data["visit_counts"][a:b].astype(np.float32)

    def batch(self, idx: np.ndarray) -> Batch:
        """The observations, afterstates and targets of positions ``idx``."""
        T = self.game.tables
        states = np.ascontiguousarray(self.data["state"][idx])
        seats = self.data["seat"][idx].astype(np.int64)
        obs = np.empty((len(idx), encoding.OBSERVATION_SIZE), np.float32)
        encoding.encode_batch(states, T, self.map_index, seats, obs)
        after, seg, col, shares = [], [], [], []
        for j, i in enumerate(idx.tolist()):
            actions, counts = self.visits(i)
            E.legal_mask(states[j], T, self.mask)
            if not np.array_equal(np.flatnonzero(self.mask), actions):
                raise ValueError(f"position {i}: stored legal actions do not match its state (corrupt data)")
            sampled = self.sampled_deck(i, states[j])
            after.append(self.encoder.rows(sampled, T, self.mask, int(seats[j])).copy())
            seg.append(np.full(len(actions), j))
            col.append(np.arange(len(actions)))
            shares.append(counts / max(float(counts.sum()), 1.0))
        width = max(len(c) for c in col)
        pi = np.zeros((len(idx), width), np.float32)
        seg_a, col_a = np.concatenate(seg), np.concatenate(col)
        pi[seg_a, col_a] = np.concatenate(shares)
        return Batch(obs, np.concatenate(after), seg_a, col_a, pi, self.targets[idx], self.outcomes[idx])


def split_games(keys: np.ndarray, fraction: float, seed: int, g: int) -> np.ndarray:
    """Validation game keys: a seeded ``fraction`` of the window's games (at least one if fraction > 0
    and there are two games or more)."""
    uniq = np.unique(keys)
    if fraction <= 0 or len(uniq) < 2:
        return uniq[:0]
    k = min(len(uniq) - 1, max(1, int(round(fraction * len(uniq)))))
    return np.sort(np.random.default_rng([seed, g, 7]).permutation(uniq)[:k])


# ============================================================ the torch model
class ExItModel(nn.Module):
    """Observation scaling -> MLP trunk -> ``win`` head (5 logits) and ``policy`` head (1 logit)."""

    def __init__(self, scale: np.ndarray, unbounded: np.ndarray, hidden: Sequence[int], activation: str,
                 dropout: float = 0.0) -> None:
        super().__init__()
        self.register_buffer("scale", torch.as_tensor(np.asarray(scale, np.float32)))
        self.register_buffer("unbounded", torch.as_tensor(np.asarray(unbounded, bool)))
        self.trunk, n_in = mlp_trunk(hidden, activation, dropout)
        self.win = nn.Linear(n_in, ROWS)
        self.policy = nn.Linear(n_in, 1)
        self.activation = activation
        sl = encoding.OBSERVATION_LAYOUT["seat_present"]
        self.present = slice(sl.start, sl.stop)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        scale, unbounded = self.get_buffer("scale"), self.get_buffer("unbounded")
        return self.trunk(torch.where(unbounded, torch.log1p(torch.clamp(x, min=0.0)), x * scale))

    def forward(self, obs: torch.Tensor, after: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(win log-shares (B, 5) with absent rows 0, afterstate policy logits (N,))``: one trunk pass."""
        h = self.features(torch.cat([obs, after]))
        present = obs[:, self.present] > 0
        z = self.win(h[:len(obs)]).masked_fill(~present, float("-inf"))
        logp = torch.log_softmax(z, dim=1).masked_fill(~present, 0.0)
        return logp, self.policy(h[len(obs):])[:, 0]

    def linears(self) -> list[nn.Linear]:
        return [m for m in self.trunk if isinstance(m, nn.Linear)]

    def to_numpy(self, map_name: str, metadata: dict[str, Any]) -> ValueNet:
        def lay(m: nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            return m.weight.detach().cpu().numpy().copy(), m.bias.detach().cpu().numpy().copy()

        return ValueNet([lay(m) for m in self.linears()], {"win": lay(self.win), "policy": lay(self.policy)},
                        self.activation, self.get_buffer("scale").cpu().numpy(),
                        self.get_buffer("unbounded").cpu().numpy(), map_name=map_name, metadata=metadata)

    def load_numpy(self, net: ValueNet) -> None:
        """Copy ``net``'s weights in (its policy head too, if it has one); ``ValueError`` if the trunks differ."""
        mine = self.linears()
        if [w.shape for w, _ in net.trunk] != [tuple(m.weight.shape) for m in mine] \
                or net.activation != self.activation:
            raise ValueError(f"network {net!r} has another architecture than {self.activation} "
                             f"{[m.weight.shape[0] for m in mine]}")
        pairs = list(zip(mine, net.trunk)) + [(self.win, net.heads["win"])]
        if "policy" in net.heads:
            pairs.append((self.policy, net.heads["policy"]))
        with torch.no_grad():
            for m, (w, b) in pairs:
                m.weight.copy_(torch.as_tensor(w))
                m.bias.copy_(torch.as_tensor(b))


@dataclass
class Losses:
    """Loss tensors of a batch, plus the numbers reported for it."""

    total: torch.Tensor
    value: torch.Tensor
    policy: torch.Tensor
    outcome_ce: float = 0.0
    winner_hits: int = 0
    policy_hits: int = 0
    logits: torch.Tensor | None = field(default=None, repr=False)


def compute_losses(model: ExItModel, batch: Batch, device: torch.device, value_weight: float,
                   policy_weight: float) -> Losses:
    """Value and policy cross-entropies of a batch (see the module doc)."""
    obs = torch.as_tensor(batch.obs, device=device)
    after = torch.as_tensor(batch.after, device=device)
    logp, logits = model(obs, after)
    value_ce = -(torch.as_tensor(batch.value, device=device) * logp).sum(dim=1).mean()
    seg = torch.as_tensor(batch.seg, device=device)
    col = torch.as_tensor(batch.col, device=device)
    padded = torch.full(batch.pi.shape, float("-inf"), device=device, dtype=logits.dtype)
    padded = padded.index_put((seg, col), logits)
    legal = torch.isfinite(padded)
    logq = torch.log_softmax(padded, dim=1).masked_fill(~legal, 0.0)
    pi = torch.as_tensor(batch.pi, device=device)
    policy_ce = -(pi * logq).sum(dim=1).mean()
    total = value_weight * value_ce + policy_weight * policy_ce
    with torch.no_grad():
        outcome = torch.as_tensor(batch.outcome, device=device)
        outcome_ce = float(-(outcome * logp).sum(dim=1).mean())
        present = obs[:, model.present] > 0
        predicted = logp.masked_fill(~present, float("-inf")).argmax(dim=1)
        winner_hits = int((predicted == outcome.argmax(dim=1)).sum())
        policy_hits = int((padded.argmax(dim=1) == pi.argmax(dim=1)).sum())
    return Losses(total, value_ce, policy_ce, outcome_ce, winner_hits, policy_hits, logits)


# ============================================================ training a generation
@dataclass
class TrainContext:
    """What training generation ``g`` needs besides the arguments."""

    out: Path
    g: int
    device: torch.device
    warm_from: str | None
    progress: bool


def _save_checkpoint(path: Path, model: ExItModel, opt: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), **plain(state)}, buf)
    write_bytes_atomic(path, buf.getvalue())


def _load_checkpoint(path: Path, expect: dict[str, Any]) -> dict[str, Any] | None:
    """The checkpoint at ``path`` if it loads and was written for ``expect`` (generation, settings,
    data, steps); else None, with a warning for a file that is there."""
    if not path.exists():
        return None
    try:
        ck = load_torch_checkpoint(path)  # tensors and plain data only: a crafted file cannot run code
        if not isinstance(ck, dict) or "model" not in ck:
            raise ValueError(f"{path}: not a checkpoint")
    except ValueError as exc:  # truncated, corrupt, or holding other objects (UnsafeCheckpointError)
        warn(f"skipping {exc}; training this generation from its start")
        return None
    found = {k: ck.get(k) for k in expect}
    if found != plain(expect):
        warn(f"skipping {path}: written for other settings or data; training this generation from its start")
        return None
    return ck


class _Interrupted(Exception):
    """Ctrl-C during training, after the checkpoint was saved."""

    def __init__(self, step: int, path: Path) -> None:
        super().__init__(f"interrupted at training step {step}: checkpoint saved to {path}")


def _set_torch(args: argparse.Namespace) -> torch.device:
    torch.set_num_threads(args.torch_threads)
    if args.device == "auto":
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        device = torch.device(args.device)
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cudnn.benchmark = False
    torch.use_deterministic_algorithms(True, warn_only=device.type == "cuda")
    return device


def new_model(args: argparse.Namespace, ctx: TrainContext) -> ExItModel:
    """A freshly seeded model for generation ``ctx.g``, warm-started from ``ctx.warm_from`` if given."""
    torch.manual_seed(int(np.random.SeedSequence([args.seed, ctx.g, 11]).generate_state(1)[0]))
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game(args.map).tables)[1])
    model = ExItModel(scale, unbounded, args.hidden, args.activation, args.dropout)
    if ctx.warm_from is not None:
        model.load_numpy(ValueNet.load(ctx.warm_from))
    return model.to(ctx.device)


def evaluate_positions(model: ExItModel, pos: Positions, idx: np.ndarray, args: argparse.Namespace,
                       device: torch.device) -> dict[str, Any]:
    """Mean losses and hit rates over positions ``idx`` (the model in eval mode)."""
    model.eval()
    sums = {"value_ce": 0.0, "policy_ce": 0.0, "outcome_ce": 0.0, "winner_accuracy": 0.0, "policy_accuracy": 0.0}
    with torch.no_grad():
        for start in range(0, len(idx), args.batch):
            b = idx[start:start + args.batch]
            ls = compute_losses(model, pos.batch(b), device, args.value_weight, args.policy_weight)
            sums["value_ce"] += float(ls.value) * len(b)
            sums["policy_ce"] += float(ls.policy) * len(b)
            sums["outcome_ce"] += ls.outcome_ce * len(b)
            sums["winner_accuracy"] += ls.winner_hits
            sums["policy_accuracy"] += ls.policy_hits
    model.train()
    n = max(len(idx), 1)
    return {"positions": int(len(idx)), **{k: round(v / n, 4) for k, v in sums.items()}}


def target_entropy(pos: Positions, idx: np.ndarray) -> float:
    """Mean entropy of the visit distributions of ``idx``: the least policy cross-entropy possible."""
    total = 0.0
    for i in idx.tolist():
        c = pos.visits(i)[1]
        p = c[c > 0] / c.sum()
        total += float(-(p * np.log(p)).sum())
    return round(total / max(len(idx), 1), 4)


def train_generation(args: argparse.Namespace, ctx: TrainContext) -> dict[str, Any]:
    """Train generation ``ctx.g``'s network on its window, export it and return ``train.json``'s contents."""
    t_start = time.perf_counter()
    out, g = ctx.out, ctx.g
    first = max(0, g - args.window + 1)
    data = load_positions(gen_dir(out, k) / "selfplay" for k in range(first, g + 1))
    if data["positions"] == 0:
        raise ValueError(f"generations {first}-{g} of {out} hold no positions (every game truncated?); "
                         f"raise --max-turns or --games")
    pos = Positions(data, args.map, args.value_target_mix, args.seed)
    val_keys = split_games(data["game_key"], args.val_fraction, args.seed, g)
    is_val = np.isin(data["game_key"], val_keys)
    tr, va = np.flatnonzero(~is_val), np.flatnonzero(is_val)
    per_epoch = max(1, -(-len(tr) // args.batch))
    steps = max(1, int(math.ceil(args.epochs * per_epoch)))
    fixed = checkpoint_fixed(args)
    shards = [Path(p).relative_to(out).as_posix() for p in data["shards"]]
    expect = {"generation": g, "fixed": fixed, "shards": shards, "positions": pos.n, "steps": steps}
    model = new_model(args, ctx)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    ckpt_path = gen_dir(out, g) / "checkpoint.pt"
    step, history, wall0 = 0, [], 0.0
    ck = _load_checkpoint(ckpt_path, expect)
    if ck is not None:
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        step, history, wall0 = ck["step"], ck["history"], ck["wall_s"]

    def batch_at(s: int) -> np.ndarray:  # the same batches whatever the restarts
        perm = np.random.default_rng([args.seed, g, s // per_epoch]).permutation(tr)
        return np.sort(perm[(s % per_epoch) * args.batch:(s % per_epoch + 1) * args.batch])

    def save() -> None:
        _save_checkpoint(ckpt_path, model, opt, dict(expect, step=step, history=history,
                                                     wall_s=wall0 + time.perf_counter() - t_start))

    from tqdm import tqdm

    bar = tqdm(total=steps, initial=step, unit="step", file=sys.stderr, leave=False, disable=not ctx.progress,
               desc=f"gen {g} training")
    window: list[tuple[float, float]] = []
    try:
        while step < steps:
            ls = compute_losses(model, pos.batch(batch_at(step)), ctx.device, args.value_weight, args.policy_weight)
            opt.zero_grad()
            ls.total.backward()
            opt.step()
            step += 1
            window = (window + [(ls.value.item(), ls.policy.item())])[-per_epoch:]
            bar.update()
            if step % per_epoch == 0 or step == steps:
                history.append({"step": step, "value_ce": round(float(np.mean([w[0] for w in window])), 4),
                                "policy_ce": round(float(np.mean([w[1] for w in window])), 4)})
                bar.set_postfix(value=history[-1]["value_ce"], policy=history[-1]["policy_ce"])
            if step % args.checkpoint_every == 0:
                save()
    except KeyboardInterrupt:
        save()
        raise _Interrupted(step, ckpt_path) from None
    finally:
        bar.close()
    save()
    return finish_training(args, ctx, model, pos, tr, va, dict(expect, step=step, history=history,
                                                               wall_s=wall0 + time.perf_counter() - t_start))


def finish_training(args: argparse.Namespace, ctx: TrainContext, model: ExItModel, pos: Positions,
                    tr: np.ndarray, va: np.ndarray, state: dict[str, Any]) -> dict[str, Any]:
    """Metrics, the numpy export (checked against torch) and ``train.json``'s contents."""
    out, g = ctx.out, ctx.g
    model.eval()
    data = pos.data
    games = int(len(np.unique(data["game_key"])))
    meta = {"trainer": "expert_iteration", "generation": g, "seed": args.seed, "positions": pos.n, "games": games,
            "window": [max(0, g - args.window + 1), g], "steps": state["step"]}
    net = model.to_numpy(args.map, meta)
    stem = gen_dir(out, g) / "net"
    net.save(stem)
    loaded = ValueNet.load(stem)
    check = (va if len(va) else tr)[:64]
    b = pos.batch(check)
    with torch.no_grad():
        logp, logits = model(torch.as_tensor(b.obs, device=ctx.device), torch.as_tensor(b.after, device=ctx.device))
    present = b.obs[:, model.present] > 0
    diff_v = float(np.abs(loaded.values(b.obs) - np.where(present, logp.exp().cpu().numpy(), 0.0)).max())
    diff_p = float(np.abs(loaded.policy_logits(b.after) - logits.cpu().numpy()).max())
    if max(diff_v, diff_p) > 1e-3:
        raise RuntimeError(f"{stem}: the numpy export disagrees with torch (max difference {max(diff_v, diff_p):.2g})")
    sample = np.random.default_rng([args.seed, g, 3]).permutation(tr)[:2048]
    metrics = {
        "generation": g, "net": stem.relative_to(out).as_posix(), "net_sha256": file_sha256(stem.with_suffix(".npz")),
        "window": meta["window"], "shards": len(data["shards"]), "games": games, "positions": pos.n,
        "train_positions": int(len(tr)), "val_positions": int(len(va)), "steps": state["step"],
        "warm_start": ctx.warm_from, "device": str(ctx.device), "wall_s": round(state["wall_s"], 1),
        "train": evaluate_positions(model, pos, np.sort(sample), args, ctx.device),
        "val": evaluate_positions(model, pos, va, args, ctx.device) if len(va) else None,
        "policy_target_entropy": target_entropy(pos, tr),
        "history": state["history"],
        "numpy_vs_torch_max_abs_diff": {"win": diff_v, "policy": diff_p},
    }
    write_json_atomic(metrics, gen_dir(out, g) / "train.json")
    return metrics


# ============================================================ gating
def az_spec(stem: str | os.PathLike, simulations: int, args: argparse.Namespace) -> str:
    return (f"az:net={os.fspath(stem)}:simulations={simulations}:c_puct={args.c_puct}:leaf_mix={args.leaf_mix}"
            f":prior_mix=0:max_turns={args.max_turns}")


def gate_lineup(new: str, best: str, n: int) -> list[str]:
    """The gate's line-up: the two specs alternating over the ``n`` seats."""
    return [new if k % 2 == 0 else best for k in range(n)]


def gate_score(result: dict[str, Any], new: str, best: str) -> dict[str, Any]:
    """The new network's share of the wins per seat, with a Wilson interval on the decided games."""
    a, b = result["per_agent"][new], result["per_agent"][best]
    wins_new, wins_best = a["wins"], b["wins"]
    decided = wins_new + wins_best
    if decided == 0:
        return {"score": None, "score_ci95": None, "wins": [wins_new, wins_best], "decided": 0}
    rate_new, rate_best = wins_new / a["seats"], wins_best / b["seats"]
    score = rate_new / (rate_new + rate_best)
    lo, hi = wilson_interval(score * decided, decided)  # a real-valued count of wins is fine
    return {"score": score, "score_ci95": [lo, hi], "wins": [wins_new, wins_best], "decided": decided}


def _agent_summary(result: dict[str, Any], spec: str) -> dict[str, Any]:
    a = result["per_agent"][spec]
    keep = ("games", "wins", "win_rate", "win_rate_ci95", "fair_share", "mean_vp", "mean_margin_best_other",
            "truncated", "ms_per_decision")
    return {k: a[k] for k in keep}


def _drop_agent_caches() -> None:
    """Forget networks and agents cached by file path in this process: a file rewritten since (a
    generation trained again after its files were deleted) must be read again."""
    from concordia_env.agents import az
    from concordia_env.arena import tournament

    for cache in (getattr(az, "_NETS", None), getattr(tournament, "_AGENT_POOL", None)):
        if isinstance(cache, dict):
            cache.clear()


def _eval_seed(args: argparse.Namespace, *key: int) -> int:
    return int(np.random.SeedSequence([args.seed, *key]).generate_state(1)[0] >> 2)


def run_gate(args: argparse.Namespace, out: Path, g: int, best: Expert) -> dict[str, Any]:
    """Gate generation ``g``'s network against ``best`` and play it against the heuristic.

    A stop signal stops the gate even when it comes after an evaluation's last game started (that
    evaluation then completes, and nothing stops it): the gate is played again on ``--resume``."""
    with stop_signals("game") as interrupts:  # the evaluations inside share it
        return _run_gate(args, out, g, best, interrupts.check)


def _run_gate(args: argparse.Namespace, out: Path, g: int, best: Expert, stopped: Callable[[], None]) -> dict[str, Any]:
    from concordia_env.training.evaluation import run_evaluation

    t0 = time.perf_counter()
    d = gen_dir(out, g)
    stem = d / "net"
    n = args.players
    new = az_spec(stem, args.gate_simulations, args)
    common: dict[str, Any] = {"num_players": n, "workers": args.workers, "max_turns": args.max_turns,
                              "progress": not args.no_progress}
    _drop_agent_caches()
    gate: dict[str, Any] | None = None
    accepted = True
    if best.stem is not None:
        old = az_spec(best.stem, args.gate_simulations, args)
        seed = _eval_seed(args, g, 1)
        result = run_evaluation(args.map, gate_lineup(new, old, n), args.gate_deals, seed, out=d / "eval_gate.json",
                                **common)
        stopped()
        gate = {"lineup": result["lineup"], "deals": args.gate_deals, "seed": seed, "games": result["games"],
                "truncated": result["truncated"], "threshold": args.gate_threshold,
                "new": _agent_summary(result, new), "best": _agent_summary(result, old),
                **gate_score(result, new, old)}
        accepted = gate["score"] is not None and gate["score"] >= args.gate_threshold
        gate["accepted"] = accepted
    heuristic: dict[str, Any] = {}
    seed = _eval_seed(args, 2)  # the same deals every generation: the curve compares like with like
    for kind, spec in (("az", new), ("net", f"net:net={os.fspath(stem)}")):
        result = run_evaluation(args.map, [spec] + ["heuristic"] * (n - 1), args.eval_deals, seed,
                                out=d / f"eval_heuristic_{kind}.json", **common)
        stopped()
        heuristic[kind] = dict(_agent_summary(result, spec), deals=args.eval_deals, seed=seed)
    return {"format": RUN_FORMAT + "/gate", "generation": g, "net": stem.relative_to(out).as_posix(),
            "net_sha256": file_sha256(stem.with_suffix(".npz")), "best_before": best.stem,
            "best_before_generation": best.generation, "best_before_sha256": best.sha256, "accepted": accepted,
            "gate": gate, "heuristic": heuristic, "seconds": round(time.perf_counter() - t0, 1)}


# ============================================================ curves
def plot_curves(out: Path, generations: int, threshold: float) -> None:
    """``OUT/curves.png``: losses, gate score and win rates against the heuristic per generation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for g in range(generations):
        tr, gt = read_json(gen_dir(out, g) / "train.json"), read_json(gen_dir(out, g) / "gate.json")
        if tr is not None and gt is not None:
            rows.append((g, tr, gt))
    if not rows:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    gens = [r[0] for r in rows]
    ax = axes[0]
    for part, style in (("train", "-"), ("val", "--")):
        for key, color in (("value_ce", "C0"), ("policy_ce", "C1")):
            ys = [r[1][part][key] if r[1].get(part) else np.nan for r in rows]
            ax.plot(gens, ys, style, color=color, marker="o", label=f"{part} {key}")
    ax.plot(gens, [r[1]["policy_target_entropy"] for r in rows], ":", color="C1", label="visit entropy")
    ax.set(title="losses", xlabel="generation", ylabel="cross-entropy")
    ax.legend(fontsize=7)
    ax = axes[1]
    for g, _, gt in rows:
        if gt["gate"] and gt["gate"]["score"] is not None:
            s, (lo, hi) = gt["gate"]["score"], gt["gate"]["score_ci95"]
            ax.errorbar([g], [s], yerr=[[s - lo], [hi - s]], fmt="o" if gt["accepted"] else "x",
                        color="C2" if gt["accepted"] else "C3", capsize=3)
    ax.axhline(threshold, color="grey", ls="--", lw=1)
    ax.axhline(0.5, color="grey", lw=0.5)
    ax.set(title="gate: new vs best (o accepted, x rejected)", xlabel="generation", ylabel="score", ylim=(0, 1))
    ax = axes[2]
    for kind, color, dx in (("az", "C0", -0.05), ("net", "C4", 0.05)):
        rate = np.array([r[2]["heuristic"][kind]["win_rate"] for r in rows])
        ci = np.array([r[2]["heuristic"][kind]["win_rate_ci95"] for r in rows])
        ax.errorbar(np.array(gens) + dx, rate, yerr=[rate - ci[:, 0], ci[:, 1] - rate], fmt="o-", color=color,
                    capsize=3, label=kind)
    ax.axhline(rows[0][2]["heuristic"]["az"]["fair_share"], color="grey", ls="--", lw=1, label="fair share")
    ax.set(title="win rate vs heuristic", xlabel="generation", ylabel="win rate", ylim=(0, 1))
    ax.legend(fontsize=7)
    for ax in axes:
        ax.set_xticks(gens)
    fig.suptitle(f"expert iteration: {out}")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    write_bytes_atomic(out / "curves.png", buf.getvalue())


# ============================================================ the run
def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``, or None if it is missing or unreadable."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def append_log(out: Path, entry: dict[str, Any]) -> None:
    """Add ``entry`` (with the time) as a line of ``OUT/log.jsonl``; a step done again after its files
    were lost gets a new line: the log is the run's history."""
    path = out / "log.jsonl"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    entry = {"time": datetime.now(timezone.utc).isoformat(timespec="seconds"), **entry}
    write_text_atomic(path, text + json.dumps(entry) + "\n")


def checkpoint_fixed(args: argparse.Namespace) -> dict[str, Any]:
    """The fixed arguments as a training checkpoint records them: those of ``FIXED_DEFAULTS`` only
    when they differ from it, so a checkpoint written before they existed still matches."""
    return {k: vars(args)[k] for k in FIXED_ARGS if k not in FIXED_DEFAULTS or vars(args)[k] != FIXED_DEFAULTS[k]}


def check_run_file(args: argparse.Namespace, out: Path) -> None:
    """Write ``OUT/run.json``, or check a restart against it (``ValueError`` in one line)."""
    path = out / "run.json"
    fixed = {k: vars(args)[k] for k in FIXED_ARGS}
    if path.exists():
        doc = read_json(path)
        if doc is None or doc.get("format") != RUN_FORMAT:
            raise ValueError(f"{path}: not an expert-iteration run file; use another --out")
        if not args.resume:
            raise ValueError(f"{out} holds a run already: add --resume to continue it, or use another --out")
        old = {**FIXED_DEFAULTS, **doc.get("arguments", {})}
        changed = [f"--{k.replace('_', '-')} {old.get(k)!r} -> {fixed[k]!r}" for k in FIXED_ARGS if old.get(k) != fixed[k]]
        if changed:
            raise ValueError(f"{path}: the run was started with other settings ({'; '.join(changed)}); "
                             f"repeat them or use another --out")
        return
    write_json_atomic({"format": RUN_FORMAT, "version": RUN_VERSION, "arguments": fixed,
                       "command": getattr(args, "command", None)}, path)


def selfplay_config(args: argparse.Namespace) -> SelfPlayConfig:
    return SelfPlayConfig(args.map, args.players, args.seed, args.games, args.simulations, args.shard_size,
                          args.max_turns, args.c_puct, args.leaf_mix, args.root_noise, args.root_noise_alpha,
                          args.move_temperature, args.temperature_decisions, teacher_epsilon=args.teacher_epsilon)


def selfplay_expert(args: argparse.Namespace, g: int, best: Expert) -> Expert:
    """Who plays generation ``g``'s self-play: the best network's search, or, with no network yet
    (generation 0 without ``--init-net``), the heuristic-guided MCTS or the heuristic teacher."""
    if g == 0 and best.stem is None and args.teacher == "heuristic":
        return Expert(sha256=HEURISTIC_TEACHER)
    return best


def gate_done(out: Path, g: int, best: Expert) -> dict[str, Any] | None:
    """``gate.json`` of generation ``g`` if it is complete and about the current network and best."""
    doc = read_json(gen_dir(out, g) / "gate.json")
    npz = gen_dir(out, g) / "net.npz"
    if doc is None or not npz.exists() or doc.get("format") != RUN_FORMAT + "/gate":
        return None
    if doc.get("net_sha256") != file_sha256(npz) or doc.get("best_before_sha256") != best.sha256:
        return None
    return doc


def train_done(out: Path, g: int) -> dict[str, Any] | None:
    """``train.json`` of generation ``g`` if its network is there and loads. A network that
    ``train.json`` records but that is missing, truncated or corrupt gets one warning line, and the
    generation is trained again (from its checkpoint, if that is complete: then only the export
    is redone)."""
    doc = read_json(gen_dir(out, g) / "train.json")
    stem = gen_dir(out, g) / "net"
    npz = stem.with_suffix(".npz")
    if doc is None:
        return None
    if not npz.exists() or doc.get("net_sha256") != file_sha256(npz):
        warn(f"{npz}: missing, or not the network train.json records (truncated?); training generation {g} again")
        return None
    try:
        ValueNet.load(stem)
    except (ValueError, FileNotFoundError) as exc:
        warn(f"{' '.join(str(exc).split())}; training generation {g} again")
        return None
    return doc


def warm_source(args: argparse.Namespace, out: Path, g: int, best: Expert) -> str | None:
    if args.warm_start == "none":
        return None
    if g == 0:
        return args.init_net
    return str(gen_dir(out, g - 1) / "net") if args.warm_start == "previous" else best.stem


def copy_best(out: Path, best: Expert) -> None:
    """``OUT/best.npz/.json``: a copy of the best network (npz first, like ``ValueNet.save``)."""
    if best.stem is None:
        return
    for suffix in (".npz", ".json"):
        src, dst = Path(best.stem + suffix), out / f"best{suffix}"
        data = src.read_bytes()
        if not dst.exists() or dst.read_bytes() != data:
            write_bytes_atomic(dst, data)


def run_generation(args: argparse.Namespace, out: Path, g: int, best: Expert, device: torch.device) -> Expert:
    """Every missing step of generation ``g``; returns the best network after it."""
    progress = not args.no_progress
    summary = run_selfplay(selfplay_config(args), out, g, selfplay_expert(args, g, best), args.workers, progress,
                           args.backend, args.address)
    if summary is not None:
        append_log(out, {"generation": g, "step": "selfplay", **summary})
    if train_done(out, g) is None:
        ctx = TrainContext(out, g, device, warm_source(args, out, g, best), progress)
        metrics = train_generation(args, ctx)
        append_log(out, {"generation": g, "step": "train", **{k: v for k, v in metrics.items() if k != "history"}})
    gate = gate_done(out, g, best)
    if gate is None:
        gate = run_gate(args, out, g, best)
        write_json_atomic(gate, gen_dir(out, g) / "gate.json")
        append_log(out, {"generation": g, "step": "gate", **gate})
    if gate["accepted"]:
        best = Expert.of(gen_dir(out, g) / "net", g)
    copy_best(out, best)
    plot_curves(out, g + 1, args.gate_threshold)
    return best


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole loop (module doc); returns a summary."""
    out = Path(args.out)
    if args.resume and not (out / "run.json").exists():
        print(f"note: {out} has no run.json; starting a new run", file=sys.stderr)
    out.mkdir(parents=True, exist_ok=True)
    check_run_file(args, out)
    device = _set_torch(args)
    best = Expert.of(args.init_net, None) if args.init_net else Expert()
    with one_blas_thread():  # inherited by the game workers forked from here (see concordia_env.threads)
        for g in range(args.generations):
            best = run_generation(args, out, g, best, device)
    gates = [read_json(gen_dir(out, g) / "gate.json") or {} for g in range(args.generations)]
    last = gates[-1]
    return {"out": str(out), "generations": args.generations, "best_generation": best.generation,
            "accepted": [bool(x.get("accepted")) for x in gates],
            "last_gate_score": (last.get("gate") or {}).get("score"),
            "last_az_vs_heuristic": last.get("heuristic", {}).get("az", {}).get("win_rate"),
            "last_net_vs_heuristic": last.get("heuristic", {}).get("net", {}).get("win_rate")}


# ============================================================ command line
def _positive(kind: type) -> Any:
    def parse(text: str) -> Any:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
        if not value > 0:
            raise argparse.ArgumentTypeError(f"{text!r} must be > 0")
        return value
    return parse


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must lie in [0, 1]")
    return value


def _widths(text: str) -> list[int]:
    try:
        widths = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of widths") from None
    if not widths or min(widths) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give positive layer widths, e.g. 128 or 256,128")
    return widths


def build_parser() -> argparse.ArgumentParser:
    pos_int, pos_float = _positive(int), _positive(float)
    p = argparse.ArgumentParser(prog=PROG, description=(__doc__ or "").split("\n")[0])
    p.add_argument("--map", required=True, choices=MAP_NAMES)
    p.add_argument("--players", type=int, required=True, help="player count of every game")
    p.add_argument("--out", required=True, help="run directory (see the module doc for its files)")
    p.add_argument("--generations", type=pos_int, default=3, help="generations to reach (a resumed run may raise it)")
    p.add_argument("--games", type=pos_int, default=64, help="self-play games per generation")
    p.add_argument("--simulations", type=pos_int, default=100, help="search simulations per self-play decision")
    p.add_argument("--workers", type=pos_int, default=1, help="processes for self-play and evaluation games")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="self-play games in local processes, or as tasks on a Ray cluster (the ray extra; the run "
                        "directory must be at the same path on every machine); evaluation games stay local")
    p.add_argument("--address", default=None,
                   help="with --backend ray: the cluster's HOST:PORT, ray://HOST:10001 or auto (default: a local "
                        "Ray instance)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="training device")
    p.add_argument("--torch-threads", type=pos_int, default=1, help="torch CPU threads for training")
    p.add_argument("--init-net", default=None, help="a ValueNet (stem) to start from: generation 0's expert "
                                                    "and the first best network")
    p.add_argument("--resume", action="store_true", help="continue the run in --out from its last complete step")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    sp = p.add_argument_group("self-play")
    sp.add_argument("--shard-size", type=pos_int, default=4, help="games per shard file")
    sp.add_argument("--max-turns", type=pos_int, default=400, help="cut a game off after this many card plays")
    sp.add_argument("--c-puct", type=pos_float, default=1.5, help="PUCT exploration constant")
    sp.add_argument("--leaf-mix", type=_fraction, default=0.0,
                    help="weight of the heuristic leaf value blended into the network's (az)")
    sp.add_argument("--root-noise", type=_fraction, default=0.25, help="Dirichlet noise weight at the root")
    sp.add_argument("--root-noise-alpha", type=pos_float, default=0.3, help="Dirichlet concentration")
    sp.add_argument("--move-temperature", type=pos_float, default=1.0,
                    help="temperature of the sampled moves early in a game")
    sp.add_argument("--temperature-decisions", type=int, default=30,
                    help="searched decisions per game that sample their move (then: most visited)")
    sp.add_argument("--teacher", choices=TEACHERS, default=FIXED_DEFAULTS["teacher"],
                    help="generation 0's self-play without --init-net: heuristic-guided MCTS (mcts), or the "
                         "heuristic's own moves and priors (heuristic: much faster; see the module doc)")
    sp.add_argument("--teacher-epsilon", type=float, default=FIXED_DEFAULTS["teacher_epsilon"],
                    help="with --teacher heuristic: share of decisions whose move is sampled from the priors")
    tr = p.add_argument_group("training")
    tr.add_argument("--hidden", type=_widths, default=[128], help="trunk widths, comma-separated")
    tr.add_argument("--activation", default="ReLU", choices=sorted(ACTIVATIONS))
    tr.add_argument("--window", type=pos_int, default=4, help="train on the positions of the last K generations")
    tr.add_argument("--epochs", type=pos_float, default=2.0, help="passes over the window's positions")
    tr.add_argument("--batch", type=pos_int, default=256, help="positions per batch")
    tr.add_argument("--lr", type=pos_float, default=1e-3)
    tr.add_argument("--weight-decay", type=float, default=1e-4, help="AdamW decoupled weight decay")
    tr.add_argument("--dropout", type=_fraction, default=0.0, help="dropout after each hidden layer (training only)")
    tr.add_argument("--value-target-mix", type=_fraction, default=0.0,
                    help="weight of the root search value in the value target (0: the outcome alone)")
    tr.add_argument("--value-weight", type=float, default=1.0)
    tr.add_argument("--policy-weight", type=float, default=1.0)
    tr.add_argument("--warm-start", default="previous", choices=["previous", "best", "none"],
                    help="initial weights of a generation's network")
    tr.add_argument("--val-fraction", type=_fraction, default=0.05, help="share of the window's games held out")
    tr.add_argument("--checkpoint-every", type=pos_int, default=200, help="training steps between checkpoints")
    gt = p.add_argument_group("gating and evaluation")
    gt.add_argument("--gate-deals", type=pos_int, default=20, help="deals (each played in every seat rotation)")
    gt.add_argument("--gate-simulations", type=pos_int, default=50, help="simulations per decision in evaluations")
    gt.add_argument("--gate-threshold", type=_fraction, default=0.55, help="gate score the new network needs")
    gt.add_argument("--eval-deals", type=pos_int, default=20, help="deals against the heuristic per generation")
    return p


def check_args(args: argparse.Namespace) -> None:
    """``ValueError`` in one line for arguments argparse cannot check alone."""
    check_setup_args(args.map, args.players)
    if args.address is not None and args.backend != "ray":
        raise ValueError("--address needs --backend ray")
    if args.backend == "ray":  # Ray missing or its cluster unreachable: one line before any work
        from concordia_env.integrations.ray_backend import check_address, require_ray

        require_ray()
        if args.address is not None:
            check_address(args.address)
    if args.temperature_decisions < 0:
        raise ValueError(f"--temperature-decisions must be >= 0, got {args.temperature_decisions}")
    if not 0.0 <= args.teacher_epsilon <= 1.0:
        raise ValueError(f"--teacher-epsilon must lie in [0, 1], got {args.teacher_epsilon}")
    if args.value_weight < 0 or args.policy_weight < 0 or args.value_weight + args.policy_weight == 0:
        raise ValueError("--value-weight and --policy-weight must be >= 0 and not both 0")
    if args.weight_decay < 0:
        raise ValueError(f"--weight-decay must be >= 0, got {args.weight_decay}")
    for name in ("out", "init_net"):
        if vars(args)[name] and ":" in vars(args)[name]:
            raise ValueError(f"--{name.replace('_', '-')} {vars(args)[name]!r}: a path with ':' cannot be "
                             f"named in an agent spec; use another")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: torch finds no CUDA device (use --device auto or cpu)")
    if args.init_net:
        net = ValueNet.load(args.init_net)  # one-line FileNotFoundError / ValueError naming the file
        if net.map_name not in (None, args.map):
            raise ValueError(f"--init-net {args.init_net}: trained on {net.map_name!r}, not {args.map!r}")
        if args.warm_start != "none" and (net.layer_sizes[1:] != args.hidden or net.activation != args.activation):
            raise ValueError(f"--init-net {args.init_net} is a {net.activation} {net.layer_sizes[1:]} network but "
                             f"--hidden/--activation give {args.activation} {args.hidden}: match them, "
                             f"or pass --warm-start none")
        args.init_net = str(Path(args.init_net).with_suffix("")) if Path(args.init_net).suffix in (".npz", ".json") \
            else args.init_net


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    args.command = f"{PROG} {shlex.join(argv)}"
    try:
        check_args(args)
        with sigterm_as_ctrl_c():
            summary = run(args)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file that could not be written (a full disk): the complete ones are intact
        where = f" {exc.filename}" if exc.filename else ""
        print(f"{PROG}: error: could not write{where}: {exc.strerror or exc}; complete steps are kept: run the "
              f"same command with --resume once there is room", file=sys.stderr)
        return 1
    except _Interrupted as exc:
        print(f"{exc}; complete steps are kept: run the same command with --resume to continue", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("interrupted: complete steps and self-play shards are kept; run the same command with --resume "
              "to continue", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
