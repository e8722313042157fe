"""Train one MaskablePPO policy for a map that plays any seat of any player count the map allows.

Example (the command behind the released Imperium policy is in docs/training.md)::

    python -m concordia_env.training.train_ppo --map imperium --total-steps 200000 --out runs/imperium

How it trains
-------------
Every environment is an :class:`concordia_env.training.selfplay.SingleLearnerEnv`: the learner
takes one seat of a game (random seat and player count per episode unless
``--players`` / ``--seat`` fix them); the other seats are played inside
``step()`` by the opponent pool (``--opponents``: random, heuristic, and frozen
past checkpoints of the learner), so the learner always receives its own
end-of-game reward. ``--n-envs`` such environments are stepped as one
``DummyVecEnv`` (``--vec subproc``: one process each); sb3-contrib's
``MaskablePPO`` asks them for ``action_masks()`` and never samples an illegal
move.

What a run writes (``--out DIR``)
---------------------------------
* ``config.json``: every argument, and the versions the run used;
* ``checkpoints/step_<N>.zip`` every ``--checkpoint-every`` steps; each checkpoint
  also joins the opponent pool as a frozen ``"self"`` opponent;
* ``eval/``: ``MaskableEvalCallback`` results against the HeuristicAgent
  (``evaluations.npz``) and ``best_model.zip``;
* ``logs/``: TensorBoard events and ``progress.csv`` (learning curve: reward,
  win rates against each opponent kind in training, evaluation win rate);
* ``final.zip`` (full model, to resume) and ``policy.zip`` (the same policy with
  the optimizer state dropped: what ``--release`` copies and ``PolicyAgent`` loads).

``--release X.zip`` copies ``policy.zip`` to ``X.zip`` and writes its actor beside it
as plain numpy weights, ``X.npz`` + ``X.json`` (what the ``ppo`` agent plays without
torch; :mod:`concordia_env.training.export_policy` makes the same pair from any zip).

Progress
--------
With ``rich`` and ``tqdm`` installed (both in the ``train`` extra) a progress bar shows the steps;
without them, or with ``--no-progress``, one line per rollout on stdout says the step count, the
speed, the time left and the win rates of that rollout's games, so a long run is never silent.

A new run and its directory
---------------------------
Everything that can fail before training (the arguments, the optional packages, the
environments, the model) is checked before the run directory is written, so a run that cannot
start leaves nothing behind. A new run (without ``--resume``) refuses a directory that already
holds a run (its ``config.json`` or a checkpoint): one line naming it and what to do, status 2,
nothing changed; ``--resume DIR`` continues that run instead.

Resuming, and what survives what
--------------------------------
``--resume CHECKPOINT.zip`` continues a run: the model, its optimizer and step
count come from the file, the opponent pool is refilled from the run's newest
readable checkpoints (up to the resumed step), and ``progress.csv`` and
``evaluations.npz`` keep their rows up to that step and go on from there.
``--resume RUN_DIR`` resumes from the run's newest readable checkpoint
(``final.zip`` or ``checkpoints/step_*.zip``, by the step count each records);
``--out`` defaults to that directory. ``--total-steps`` is always the run's
*total*: a resumed run trains from the checkpoint's step count up to
``--total-steps`` (not that many more steps), so the command that started a run,
with ``--resume RUN_DIR`` added, finishes it; a checkpoint at or past the total
only gets its final files written.

Every file of a run (checkpoints, ``final.zip``, ``policy.zip``, the release,
``config.json``, ``wall_time.json``, ``progress.csv``, ``evaluations.npz``,
``best_model.zip``) is written to a temporary file in its own folder, fsynced
and renamed into place (:mod:`concordia_env.files`), so a reader or a resume
sees the previous file or the complete new one:

* Ctrl-C saves ``checkpoints/step_<N>.zip`` of the moment and exits with
  status 130 and one line (the partial rollout is dropped);
* a kill loses the steps since the last checkpoint; a temporary file it leaves
  is removed by the next run in the directory;
* a failed write (full disk, file size limit) stops the run with one line and
  status 1; the files written before are intact;
* a checkpoint that is truncated or corrupt (every zip member is checked
  against its CRC) is skipped with a one-line warning when a run directory is
  resumed or the pool refilled; named explicitly in ``--resume`` it is an
  error: one line, status 2.
"""

from __future__ import annotations

import argparse
import csv
import importlib
import io
import json
import platform
import re
import shlex
import signal
import sys
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.policy import TRAIN_EXTRA_INSTALL, moved_class_objects  # torch is imported lazily there
from ..arena.pools import sigterm_as_ctrl_c
from ..data import MAP_NAMES
from ..files import write_bytes_atomic
from ..rewards import REWARD_MODES
from .selfplay import TRAINING_MAX_TURNS, FrozenPolicy, OpponentPool, SingleLearnerEnv, parse_weights

