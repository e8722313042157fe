"""A ladder results file as markdown: the agent's row in the strength table's own cells and columns."""

from __future__ import annotations

from typing import Any

from ..strength.table import _cell, _forfeit_note, _line_rows, _ms, _ratings_table, _title
from ..tournament import forfeit_lines


def _row(name: str, s: dict[str, Any]) -> list[str]:
    """The agent's row of the table's matrix: its share of the games won against each opponent, and
    with the field, in the table's column order."""
    pairs = {line["agents"][1]: line for line in s["lines"] if line["kind"] == "pair"}
    field = next((line for line in s["lines"] if line["kind"] == "field"), None)
    extra = [f"+ {s['players'] - 1} {s['field']}"] if s["field"] else []
    columns = list(s["opponents"]) + extra
    cells = [_cell(pairs.get(c), name) for c in s["opponents"]] + ([_cell(field, name)] if field else [])
    return ["| row vs column | " + " | ".join(columns) + " |", "| --- " * (len(columns) + 1) + "|",
            f"| **{name}** | " + " | ".join(cells) + " |"]


def _forfeit_list(s: dict[str, Any]) -> list[str]:
    """One line per forfeited game of the setting (as the tournament's table lists them): the line,
    game, seat, agent and reason; nothing without forfeits."""
    forfeited = [(line["id"], g) for line in s["lines"] for g in line["per_game"] if "forfeit" in g]
    if not forfeited:
        return []
    return [f"- {text}" for text in forfeit_lines([g for _, g in forfeited], [f"{i} " for i, _ in forfeited])] + [""]


def _forfeits(doc: dict[str, Any]) -> int:
    return sum(line["forfeits"] for s in doc["settings"] for line in s["lines"])


def _setting_section(name: str, s: dict[str, Any]) -> list[str]:
    seed, deals = s["seed"], s["deals"]
    status = ("comparable with the table's rows" if s["comparable"]
              else "**not comparable** with the table's rows: " + "; ".join(s["not_comparable"]))
    itself = f" Left out: {', '.join(s['itself'])}, whose spec is the agent's." if s["itself"] else ""
    seeds = f"seed {seed}" if deals == 1 else f"seeds {seed}–{seed + deals - 1}"
    out = [f"### {_title(s)}", "",
           f"{s['games']} games: the deals set up with {seeds}, each played once per seat rotation; "
           f"{status}.{itself}", ""]
    out += _row(name, s) + [""] + _line_rows(s) + [""] + _forfeit_note(s) + _forfeit_list(s)
    ms = s["ms_per_decision"]
    r = s["ratings"][name]
    out += [f"Time per decision: {_ms(ms['ms'])} ms over {ms['decisions']} decisions (wall time as played).", "",
            f"OpenSkill: ordinal {r['ordinal']:.2f} (mu {r['mu']:.2f}, sigma {r['sigma']:.2f}, {r['games']} rated "
            f"games), {s['rank']} of {len(s['ratings'])}: rated from where the table's ratings end, which its "
            f"games move too:", ""]
    out += _ratings_table({**s, "agents": list(s["ratings"])})
    return out


def render_results(doc: dict[str, Any]) -> str:
    """The markdown of a ladder results file: per setting the agent's row, its lines, its time per
    decision and the OpenSkill ratings after its games."""
    name, spec = doc["agent"]["name"], doc["agent"]["spec"]
    verdict = ("comparable with the strength table" if doc["comparable"]
               else "not comparable with the strength table (see each setting)")
    forfeits = f", {_forfeits(doc)} forfeited" if _forfeits(doc) else ""
    out = [f"Ladder: {name} (`{spec}`), {doc['games']} games{forfeits}; {verdict}.", ""]
    for s in doc["settings"]:
        out += _setting_section(name, s)
    return "\n".join(out).rstrip("\n") + "\n"


def describe(doc: dict[str, Any]) -> str:
    """One line saying what a valid results file holds."""
    settings = ", ".join(f"{s['id']} ({'comparable' if s['comparable'] else 'not comparable'})"
                         for s in doc["settings"])
    forfeits = f", {_forfeits(doc)} forfeited" if _forfeits(doc) else ""
    return f"{doc['agent']['name']} (`{doc['agent']['spec']}`), {doc['games']} games{forfeits}: {settings}"
