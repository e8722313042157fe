"""A resumable run's folder: the one way the package's long runs stop and continue.

A tournament's records, the strength table's lines, a value data set, expert iteration, the
turn-level TD loop and a PPO run each keep their work in a folder of this kind:

* **a settings file** (JSON) naming what the run is. Started again with the same settings, the
  run continues; with other settings it is refused with one line naming each setting that differs
  (``seed 1 there, 2 here``), and a settings file that cannot be read, or is not this kind of
  run's, is refused the same way. Nothing in the folder is changed by a refusal.
* **units** (chunks, shards, game records, a round's outputs, checkpoints), each written
  atomically (:mod:`concordia_env._internal.files`), so a killed run leaves either a whole unit
  or none. Resuming keeps every unit that loads and matches the settings; a damaged or foreign
  unit is moved aside as ``NAME.invalid`` (kept for a look, never read again) with one warning
  line, and its work is done again, as is a missing unit's.
* **temporaries** a killed write left behind are removed when the folder is opened.

Whether a run has to be asked to continue is the caller's ``resume``: ``None`` continues
silently (the same command again: a data set, a tournament's records), ``False`` is a new run and
refuses a folder that holds one (``add --resume``), ``True`` needs one to be there.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.files import write_json_atomic
from .records import read_json_file, short_repr

#: the suffix a unit that cannot be used is renamed with
INVALID_SUFFIX = ".invalid"


def warn(message: str) -> None:
    """One warning line on stderr (resuming goes on)."""
    print(f"warning: {message}", file=sys.stderr)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON (so ``true`` is not ``1`` and ``2.0`` is not ``2``)."""
    try:
        return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    except (TypeError, ValueError, RecursionError):
        return False


def differences(saved: Any, ours: Mapping[str, Any], keys: Iterable[str] | None = None,
                label: Callable[[str], str] = str) -> list[str]:
    """Each setting in which ``saved`` differs from ``ours`` (over ``keys``, default every key of
    either), as ``"<label> <saved> there, <ours> here"``; a key ``saved`` lacks reads as missing."""
    if not isinstance(saved, Mapping):
        return ["it is not a JSON object"]
    names = list(keys) if keys is not None else sorted(set(saved) | set(ours))
    found = []
    for key in names:
        there = short_repr(saved[key]) if key in saved else "missing"
        here = short_repr(ours[key]) if key in ours else "missing"
        if key not in saved or key not in ours or not same_json(saved[key], ours[key]):
            found.append(f"{label(key)} {there} there, {here} here")
    return found


def flag_label(key: str) -> str:
    """A settings key as the command-line option that sets it (``gate_games`` -> ``--gate-games``)."""
    return "--" + key.replace("_", "-")