PROG = "python -m concordia_env.training.train_ppo"
DEFAULT_OPPONENTS = "random=0.4,heuristic=0.1,self=0.5"
#: a periodic (or Ctrl-C) checkpoint of the run directory
CHECKPOINT_NAME = re.compile(r"step_(\d+)\.zip")
#: the temporary files :func:`concordia_env.files.write_bytes_atomic` writes beside their target
TEMPORARY_NAME = re.compile(r"\..+\.[^.]+\.tmp")


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed; the message names the file and the problem in one line."""


class SaveError(OSError):
    """A file of the run could not be written (a full disk, a file size limit); the message names it."""


class Interrupted(Exception):
    """Ctrl-C during training; the message says what was saved."""


class RunExists(ValueError):
    """A new run's ``--out`` already holds a run; the message says which and what to do, in one line."""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be >= 1")
    return value


def int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in text.replace("-", ",").split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None
    if "-" in text:  # a range: 2-5
        if len(values) != 2 or values[0] > values[1]:
            raise argparse.ArgumentTypeError(f"{text!r} is not a range like 2-5")
        values = list(range(values[0], values[1] + 1))
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def opponent_weights(text: str) -> str:
    try:
        parse_weights(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("game and opponents")
    g.add_argument("--map", required=True, choices=MAP_NAMES, help="board to train on")
    g.add_argument("--players", type=int_list, default=None,
                   help="player counts drawn per episode, e.g. 2,3 or 2-4 (default: all the map allows)")
    g.add_argument("--seat", type=int, default=None, help="fix the learner's seat (default: random per episode)")
    g.add_argument("--opponents", type=opponent_weights, default=DEFAULT_OPPONENTS,
                   help="weights of the opponent kinds random, heuristic, self (frozen checkpoints)")
    g.add_argument("--pool-size", type=positive_int, default=10, help="frozen checkpoints kept as opponents")
    g.add_argument("--reward", choices=REWARD_MODES, default="rank", help="end-of-game reward")
    g.add_argument("--shaping", type=float, default=1.0,
                   help="weight of the potential-based VP-lead shaping (0: terminal reward only)")
    g.add_argument("--max-turns", type=int, default=TRAINING_MAX_TURNS, help="truncate games after this many card plays")

    g = p.add_argument_group("run")
    g.add_argument("--total-steps", type=positive_int, default=1_000_000,
                   help="learner decisions of the whole run; with --resume, training goes on from the "
                        "checkpoint's step count up to this total (not this many more)")
    g.add_argument("--out", type=Path, default=None,
                   help="run directory (default: the --resume directory, else runs/<map>-seed<seed>)")
    g.add_argument("--seed", type=int, default=0, help="seeds torch, the environments and the opponents")
    g.add_argument("--n-envs", type=positive_int, default=8, help="environments stepped together")
    g.add_argument("--vec", choices=("dummy", "subproc"), default="dummy",
                   help="dummy: all envs in this process; subproc: one process per env")
    g.add_argument("--checkpoint-every", type=positive_int, default=100_000,
                   help="steps between checkpoints (each joins the opponent pool)")
    g.add_argument("--eval-every", type=positive_int, default=100_000, help="steps between evaluations")
    g.add_argument("--eval-episodes", type=positive_int, default=20,
                   help="games per evaluation against the HeuristicAgent")
    g.add_argument("--resume", type=Path, default=None,
                   help="checkpoint .zip to continue from (an unreadable one is an error), or a run "
                        "directory: its newest readable checkpoint, unreadable ones skipped with a warning")
    g.add_argument("--release", type=Path, default=None,
                   help="also copy the final policy here (X.zip) and write its numpy export beside it "
                        "(X.npz + X.json, what the ppo agent plays), e.g. training/release/ppo_imperium.zip")
    g.add_argument("--torch-threads", type=positive_int, default=1, help="torch CPU threads")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress bar: one line per rollout on stdout instead")
    g.add_argument("--verbose", type=int, default=0, choices=(0, 1, 2), help="sb3 verbosity")

    g = p.add_argument_group("MaskablePPO hyperparameters")
    g.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    g.add_argument("--n-steps", type=positive_int, default=512, help="rollout length per env")
    g.add_argument("--batch-size", type=positive_int, default=512, help="minibatch size")
    g.add_argument("--n-epochs", type=positive_int, default=4, help="passes over each rollout")
    g.add_argument("--gamma", type=float, default=0.995, help="discount")
    g.add_argument("--gae-lambda", type=float, default=0.95, help="GAE lambda")
    g.add_argument("--clip-range", type=float, default=0.2, help="PPO clip range")
    g.add_argument("--ent-coef", type=float, default=0.01, help="entropy bonus")
    g.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight")
    g.add_argument("--net-arch", type=int_list, default=[128, 128],
                   help="hidden layer sizes of the policy and of the value MLP")
    return p


def check_args(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Errors the argument types cannot catch, reported like argparse's own."""
    from concordia_env.data import load_map

    allowed = list(load_map(args.map).players)
    if args.players is not None and not set(args.players) <= set(allowed):
        parser.error(f"--players {args.players}: {args.map} is played by {allowed} players")
    counts = args.players or allowed
    if args.seat is not None and not 0 <= args.seat < min(counts):
        parser.error(f"--seat {args.seat} does not exist in a {min(counts)}-player game")
    if args.shaping < 0:
        parser.error("--shaping must be >= 0")
    if args.max_turns < 0:
        parser.error("--max-turns must be >= 0")
    if args.n_steps * args.n_envs < args.batch_size:
        parser.error(f"--batch-size {args.batch_size} exceeds a rollout of "
                     f"--n-steps x --n-envs = {args.n_steps * args.n_envs} steps")
    if args.resume is not None and not args.resume.exists():
        parser.error(f"--resume {args.resume}: no such file or run directory")
    for name in ("lr", "gamma", "gae_lambda", "clip_range"):
        if not getattr(args, name) > 0:
            parser.error(f"--{name.replace('_', '-')} must be > 0")


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ------------------------------------------------------------ checkpoints: written atomically, read with care
def write_file(path: Path, data: bytes) -> None:
    """:func:`concordia_env.files.write_bytes_atomic`, with a ``SaveError`` that names the file."""
    try:
        write_bytes_atomic(path, data)
    except OSError as exc:
        raise SaveError(f"could not write {path}: {exc.strerror or exc}") from None


def save_model(model: Any, path: Path) -> Path:
    """Save ``model`` to ``path`` (``.zip`` added if missing) atomically: sb3 writes the zip into
    memory, then :func:`concordia_env.files.write_bytes_atomic` puts it in place, so a kill or a
    full disk during the save leaves the previous file, never a truncated one (sb3's own
    ``save(path)`` writes in place). ``SaveError`` naming the file if the write fails."""
    path = path if path.suffix == ".zip" else path.with_suffix(".zip")
    buf = io.BytesIO()
    model.save(buf)
    write_file(path, buf.getvalue())
    return path


def slim_save(model: Any, path: Path) -> Path:
    """Save ``model`` without its optimizer state (Adam's moments triple the file and
    inference never uses them); the file loads with ``MaskablePPO.load`` as usual."""
    policy = model.policy
    kept = policy.optimizer
    policy.optimizer = policy.optimizer_class(policy.parameters(), lr=0.0, **policy.optimizer_kwargs)
    try:
        return save_model(model, path)
    finally:
        policy.optimizer = kept


def checkpoint_step(path: Path) -> int:
    """The step count checkpoint ``path`` records, after checking every member of the zip against its
    CRC: a file cut short (a kill or a full disk while something else wrote it, a partial copy)
    fails here, before torch unpickles anything. ``CheckpointError`` otherwise."""
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
            names = set(z.namelist())
            data = json.loads(z.read("data")) if bad is None and "data" in names else {}
    except Exception as exc:  # noqa: BLE001 - BadZipFile, zlib.error, EOFError, OSError...: all "unreadable"
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({_one_line(exc)})") from None
    if bad is not None:
        raise CheckpointError(f"{path}: corrupt checkpoint (member {bad} fails its CRC check)")
    missing = sorted({"data", "policy.pth"} - names)
    if missing:
        raise CheckpointError(f"{path}: not a stable-baselines3 model (it lacks {', '.join(missing)})")
    steps = data.get("num_timesteps") if isinstance(data, dict) else None
    if not isinstance(steps, int) or steps < 0:
        raise CheckpointError(f"{path}: the model records no step count (num_timesteps {steps!r})")
    return steps


def load_checkpoint(path: Path, env: Any = None) -> Any:
    """The MaskablePPO model of checkpoint ``path`` (bound to ``env`` if given); ``CheckpointError``
    in one line for a file that is unreadable or does not load (another map's model, say)."""
    from sb3_contrib import MaskablePPO

    checkpoint_step(path)
    try:
        # (a zip of the earlier layout names its features extractor agents.nets.ObservationScaler)
        return MaskablePPO.load(path, env=env, device="cpu", custom_objects=moved_class_objects(path))
    except Exception as exc:  # noqa: BLE001 - torch and sb3 fail in many ways; the message says how
        raise CheckpointError(f"{path}: does not load as a MaskablePPO model ({_one_line(exc)})") from None


def checkpoints_of(run: Path) -> list[tuple[int, Path]]:
    """``(step, path)`` of the periodic checkpoints in ``run/checkpoints``, oldest first (by the step in the name)."""
    found = []
    for path in (run / "checkpoints").glob("step_*.zip"):
        match = CHECKPOINT_NAME.fullmatch(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def resume_candidates(resume: Path) -> list[Path]:
    """The checkpoints ``--resume`` may continue from, best first. A file: itself, which must be
    readable (else ``CheckpointError``). A run directory: its readable checkpoints (``final.zip``,
    ``checkpoints/step_*.zip``), newest first by the step count each records; an unreadable one
    is skipped with a one-line warning, and ``CheckpointError`` if none is left."""
    if not resume.is_dir():
        checkpoint_step(resume)
        return [resume]
    found = []
    for path in [resume / "final.zip"] + [p for _, p in checkpoints_of(resume)]:
        if not path.is_file():
            continue
        try:
            found.append((checkpoint_step(path), path.name == "final.zip", path))
        except CheckpointError as exc:
            warn(f"skipping {exc}")
    if not found:
        raise CheckpointError(f"{resume}: no readable checkpoint (final.zip or checkpoints/step_*.zip) to resume")
    return [path for *_, path in sorted(found, reverse=True)]


def resume_model(candidates: list[Path], env: Any, explicit: bool) -> Any:
    """The model of the first candidate that loads; with a run directory (not ``explicit``) a
    checkpoint that does not load is skipped with a warning, like an unreadable one."""
    for path in candidates:
        try:
            model = load_checkpoint(path, env)
        except CheckpointError as exc:
            if explicit or path == candidates[-1]:
                raise
            warn(f"skipping {exc}")
            continue
        print(f"resuming from {path} at step {model.num_timesteps}", file=sys.stderr)
        return model
    raise AssertionError("resume_candidates returns at least one path")


def remove_stale_temporaries(out: Path) -> None:
    """Delete the temporary files a killed save left in the run directory (it is this run's alone)."""
    for folder in (out, out / "checkpoints", out / "eval", out / "logs"):
        for path in folder.glob(".*.tmp"):
            if TEMPORARY_NAME.fullmatch(path.name) and path.is_file():
                path.unlink(missing_ok=True)


# ------------------------------------------------------------ logs and evaluations that survive a resume
def read_progress(path: Path, until: int) -> tuple[list[str], list[dict[str, str]]]:
    """Columns and rows of an earlier ``progress.csv`` logged at no more than ``until`` steps (the
    rows of steps a resume goes back over are dropped); an unreadable file is started afresh."""
    if not path.is_file():
        return [], []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            keys = list(reader.fieldnames or [])
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        warn(f"{path}: unreadable ({_one_line(exc)}); starting it afresh")
        return [], []

    def step(row: dict[str, str]) -> float:
        try:
            return float(row.get("time/total_timesteps") or "nan")
        except ValueError:
            return float("nan")

    kept = [{k: v for k, v in row.items() if k is not None} for row in rows if not step(row) > until]
    return keys, kept


def progress_csv(path: Path, resumed_at: int | None) -> Any:
    """sb3 logger output for ``progress.csv`` that rewrites the whole file atomically at every dump.

    sb3's own CSV output opens the file with ``"w+"`` (a resume wiped the curve of the steps
    before it) and rewrites it in place when a column appears; this one keeps the rows up to the
    resumed step and is never seen half-written. A row per rollout makes the rewrite cheap."""
    from stable_baselines3.common.logger import KVWriter, filter_excluded_keys

    class AtomicCSV(KVWriter):
        def __init__(self) -> None:
            self.keys, self.rows = read_progress(path, resumed_at) if resumed_at is not None else ([], [])

        def write(self, key_values: dict[str, Any], key_excluded: dict[str, tuple[str, ...]], step: int = 0) -> None:
            values = filter_excluded_keys(key_values, key_excluded, "csv")
            self.keys += sorted(k for k in values if k not in self.keys)
            self.rows.append({k: "" if v is None else str(v) for k, v in values.items()})
            text = io.StringIO()
            writer = csv.DictWriter(text, self.keys, restval="", lineterminator="\n")
            writer.writeheader()
            writer.writerows(self.rows)
            write_file(path, text.getvalue().encode())

        def close(self) -> None:
            pass

    return AtomicCSV()


def make_logger(args: argparse.Namespace, out: Path, resumed_at: int | None) -> Any:
    """The run's sb3 logger: ``logs/progress.csv`` (atomic, see :func:`progress_csv`), TensorBoard
    events (a new file per session, so nothing is overwritten) and, with ``--verbose``, stdout."""
    from stable_baselines3.common.logger import Logger, make_output_format

    folder = out / "logs"
    folder.mkdir(parents=True, exist_ok=True)
    formats = [progress_csv(folder / "progress.csv", resumed_at), make_output_format("tensorboard", str(folder))]
    if args.verbose:
        formats.append(make_output_format("stdout", str(folder)))
    return Logger(folder=str(folder), output_formats=formats)


def read_evaluations(path: Path, until: int) -> dict[str, list]:
    """The evaluations of an earlier ``evaluations.npz`` made at no more than ``until`` steps, as
    the lists sb3's ``EvalCallback`` keeps; an unreadable file is started afresh with a warning."""
    empty: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": [], "successes": []}
    if not path.is_file():
        return empty
    try:
        with np.load(path, allow_pickle=False) as z:
            found = {k: z[k].tolist() for k in empty if k in z.files}
        keep = [i for i, t in enumerate(found["timesteps"]) if t <= until]
        kept = {k: [found[k][i] for i in keep] if len(found.get(k, [])) == len(found["timesteps"]) else []
                for k in empty}
    except Exception as exc:  # noqa: BLE001 - a damaged npz fails in many ways
        warn(f"{path}: unreadable ({_one_line(exc)}); starting it afresh")
        return empty
    return kept


# ------------------------------------------------------------ environments and callbacks
def make_env(args: argparse.Namespace, opponents: str, num_players: list[int] | None = None) -> SingleLearnerEnv:
    return SingleLearnerEnv(args.map, num_players=num_players or args.players, learner_seat=args.seat,
                            opponents=OpponentPool(opponents, args.pool_size), reward=args.reward,
                            shaping=args.shaping, max_turns=args.max_turns)


def _env_factory(args: argparse.Namespace, opponents: str, worker: bool = False):
    from stable_baselines3.common.monitor import Monitor

    def build() -> Any:
        if worker:  # a SubprocVecEnv process: Ctrl-C is the trainer's, which saves, then closes the workers
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        return Monitor(make_env(args, opponents), info_keywords=("is_success", "opponent", "num_players"))

    return build


def build_callbacks(args: argparse.Namespace, out: Path, vec_env: Any, resumed_at: int | None = None) -> list[Any]:
    from stable_baselines3.common.callbacks import BaseCallback

    class PoolCheckpoint(BaseCallback):
        """Every ``--checkpoint-every`` steps: save a checkpoint and add it to every env's pool."""

        def __init__(self) -> None:
            super().__init__()
            self.next_at = 0

        def _on_training_start(self) -> None:  # (num_timesteps is only known from here on a resume)
            self.next_at = (self.num_timesteps // args.checkpoint_every + 1) * args.checkpoint_every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next_at:
                self.next_at += args.checkpoint_every
                path = save_model(self.model, out / "checkpoints" / f"step_{self.num_timesteps}.zip")
                vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(self.model.policy, path.stem))
            return True

    class Outcomes(BaseCallback):
        """Logs, per rollout, the learner's win rate and VP against each opponent kind."""

        def __init__(self) -> None:
            super().__init__()
            self.games: list[dict] = []

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "opponent" in info:
                    self.games.append(info)
            return True

        def _on_rollout_end(self) -> None:
            for kind in ("random", "heuristic", "self"):
                games = [g for g in self.games if g["opponent"] == kind]
                if games:
                    self.logger.record(f"selfplay/win_rate_vs_{kind}", float(np.mean([g["is_success"] for g in games])))
                    self.logger.record(f"selfplay/vp_vs_{kind}", float(np.mean([g["vp"] for g in games])))
                    self.logger.record(f"selfplay/games_vs_{kind}", len(games))
            self.logger.record("selfplay/snapshots", int(vec_env.env_method("num_snapshots", indices=0)[0]))
            self.games = []

    return [PoolCheckpoint(), Outcomes(), evaluation_callback(args, out, resumed_at)]


def progress_bar_problem() -> str | None:
    """Why sb3's progress bar cannot be shown (``None``: it can): it needs ``rich`` and ``tqdm``,
    which the ``train`` extra installs but an install of torch and sb3-contrib alone may lack."""
    missing = []
    for name in ("rich", "tqdm"):
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return None
    return f"no progress bar: it needs {' and '.join(missing)} (pip install {' '.join(missing)}, or the train extra)"


def format_duration(seconds: float) -> str:
    """``"1 h 02 min"``, ``"3 min 05 s"``, ``"42 s"``: short enough for a line per rollout."""
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600} h {s % 3600 // 60:02d} min"
    if s >= 60:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s} s"


def rollout_line(step: int, total: int, started_at: int, elapsed: float, wins: dict[str, tuple[int, int]]) -> str:
    """The line printed per rollout without a progress bar: steps, speed, time left, win rates.

    ``started_at`` is the step count this process started training from (a resume's checkpoint), ``wins`` maps an
    opponent kind to (games won, games played) in this rollout."""
    done = step - started_at
    speed = done / elapsed if elapsed > 0 else 0.0
    left = format_duration((total - step) / speed) if speed > 0 and step < total else "0 s"
    text = (f"step {step:,}/{total:,} ({100 * step / total:.0f}%), {speed:,.0f} steps/s, "
            f"{format_duration(elapsed)} elapsed, about {left} left")
    rates = [f"{kind} {won}/{played}" for kind, (won, played) in wins.items() if played]
    return text + (f"; wins this rollout vs {', '.join(rates)}" if rates else "")


def rollout_lines(total: int) -> Any:
    """A callback printing :func:`rollout_line` on stdout at the end of every rollout (flushed, so a
    log file or a pipe sees it at once)."""
    from stable_baselines3.common.callbacks import BaseCallback

    class RolloutLines(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.start, self.started_at = 0.0, 0
            self.wins: dict[str, list[int]] = {}

        def _on_training_start(self) -> None:
            self.start, self.started_at = time.time(), int(self.num_timesteps)

        def _on_step(self) -> bool:
            for info, done in zip(self.locals["infos"], self.locals["dones"]):
                if done and "opponent" in info:
                    won_played = self.wins.setdefault(info["opponent"], [0, 0])
                    won_played[0] += int(bool(info.get("is_success")))
                    won_played[1] += 1
            return True

        def _on_rollout_end(self) -> None:
            wins = {kind: (w[0], w[1]) for kind, w in sorted(self.wins.items())}
            print(rollout_line(int(self.num_timesteps), total, self.started_at, time.time() - self.start, wins),
                  flush=True)
            self.wins = {}

    return RolloutLines()


def evaluation_callback(args: argparse.Namespace, out: Path, resumed_at: int | None) -> Any:
    """The periodic evaluation against the HeuristicAgent (``eval/``)."""
    from sb3_contrib.common.maskable.callbacks import MaskableEvalCallback
    from stable_baselines3.common.vec_env import DummyVecEnv

    folder = out / "eval"

    class Evaluation(MaskableEvalCallback):
        """``MaskableEvalCallback`` writing ``evaluations.npz`` and ``best_model.zip`` atomically (sb3
        writes both in place), and keeping, on a resume, the evaluations made up to the resumed step
        (sb3 would start the file afresh) and the best mean reward among them."""

        def __init__(self, eval_env: Any) -> None:
            super().__init__(eval_env, n_eval_episodes=args.eval_episodes,
                             eval_freq=max(args.eval_every // args.n_envs, 1), log_path=None,
                             best_model_save_path=None, deterministic=True, verbose=0)
            if resumed_at is not None:
                kept = read_evaluations(folder / "evaluations.npz", resumed_at)
                self.evaluations_timesteps, self.evaluations_results = kept["timesteps"], kept["results"]
                self.evaluations_length, self.evaluations_successes = kept["ep_lengths"], kept["successes"]
                if self.evaluations_results:
                    self.best_mean_reward = max(float(np.mean(r)) for r in self.evaluations_results)

        def _on_step(self) -> bool:
            buffer = io.BytesIO()
            self.log_path = buffer  # type: ignore[assignment]  # sb3 hands it to np.savez, which takes a file
            best = self.best_mean_reward
            try:
                go_on = super()._on_step()
            finally:
                self.log_path = None
            if buffer.getvalue():
                write_file(folder / "evaluations.npz", buffer.getvalue())
            if self.best_mean_reward > best:
                save_model(self.model, folder / "best_model.zip")
            return go_on

    # one evaluation env in this process whatever --vec is: sb3 warns about the mismatch, harmlessly
    warnings.filterwarnings("ignore", message="Training and eval env are not of the same type")
    eval_env = DummyVecEnv([_env_factory(args, "heuristic=1")])
    eval_env.seed(args.seed + 10_000)  # episodes of their own, the same in every run with this seed
    return Evaluation(eval_env)


def refill_pool(out: Path, vec_env: Any, pool_size: int, until: int | None = None) -> int:
    """Load the run's newest ``pool_size`` readable checkpoints of at most ``until`` steps into the
    opponent pools (on resume); an unreadable one is skipped with a one-line warning."""
    candidates = [(step, path) for step, path in checkpoints_of(out) if until is None or step <= until]
    loaded: list[tuple[Path, Any]] = []
    for _, path in reversed(candidates):
        if len(loaded) == pool_size:
            break
        try:
            loaded.append((path, load_checkpoint(path)))
        except CheckpointError as exc:
            warn(f"skipping {exc} (not added to the opponent pool)")
    for path, model in reversed(loaded):  # oldest first: the pool drops its oldest
        vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(model.policy, path.stem))
    return len(loaded)


def versions() -> dict[str, str]:
    import gymnasium
    import sb3_contrib
    import stable_baselines3
    import torch

    return {"python": platform.python_version(), "numpy": np.__version__, "torch": torch.__version__,
            "gymnasium": gymnasium.__version__, "stable_baselines3": stable_baselines3.__version__,
            "sb3_contrib": sb3_contrib.__version__, "platform": platform.platform()}


# ------------------------------------------------------------ the run
def run_directory(args: argparse.Namespace) -> Path:
    """``--out``, else the ``--resume`` run directory, else ``runs/<map>-seed<seed>``."""
    if args.out is not None:
        return Path(args.out)
    if args.resume is not None and args.resume.is_dir():
        return Path(args.resume)
    return Path("runs") / f"{args.map}-seed{args.seed}"


def existing_run(out: Path) -> str | None:
    """What in ``out`` shows an earlier run (``None``: nothing, the directory may be used for a new one)."""
    found = [name for name in ("config.json", "final.zip", "policy.zip") if (out / name).is_file()]
    found += [f"checkpoints/{p.name}" for _, p in checkpoints_of(out)][:1]
    return ", ".join(found) or None


def check_new_run_directory(out: Path) -> None:
    """``RunExists`` if a new run (no ``--resume``) would write into an earlier run's directory: its
    checkpoints, logs and evaluations would mix with the new run's, and a later ``--resume`` would
    pick up the old checkpoints as if they were the new run's."""
    found = existing_run(out)
    if found is None:
        return
    if resume_readable(out):
        advice = f"continue it with --resume {out}, or choose another --out"
    else:  # a run stopped before its first checkpoint: nothing to resume
        advice = "it has no checkpoint to resume: delete it or choose another --out"
    raise RunExists(f"--out {out} already holds a run ({found}); {advice}")


def resume_readable(out: Path) -> bool:
    """Whether ``out`` has a checkpoint file a ``--resume`` could start from (not checked for damage)."""
    return (out / "final.zip").is_file() or bool(checkpoints_of(out))


def write_config(args: argparse.Namespace, out: Path) -> None:
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
              if k not in ("argv", "progress_bar")}  # (progress_bar: derived, not an argument)
    config["command"] = shlex.join(["python", "-m", __spec__.name if __spec__ else "concordia_env.training.train_ppo",
                                    *args.argv])
    config["versions"] = versions()
    path = out / ("config.json" if args.resume is None else f"config-resume-{int(time.time())}.json")
    write_file(path, (json.dumps(config, indent=2) + "\n").encode())


def new_model(args: argparse.Namespace, vec_env: Any) -> Any:
    from sb3_contrib import MaskablePPO

    from .nets import ObservationScaler

    return MaskablePPO(
        "MlpPolicy", vec_env, learning_rate=args.lr, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, gamma=args.gamma, gae_lambda=args.gae_lambda, clip_range=args.clip_range,
        ent_coef=args.ent_coef, vf_coef=args.vf_coef, seed=args.seed, device="cpu", verbose=args.verbose,
        policy_kwargs={"features_extractor_class": ObservationScaler,
                       "net_arch": {"pi": list(args.net_arch), "vf": list(args.net_arch)}})


def train(args: argparse.Namespace) -> Path:
    """Run the training ``args`` describe; returns the path of the slim final policy.

    ``CheckpointError`` for a checkpoint that cannot be resumed (before anything is written),
    ``SaveError`` for a file that cannot be written (those written before stay intact),
    :class:`Interrupted` after Ctrl-C (a checkpoint of the moment saved)."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

    torch.set_num_threads(args.torch_threads)
    out = run_directory(args)
    candidates = resume_candidates(args.resume) if args.resume is not None else []
    if args.resume is None:
        check_new_run_directory(out)
    subproc = args.vec == "subproc"
    factories = [_env_factory(args, args.opponents, worker=subproc) for _ in range(args.n_envs)]
    vec_env = SubprocVecEnv(factories) if subproc else DummyVecEnv(factories)
    try:
        if candidates:
            model = resume_model(candidates, vec_env, explicit=not args.resume.is_dir())
            model.set_random_seed(args.seed)
            refill_pool(out, vec_env, args.pool_size, until=model.num_timesteps)
            resumed_at: int | None = int(model.num_timesteps)
        else:
            model = new_model(args, vec_env)
            # the untrained policy is the first "self" opponent, so the self weight is never idle
            vec_env.env_method("add_snapshot", FrozenPolicy.from_policy(model.policy, "step_0"))
            resumed_at = None
        vec_env.seed(args.seed)
        # the run really starts: only now is its directory made and written
        (out / "checkpoints").mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(out)
        write_config(args, out)
        model.set_logger(make_logger(args, out, resumed_at))
        try:
            return learn_and_save(args, out, model, vec_env, resumed_at)
        except KeyboardInterrupt:
            raise Interrupted(save_interrupted(model, out)) from None
    finally:
        try:
            vec_env.close()
        except Exception:  # noqa: BLE001 - a worker already gone: nothing left to close
            pass


def learn_and_save(args: argparse.Namespace, out: Path, model: Any, vec_env: Any, resumed_at: int | None) -> Path:
    """Train up to ``--total-steps`` in all, then write ``final.zip``, ``policy.zip``,
    ``wall_time.json`` and the release."""
    start = time.time()
    remaining = args.total_steps - (resumed_at or 0)
    if remaining > 0:
        # main() decides whether sb3's bar can be shown; train() called on its own prints lines
        bar = bool(getattr(args, "progress_bar", False))
        callbacks = build_callbacks(args, out, vec_env, resumed_at)
        if not bar:
            callbacks.append(rollout_lines(args.total_steps))
        model.learn(total_timesteps=remaining, callback=callbacks, progress_bar=bar,
                    reset_num_timesteps=resumed_at is None)
    else:
        print(f"note: the checkpoint is at step {resumed_at}, --total-steps is {args.total_steps}: nothing to "
              f"train; writing the final files", file=sys.stderr)
    save_model(model, out / "final.zip")
    policy_path = slim_save(model, out / "policy.zip")
    wall = {"seconds": round(time.time() - start, 1), "timesteps": int(model.num_timesteps)}
    write_file(out / "wall_time.json", (json.dumps(wall) + "\n").encode())
    if args.release is not None:
        release(model, policy_path, args.release, args.map)
    return policy_path


#: the state Adam builds lazily for each parameter on its first step
ADAM_STATE = frozenset({"step", "exp_avg", "exp_avg_sq"})


def drop_partial_optimizer_state(optimizer: Any) -> int:
    """Drop the per-parameter states an interrupt inside ``optimizer.step`` left half built (Adam's
    ``step`` set, ``exp_avg`` not yet): saved, such a state breaks the resumed run's first step.
    A dropped state is built afresh, as for a new parameter. Returns how many were dropped."""
    import torch

    states = optimizer.state
    required = set().union(*(s.keys() for s in states.values())) if len(states) else set()
    if isinstance(optimizer, torch.optim.Adam):
        required |= ADAM_STATE
    partial = [p for p, s in states.items() if not required <= set(s)]
    for p in partial:
        del states[p]
    return len(partial)


def save_interrupted(model: Any, out: Path) -> str:
    """Save ``checkpoints/step_<N>.zip`` after Ctrl-C (a second Ctrl-C cannot cut the save short);
    returns the line to print."""
    step = int(model.num_timesteps)
    previous: dict[int, Any] = {}
    try:
        for signum in (signal.SIGINT, signal.SIGTERM):  # SIGTERM stops a run as Ctrl-C does
            previous[signum] = signal.signal(signum, signal.SIG_IGN)
    except ValueError:  # not the main thread: signals are not ours to change
        pass
    try:
        drop_partial_optimizer_state(model.policy.optimizer)  # the interrupt may have come mid-step
        path = save_model(model, out / "checkpoints" / f"step_{step}.zip")
    except SaveError as exc:
        return f"interrupted at step {step}; {exc}: resume from the newest checkpoint with --resume {out}"
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
    return f"interrupted at step {step}: checkpoint saved to {path}; continue with --resume {out}"


def release_stem(release: Path) -> Path:
    """``X`` for ``--release X.zip`` (or ``X``): the numpy pair is ``X.npz`` + ``X.json``."""
    return release.with_suffix("") if release.suffix == ".zip" else release


def release(model: Any, policy_path: Path, target: Path, map_name: str) -> tuple[Path, Path]:
    """Copy the slim ``policy_path`` to ``target`` (atomically) and export the actor beside it as numpy
    weights (checked against the torch model); returns the ``.npz`` and ``.json`` paths."""
    from .export_policy import export_model

    write_file(target, policy_path.read_bytes())
    try:
        return export_model(model, release_stem(target), map_name=map_name, source=target)
    except OSError as exc:
        raise SaveError(f"could not write the numpy export {release_stem(target)}.npz/.json: "
                        f"{exc.strerror or exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    check_args(args, parser)
    try:
        import sb3_contrib  # noqa: F401
        import torch  # noqa: F401
    except ImportError as exc:
        parser.error(f"training needs the train extra ({exc}): {TRAIN_EXTRA_INSTALL}")
    args.progress_bar = False
    if not args.no_progress:
        problem = progress_bar_problem()
        if problem is not None:  # (sb3 would stop with an ImportError once the run directory exists)
            print(f"note: {problem}; printing a line per rollout instead", file=sys.stderr)
        args.progress_bar = problem is None
    try:
        with sigterm_as_ctrl_c():  # a scheduler's stop saves a checkpoint as Ctrl-C does
            path = train(args)
    except RunExists as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except CheckpointError as exc:
        print(f"{PROG}: error: --resume: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(exc, file=sys.stderr)
        return 130
    except OSError as exc:  # SaveError, or a log that could not be written
        print(f"{PROG}: error: {exc}; the files written before are intact", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted before training started; nothing saved", file=sys.stderr)
        return 130
    released = ""
    if args.release:
        stem = release_stem(args.release)
        released = f", {args.release}, {stem}.npz and {stem}.json"
    print(f"policy written to {path}{released}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
