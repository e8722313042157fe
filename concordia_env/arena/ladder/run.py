"""Playing a ladder: its folder (a :class:`~concordia_env.arena.run_folder.RunFolder`), its lines
through the strength table's chunk runner, and its results file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..._internal.files import write_json_atomic
from ..run_folder import RunFolder, flag_label
from ..strength.chunks import DEFAULT_DEALS_CHUNK, run_lines, scan_line
from .document import RESULTS_NAME, build_results
from .plan import Ladder

#: the run folder's settings file (the ladder's options) and its units (the strength table's chunk files)
SETTINGS_NAME = "settings.json"
UNITS = ("lines/*/deals_*.json",)


def open_folder(ladder: Ladder, out: str | os.PathLike) -> RunFolder:
    """Claim ``out`` for ``ladder``: a new folder, or one holding this ladder already (which goes
    on); ``ValueError`` in one line for a folder holding another ladder or other files."""
    return RunFolder.open(out, ladder.options(), settings_name=SETTINGS_NAME, units=UNITS, flag="--out",
                          what="ladder folder", owner="another ladder run", label=flag_label)


def results(ladder: Ladder, out: str | os.PathLike) -> dict[str, Any]:
    """The results file of what ``out`` holds (every line complete or not)."""
    return build_results(ladder, {line.id: scan_line(line, out) for line in ladder.lines})


def run_ladder(ladder: Ladder, out: str | os.PathLike, *, workers: int = 1, deals_chunk: int = DEFAULT_DEALS_CHUNK,
               progress: bool = True, command: str | None = None) -> tuple[dict[str, int], dict[str, Any]]:
    """Play the games of ``ladder`` that ``out`` does not hold yet and write ``OUT/ladder.json``.

    Returns the chunk runner's counts (``games_played``, ``chunks_written``, ``deals_kept``) and
    the results. ``ValueError`` before any game for a folder of another run or an agent that
    cannot be built; Ctrl-C or SIGTERM: the games in flight finish, the chunks they complete are
    written, then :class:`~concordia_env.arena.pools.Interrupted` (the same command goes on)."""
    out = Path(out)
    open_folder(ladder, out)
    report = run_lines(ladder.strength_config(), out, workers=workers, deals_chunk=deals_chunk,
                       progress=progress, command=command)
    done = results(ladder, out)
    write_json_atomic(done, out / RESULTS_NAME)
    return report, done
