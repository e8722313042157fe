"""The strength table: every agent against every other, resumable in chunks, merged, rated and rendered.

Example (the committed table; see docs/agents.md, "Strength table")::

    python -m concordia_env.training.strength --config agents/results/strength/config.json \\
        --out agents/results/strength --workers 16

**Config** (JSON, ``"format": "concordia-env/strength-config"``, ``"version": 1``)::

    {"agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "mcts1000", "spec": "mcts:iterations=1000"}],
     "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 100, "seed": 0,
                   "agents": ["heuristic", "mcts1000"], "extra_pairs": [], "field": null}],
     "targets": [{"line": "italia2-mcts1000-vs-heuristic", "agent": "mcts1000", "min_win_rate": 0.6,
                  "max_ms_ratio": null, "text": "..."}],
     "max_turns": 2000, "intermediate_scoring": false}

Agent names (letters, digits, ``_`` and ``.``) are what the tables show; specs are
:func:`concordia_env.agents.base.make_agent` strings. A setting (2 or 4 players) has
**lines**, each a line-up played by :mod:`concordia_env.training.evaluation`'s paired
scheme (deal ``k`` set up with seed ``seed + k`` and played once per seat rotation):

- a *pair* line for every unordered pair A, B of the setting's ``agents`` (A the one
  listed first) and for each of ``extra_pairs``: line-up ``A, B`` with 2 players
  (``deals`` x 2 rotations), ``A, A, B, B`` with 4 (``deals`` x 4 rotations: each agent
  sits in every seat twice per deal, and the four games of a deal are all different,
  which ``A, B, A, B`` would not give: its rotations 0 and 2 replay the same game);
  id ``<setting>-<A>-vs-<B>``;
- with ``"field": F``, a *field* line for every other agent A of the setting: ``A``
  and ``players - 1`` copies of ``F`` (fair share ``1/players``); id
  ``<setting>-<A>-plus-<players-1>-<F>``.

Every line of a setting uses the setting's seed, so all its lines meet the same deals.

**Chunks.** A line is played in chunks of deals; chunk ``a..b`` (inclusive) is written
atomically to ``OUT/lines/<line id>/deals_<a>-<b>.json`` (3-digit numbers) as soon as its
games are done. It is exactly the result :func:`~concordia_env.training.evaluation.run_evaluation`
gives for the line-up with ``deals = b - a + 1`` and ``seed = setting seed + a`` (local deal and
game numbers), plus a ``chunk`` block (line id, first and last deal, setting seed). A run
skips the deals that valid chunk files already hold (same line-up, map, players, seeds, turn
limit, scoring variant; per-game entries consistent); an unreadable or mismatched file is
reported with a warning, renamed to ``*.invalid`` and its deals played again. New chunks
are cut at multiples of ``--deals-chunk``, so runs on several machines with the same chunk
size write the same file names; copying the ``lines`` folders together merges them.
Games of all selected lines run in one pool of worker processes; the results do not depend
on the worker count, the chunk size or the order in which chunks were played, only the
timings do.

**Merging.** A line's result (:func:`merged_line_result`) joins its chunks' games in deal
order, renumbers deals and games as in one run, and recomputes the statistics with
:func:`~concordia_env.training.evaluation.agent_statistics` and
:func:`~concordia_env.training.evaluation.paired_summary`: for a complete line it equals
(:func:`~concordia_env.training.evaluation.comparable`) one ``run_evaluation`` over all deals.

**Summary** (``OUT/summary.json``, :func:`build_summary`): the config, then per setting and
line the games played and planned, per agent the win rate per seat-game with its 95% Wilson
interval and fair share, the share of the line's games the agent won (its seats together)
with interval and fair share, mean VP and margins, ms per decision; the paired VP difference
A - B per deal with its 95% t interval; per setting the ms per decision of every agent over
all its lines and OpenSkill Plackett-Luce ratings (as in :mod:`concordia_env.arena.tournament`:
every seat a one-player team, a name filling several seats takes the mean of its updates,
truncated games not rated) from all games of the setting, lines in config order and games in
game order; then the targets, each ``reached``, ``missed`` (complete line), ``partial`` or
``pending``. Nothing in it depends on when or where it was built, only on the config and the
chunk files.

**Table.** :func:`render` turns a summary into the markdown that stands between
``<!-- strength-table:start -->`` and ``<!-- strength-table:end -->`` in docs/agents.md
(:func:`update_docs`, atomic); every run ends by writing the summary, ``OUT/table.md`` and,
for the committed results folder (or with ``--docs``), the docs page.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shlex
import sys
import time
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from tqdm import tqdm

from ..agents.base import parse_spec
from ..arena.pools import Interrupted, PoolWork, pool_closed, process_pool, stop_signals
from ..arena.tournament import seat_specs, wilson_interval
from ..data import MAP_NAMES
from ..env import DEFAULT_MAX_TURNS, check_max_turns
from ..files import write_json_atomic, write_text_atomic
from ..game import check_setup_args
from ..threads import one_blas_thread
from .evaluation import (
    RESULT_FORMAT,
    RESULT_VERSION,
    _game_entry,
    _play,
    agent_statistics,
    check_evaluation_args,
    library_versions,
    paired_summary,
)
from .train_ppo import positive_int

CONFIG_FORMAT = "concordia-env/strength-config"
SUMMARY_FORMAT = "concordia-env/strength-summary"
FORMAT_VERSION = 1
PROG = "python -m concordia_env.training.strength"
START_MARKER = "<!-- strength-table:start -->"
END_MARKER = "<!-- strength-table:end -->"
ROOT = Path(__file__).resolve().parents[2]
#: the committed results folder and the page its table lives in (see :func:`default_docs`)
COMMITTED_OUT = ROOT / "agents" / "results" / "strength"
DOCS_PAGE = ROOT / "docs" / "agents.md"
DEFAULT_DEALS_CHUNK = 10
#: as in run_evaluation's results
PAIRING = ("deal k uses setup seed seed+k and is played once per rotation r = 0..n-1, "
           "seat j taken by lineup[(j + r) % n]; game = k * n + r")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.]*$")
CHUNK_RE = re.compile(r"^deals_(\d+)-(\d+)\.json$")
MAP_TITLES = {"italia": "Italia", "imperium": "Imperium"}


class StrengthWarning(UserWarning):
    """A chunk file that cannot be used (unreadable, or made with other settings); its deals are replayed."""


# ---------------------------------------------------------------- config
@dataclass(frozen=True)
class Line:
    """One line of the table: a line-up played on ``deals`` paired deals of its setting."""

    id: str
    setting: str
    kind: str                   # "pair" or "field"
    agents: tuple[str, str]     # display names: A, then B (pair) or the field agent
    lineup: tuple[str, ...]     # spec per seat
    map: str
    players: int
    deals: int
    seed: int
    intermediate_scoring: bool
    max_turns: int

    @property
    def planned(self) -> int:
        """Games of the complete line."""
        return self.deals * self.players


@dataclass(frozen=True)
class Setting:
    """A map and player count with its agents and deals."""

    id: str
    map: str
    players: int
    deals: int
    seed: int
    agents: tuple[str, ...]
    extra_pairs: tuple[tuple[str, str], ...]
    field: str | None


@dataclass(frozen=True)
class Target:
    """A target of issue 13: ``agent`` wins at least ``min_win_rate`` of the line's games
    (and, with ``max_ms_ratio``, takes at most that many times its opponent's time per decision)."""

    line: str
    agent: str
    min_win_rate: float
    max_ms_ratio: float | None
    text: str


@dataclass(frozen=True)
class StrengthConfig:
    """A validated config (see the module doc); ``raw`` is the normalised JSON, echoed in the summary."""

    agents: dict[str, str]      # name -> spec, in config order
    settings: tuple[Setting, ...]
    targets: tuple[Target, ...]
    lines: tuple[Line, ...]
    raw: dict[str, Any]

    def line(self, line_id: str) -> Line:
        """The line with this id (``KeyError`` if none)."""
        for line in self.lines:
            if line.id == line_id:
                return line
        raise KeyError(line_id)


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _check_keys(obj: Any, where: str, required: Sequence[str], optional: Sequence[str] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(obj).__name__}")
    missing = [k for k in required if k not in obj]
    if missing:
        raise ValueError(f"{where} lacks {', '.join(repr(k) for k in missing)}")
    unknown = sorted(set(obj) - set(required) - set(optional))
    if unknown:
        raise ValueError(f"{where} has unknown key(s) {', '.join(repr(k) for k in unknown)}; "
                         f"allowed: {', '.join([*required, *optional])}")
    return obj


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise ValueError(f"{where} must be a name of letters, digits, '_' and '.' (starting with a letter or "
                         f"digit), got {value!r}")
    return value


def _parse_agents(raw: Any) -> dict[str, str]:
    if not isinstance(raw, list) or len(raw) < 2:
        raise ValueError("'agents' must be a list of at least 2 {\"name\", \"spec\"} objects")
    agents: dict[str, str] = {}
    for i, entry in enumerate(raw):
        where = f"agents[{i}]"
        _check_keys(entry, where, ("name", "spec"))
        name = _name(entry["name"], f"{where}.name")
        spec = entry["spec"]
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"{where}.spec must be an agent spec like 'heuristic' or 'mcts:iterations=1000', "
                             f"got {spec!r}")
        try:
            parse_spec(spec)
        except ValueError as exc:
            raise ValueError(f"{where}.spec: {exc}") from None
        if name in agents:
            raise ValueError(f"{where}: agent name {name!r} is listed twice")
        if spec.strip() in agents.values():
            raise ValueError(f"{where}: spec {spec!r} is listed twice (as {name!r} and another name)")
        agents[name] = spec.strip()
    return agents


