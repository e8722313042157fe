"""Checkpoints of a MaskablePPO run: written atomically, read with care, resumed from; the run directory.

Every file of a run is written to a temporary file in its own folder, fsynced and renamed into
place (:mod:`concordia_env._internal.files`). A checkpoint is checked member by member against its CRC
before torch unpickles anything; an unreadable one is skipped with a one-line warning when a
run directory is resumed or the opponent pool refilled, and is an error when named explicitly.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import signal
import sys
import zipfile
from pathlib import Path
from typing import Any

from concordia_env._internal.extras import requires
from concordia_env._internal.files import write_bytes_atomic
from concordia_env.agents.policy import moved_class_objects
from concordia_env.arena.run_folder import RunFolder, flag_label  # torch is imported lazily there
from concordia_env.training.selfplay import FrozenPolicy

#: the settings a resumed run keeps (the game it learns and the network's shape): checked against ``config.json``
FIXED = ("map", "players", "net_arch", "reward")
#: a run directory's units (see :mod:`concordia_env.arena.run_folder`)
UNITS = ("checkpoints/step_*.zip", "final.zip", "policy.zip", "eval/*", "logs/*", "progress.jsonl", "wall_time.json",
         "config-resume-*.json")
#: a periodic (or Ctrl-C) checkpoint of the run directory
CHECKPOINT_NAME = re.compile(r"step_(\d+)\.zip")
#: the temporary files :func:`concordia_env._internal.files.write_bytes_atomic` writes beside their target
TEMPORARY_NAME = re.compile(r"\..+\.[^.]+\.tmp")
#: the state Adam builds lazily for each parameter on its first step
ADAM_STATE = frozenset({"step", "exp_avg", "exp_avg_sq"})


class CheckpointError(ValueError):
    """A checkpoint that cannot be resumed; the message names the file and the problem in one line."""


class SaveError(OSError):
    """A file of the run could not be written (a full disk, a file size limit); the message names it."""


class RunExists(ValueError):
    """A new run's ``--out`` already holds a run; the message says which and what to do, in one line."""


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def one_line(exc: BaseException) -> str:
    """``exc`` as ``Type: message`` on one line (``Type`` alone without a message)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# ------------------------------------------------------------ checkpoints: written atomically, read with care
def write_file(path: Path, data: bytes) -> None:
    """:func:`concordia_env._internal.files.write_bytes_atomic`, with a ``SaveError`` that names the file."""
    try:
        write_bytes_atomic(path, data)
    except OSError as exc:
        raise SaveError(f"could not write {path}: {exc.strerror or exc}") from None


def save_model(model: Any, path: Path) -> Path:
    """Save ``model`` to ``path`` (``.zip`` added if missing) atomically: sb3 writes the zip into
    memory, then :func:`concordia_env._internal.files.write_bytes_atomic` puts it in place, so a kill or a
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
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint ({one_line(exc)})") from None
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
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
        from sb3_contrib import MaskablePPO

    checkpoint_step(path)
    try:
        # (a zip of the earlier layout names its features extractor agents.nets.ObservationScaler)
        return MaskablePPO.load(path, env=env, device="cpu", custom_objects=moved_class_objects(path))
    except Exception as exc:  # noqa: BLE001 - torch and sb3 fail in many ways; the message says how
        raise CheckpointError(f"{path}: does not load as a MaskablePPO model ({one_line(exc)})") from None


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


def remove_stale_temporaries(out: Path) -> None:
    """Delete the temporary files a killed save left in the run directory (it is this run's alone)."""
    RunFolder(out, "config.json", UNITS, resumed=False).remove_temporaries()


# ------------------------------------------------------------ the run directory
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


def claim_run_directory(args: argparse.Namespace, out: Path) -> RunFolder:
    """Check ``out`` as this run's folder (:mod:`concordia_env.arena.run_folder`), writing nothing
    (``config.json`` is written once the run really starts). A new run refuses a directory that holds
    one: its checkpoints would mix with the new run's, and a later ``--resume`` would take the old
    ones for the new run's. A resumed run must keep :data:`FIXED` (``RunExists`` otherwise); it may
    change the rest (a longer ``--total-steps``, another learning rate)."""
    resume = False if args.resume is None else (True if Path(args.resume).is_dir() and Path(args.resume) == out else None)
    hint = f"continue it with --resume {out}" if resume_readable(out) else "it has no checkpoint to resume: delete it"
    try:
        return RunFolder.open(out, {k: getattr(args, k) for k in FIXED}, settings_name="config.json", units=UNITS,
                              resume=resume, keys=FIXED, label=flag_label, resume_hint=hint, write=False,
                              unwrap=lambda doc: doc if isinstance(doc, dict) and "map" in doc else None)
    except ValueError as exc:
        raise RunExists(str(exc)) from None


def check_new_run_directory(out: Path) -> None:
    """``RunExists`` if a new run (no ``--resume``) would write into an earlier run's directory
    (:func:`claim_run_directory`)."""
    claim_run_directory(argparse.Namespace(resume=None, **{k: None for k in FIXED}), out)


def resume_readable(out: Path) -> bool:
    """Whether ``out`` has a checkpoint file a ``--resume`` could start from (not checked for damage)."""
    return (out / "final.zip").is_file() or bool(checkpoints_of(out))


# ------------------------------------------------------------ Ctrl-C: a checkpoint of the moment
def drop_partial_optimizer_state(optimizer: Any) -> int:
    """Drop the per-parameter states an interrupt inside ``optimizer.step`` left half built (Adam's
    ``step`` set, ``exp_avg`` not yet): saved, such a state breaks the resumed run's first step.
    A dropped state is built afresh, as for a new parameter. Returns how many were dropped."""
    with requires("train", "training with stable-baselines3 (concordia_env.training.ppo)"):
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
