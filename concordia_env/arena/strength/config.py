"""The strength table's config: agents, settings and their lines, targets; parsed and checked."""

from __future__ import annotations

import fnmatch
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...agents.base import parse_spec
from ...agents.external import ENTRY_POINT_GROUP, module_of
from ...data import MAP_NAMES
from ...env import DEFAULT_MAX_TURNS, check_max_turns
from ...game import check_setup_args

PROG = "python -m concordia_env.arena.strength"
CONFIG_FORMAT = "concordia-env/strength-config"
FORMAT_VERSION = 1
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.]*$")
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
            module = module_of(parse_spec(spec)[0])
        except ValueError as exc:
            raise ValueError(f"{where}.spec: {exc}") from None
        if module is not None:  # a config is a file: reading it must not run code (see agents.external)
            raise ValueError(f"{where}.spec {spec!r} would import the Python module {module!r}, and a config "
                             f"never imports a module; install the agent as a {ENTRY_POINT_GROUP!r} entry "
                             f"point and name that")
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
