"""The turn agent's committed results: the figures the docs quote are those of the files."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _rows(page: str, marker: str) -> list[str]:
    return [line for line in (ROOT / "docs" / page).read_text(encoding="utf-8").splitlines()
            if line.startswith("|") and marker in line]


def test_the_ablation_table_quotes_its_tournament_files():
    rows = [r for r in _rows("agents.md", "italia2_") if "value_completion/" not in r]
    files = sorted((ROOT / "results" / "turn_ablation").glob("*.json"))
    assert len(rows) == len(files) >= 7
    for path in files:
        result = json.loads(path.read_text())
        assert result["complete"] and result["games"] == 200 and result["map"] == "italia"
        agent, opponent = result["agents"]
        stats = result["per_agent"][agent]
        lo, hi = stats["win_rate_ci95"]
        row = next(r for r in rows if f"`{path.name}`" in r)
        # the games were played before training/release/ became releases/: the docs show the spec with today's path
        assert f"`{agent.replace('training/release/', 'releases/')}`" in row
        assert opponent == "heuristic"
        assert f"{stats['wins']}/200" in row
        assert f"{100 * stats['win_rate']:.1f}% [{100 * lo:.1f}–{100 * hi:.1f}]" in row
        assert f"{stats['mean_vp']:.1f}, {result['per_agent'][opponent]['mean_vp']:.1f}" in row


def _curves(name: str) -> dict:
    return json.loads((ROOT / "releases" / name / "curves.json").read_text())


def test_the_td_tables_quote_the_released_runs_curves():
    rounds = _curves("turn_italia")["rounds"] + _curves("turn_imperium")["rounds"]  # the page's order
    rows = [r for r in _rows("training.md", "") if r.split("|")[1].strip().isdigit()]
    rows = [r for r in rows if len(r.split("|")) == 8]
    assert len(rows) == len(rounds)
    for row, rnd in zip(rows, rounds):
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[0] == str(rnd["round"])
        assert cells[2] == f"{rnd['train']['positions']:,}"
        assert cells[3] == f"{rnd['train']['epochs'][-1]['val_win_ce']:.3f}"
        for gate in rnd["gate"]:
            assert f"{gate['wins']}/{gate['games']}" in row
    page = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert f"{_curves('turn_italia')['cpu_hours']:.2f} CPU-hours" in page
    assert f"{_curves('turn_imperium')['cpu_hours']:.2f} CPU-hours" in page


def test_the_telemetry_table_quotes_the_released_runs_curves():
    curves = _curves("turn_italia")
    rows = [r for r in _rows("training.md", "") if len(r.split("|")) == 7 and r.split("|")[1].strip().isdigit()]
    assert len(rows) == len(curves["rounds"])
    for row, rnd in zip(rows, curves["rounds"]):
        te = rnd["telemetry"]
        cells = [c.strip() for c in row.split("|")[1:-1]]
        assert cells[1:4] == [f"{te['decisions']:,}", f"{100 * te['agreement_tie_aware']:.1f}%",
                              f"{te['mean_regret']:.2f}"]
        for card in cells[4].split(", "):
            name, rate, count = card.split(" ")
            assert f"{100 * te['by_card'][name]['agreement_tie_aware']:.1f}%" == rate
            assert f"({te['by_card'][name]['decisions']})" == count


def test_the_distilled_completion_is_quoted_with_its_held_out_agreement():
    header = json.loads((ROOT / "releases" / "turn_italia" / "completion" / "italia.json").read_text())
    meta = header["metadata"]
    assert meta["trainer"] == "turn_td.completion" and meta["games"] == 1000
    page = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    assert f"agrees with the\nheuristic on {100 * meta['held_out_agreement']:.1f}% of" in page
    assert f"({meta['decisions']:,} decisions" in page


def test_the_value_completion_lines_are_quoted_from_their_files():
    rows = _rows("agents.md", "value_completion/")
    files = sorted((ROOT / "results" / "value_completion").glob("*.json"))
    assert len(rows) == len(files) >= 4
    for path in files:
        result = json.loads(path.read_text())
        assert result["complete"] and result["games"] in (200, 1000)
        agent, *field = result["agents"]
        assert set(field) == {"heuristic"} and len(field) == result["players"] - 1
        completer = agent.split("completer=")[1]
        assert (ROOT / f"{completer}.npz").is_file() and ":complete=net:" in agent
        stats = result["per_agent"][agent]
        lo, hi = stats["win_rate_ci95"]
        row = next(r for r in rows if f"value_completion/{path.name}" in r)
        assert f"`{agent}`" in row and f"{stats['wins']}/{result['games']}" in row
        assert f"{100 * stats['win_rate']:.1f}% [{100 * lo:.1f}–{100 * hi:.1f}]" in row


def test_the_value_completions_are_quoted_with_their_training():
    page = (ROOT / "docs" / "training.md").read_text(encoding="utf-8")
    for name, stem in (("turn_italia", "italia"), ("turn_imperium", "imperium")):
        meta = json.loads((ROOT / "releases" / name / "completion_value" / f"{stem}.json").read_text())["metadata"]
        assert meta["trainer"] == "turn_td.completion" and meta["target"] == "value" and meta["hidden"] == 512
        held = f"{100 * meta['held_out_agreement']:.1f}% and gives up {meta['held_out_regret']:.2f} points"
        assert held in page, held
        assert f"{meta['decisions']:,} decisions" in page