def _known(name: Any, agents: dict[str, str], where: str) -> str:
    if name not in agents:
        raise ValueError(f"{where}: unknown agent {name!r}; the config's agents: {', '.join(agents)}")
    return str(name)


def _parse_setting(raw: Any, i: int, agents: dict[str, str]) -> Setting:
    where = f"settings[{i}]"
    _check_keys(raw, where, ("id", "map", "players", "deals", "seed", "agents"), ("extra_pairs", "field"))
    sid = _name(raw["id"], f"{where}.id")
    if raw["map"] not in MAP_NAMES:
        raise ValueError(f"{where}.map: unknown map {raw['map']!r}; allowed: {', '.join(MAP_NAMES)}")
    players = raw["players"]
    if not _is_int(players) or players not in (2, 4):
        raise ValueError(f"{where}.players must be 2 or 4 (a pair line gives each agent half the seats), "
                         f"got {players!r}")
    try:
        check_setup_args(raw["map"], players)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    for key in ("deals", "seed"):
        if not _is_int(raw[key]) or (key == "deals" and raw[key] < 1):
            raise ValueError(f"{where}.{key} must be {'a positive' if key == 'deals' else 'an'} int, "
                             f"got {raw[key]!r}")
    names = raw["agents"]
    if not isinstance(names, list) or not names:
        raise ValueError(f"{where}.agents must be a non-empty list of agent names")
    names = [_known(n, agents, f"{where}.agents") for n in names]
    if len(set(names)) != len(names):
        raise ValueError(f"{where}.agents lists an agent twice: {names}")
    pairs = raw.get("extra_pairs", [])
    if not isinstance(pairs, list):
        raise ValueError(f"{where}.extra_pairs must be a list of [A, B] name pairs")
    extra = []
    for j, pair in enumerate(pairs):
        if not isinstance(pair, list) or len(pair) != 2 or pair[0] == pair[1]:
            raise ValueError(f"{where}.extra_pairs[{j}] must be two different agent names [A, B], got {pair!r}")
        extra.append((_known(pair[0], agents, f"{where}.extra_pairs[{j}]"),
                      _known(pair[1], agents, f"{where}.extra_pairs[{j}]")))
    field = raw.get("field")
    if field is not None:
        field = _known(field, agents, f"{where}.field")
    return Setting(sid, raw["map"], players, raw["deals"], raw["seed"], tuple(names), tuple(extra), field)


