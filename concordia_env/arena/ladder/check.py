"""Checking a submitted ladder results file: its format, that its games are the table's deals and
seat rotations, and that every figure in it is what its games give."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ..records import read_json_file, short_repr
from ..stats import forfeited_seat
from ..strength.chunks import CHUNK_RE, LineChunks, _check_entry
from ..strength.config import Line
from .document import RESULTS_FORMAT, RESULTS_VERSION, build_results, first_difference
from .plan import Ladder, Table, make_ladder

OPTION_KEYS = ("agent", "name", "map", "pool", "deals")


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _numbers_problem(entry: dict[str, Any]) -> str | None:
    """What is malformed in a game entry's numbers and winner (the rest is :func:`_check_entry`'s)."""
    seats, scores, ranking = entry["seats"], entry["scores"], entry["ranking"]
    if not all(_is_int(v) for v in scores) or not all(_is_int(d) and d >= 0 for d in entry["decisions"]):
        return "scores or decisions are not whole numbers"
    if not all(isinstance(s, (int, float)) and not isinstance(s, bool) and math.isfinite(s) and s >= 0
               for s in entry["act_seconds"]):
        return "act_seconds are not seconds"
    lost = forfeited_seat(entry)
    ranked = [seat for seat in ranking if seat != lost]  # a forfeiting seat is last whatever its VP
    if any(scores[ranked[i]] < scores[ranked[i + 1]] for i in range(len(ranked) - 1)):
        return f"ranking {ranking} does not follow the scores {scores}"
    winner = None if entry["truncated"] else ranking[0]
    if entry["winner_seat"] != winner or entry.get("winner") != (None if winner is None else seats[winner]):
        return f"winner_seat {entry['winner_seat']!r} or winner {short_repr(entry.get('winner'))} is not the ranking's"
    return None


def _line_chunks(line: Line, stored: Any, where: str) -> LineChunks:
    """The line's games from a stored line entry, as the chunk scanner would give them."""
    if not isinstance(stored, dict) or stored.get("id") != line.id:
        got = stored.get("id") if isinstance(stored, dict) else stored
        raise ValueError(f"{where} is the line {short_repr(got)}, its options give {line.id}")
    games = stored.get("per_game")
    n = line.players
    if not isinstance(games, list) or len(games) != line.planned:
        count = len(games) if isinstance(games, list) else "no"
        raise ValueError(f"{where} ({line.id}): per_game lists {count} games, the line has {line.planned} "
                         f"({line.deals} deals x {n} seat rotations)")
    for g, entry in enumerate(games):
        problem = (_check_entry(entry, g, line.lineup, line.seed, line.max_turns or None) if isinstance(entry, dict)
                   else f"game {g}: not an object")
        problem = problem or (f"game {g}: {_numbers_problem(entry)}" if _numbers_problem(entry) else None)
        if problem:  # "game 3: seed is 9, expected 1": not the table's deal
            raise ValueError(f"{where} ({line.id}) {problem}")
    names = stored.get("chunks")
    names = [c for c in names if isinstance(c, str)] if isinstance(names, list) else []
    files: dict[int, Path] = {}
    for name in names:
        m = CHUNK_RE.match(name)
        for deal in range(int(m[1]), int(m[2]) + 1) if m and len(m[1]) < 6 and len(m[2]) < 6 else ():
            files.setdefault(deal, Path(name))
    machines = stored.get("machines")
    machines = [m for m in machines if isinstance(m, str)] if isinstance(machines, list) else []
    return LineChunks({k: games[k * n:(k + 1) * n] for k in range(line.deals)}, files, [], machines)


def _ladder(doc: dict[str, Any], table: Table) -> Ladder:
    agent, options = doc.get("agent"), doc.get("options")
    if not isinstance(agent, dict) or not isinstance(agent.get("name"), str) or not isinstance(agent.get("spec"), str):
        raise ValueError("agent must be {\"name\": ..., \"spec\": ...}")
    if not isinstance(options, dict) or sorted(options) != sorted(OPTION_KEYS):
        raise ValueError(f"options must have exactly the keys {', '.join(OPTION_KEYS)}")
    if options["agent"] != agent["spec"] or options["name"] != agent["name"]:
        raise ValueError("options.agent and options.name are not agent.spec and agent.name")
    try:
        return make_ladder(table, options["agent"], name=options["name"], maps=options["map"], pool=options["pool"],
                           deals=options["deals"])
    except ValueError as exc:
        raise ValueError(f"options: {exc}") from None


def _found(doc: dict[str, Any], ladder: Ladder) -> dict[str, LineChunks]:
    settings = doc.get("settings")
    ids = [s.table.id for s in ladder.settings]
    got = [s.get("id") if isinstance(s, dict) else s for s in settings] if isinstance(settings, list) else settings
    if got != ids or not isinstance(settings, list):
        raise ValueError(f"settings are {short_repr(got)}, its options give {ids}")
    found = {}
    for i, (ls, stored) in enumerate(zip(ladder.settings, settings)):
        lines = stored.get("lines") if isinstance(stored, dict) else None
        if not isinstance(lines, list) or len(lines) != len(ls.lines):
            raise ValueError(f"settings[{i}].lines must list {len(ls.lines)} lines: "
                             f"{', '.join(line.id for line in ls.lines)}")
        for j, (line, entry) in enumerate(zip(ls.lines, lines)):
            found[line.id] = _line_chunks(line, entry, f"settings[{i}].lines[{j}]")
    return found


def check_document(doc: Any, table: Table) -> None:
    """``ValueError`` in one phrase naming what is wrong and where, unless ``doc`` is a complete
    ladder results file of ``table``'s deals whose every figure follows from its games."""
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    if doc.get("format") != RESULTS_FORMAT:
        raise ValueError(f"format is {short_repr(doc.get('format'))}, a ladder results file has {RESULTS_FORMAT!r}")
    if doc.get("version") != RESULTS_VERSION:
        raise ValueError(f"version {short_repr(doc.get('version'))}: this concordia-env reads ladder results "
                         f"of version {RESULTS_VERSION}")
    ladder = _ladder(doc, table)
    difference = first_difference(doc, build_results(ladder, _found(doc, ladder)))
    if difference is None:
        return
    if ".table_ratings" in difference:
        raise ValueError(f"it was made against another strength table than {table.folder} ({difference})")
    raise ValueError(f"{difference}: the figures do not follow from its games")


def check_results(path: str | os.PathLike, table: Table) -> dict[str, Any]:
    """The results file at ``path`` if it passes :func:`check_document`; ``ValueError`` in one line
    naming the file, what is wrong and where, otherwise."""
    where = f"ladder results {os.fspath(path)}"
    try:
        doc = read_json_file(path, "ladder results")
    except FileNotFoundError:
        raise ValueError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise ValueError(f"{where} is a folder; name the results file ({where}/ladder.json)") from None
    except OSError as exc:
        raise ValueError(f"{where}: cannot be read ({exc.strerror or exc})") from None
    try:
        check_document(doc, table)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    except (KeyError, TypeError, AttributeError, IndexError) as exc:  # a shape the checks above did not foresee
        raise ValueError(f"{where}: malformed ({type(exc).__name__}: {short_repr(str(exc))})") from None
    return doc

