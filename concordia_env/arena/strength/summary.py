"""The strength table's summary: per line, per setting (ms per decision, OpenSkill ratings) and the targets."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..stats import is_rated, openskill_ratings, wilson_interval
from .chunks import merged_line_result, scan_line
from .config import FORMAT_VERSION, Line, Setting, StrengthConfig, Target

SUMMARY_FORMAT = "concordia-env/strength-summary"


# ---------------------------------------------------------------- summary
def _agent_summary(line: Line, stats: dict[str, Any], games: int) -> dict[str, Any]:
    wins = stats["wins"]
    lo, hi = wilson_interval(wins, games)
    keep = ("seats", "games", "wins", "win_rate", "win_rate_ci95", "fair_share", "finished", "truncated", "forfeits",
            "mean_vp", "mean_margin_best_other", "mean_margin_mean_others", "mean_place", "decisions", "ms_per_decision")
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
        "complete": merged["games"] == line.planned, "truncated": merged["truncated"], "forfeits": merged["forfeits"],
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
            if is_rated(game):  # finished or forfeited: ranked as the tournament ranks them
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
        "forfeits": sum(e["forfeits"] for e in entries), "lines": entries,
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
