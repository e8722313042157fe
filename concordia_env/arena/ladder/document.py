"""The ladder's results file, built from its lines' games: the same code makes it after a run and
remakes it from a submitted file's games to check it (:mod:`.check`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..records import short_repr
from ..run_folder import same_json
from ..stats import is_rated, openskill_ratings
from ..strength.chunks import LineChunks, merged_line_result
from ..strength.config import Line
from ..strength.summary import line_summary
from .plan import Ladder, LadderSetting

RESULTS_FORMAT = "concordia-env/ladder"
RESULTS_VERSION = 1
#: the results file's name in the run's folder
RESULTS_NAME = "ladder.json"


def line_entry(line: Line, chunks: LineChunks) -> dict[str, Any]:
    """A line as the strength table's summary shows it, plus its games (``per_game``, in game order)."""
    merged = merged_line_result(line, chunks)
    return {**line_summary(line, merged), "per_game": merged["per_game"]}


def _rated_games(lines: Sequence[Line], entries: Sequence[dict[str, Any]]) -> list[tuple[list[str], list[int]]]:
    """``(name per seat, ranking)`` of every rated game (finished or forfeited, as the table rates
    them), lines in order, games in game order."""
    games = []
    for line, entry in zip(lines, entries):
        names = {line.lineup[0]: line.agents[0], line.lineup[-1]: line.agents[1]}
        games += [([names[s] for s in g["seats"]], g["ranking"]) for g in entry["per_game"] if is_rated(g)]
    return games


def _ms_per_decision(spec: str, entries: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The agent's mean ``act`` milliseconds over every decision of its lines (as the table's
    "Time per decision" counts them: the games' seconds added up, then divided)."""
    seconds, decisions = 0.0, 0
    for entry in entries:
        for game in entry["per_game"]:
            for seat, who in enumerate(game["seats"]):
                if who == spec:
                    seconds += game["act_seconds"][seat]
                    decisions += game["decisions"][seat]
    return {"ms": 1000 * seconds / decisions if decisions else None, "decisions": decisions}


def setting_entry(ladder: Ladder, ls: LadderSetting, found: Mapping[str, LineChunks]) -> dict[str, Any]:
    """A setting of the results file: its lines, the agent's time per decision, and the OpenSkill
    ratings of the table's agents and the agent after the agent's games, rated from where the
    table's ratings end (so, as if its lines were the table's last)."""
    entries = [line_entry(line, found[line.id]) for line in ls.lines]
    start = ladder.table.ratings[ls.table.id]
    names = [*start, ladder.name]
    ratings = openskill_ratings(_rated_games(ls.lines, entries), names, start=start)
    ranked = sorted(names, key=lambda n: (-ratings[n]["ordinal"], names.index(n)))
    notes = ls.notes(ladder.pool)
    return {
        "id": ls.table.id, "map": ls.table.map, "players": ls.table.players, "seed": ls.table.seed,
        "deals": ls.deals, "table_deals": ls.table.deals, "opponents": list(ls.opponents), "field": ls.field,
        "itself": list(ls.itself), "comparable": not notes, "not_comparable": notes,
        "games": sum(e["games"] for e in entries), "planned": sum(line.planned for line in ls.lines),
        "lines": entries, "ms_per_decision": _ms_per_decision(ladder.spec, entries),
        "table_ratings": start, "ratings": ratings, "ordinal": ratings[ladder.name]["ordinal"],
        "rank": ranked.index(ladder.name) + 1,
    }


def build_results(ladder: Ladder, found: Mapping[str, LineChunks]) -> dict[str, Any]:
    """The results file of ``ladder`` from each line's games (``found``: line id -> its chunks)."""
    settings = [setting_entry(ladder, s, found) for s in ladder.settings]
    return {
        "format": RESULTS_FORMAT, "version": RESULTS_VERSION,
        "agent": {"name": ladder.name, "spec": ladder.spec}, "options": ladder.options(),
        "comparable": all(s["comparable"] for s in settings),
        "games": sum(s["games"] for s in settings), "planned": sum(s["planned"] for s in settings),
        "settings": settings,
    }


def first_difference(stored: Any, expected: Any, path: str = "") -> str | None:
    """Where ``stored`` first differs from ``expected`` (as JSON), in one phrase naming the path
    (``settings[0].lines[1].per_agent.x.wins is 12, the games give 9``); None if they are equal."""
    here = path or "the file"
    if isinstance(expected, dict) and isinstance(stored, dict):
        for key in expected:
            if key not in stored:
                return f"{here} lacks {key!r}"
            found = first_difference(stored[key], expected[key], f"{path}.{key}" if path else key)
            if found:
                return found
        extra = [k for k in stored if k not in expected]
        return f"{here} has the unknown key {short_repr(extra[0])}" if extra else None
    if isinstance(expected, list) and isinstance(stored, list):
        if len(stored) != len(expected):
            return f"{here} has {len(stored)} entries, the games give {len(expected)}"
        for i, (a, b) in enumerate(zip(stored, expected)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    if not same_json(stored, expected):
        return f"{here} is {short_repr(stored)}, the games give {short_repr(expected)}"
    return None
