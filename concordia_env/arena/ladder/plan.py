"""What a ladder run plays: the strength table it is compared with, and the agent's lines on its deals."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import concordia_env

from ..records import read_json_file
from ..run_folder import same_json
from ..strength.config import NAME_RE, Line, Setting, StrengthConfig, load_config, setting_lines
from ..strength.summary import SUMMARY_FORMAT

#: the committed strength table, where a checkout of the repository has it
DEFAULT_TABLE = Path(concordia_env.__file__).resolve().parents[1] / "results" / "strength"
#: the row's name unless ``--name`` gives one
DEFAULT_NAME = "challenger"
#: the rating fields taken over from the table's summary
RATING_KEYS = ("mu", "sigma", "ordinal", "games")


# ---------------------------------------------------------------- the strength table
@dataclass(frozen=True)
class Table:
    """The strength table a ladder row is compared with: its config, and per setting the OpenSkill
    ratings its summary ends with (every agent's ``mu``, ``sigma``, ``ordinal`` and rated ``games``)."""

    folder: Path
    config: StrengthConfig
    ratings: dict[str, dict[str, dict[str, Any]]]


def _summary_ratings(summary: Any, config: StrengthConfig, where: str) -> dict[str, dict[str, dict[str, Any]]]:
    if not isinstance(summary, dict) or summary.get("format") != SUMMARY_FORMAT:
        raise ValueError(f"{where} is not a strength-table summary (format {SUMMARY_FORMAT!r})")
    if not same_json(summary.get("config"), config.raw):
        raise ValueError(f"{where} was built from another config than config.json beside it; rebuild it with "
                         f"python -m concordia_env.arena.strength --table-only")
    settings = summary.get("settings")
    if not isinstance(settings, list) or [s.get("id") for s in settings] != [s.id for s in config.settings]:
        raise ValueError(f"{where}: its settings are not the config's")
    ratings = {}
    for s in settings:
        if s["games"] != s["planned"]:
            raise ValueError(f"{where}: setting {s['id']} is not complete ({s['games']} of {s['planned']} games), "
                             f"so its ratings are not the table's")
        ratings[s["id"]] = {name: {key: r[key] for key in RATING_KEYS} for name, r in s["ratings"].items()}
    return ratings


def load_table(folder: str | os.PathLike) -> Table:
    """The strength table in ``folder`` (its ``config.json`` and complete ``summary.json``);
    ``ValueError`` in one line naming the folder and what is missing or wrong."""
    folder = Path(folder)
    where = f"--table {folder}"
    if not folder.is_dir():
        raise ValueError(f"{where}: no such folder; name the strength table's folder (results/strength in a "
                         f"checkout of concordia-env)")
    try:
        config = load_config(folder / "config.json")
        summary = read_json_file(folder / "summary.json", "summary")
    except FileNotFoundError:
        raise ValueError(f"{where}: no summary.json there") from None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    try:
        ratings = _summary_ratings(summary, config, "its summary.json")
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{where}: its summary.json is malformed ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None
    return Table(folder, config, ratings)


# ---------------------------------------------------------------- the ladder
@dataclass(frozen=True)
class LadderSetting:
    """One setting of the table as the ladder plays it: the table's setting, the deals played
    (the first ``deals`` of it), the opponents (pool names in table order), the field (or None),
    the table agents left out because they are the agent itself, and the lines."""

    table: Setting
    deals: int
    opponents: tuple[str, ...]
    field: str | None
    itself: tuple[str, ...]
    lines: tuple[Line, ...]

    def notes(self, pool: Sequence[str]) -> list[str]:
        """Why this setting's row is not comparable with the table's (empty: it is)."""
        notes = []
        if self.deals < self.table.deals:
            notes.append(f"{self.deals} of the table's {self.table.deals} deals")
        table_agents = dict.fromkeys([*self.table.agents, *([self.table.field] if self.table.field else [])])
        left = [a for a in table_agents if a not in pool and a not in self.itself]
        if left:
            notes.append(f"without {', '.join(left)} in the pool")
        return notes


@dataclass(frozen=True)
class Ladder:
    """A ladder run: the agent (``name``, ``spec``), the table, the settings played and the pool."""

    name: str
    spec: str
    table: Table
    settings: tuple[LadderSetting, ...]
    pool: tuple[str, ...]
    deals: int | None

    @property
    def lines(self) -> tuple[Line, ...]:
        return tuple(line for s in self.settings for line in s.lines)

    def options(self) -> dict[str, Any]:
        """What the run is (its folder's settings file, and the results file's ``options``)."""
        return {"agent": self.spec, "name": self.name, "map": [s.table.map for s in self.settings],
                "pool": list(self.pool), "deals": self.deals}

    def strength_config(self) -> StrengthConfig:
        """The ladder's lines as a strength-table config, for the table's chunk runner."""
        agents = {**self.table.config.agents, self.name: self.spec}
        return StrengthConfig(agents, tuple(s.table for s in self.settings), (), self.lines, {})


def _pool(table: Table, pool: Sequence[str] | None) -> tuple[str, ...]:
    """The pool's names in table order; an entry may be a table agent's name or its spec."""
    agents = table.config.agents
    if pool is None:
        return tuple(agents)
    if isinstance(pool, str) or not all(isinstance(p, str) for p in pool):
        raise ValueError(f"--pool must be a list of the table's agent names, got {pool!r}")
    by_spec = {spec: name for name, spec in agents.items()}
    names = []
    for entry in pool:
        name = entry.strip() if entry.strip() in agents else by_spec.get(entry.strip())
        if name is None:
            raise ValueError(f"--pool: {entry!r} is not an agent of the strength table; its agents: {', '.join(agents)}")
        names.append(name)
    if not names:
        raise ValueError("--pool names no agent")
    return tuple(a for a in agents if a in names)


def _settings(table: Table, maps: Sequence[str] | None) -> list[Setting]:
    settings = list(table.config.settings)
    if maps is None:
        return settings
    known = list(dict.fromkeys(s.map for s in settings))
    if isinstance(maps, str) or not maps or not all(isinstance(m, str) and m in known for m in maps):
        raise ValueError(f"--map must name maps of the table's settings ({', '.join(known)}), got {maps!r}")
    return [s for s in settings if s.map in maps]


def _ladder_setting(table: Table, s: Setting, name: str, spec: str, pool: Sequence[str],
                    deals: int | None) -> LadderSetting:
    """The agent against every pool agent of ``s`` (and with the field, if it is in the pool), as the
    table's lines with the agent listed first, on the first ``deals`` deals."""
    agents = table.config.agents
    itself = tuple(a for a in s.agents if agents[a] == spec)  # a line against itself tells nothing
    opponents = tuple(a for a in s.agents if a in pool and a not in itself)
    field = s.field if s.field in pool and s.field not in itself else None
    played = s.deals if deals is None else min(deals, s.deals)
    mine = Setting(s.id, s.map, s.players, played, s.seed, (name, *opponents), (), field)
    raw = table.config.raw
    lines = [line for line in setting_lines(mine, {**agents, name: spec}, raw["intermediate_scoring"], raw["max_turns"])
             if line.agents[0] == name]
    if not lines:
        raise ValueError(f"--pool leaves the agent no opponent in setting {s.id}")
    return LadderSetting(s, played, opponents, field, itself, tuple(lines))


def make_ladder(table: Table, spec: str, *, name: str = DEFAULT_NAME, maps: Sequence[str] | None = None,
                pool: Sequence[str] | None = None, deals: int | None = None) -> Ladder:
    """The ladder of agent ``spec`` (shown as ``name``) against ``pool`` (table agent names or specs,
    default all) on the settings of ``maps`` (default all), each on its first ``deals`` deals
    (default all). Builds no agent. ``ValueError`` in one line naming the option."""
    if not isinstance(spec, str) or not spec.strip() or "," in spec:
        raise ValueError(f"--agent must be one agent spec like 'heuristic' or 'mcts:iterations=200', got {spec!r}")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ValueError(f"--name must be letters, digits, '_' and '.' (starting with a letter or digit), got {name!r}")
    if name in table.config.agents:
        raise ValueError(f"--name {name}: the table has an agent of that name; choose another")
    if deals is not None and (isinstance(deals, bool) or not isinstance(deals, int) or deals < 1):
        raise ValueError(f"--deals must be a positive integer, got {deals!r}")
    names = _pool(table, pool)
    settings = tuple(_ladder_setting(table, s, name, spec.strip(), names, deals) for s in _settings(table, maps))
    return Ladder(name, spec.strip(), table, settings, names, deals)