def writable_folder(folder: Path, what: str) -> None:
    """Create ``folder`` and its parents if missing and check that a file can be created in it (by
    creating and removing one): ``ValueError`` naming ``what`` otherwise."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{what}: cannot create folder {folder}: {exc.strerror or exc}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".probe.", suffix=".tmp")
    except OSError as exc:
        raise ValueError(f"{what}: cannot write in folder {folder}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(tmp)


def remove_temporaries(folder: Path, pattern: str = "*") -> None:
    """Remove the temporary files an atomic write of ``pattern`` files left in ``folder`` when its
    process was killed mid-write (``.NAME.XXXX.tmp``, see :mod:`concordia_env._internal.files`)."""
    for tmp in folder.glob(f".{pattern}.*.tmp"):
        try:
            if tmp.is_file():
                tmp.unlink()
        except OSError:
            pass


def set_aside(path: Path, problem: str, redo: str, report: Callable[[str], None] = warn) -> None:
    """Move an unusable unit aside as ``NAME.invalid`` with one warning line (``report``, default
    stderr) saying what is wrong and what happens instead (``redo``: "playing its games again")."""
    report(f"{path}: {problem}; {redo}")
    try:
        os.replace(path, path.with_name(path.name + INVALID_SUFFIX))
    except OSError:  # a read-only folder: the unit is written over when its work is redone
        pass


def keep(paths: Iterable[Path], problem: Callable[[Path], str | None], redo: str) -> list[Path]:
    """The ``paths`` that exist and have no ``problem`` (None); each of the others that exists is
    set aside (:func:`set_aside`) with ``redo`` saying what happens instead."""
    kept = []
    for path in paths:
        if not path.exists():
            continue
        found = problem(path)
        if found is None:
            kept.append(path)
        else:
            set_aside(path, found, redo)
    return kept


@dataclass(frozen=True)
class RunFolder:
    """An opened run folder (module doc): ``resumed`` says whether it held this run already."""

    path: Path
    settings_name: str
    units: tuple[str, ...]
    resumed: bool

    @property
    def settings_path(self) -> Path:
        return self.path / self.settings_name

    def unit_files(self) -> list[Path]:
        """The unit files the folder holds (every ``units`` pattern), sorted."""
        return sorted({p for pattern in self.units for p in self.path.glob(pattern) if p.is_file()})

    def keep(self, paths: Iterable[Path], problem: Callable[[Path], str | None], redo: str) -> list[Path]:
        """:func:`keep` over this folder's units."""
        return keep(paths, problem, redo)

    def write_settings(self, document: Any) -> None:
        write_json_atomic(document, self.settings_path)

    @classmethod
    def open(cls, path: str | os.PathLike, settings: Mapping[str, Any], *, settings_name: str = "settings.json",
             units: Sequence[str] = (), resume: bool | None = None, flag: str = "--out", what: str = "run folder",
             owner: str = "a run with other settings", keys: Iterable[str] | None = None, label: Callable[[str], str] = str,
             wrap: Callable[[Mapping[str, Any]], Any] | None = None,
             unwrap: Callable[[Any], Mapping[str, Any] | None] | None = None,
             resume_hint: str = "add --resume to continue it", overwrite: bool | None = None,
             write: bool = True) -> RunFolder:
        """Check ``path`` as the folder of the run ``settings`` and claim it (module doc).

        ``wrap`` turns the settings into the settings file's document and ``unwrap`` reads them back
        (None: not this kind of run's file); by default the file holds the settings alone. ``keys``
        are the settings compared (default: all), named with ``label``. ``overwrite`` deletes a
        foreign run's units instead of refusing. ``write=False`` only checks: the caller writes the
        settings (:meth:`write_settings`) once the run really starts. ``ValueError`` in one line
        naming the folder and the problem; nothing changed then."""
        folder = Path(path)
        where = f"{what} {folder}"
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{where} is a file, not a folder")
        run = cls(folder, settings_name, tuple(units), resumed=False)
        found = run._found()
        if resume is False and run.settings_path.exists():
            raise ValueError(f"{flag} {folder} holds a run already ({settings_name}); {resume_hint}, "
                             f"or use another {flag}")
        problem = run._problem(settings, keys, label, unwrap) if run.settings_path.exists() else None
        offer = "" if overwrite is None else ", or --overwrite to delete them"
        if problem is not None:
            if not overwrite:
                raise ValueError(f"{where} holds {owner} ({problem}); repeat its settings, or use another {flag}{offer}")
            for unit in run.unit_files():
                unit.unlink()
        elif found and not run.settings_path.exists():
            if not overwrite:
                raise ValueError(f"{where} holds files of an unknown run ({found}) without a "
                                 f"{settings_name}; use another {flag}{offer}")
            for unit in run.unit_files():
                unit.unlink()
        elif run.settings_path.exists():
            run = cls(folder, settings_name, tuple(units), resumed=True)
        if resume is True and not run.resumed:
            raise ValueError(f"--resume: no run in {folder} ({settings_name} is missing); "
                             f"run without --resume to start one")
        if write:
            writable_folder(folder, where)
            run.remove_temporaries()
            if not run.resumed:
                run.write_settings(wrap(settings) if wrap is not None else dict(settings))
        return run

    def remove_temporaries(self) -> None:
        """Remove what killed atomic writes of the settings file or a unit left behind."""
        for pattern in (self.settings_name, *self.units):
            head, name = str(Path(pattern).parent), Path(pattern).name
            for parent in [self.path] if head == "." else [p for p in self.path.glob(head) if p.is_dir()]:
                remove_temporaries(parent, name)

    def _found(self) -> str:
        names = [self.settings_name] if self.settings_path.is_file() else []
        units = self.unit_files() if self.path.is_dir() else []
        names += [str(p.relative_to(self.path)) for p in units[:3]]
        return ", ".join(names) + (" ..." if len(units) > 3 else "")

    def _problem(self, settings: Mapping[str, Any], keys: Iterable[str] | None, label: Callable[[str], str],
                 unwrap: Callable[[Any], Mapping[str, Any] | None] | None) -> str | None:
        """Why the settings file is not this run's (one phrase), None if it is."""
        try:
            document = read_json_file(self.settings_path, self.settings_name)
        except (OSError, ValueError) as exc:
            return str(exc)
        saved = unwrap(document) if unwrap is not None else document
        if saved is None or not isinstance(saved, Mapping):
            return f"its {self.settings_name} is not this kind of run's"
        return "; ".join(differences(saved, settings, keys, label)) or None