def _parse_target(raw: Any, i: int, lines: dict[str, Line]) -> Target:
    where = f"targets[{i}]"
    _check_keys(raw, where, ("line", "agent", "min_win_rate"), ("max_ms_ratio", "text"))
    if raw["line"] not in lines:
        raise ValueError(f"{where}.line: no line {raw['line']!r}; lines: {', '.join(lines)}")
    line = lines[raw["line"]]
    if raw["agent"] not in line.agents:
        raise ValueError(f"{where}.agent: {raw['agent']!r} does not play in line {line.id} ({' and '.join(line.agents)})")
    rate = raw["min_win_rate"]
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
        raise ValueError(f"{where}.min_win_rate must be a number in (0, 1], got {rate!r}")
    ratio = raw.get("max_ms_ratio")
    if ratio is not None and (isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or ratio <= 0):
        raise ValueError(f"{where}.max_ms_ratio must be a positive number or null, got {ratio!r}")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise ValueError(f"{where}.text must be a string, got {text!r}")
    return Target(line.id, raw["agent"], float(rate), None if ratio is None else float(ratio), text)


def setting_lines(s: Setting, agents: dict[str, str], intermediate: bool, max_turns: int) -> list[Line]:
    """The setting's lines in table order: its pairs in agent order, the extra pairs, the field lines."""
    n = s.players

    def make(line_id: str, kind: str, a: str, b: str, lineup: list[str]) -> Line:
        return Line(line_id, s.id, kind, (a, b), tuple(lineup), s.map, n, s.deals, s.seed, intermediate, max_turns)

    pairs = [(a, b) for i, a in enumerate(s.agents) for b in s.agents[i + 1:]] + list(s.extra_pairs)
    lines = [make(f"{s.id}-{a}-vs-{b}", "pair", a, b, [agents[a]] * (n // 2) + [agents[b]] * (n // 2))
             for a, b in pairs]
    if s.field is not None:
        lines += [make(f"{s.id}-{a}-plus-{n - 1}-{s.field}", "field", a, s.field, [agents[a]] + [agents[s.field]] * (n - 1))
                  for a in s.agents if a != s.field]
    return lines


def parse_config(obj: Any, source: str = "config") -> StrengthConfig:
    """Validate a config object (module doc); ``ValueError`` naming ``source`` and the problem, on one line."""
    try:
        _check_keys(obj, "the config", ("agents", "settings"),
                    ("format", "version", "description", "targets", "max_turns", "intermediate_scoring"))
        if obj.get("format", CONFIG_FORMAT) != CONFIG_FORMAT or obj.get("version", FORMAT_VERSION) != FORMAT_VERSION:
            raise ValueError(f"format/version must be {CONFIG_FORMAT!r}/{FORMAT_VERSION}, "
                             f"got {obj.get('format')!r}/{obj.get('version')!r}")
        agents = _parse_agents(obj["agents"])
        max_turns = check_max_turns(obj.get("max_turns", DEFAULT_MAX_TURNS))
        intermediate = obj.get("intermediate_scoring", False)
        if not isinstance(intermediate, bool):
            raise ValueError(f"intermediate_scoring must be true or false, got {intermediate!r}")
        raw_settings = obj["settings"]
        if not isinstance(raw_settings, list) or not raw_settings:
            raise ValueError("'settings' must be a non-empty list")
        settings = [_parse_setting(s, i, agents) for i, s in enumerate(raw_settings)]
        lines: dict[str, Line] = {}
        for s in settings:
            if any(line.setting == s.id for line in lines.values()):
                raise ValueError(f"setting id {s.id!r} is used twice")
            made = setting_lines(s, agents, intermediate, max_turns)
            if not made:
                raise ValueError(f"setting {s.id!r} has no lines: list two agents, or an agent and a field")
            for line in made:
                if line.id in lines or any(o.lineup == line.lineup and o.setting == s.id for o in lines.values()):
                    raise ValueError(f"setting {s.id!r}: line {line.id} is listed twice (as a pair and an extra "
                                     f"pair, or a field line with the same line-up as a pair)")
                lines[line.id] = line
        raw_targets = obj.get("targets", [])
        if not isinstance(raw_targets, list):
            raise ValueError("'targets' must be a list")
        targets = [_parse_target(t, i, lines) for i, t in enumerate(raw_targets)]
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None
    raw = {"format": CONFIG_FORMAT, "version": FORMAT_VERSION, "description": obj.get("description", ""),
           "agents": [{"name": n, "spec": s} for n, s in agents.items()],
           "settings": [{"id": s.id, "map": s.map, "players": s.players, "deals": s.deals, "seed": s.seed,
                         "agents": list(s.agents), "extra_pairs": [list(p) for p in s.extra_pairs],
                         "field": s.field} for s in settings],
           "targets": [{"line": t.line, "agent": t.agent, "min_win_rate": t.min_win_rate,
                        "max_ms_ratio": t.max_ms_ratio, "text": t.text} for t in targets],
           "max_turns": max_turns, "intermediate_scoring": intermediate}
    return StrengthConfig(agents, tuple(settings), tuple(targets), tuple(lines.values()), raw)


def load_config(path: str | os.PathLike) -> StrengthConfig:
    """Read and validate a config file; ``ValueError`` naming the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"config {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"config {path}: cannot be read ({exc})") from None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"config {path}: not valid JSON ({exc})") from None
    return parse_config(obj, f"config {path}")


def select_lines(config: StrengthConfig, patterns: str | None) -> list[Line]:
    """The lines whose id matches one of the comma-separated globs (all lines for None);
    ``ValueError`` for a pattern that matches none."""
    if patterns is None:
        return list(config.lines)
    globs = [p.strip() for p in patterns.split(",") if p.strip()]
    if not globs:
        raise ValueError(f"--lines {patterns!r} names no pattern")
    for glob in globs:
        if not any(fnmatch.fnmatchcase(line.id, glob) for line in config.lines):
            raise ValueError(f"--lines: {glob!r} matches no line; lines: {', '.join(line.id for line in config.lines)}")
    return [line for line in config.lines if any(fnmatch.fnmatchcase(line.id, g) for g in globs)]


# ---------------------------------------------------------------- chunk files
def line_folder(out: str | os.PathLike, line: Line) -> Path:
    """Where a line's chunk files live."""
    return Path(out) / "lines" / line.id


def chunk_name(first: int, last: int) -> str:
    """``deals_<first>-<last>.json`` for deals ``first..last`` (inclusive)."""
    return f"deals_{first:03d}-{last:03d}.json"


def _check_entry(entry: Any, i: int, lineup: Sequence[str], seed: int) -> str | None:
    n = len(lineup)
    k, r = divmod(i, n)
    expected = {"game": i, "deal": k, "rotation": r, "seed": seed + k, "seats": seat_specs(lineup, r)}
    for key, value in expected.items():
        if entry.get(key) != value:
            return f"game {i}: {key} is {entry.get(key)!r}, expected {value!r}"
    for key in ("scores", "ranking", "decisions", "act_seconds"):
        if not isinstance(entry.get(key), list) or len(entry[key]) != n:
            return f"game {i}: {key} is not a list of {n} entries"
    if sorted(entry["ranking"]) != list(range(n)) or not isinstance(entry.get("truncated"), bool):
        return f"game {i}: ranking or truncated malformed"
    if entry.get("winner_seat") not in (None, *range(n)):
        return f"game {i}: winner_seat {entry.get('winner_seat')!r} malformed"
    return None


def chunk_problem(data: Any, line: Line, first: int, last: int) -> str | None:
    """Why ``data`` (a loaded chunk file) is not the chunk ``first..last`` of ``line``; None if it is."""
    if not isinstance(data, dict):
        return "not a JSON object"
    deals = last - first + 1
    expected = {"format": RESULT_FORMAT, "version": RESULT_VERSION, "map": line.map, "players": line.players,
                "lineup": list(line.lineup), "deals": deals, "seed": line.seed + first, "games": deals * line.players,
                "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns,
                "chunk": {"line": line.id, "first_deal": first, "last_deal": last, "setting_seed": line.seed}}
    for key, value in expected.items():
        if data.get(key) != value:
            return f"{key} is {data.get(key)!r}, this config needs {value!r}"
    games = data.get("per_game")
    if not isinstance(games, list) or len(games) != deals * line.players:
        return f"per_game does not list {deals * line.players} games"
    for i, entry in enumerate(games):
        if not isinstance(entry, dict):
            return f"game {i} is not an object"
        problem = _check_entry(entry, i, line.lineup, line.seed + first)
        if problem:
            return problem
    return None


@dataclass
class LineChunks:
    """What a line's folder holds: per deal the chunk file and its games (global deal and game numbers)."""

    games: dict[int, list[dict[str, Any]]]
    files: dict[int, Path]
    invalid: list[tuple[Path, str]]
    machines: list[str]


def scan_line(line: Line, out: str | os.PathLike, warn: bool = True) -> LineChunks:
    """Read the line's chunk files (in name order; a deal held by two files is taken from the first).
    Unusable files are listed in ``invalid`` and, with ``warn``, reported as :class:`StrengthWarning`."""
    folder = line_folder(out, line)
    found = LineChunks({}, {}, [], [])
    paths = sorted(p for p in folder.glob("deals_*.json") if p.is_file()) if folder.is_dir() else []
    n = line.players
    for path in paths:
        m = CHUNK_RE.match(path.name)
        first, last = (int(m[1]), int(m[2])) if m else (-1, -1)
        data, problem = None, None
        if not 0 <= first <= last < line.deals:
            problem = f"the name is not deals_<first>-<last>.json with deals of 0..{line.deals - 1}"
        else:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                problem = chunk_problem(data, line, first, last)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                problem = f"unreadable ({exc})"
        if problem is not None or not isinstance(data, dict):
            found.invalid.append((path, str(problem)))
            if warn:
                warnings.warn(f"chunk {path}: {problem}; its deals will be played again", StrengthWarning,
                              stacklevel=2)
            continue
        run = data.get("run")
        machine = run.get("machine") if isinstance(run, dict) else None
        if isinstance(machine, str) and machine not in found.machines:
            found.machines.append(machine)
        for k in range(last - first + 1):
            deal = first + k
            if deal in found.games:
                continue
            found.files[deal] = path
            found.games[deal] = [{**g, "deal": deal, "game": deal * n + g["rotation"]}
                                 for g in data["per_game"][k * n:(k + 1) * n]]
    return found


def plan_chunks(line: Line, done: Iterable[int], deals_chunk: int) -> list[tuple[int, int]]:
    """``(first, last)`` of the chunks still to play: the deals not in ``done``, cut at multiples of ``deals_chunk``."""
    have = set(done)
    chunks: list[tuple[int, int]] = []
    for deal in range(line.deals):
        if deal in have:
            continue
        if chunks and chunks[-1][1] == deal - 1 and deal % deals_chunk:
            chunks[-1] = (chunks[-1][0], deal)
        else:
            chunks.append((deal, deal))
    return chunks


def merged_line_result(line: Line, chunks: LineChunks) -> dict[str, Any]:
    """The line's games from its chunks as one evaluation result (module doc, "Merging")."""
    per_game = [g for deal in sorted(chunks.games) for g in chunks.games[deal]]
    lineup = list(line.lineup)
    return {
        "format": RESULT_FORMAT, "version": RESULT_VERSION,
        "map": line.map, "players": line.players, "lineup": lineup, "deals": len(chunks.games), "seed": line.seed,
        "games": len(per_game), "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns,
        "pairing": PAIRING, "truncated": sum(g["truncated"] for g in per_game),
        "per_agent": agent_statistics(per_game, lineup), "paired": paired_summary(per_game, lineup),
        "per_game": per_game,
        "run": {"line": line.id, "chunks": sorted({p.name for p in chunks.files.values()}),
                "machines": list(chunks.machines)},
    }


def chunk_result(line: Line, first: int, last: int, played: Sequence[dict[str, Any]],
                 command: str | None, machine: str) -> dict[str, Any]:
    """The chunk file's content: the evaluation result of deals ``first..last`` from the games'
    raw results (``played``, in game order), as ``run_evaluation`` with ``seed = line seed + first`` gives it.
    ``run.seconds`` adds up the games' wall times (they may have run in parallel, among other lines' games)."""
    n, deals, seed, lineup = line.players, last - first + 1, line.seed + first, list(line.lineup)
    per_game = [_game_entry(g, g // n, g % n, seed + g // n, seat_specs(lineup, g % n), p) for g, p in enumerate(played)]
    return {
        "format": RESULT_FORMAT, "version": RESULT_VERSION,
        "map": line.map, "players": n, "lineup": lineup, "deals": deals, "seed": seed, "games": len(per_game),
        "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns, "pairing": PAIRING,
        "truncated": sum(g["truncated"] for g in per_game),
        "per_agent": agent_statistics(per_game, lineup), "paired": paired_summary(per_game, lineup),
        "per_game": per_game,
        "run": {"command": command,
                "arguments": {"map": line.map, "players": n, "lineup": lineup, "deals": deals, "seed": seed,
                              "intermediate_scoring": line.intermediate_scoring, "max_turns": line.max_turns},
                "seconds": sum(float(p.get("wall_seconds", 0.0)) for p in played),
                "versions": library_versions(), "machine": machine},
        "chunk": {"line": line.id, "first_deal": first, "last_deal": last, "setting_seed": line.seed},
    }


# ---------------------------------------------------------------- playing
def _play_timed(task: tuple[str, int, int, tuple[str, ...], bool, int]) -> dict[str, Any]:
    """One game in a worker: evaluation's raw result plus its wall time (``wall_seconds``)."""
    start = time.perf_counter()
    played = _play(task)
    return {**played, "wall_seconds": time.perf_counter() - start}


@dataclass
class _Job:
    line: Line
    first: int
    last: int
    played: list[dict[str, Any] | None]

    def tasks(self) -> list[tuple[str, int, int, tuple[str, ...], bool, int]]:
        n = self.line.players
        return [(self.line.map, n, self.line.seed + self.first + g // n, tuple(seat_specs(self.line.lineup, g % n)),
                 self.line.intermediate_scoring, self.line.max_turns) for g in range(len(self.played))]


def _prepare(lines: Sequence[Line], out: Path, deals_chunk: int) -> list[_Job]:
    jobs = []
    for line in lines:
        found = scan_line(line, out)
        for path, _ in found.invalid:
            os.replace(path, path.with_name(path.name + ".invalid"))
        for first, last in plan_chunks(line, found.games, deals_chunk):
            jobs.append(_Job(line, first, last, [None] * ((last - first + 1) * line.players)))
    return jobs


def run_lines(config: StrengthConfig, out: str | os.PathLike, *, lines: str | None = None, workers: int = 1,
              deals_chunk: int = DEFAULT_DEALS_CHUNK, progress: bool = True,
              command: str | None = None) -> dict[str, int]:
    """Play the chunks of the selected lines (``lines``: comma-separated globs) that ``out`` does not
    hold yet, writing each chunk as soon as its games are done (module doc, "Chunks").

    Returns counts: ``chunks_written``, ``games_played`` and ``deals_kept`` (deals of the selected
    lines that valid chunk files already held). ``ValueError`` for bad arguments or agents that
    cannot be built, before any game. Ctrl-C or SIGTERM (:mod:`concordia_env.arena.pools`): the games in
    flight finish and the chunks they complete are written, then ``Interrupted``; a second one kills them.
    """
    for name, value in (("workers", workers), ("deals_chunk", deals_chunk)):
        if not _is_int(value) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    selected = select_lines(config, lines)
    out = Path(out)
    jobs = _prepare(selected, out, deals_chunk)
    planned = sum(line.deals for line in selected)
    report = {"chunks_written": 0, "games_played": 0, "deals_kept": planned - sum(j.last - j.first + 1 for j in jobs)}
    if not jobs:
        return report
    for line in dict.fromkeys(j.line for j in jobs):  # builds every agent here, before the workers fork
        try:
            check_evaluation_args(line.map, line.players, list(line.lineup), line.deals, line.seed)
        except ValueError as exc:
            raise ValueError(f"line {line.id}: {exc}") from None
    from ..tools.bench import machine_description  # here: the benchmark module is not needed to play

    machine = machine_description()
    tasks = [(j, g, task) for j, job in enumerate(jobs) for g, task in enumerate(job.tasks())]

    def finish(j: int, g: int, played: dict[str, Any], bar: Any) -> None:
        job = jobs[j]
        job.played[g] = played
        report["games_played"] += 1
        bar.update()
        if all(p is not None for p in job.played):
            result = chunk_result(job.line, job.first, job.last, job.played, command, machine)  # type: ignore[arg-type]
            write_json_atomic(result, line_folder(out, job.line) / chunk_name(job.first, job.last))
            report["chunks_written"] += 1
            bar.set_postfix(chunks=f"{report['chunks_written']}/{len(jobs)}", refresh=False)

    workers = min(workers, len(tasks))
    # one BLAS thread here too, as in a pool's workers: several strength runs may run side by side
    with one_blas_thread(), pool_closed(process_pool(workers)) as pool, stop_signals("game") as interrupts:
        # the first games are submitted now, which forks the workers before tqdm starts its monitor thread
        played_games = PoolWork(_play_timed, [task for _, _, task in tasks], pool, workers, interrupts)
        with tqdm(total=len(tasks), disable=not progress, unit="game", desc="strength") as bar:
            for k, played in played_games:
                finish(tasks[k][0], tasks[k][1], played, bar)
        if played_games.cut_short:  # stopped: the chunks the finished games completed are written
            raise Interrupted()
    return report


# ---------------------------------------------------------------- summary
def openskill_ratings(games: Iterable[tuple[Sequence[str], Sequence[int]]], names: Sequence[str]) -> dict[str, Any]:
    """Plackett-Luce ratings from ``(name per seat, ranking)`` games in order, updated as
    :mod:`concordia_env.arena.tournament` does: every seat a one-player team placed by the
    ranking, a name filling several seats taking the mean of its seats' updated ratings."""
    model = PlackettLuce()
    mu = {name: model.rating(name=name).mu for name in names}
    sigma = {name: model.rating(name=name).sigma for name in names}
    rated = dict.fromkeys(names, 0)
    for seats, ranking in games:
        place = {seat: i + 1 for i, seat in enumerate(ranking)}
        teams = [[model.rating(mu=mu[s], sigma=sigma[s], name=s)] for s in seats]
        new = model.rate(teams, ranks=[place[k] for k in range(len(seats))])
        for name in dict.fromkeys(seats):
            mine = [team[0] for k, team in enumerate(new) if seats[k] == name]
            mu[name] = sum(t.mu for t in mine) / len(mine)
            sigma[name] = sum(t.sigma for t in mine) / len(mine)
            rated[name] += 1
    return {name: {"mu": mu[name], "sigma": sigma[name], "ordinal": mu[name] - 3 * sigma[name], "games": rated[name]}
            for name in names}


def _agent_summary(line: Line, stats: dict[str, Any], games: int) -> dict[str, Any]:
    wins = stats["wins"]
    lo, hi = wilson_interval(wins, games)
    keep = ("seats", "games", "wins", "win_rate", "win_rate_ci95", "fair_share", "finished", "truncated", "mean_vp",
            "mean_margin_best_other", "mean_margin_mean_others", "mean_place", "decisions", "ms_per_decision")
    return {**{k: stats[k] for k in keep}, "line_games": games, "game_share": wins / games if games else 0.0,
            "game_share_ci95": [lo, hi], "game_fair_share": stats["seats"] / line.players}


def line_summary(line: Line, merged: dict[str, Any]) -> dict[str, Any]:
    """A line's entry in the summary (module doc, "Summary"), from :func:`merged_line_result`."""
    a, b = line.agents
    spec_a, spec_b = line.lineup[0], line.lineup[-1]
    paired = merged["paired"]
    return {
        "id": line.id, "kind": line.kind, "agents": [a, b], "lineup": list(line.lineup),
        "games": merged["games"], "planned": line.planned, "deals": merged["deals"], "planned_deals": line.deals,
        "complete": merged["games"] == line.planned, "truncated": merged["truncated"],
        "per_agent": {a: {"spec": spec_a, **_agent_summary(line, merged["per_agent"][spec_a], merged["games"])},
                      b: {"spec": spec_b, **_agent_summary(line, merged["per_agent"][spec_b], merged["games"])}},
        "vp_difference": paired["vp_difference"], "win_rate_difference": paired["win_rate_difference"],
        "chunks": merged["run"]["chunks"], "machines": merged["run"]["machines"],
    }


def _setting_summary(config: StrengthConfig, s: Setting, out: Path, warn: bool) -> dict[str, Any]:
    names = {spec: name for name, spec in config.agents.items()}
    lines = [line for line in config.lines if line.setting == s.id]
    entries: list[dict[str, Any]] = []
    rated: list[tuple[list[str], list[int]]] = []
    seconds: dict[str, float] = {}
    decisions: dict[str, int] = {}
    for line in lines:
        merged = merged_line_result(line, scan_line(line, out, warn))
        entries.append(line_summary(line, merged))
        for game in merged["per_game"]:
            seats = [names[spec] for spec in game["seats"]]
            if not game["truncated"]:
                rated.append((seats, game["ranking"]))
            for seat, name in enumerate(seats):
                seconds[name] = seconds.get(name, 0.0) + game["act_seconds"][seat]
                decisions[name] = decisions.get(name, 0) + game["decisions"][seat]
    agents = list(dict.fromkeys(name for line in lines for name in line.agents))
    agents = [*[a for a in s.agents if a in agents], *[a for a in agents if a not in s.agents]]
    return {
        "id": s.id, "map": s.map, "players": s.players, "deals": s.deals, "seed": s.seed,
        "agents": agents, "matrix_agents": list(s.agents), "field": s.field,
        "games": sum(e["games"] for e in entries), "planned": sum(e["planned"] for e in entries),
        "lines": entries,
        "ms_per_decision": {a: {"ms": 1000 * seconds[a] / decisions[a] if decisions.get(a) else None,
                                "decisions": decisions.get(a, 0)} for a in agents},
        "ratings": openskill_ratings(rated, agents),
    }


def _target_summary(t: Target, line: dict[str, Any]) -> dict[str, Any]:
    mine = line["per_agent"][t.agent]
    other = next(a for a in line["agents"] if a != t.agent)
    ms, ms_other = mine["ms_per_decision"], line["per_agent"][other]["ms_per_decision"]
    ratio = ms / ms_other if ms is not None and ms_other else None
    played = line["games"]
    ok = mine["game_share"] >= t.min_win_rate and (t.max_ms_ratio is None or (ratio is not None and ratio <= t.max_ms_ratio))
    status = "pending" if played == 0 else ("reached" if ok else "missed") if line["complete"] else "partial"
    return {"line": t.line, "agent": t.agent, "opponent": other, "text": t.text, "min_win_rate": t.min_win_rate,
            "max_ms_ratio": t.max_ms_ratio, "games": played, "planned": line["planned"],
            "win_rate": mine["game_share"], "win_rate_ci95": mine["game_share_ci95"],
            "fair_share": mine["game_fair_share"], "ms_ratio": ratio, "status": status}


def build_summary(config: StrengthConfig, out: str | os.PathLike, warn: bool = True) -> dict[str, Any]:
    """The summary of everything ``out`` holds for ``config`` (module doc, "Summary")."""
    out = Path(out)
    settings = [_setting_summary(config, s, out, warn) for s in config.settings]
    by_id = {line["id"]: line for s in settings for line in s["lines"]}
    return {
        "format": SUMMARY_FORMAT, "version": FORMAT_VERSION, "config": config.raw,
        "games": sum(s["games"] for s in settings), "planned": sum(s["planned"] for s in settings),
        "settings": settings,
        "targets": [_target_summary(t, by_id[t.line]) for t in config.targets],
    }


# ---------------------------------------------------------------- the table
def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _rate_text(rate: float, ci: Sequence[float]) -> str:
    return f"{_pct(rate)}% [{_pct(ci[0])}–{_pct(ci[1])}]"


def _ms(x: float | None) -> str:
    if x is None:
        return "–"
    for limit, digits in ((100, 0), (10, 1), (1, 2)):
        if x >= limit:
            return f"{x:.{digits}f}"
    return f"{x:.3f}"


def _signed(summary: dict[str, Any] | None) -> str:
    if not summary or summary["mean"] is None:
        return "–"
    text = f"{summary['mean']:+.1f}"
    if summary["ci95"] is not None:
        text += f" [{summary['ci95'][0]:+.1f}, {summary['ci95'][1]:+.1f}]"
    return text


def _cell(line: dict[str, Any] | None, agent: str) -> str:
    """The agent's share of the line's games won, with its interval; the game count if partial."""
    if line is None:
        return "–"
    if line["games"] == 0:
        return "pending"
    a = line["per_agent"][agent]
    text = _rate_text(a["game_share"], a["game_share_ci95"])
    return text if line["complete"] else f"{text}, {line['games']} of {line['planned']} games"


def _title(s: dict[str, Any]) -> str:
    return f"{MAP_TITLES.get(s['map'], s['map'])}, {s['players']} players"


def _matrix(s: dict[str, Any]) -> list[str]:
    pairs = {tuple(line["agents"]): line for line in s["lines"] if line["kind"] == "pair"}
    field = {line["agents"][0]: line for line in s["lines"] if line["kind"] == "field"}
    names = s["matrix_agents"]
    extra = [f"+ {s['players'] - 1} {s['field']}"] if s["field"] else []
    out = ["| row vs column | " + " | ".join(names + extra) + " |", "| --- " * (len(names) + len(extra) + 1) + "|"]
    for row in names:
        cells = ["·" if row == col else _cell(pairs.get((row, col)) or pairs.get((col, row)), row) for col in names]
        if s["field"]:
            cells.append("·" if row == s["field"] else _cell(field.get(row), row))
        out.append(f"| **{row}** | " + " | ".join(cells) + " |")
    return out


def _line_rows(s: dict[str, Any]) -> list[str]:
    out = ["| line | games | win rates (A, B) | VP A − B per deal [95% CI] | ms per decision (A, B) |",
           "| --- | --- | --- | --- | --- |"]
    for line in s["lines"]:
        a, b = line["agents"]
        ra, rb = line["per_agent"][a], line["per_agent"][b]
        games = f"{line['games']} of {line['planned']}"
        if line["games"] == 0:
            out.append(f"| `{line['id']}` | {games} | pending | – | – |")
            continue
        rates = (f"{a} {_rate_text(ra['game_share'], ra['game_share_ci95'])}, "
                 f"{b} {_rate_text(rb['game_share'], rb['game_share_ci95'])}")
        out.append(f"| `{line['id']}` | {games} | {rates} | {_signed(line['vp_difference'])} | "
                   f"{_ms(ra['ms_per_decision'])}, {_ms(rb['ms_per_decision'])} |")
    return out


def _setting_section(s: dict[str, Any]) -> list[str]:
    n = s["players"]
    pair = "A, B" if n == 2 else "A, A, B, B"
    field = (f" The last column: the row agent in one seat and {s['field']} in the other {n - 1} "
             f"(fair share {100 / n:g}%).") if s["field"] else ""
    out = [f"### {_title(s)}", "",
           f"{s['games']} of {s['planned']} games played. The deals are set up with seeds {s['seed']}–"
           f"{s['seed'] + s['deals'] - 1}, each played once per seat rotation ({s['deals']} × {n} = {s['deals'] * n} games a line). "
           f"A cell is the share of the games the row agent won against the column agent (line-up {pair}: "
           f"fair share 50%), with its 95% Wilson interval.{field}", ""]
    out += _matrix(s) + [""] + _line_rows(s) + [""]
    return out


def _ms_table(settings: Sequence[dict[str, Any]]) -> list[str]:
    names = list(dict.fromkeys(a for s in settings for a in s["agents"]))
    out = ["| agent | " + " | ".join(_title(s) for s in settings) + " |", "| --- " * (len(settings) + 1) + "|"]
    for name in names:
        cells = [_ms(s["ms_per_decision"][name]["ms"]) if name in s["ms_per_decision"] else "–" for s in settings]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out


def _ratings_table(s: dict[str, Any]) -> list[str]:
    out = [f"{_title(s)}:", "", "| # | agent | ordinal | mu | sigma | rated games |", "| --- | --- | --- | --- | --- | --- |"]
    ranked = sorted(s["ratings"].items(), key=lambda kv: (-kv[1]["ordinal"], s["agents"].index(kv[0])))
    for i, (name, r) in enumerate(ranked, 1):
        out.append(f"| {i} | {name} | {r['ordinal']:.2f} | {r['mu']:.2f} | {r['sigma']:.2f} | {r['games']} |")
    return out + [""]


def _targets_table(targets: Sequence[dict[str, Any]]) -> list[str]:
    out = ["| target | line | result | status |", "| --- | --- | --- | --- |"]
    for t in targets:
        want = f"{t['agent']} wins ≥ {_pct(t['min_win_rate'])}% against {t['opponent']}"
        if t["max_ms_ratio"] is not None:
            want += f", ≤ {t['max_ms_ratio']:g}× its time per decision"
        text = t["text"] or want
        if t["games"] == 0:
            result = f"0 of {t['planned']} games"
        else:
            result = f"{_rate_text(t['win_rate'], t['win_rate_ci95'])} of {t['games']} of {t['planned']} games"
            if t["ms_ratio"] is not None:
                result += f"; {t['ms_ratio']:.2f}× the time per decision"
        out.append(f"| {text} | `{t['line']}` | {result} | **{t['status']}** |")
    return out


def render(summary: dict[str, Any]) -> str:
    """The markdown of the strength table (what stands between the markers in docs/agents.md)."""
    settings = summary["settings"]
    lines_all = [line for s in settings for line in s["lines"]]
    pending = [f"`{line['id']}`" for line in lines_all if line["games"] == 0]
    partial = [f"`{line['id']}` ({line['games']} of {line['planned']} games)"
               for line in lines_all if 0 < line["games"] < line["planned"]]
    out = [f"_Generated by `{PROG}` from `summary.json`: {summary['games']} of {summary['planned']} planned "
           f"games played; {len(lines_all) - len(pending) - len(partial)} of {len(lines_all)} lines complete._", "",
           "| agent | spec |", "| --- | --- |"]
    out += [f"| {a['name']} | `{a['spec']}` |" for a in summary["config"]["agents"]] + [""]
    if pending:
        out += ["Pending lines (no games yet): " + ", ".join(pending) + ".", ""]
    if partial:
        out += ["Partial lines: " + ", ".join(partial) + ".", ""]
    for s in settings:
        out += _setting_section(s)
    machines = sorted({m for line in lines_all for m in line["machines"]})
    where = f" Played on: {'; '.join(machines)}." if machines else ""
    out += ["### Time per decision", "", "Mean milliseconds of `act` per decision over every game of the setting, "
            "wall time as the games were played, several processes at a time (each chunk file names its machine), "
            f"so it shows the order of magnitude; `agents_bench` times an agent alone.{where}", ""]
    out += _ms_table(settings) + [""]
    out += ["### OpenSkill ratings", "", "Plackett–Luce, from every finished game of the setting, lines in the "
            "order above, games in game order (ordinal = mu − 3 sigma).", ""]
    for s in settings:
        out += _ratings_table(s)
    if summary["targets"]:
        out += ["### Targets", ""] + _targets_table(summary["targets"]) + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def replace_table(text: str, table: str, source: str = "the page") -> str:
    """``text`` with what stands between the strength-table markers replaced by ``table``."""
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < 0 or end < start or text.count(START_MARKER) != 1 or text.count(END_MARKER) != 1:
        raise ValueError(f"{source} needs one {START_MARKER} line and, after it, one {END_MARKER} line")
    return text[:start + len(START_MARKER)] + "\n" + table + text[end:]


def table_in(text: str, source: str = "the page") -> str:
    """What stands between the markers (the inverse of :func:`replace_table`)."""
    start, end = text.find(START_MARKER), text.find(END_MARKER)
    if start < 0 or end < start:
        raise ValueError(f"{source} has no {START_MARKER} ... {END_MARKER} block")
    return text[start + len(START_MARKER) + 1:end]


def update_docs(path: str | os.PathLike, table: str) -> None:
    """Write ``table`` between the markers of the page at ``path`` (atomically)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--docs {path}: cannot be read ({exc})") from None
    new = replace_table(text, table, f"--docs {path}")
    if new != text:
        write_text_atomic(path, new)


def default_docs(out: str | os.PathLike) -> Path | None:
    """The page to update when ``--docs`` is not given: docs/agents.md for the committed results
    folder, none for any other (so a trial run elsewhere leaves the committed table alone)."""
    try:
        same = Path(out).resolve() == COMMITTED_OUT.resolve()
    except OSError:
        return None
    return DOCS_PAGE if same and DOCS_PAGE.is_file() else None


def write_outputs(config: StrengthConfig, out: str | os.PathLike, docs: str | os.PathLike | None,
                  warn: bool = True) -> dict[str, Any]:
    """Build the summary, write ``OUT/summary.json``, ``OUT/table.md`` and the docs page (if any); the summary."""
    out = Path(out)
    summary = build_summary(config, out, warn)
    table = render(summary)
    if docs is not None:  # first: a page without markers fails before anything is written
        update_docs(docs, table)
    write_json_atomic(summary, out / "summary.json")
    write_text_atomic(out / "table.md", table)
    return summary


# ---------------------------------------------------------------- command line
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--config", type=Path, required=True, help="the table's config JSON (see the module doc)")
    p.add_argument("--out", type=Path, required=True, help="results folder: lines/<line>/deals_*.json, summary.json")
    p.add_argument("--workers", type=positive_int, default=1, help="worker processes (default: 1)")
    p.add_argument("--lines", default=None, help="play only the lines whose id matches one of these comma-separated "
                                                  "globs, e.g. 'italia2-*' (the summary covers all lines)")
    p.add_argument("--deals-chunk", type=positive_int, default=DEFAULT_DEALS_CHUNK,
                   help=f"deals per chunk file (default: {DEFAULT_DEALS_CHUNK})")
    p.add_argument("--table-only", action="store_true", help="play nothing: rebuild the summary and the table")
    p.add_argument("--docs", type=Path, default=None,
                   help="page whose strength-table block to rewrite (default: docs/agents.md when --out is the "
                        "committed agents/results/strength, else none)")
    p.add_argument("--no-docs", action="store_true", help="do not rewrite any docs page")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _show_warning(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
    print(f"{PROG}: warning: {message}", file=sys.stderr)


def _run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    config = load_config(args.config)
    docs = None if args.no_docs else (args.docs if args.docs is not None else default_docs(args.out))
    if docs is not None and not Path(docs).is_file():
        raise ValueError(f"--docs {docs}: no such file")
    if not args.table_only:
        select_lines(config, args.lines)
        args.out.mkdir(parents=True, exist_ok=True)
        report = run_lines(config, args.out, lines=args.lines, workers=args.workers, deals_chunk=args.deals_chunk,
                           progress=not args.no_progress, command=f"{PROG} {shlex.join(argv)}")
        print(f"{report['games_played']} games played, {report['chunks_written']} chunk files written, "
              f"{report['deals_kept']} deals already held")
    summary = write_outputs(config, args.out, docs)
    print(f"{summary['games']} of {summary['planned']} planned games in {args.out}; wrote "
          f"{args.out / 'summary.json'}, {args.out / 'table.md'}" + (f" and the table in {docs}" if docs else ""))
    for t in summary["targets"]:
        print(f"target {t['line']} ({t['agent']} >= {100 * t['min_win_rate']:.0f}%): {t['status']}, "
              f"{100 * t['win_rate']:.1f}% of {t['games']} of {t['planned']} games")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; exit status 0, 1 (a failure while playing or writing), 2 (bad arguments or
    config) or 130 (Ctrl-C: the finished chunks are kept). Errors are one line, never a traceback."""
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("always", StrengthWarning)
        warnings.showwarning = _show_warning
        try:
            return _run(args, argv)
        except ValueError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM (concordia_env.arena.pools)
            print(f"{PROG}: interrupted; the chunks already written are kept in {args.out / 'lines'}; go on with: "
                  f"{PROG} {shlex.join(argv)}", file=sys.stderr)
            return 130
        except Exception as exc:  # noqa: BLE001 - a game or a write failed: one line, not a traceback
            print(f"{PROG}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
