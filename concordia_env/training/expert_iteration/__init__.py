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
and one line. Every file is written atomically (:mod:`concordia_env._internal.files`), so a kill or a full
disk never leaves a truncated file under its final name; a write that fails (a full disk, a
file size limit) stops the run with one line naming the file and status 1, and ``--resume``
goes on once there is room. ``--teacher`` and ``--teacher-epsilon`` are fixed arguments too; a
``run.json`` written before they existed counts as ``--teacher mcts --teacher-epsilon 0.1``.

The modules
-----------
:mod:`.settings` (fixed arguments, ``run.json``, the run's paths), :mod:`.seats` and
:mod:`.selfplay` (the recording players, self-play games and their workers), :mod:`.shards` (the
shard format), :mod:`.data` (targets and batches), :mod:`.model` (the torch model),
:mod:`.losses` and :mod:`.train` (training a generation), :mod:`.gate`, :mod:`.plots`,
:mod:`.loop` (the generations and resuming) and :mod:`.cli` (the command line; ``__main__``).
This package re-exports their names; scripts and tests that replace ``compute_losses`` or
``_selfplay_task`` here replace the function the run calls.
"""

from __future__ import annotations

from concordia_env import engine as E
from concordia_env._internal.files import write_json_atomic

from .cli import _fraction, _positive, _widths, build_parser, check_args, main
from .data import Batch, Positions, split_games, to_relative, value_targets
from .gate import _agent_summary, _drop_agent_caches, _eval_seed, _run_gate, az_spec, gate_lineup, gate_score, run_gate
from .loop import append_log, copy_best, gate_done, run, run_generation, train_done, warm_source
from .losses import Losses, compute_losses, evaluate_positions, target_entropy
from .model import ExItModel
from .plots import plot_curves
from .seats import (
    _NET_CACHE,
    EXPLORE_STREAM,
    PRIOR_SCALE,
    TEACHER_VALUE_TEMPERATURE,
    RecordingSeat,
    Row,
    TeacherSeat,
    _expert_net,
    _RecordingSeat,
    make_expert,
)
from .selfplay import _selfplay_pool, _selfplay_task, expert_name, game_seed, play_selfplay_game, run_selfplay
from .settings import (
    DATA_VERSION,
    FIXED_ARGS,
    FIXED_DEFAULTS,
    HEURISTIC_EXPERT,
    HEURISTIC_TEACHER,
    PROG,
    RUN_FORMAT,
    RUN_VERSION,
    TEACHERS,
    Expert,
    SelfPlayConfig,
    check_run_file,
    checkpoint_fixed,
    file_sha256,
    gen_dir,
    read_json,
    selfplay_config,
    selfplay_expert,
    shard_games,
    shard_path,
    warn,
)
from .shards import GAME_KEYS, POSITION_KEYS, VISIT_KEYS, load_positions, read_shard, shard_meta, shard_ok, write_shard
from .train import (
    TrainContext,
    _Interrupted,
    _load_checkpoint,
    _save_checkpoint,
    _set_torch,
    finish_training,
    new_model,
    train_generation,
)

#: every name of the single module this package was, private ones included (tests use some)
__all__ = [
    "E", "write_json_atomic",
    # settings
    "PROG", "RUN_FORMAT", "RUN_VERSION", "DATA_VERSION", "FIXED_ARGS", "FIXED_DEFAULTS", "HEURISTIC_EXPERT",
    "HEURISTIC_TEACHER", "TEACHERS", "SelfPlayConfig", "Expert", "gen_dir", "shard_path", "shard_games", "warn",
    "file_sha256", "read_json", "checkpoint_fixed", "check_run_file", "selfplay_config", "selfplay_expert",
    # self-play
    "PRIOR_SCALE", "TEACHER_VALUE_TEMPERATURE", "EXPLORE_STREAM", "_NET_CACHE", "_expert_net", "make_expert", "Row",
    "_RecordingSeat", "RecordingSeat", "TeacherSeat", "expert_name", "game_seed", "play_selfplay_game", "_selfplay_task",
    "_selfplay_pool", "run_selfplay",
    # shards and training data
    "POSITION_KEYS", "VISIT_KEYS", "GAME_KEYS", "shard_meta", "write_shard", "read_shard", "shard_ok",
    "load_positions", "to_relative", "value_targets", "Batch", "Positions", "split_games",
    # model, losses, training
    "ExItModel", "Losses", "compute_losses", "evaluate_positions", "target_entropy", "TrainContext",
    "_save_checkpoint", "_load_checkpoint", "_Interrupted", "_set_torch", "new_model", "train_generation",
    "finish_training",
    # gate and curves
    "az_spec", "gate_lineup", "gate_score", "_agent_summary", "_drop_agent_caches", "_eval_seed", "run_gate",
    "_run_gate", "plot_curves",
    # the loop and the command line
    "append_log", "gate_done", "train_done", "warm_source", "copy_best", "run_generation", "run", "_positive",
    "_fraction", "_widths", "build_parser", "check_args", "main",
]
