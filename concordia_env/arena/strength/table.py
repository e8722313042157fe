"""The strength table as markdown, and the block of a docs page it is written into."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..._internal.files import write_json_atomic, write_text_atomic
from .config import MAP_TITLES, PROG, StrengthConfig
from .summary import build_summary

START_MARKER = "<!-- strength-table:start -->"
END_MARKER = "<!-- strength-table:end -->"


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


def _forfeit_note(s: dict[str, Any]) -> list[str]:
    """Where the setting's lines had forfeits, one sentence counting them per line and agent (as the
    tournament's ``forfeits`` column; the chunk files name each one's reason); nothing otherwise."""
    counts = [f"`{line['id']}`: " + ", ".join(f"{name} {a['forfeits']}" for name, a in line["per_agent"].items()
                                             if a["forfeits"])
              for line in s["lines"] if line["forfeits"]]
    if not counts:
        return []
    return ["Forfeits (an agent failed: the game has no winner, counts as played and is rated with the "
            "forfeiting seat last): " + "; ".join(counts) + ".", ""]


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
    out += _matrix(s) + [""] + _line_rows(s) + [""] + _forfeit_note(s)
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
