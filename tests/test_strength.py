"""The strength table (concordia_env.arena.strength): config checks, resumable chunks, merging equal to
one evaluation run, summary and ratings, the rendered table, the command line, and the committed table."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from processes import interrupt_on_call

from concordia_env.arena import strength as st
from concordia_env.arena import tournament
from concordia_env.arena.evaluation import comparable, run_evaluation
from concordia_env.arena.strength import chunks as st_chunks
from concordia_env.arena.strength import cli as st_cli
from concordia_env.arena.tournament import wilson_interval

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "results" / "strength"

TINY = {
    "format": "concordia-env/strength-config", "version": 1,
    "agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "random", "spec": "random"}],
    "settings": [
        {"id": "italia2", "map": "italia", "players": 2, "deals": 3, "seed": 5, "agents": ["heuristic", "random"]},
        {"id": "imperium4", "map": "imperium", "players": 4, "deals": 2, "seed": 7, "agents": ["heuristic", "random"],
         "field": "heuristic"},
    ],
    "targets": [
        {"line": "italia2-heuristic-vs-random", "agent": "heuristic", "min_win_rate": 0.6, "text": "beats random"},
        {"line": "imperium4-random-plus-3-heuristic", "agent": "random", "min_win_rate": 0.5},
    ],
}
LINE_IDS = ["italia2-heuristic-vs-random", "imperium4-heuristic-vs-random", "imperium4-random-plus-3-heuristic"]
FILES = {"italia2-heuristic-vs-random": ["deals_000-001.json", "deals_002-002.json"],
         "imperium4-heuristic-vs-random": ["deals_000-001.json"],
         "imperium4-random-plus-3-heuristic": ["deals_000-001.json"]}
GAMES = 3 * 2 + 2 * 4 + 2 * 4


def with_games(names: list[str]) -> list[str]:
    """A line folder's chunk files with the games file each has beside it, sorted."""
    return sorted([*names, *(n.removesuffix(".json") + ".games.jsonl.gz" for n in names)])


def mtimes(out: Path) -> dict[str, int]:
    return {p.relative_to(out).as_posix(): p.stat().st_mtime_ns for p in sorted((out / "lines").rglob("*.json"))}


def no_games(monkeypatch) -> None:
    def refuse(task):
        raise AssertionError(f"a game was played: {task}")

    monkeypatch.setattr(st_chunks, "_play", refuse)


@pytest.fixture(scope="module")
def config():
    return st.parse_config(copy.deepcopy(TINY), "tiny")


@pytest.fixture(scope="module")
def played(config, tmp_path_factory):
    """Every line of the tiny config played in chunks of 2 deals, one process: (out folder, report)."""
    out = tmp_path_factory.mktemp("strength")
    report = st.run_lines(config, out, deals_chunk=2, workers=1, progress=False, command="test")
    return out, report


@pytest.fixture(scope="module")
def summary(config, played):
    return st.build_summary(config, played[0])


# ------------------------------------------------------------------ config
def test_lines_follow_the_config(config):
    assert [line.id for line in config.lines] == LINE_IDS
    it, pair, field = config.lines
    assert it.lineup == ("heuristic", "random") and it.planned == 6 and it.seed == 5
    assert pair.lineup == ("heuristic", "heuristic", "random", "random") and pair.planned == 8
    assert field.lineup == ("random", "heuristic", "heuristic", "heuristic") and field.agents == ("random", "heuristic")
    assert st.select_lines(config, "imperium4-*") == [pair, field]
    assert st.select_lines(config, "italia2-*, *-plus-*") == [it, field]
    with pytest.raises(ValueError, match="'nothing-\\*' matches no line"):
        st.select_lines(config, "nothing-*")


def test_the_committed_config_is_valid():
    config = st.load_config(COMMITTED / "config.json")
    # 9 agents in each setting: every pair in each (36 + 36) and Imperium's 8 others each with three heuristics
    assert len(config.lines) == 36 + 36 + 8
    assert all(line.planned == 200 for line in config.lines)
    assert {t.line for t in config.targets} == {
        "italia2-az-vs-heuristic", "imperium4-az-plus-3-heuristic", "italia2-az-vs-mcts1000", "italia2-azv2-vs-mcts1000",
        "italia2-net-vs-heuristic", "italia2-turn-vs-heuristic", "imperium4-turn-plus-3-heuristic",
        "italia2-turn-vs-mcts1000", "italia2-netv2-vs-heuristic", "imperium4-netv2-plus-3-heuristic"}


def _bad(path: str, value):
    """TINY with the value at a dotted path (list indices as numbers) replaced; ``...`` deletes it."""
    cfg = copy.deepcopy(TINY)
    *keys, last = [int(k) if k.isdigit() else k for k in path.split(".")]
    node: Any = cfg
    for k in keys:
        node = node[k]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return cfg


@pytest.mark.parametrize("path, value, message", [
    ("agents", [], "'agents' must be a list of at least 2"),
    ("agents.1.name", "heuristic", "agent name 'heuristic' is listed twice"),
    ("agents.1.name", "my random", "agents\\[1\\].name must be a name"),
    ("agents.1.spec", "mcts:iterations", "option 'iterations' is not key=value"),
    ("agents.1.spec", "heuristic", "spec 'heuristic' is listed twice"),
    ("settings.0.players", 3, "settings\\[0\\].players must be 2 or 4"),
    ("settings.0.map", "roma", "unknown map 'roma'"),
    ("settings.0.deals", 0, "settings\\[0\\].deals must be a positive int"),
    ("settings.0.seed", "0", "settings\\[0\\].seed must be an int"),
    ("settings.0.agents", ["heuristic", "mcts"], "settings\\[0\\].agents: unknown agent 'mcts'"),
    ("settings.0.extra_pairs", [["heuristic", "random"]], "line italia2-heuristic-vs-random is listed twice"),
    ("settings.1.field", "az", "settings\\[1\\].field: unknown agent 'az'"),
    ("settings.1.id", "italia2", "setting id 'italia2' is used twice"),
    ("settings.0.deal", 3, "unknown key\\(s\\) 'deal'"),
    ("settings.0.seed", ..., "settings\\[0\\] lacks 'seed'"),
    ("targets.0.line", "italia2-x-vs-y", "targets\\[0\\].line: no line 'italia2-x-vs-y'"),
    ("targets.0.agent", "ppo", "'ppo' does not play in line italia2-heuristic-vs-random"),
    ("targets.0.min_win_rate", 60, "min_win_rate must be a number in \\(0, 1\\]"),
    ("max_turns", 0, "max_turns must be a positive int"),
])
def test_a_bad_config_is_refused_in_one_line(path, value, message):
    with pytest.raises(ValueError, match=message) as info:
        st.parse_config(_bad(path, value), "config x.json")
    assert "\n" not in str(info.value) and str(info.value).startswith("config x.json: ")


def test_a_config_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("{\"agents\": [", encoding="utf-8")
    with pytest.raises(ValueError, match=f"config {path}: not valid JSON"):
        st.load_config(path)
    with pytest.raises(ValueError, match="no such file"):
        st.load_config(tmp_path / "missing.json")


# ------------------------------------------------------------------ chunks
def test_chunks_are_written_and_a_rerun_plays_nothing(config, played, monkeypatch):
    out, report = played
    assert report == {"chunks_written": 4, "games_played": GAMES, "forfeits": 0, "deals_kept": 0}
    for line_id, names in FILES.items():
        assert sorted(p.name for p in (out / "lines" / line_id).iterdir()) == with_games(names)
    before = mtimes(out)
    no_games(monkeypatch)  # a game played now would fail the test
    again = st.run_lines(config, out, deals_chunk=2, workers=2, progress=False)
    assert again == {"chunks_written": 0, "games_played": 0, "forfeits": 0, "deals_kept": 7}
    assert mtimes(out) == before


def test_a_chunk_is_the_evaluation_result_of_its_deals(played):
    out, _ = played
    chunk = json.loads((out / "lines" / LINE_IDS[0] / "deals_002-002.json").read_text())
    assert chunk.pop("chunk") == {"line": LINE_IDS[0], "first_deal": 2, "last_deal": 2, "setting_seed": 5}
    single = run_evaluation("italia", ["heuristic", "random"], deals=1, seed=5 + 2, progress=False)
    assert comparable(chunk) == comparable(single)
    assert chunk["run"]["command"] == "test" and chunk["run"]["machine"]


@pytest.mark.parametrize("index, map_name, deals, seed", [(0, "italia", 3, 5), (1, "imperium", 2, 7)])
def test_merged_chunks_equal_one_run_over_all_deals(config, played, index, map_name, deals, seed):
    line = config.lines[index]
    merged = st.merged_line_result(line, st.scan_line(line, played[0]))
    single = run_evaluation(map_name, list(line.lineup), deals=deals, seed=seed, progress=False)
    assert comparable(merged) == comparable(single)


def test_chunk_size_and_workers_do_not_change_the_games(config, played, tmp_path):
    report = st.run_lines(config, tmp_path, lines="italia2-*", deals_chunk=1, workers=2, progress=False)
    assert report == {"chunks_written": 3, "games_played": 6, "forfeits": 0, "deals_kept": 0}
    line = config.lines[0]
    assert sorted(p.name for p in st.line_folder(tmp_path, line).iterdir()) == with_games([
        "deals_000-000.json", "deals_001-001.json", "deals_002-002.json"])
    ours = st.merged_line_result(line, st.scan_line(line, tmp_path))
    theirs = st.merged_line_result(line, st.scan_line(line, played[0]))
    assert comparable(ours) == comparable(theirs)
    assert not (tmp_path / "lines" / LINE_IDS[1]).exists()  # --lines: the other lines were left alone


def test_plan_cuts_missing_deals_at_chunk_multiples(config):
    line = st.Line("x", "s", "pair", ("a", "b"), ("a", "b"), "italia", 2, 25, 0, False, 2000)
    assert st.plan_chunks(line, [], 10) == [(0, 9), (10, 19), (20, 24)]
    assert st.plan_chunks(line, [*range(0, 4), 12, 13], 10) == [(4, 9), (10, 11), (14, 19), (20, 24)]
    assert st.plan_chunks(line, range(25), 10) == []


def _copy_line(played, tmp_path, line_id):
    shutil.copytree(played[0] / "lines" / line_id, tmp_path / "lines" / line_id)
    return tmp_path / "lines" / line_id


@pytest.mark.parametrize("damage, problem", [
    (lambda text: text[: len(text) // 2], "unreadable"),
    (lambda text: text.replace('"seed": 7,', '"seed": 8,', 1), "seed is 8, this config needs 7"),
])
def test_a_damaged_chunk_is_reported_and_played_again(config, played, tmp_path, damage, problem):
    folder = _copy_line(played, tmp_path, LINE_IDS[1])
    path = folder / "deals_000-001.json"
    good = path.read_text()
    path.write_text(damage(good))
    with pytest.warns(st.StrengthWarning, match=f"deals_000-001.json: {problem}"):
        report = st.run_lines(config, tmp_path, lines=LINE_IDS[1], deals_chunk=2, progress=False)
    assert report == {"chunks_written": 1, "games_played": 8, "forfeits": 0, "deals_kept": 0}
    assert (folder / "deals_000-001.json.invalid").read_text() == damage(good)
    assert comparable(json.loads(path.read_text())) == comparable(json.loads(good))


def test_ctrl_c_keeps_the_finished_chunks(config, tmp_path, monkeypatch):
    play = interrupt_on_call(monkeypatch, st_chunks, "_play")
    with pytest.raises(KeyboardInterrupt):
        st.run_lines(config, tmp_path, lines=LINE_IDS[0], deals_chunk=1, progress=False)
    folder = tmp_path / "lines" / LINE_IDS[0]
    assert sorted(p.name for p in folder.iterdir()) == with_games(["deals_000-000.json", "deals_001-001.json"])
    monkeypatch.setattr(st_chunks, "_play", play)
    report = st.run_lines(config, tmp_path, lines=LINE_IDS[0], deals_chunk=1, progress=False)
    assert report == {"chunks_written": 1, "games_played": 2, "forfeits": 0, "deals_kept": 2}


# ------------------------------------------------------------------ summary and table
def test_summary_counts_and_statistics(config, played, summary):
    assert summary["format"] == st.SUMMARY_FORMAT and summary["config"] == config.raw
    assert summary["games"] == summary["planned"] == GAMES
    it, imp = summary["settings"]
    assert [line["id"] for line in it["lines"] + imp["lines"]] == LINE_IDS
    for s in (it, imp):
        for entry in s["lines"]:
            line = config.line(entry["id"])
            merged = st.merged_line_result(line, st.scan_line(line, played[0]))
            assert entry["complete"] and entry["games"] == entry["planned"] == line.planned
            for name, spec in zip(line.agents, (line.lineup[0], line.lineup[-1])):
                mine = entry["per_agent"][name]
                wins = sum(g["winner"] == spec for g in merged["per_game"])
                assert mine["wins"] == wins and mine["game_share"] == wins / line.planned
                assert mine["game_share_ci95"] == list(wilson_interval(wins, line.planned))
                assert mine["win_rate"] == merged["per_agent"][spec]["win_rate"]
                assert mine["ms_per_decision"] > 0
            assert entry["vp_difference"] == merged["paired"]["vp_difference"]
        assert all(v["ms"] > 0 and v["decisions"] > 0 for v in s["ms_per_decision"].values())
    field = imp["lines"][1]["per_agent"]
    assert field["random"]["game_fair_share"] == 0.25 and field["heuristic"]["game_fair_share"] == 0.75
    assert [t["status"] for t in summary["targets"]] == ["reached", "missed"]
    assert summary["targets"][0]["opponent"] == "random" and summary["targets"][0]["games"] == 6


def test_ratings_are_the_tournament_update_over_the_setting_games(config, played, summary):
    """Every game of the setting in line order, then game order, through tournament.py's update."""
    model = tournament.PlackettLuce()
    tallies = {name: tournament._Tally(4, model, name) for name in ("heuristic", "random")}
    for line in config.lines[1:]:
        merged = st.merged_line_result(line, st.scan_line(line, played[0]))
        for game in merged["per_game"]:
            tournament._rate(model, tallies, game["seats"], game["ranking"])
    ratings = summary["settings"][1]["ratings"]
    for name, tally in tallies.items():
        assert ratings[name]["mu"] == pytest.approx(tally.rating.mu, abs=1e-12)
        assert ratings[name]["sigma"] == pytest.approx(tally.rating.sigma, abs=1e-12)
        assert ratings[name]["games"] == 16
    assert ratings["heuristic"]["ordinal"] > ratings["random"]["ordinal"]


def test_the_table_shows_the_summary_numbers(summary):
    table = st.render(summary)
    it = summary["settings"][0]
    h = it["lines"][0]["per_agent"]["heuristic"]
    lo, hi = h["game_share_ci95"]
    cell = f"{100 * h['game_share']:.1f}% [{100 * lo:.1f}–{100 * hi:.1f}]"
    assert f"| **heuristic** | · | {cell} |" in table
    pair, field = (line["per_agent"]["random"] for line in summary["settings"][1]["lines"])
    cells = [f"{100 * a['game_share']:.1f}% [{100 * a['game_share_ci95'][0]:.1f}–{100 * a['game_share_ci95'][1]:.1f}]"
             for a in (pair, field)]
    assert f"| **random** | {cells[0]} | · | {cells[1]} |" in table  # Imperium: the pair, then + 3 heuristics
    assert "| row vs column | heuristic | random | + 3 heuristic |" in table
    vp = it["lines"][0]["vp_difference"]
    assert f"{vp['mean']:+.1f} [{vp['ci95'][0]:+.1f}, {vp['ci95'][1]:+.1f}]" in table
    r = summary["settings"][1]["ratings"]["heuristic"]
    assert f"| 1 | heuristic | {r['ordinal']:.2f} | {r['mu']:.2f} | {r['sigma']:.2f} | 16 |" in table
    assert "| beats random | `italia2-heuristic-vs-random` |" in table and "**reached**" in table
    assert "**missed**" in table and "Pending" not in table and "Partial" not in table
    assert f"Played on: {summary['settings'][0]['lines'][0]['machines'][0]}." in table


def test_a_partial_line_is_shown_with_its_game_count(config, played, tmp_path):
    folder = _copy_line(played, tmp_path, LINE_IDS[0])
    (folder / "deals_002-002.json").unlink()
    summary = st.build_summary(config, tmp_path)
    entry = summary["settings"][0]["lines"][0]
    assert (entry["games"], entry["planned"], entry["complete"]) == (4, 6, False)
    assert summary["targets"][0]["status"] == "partial" and summary["targets"][1]["status"] == "pending"
    table = st.render(summary)
    assert "Partial lines: `italia2-heuristic-vs-random` (4 of 6 games)." in table
    assert ", 4 of 6 games |" in table  # the matrix cell
    assert f"Pending lines (no games yet): `{LINE_IDS[1]}`, `{LINE_IDS[2]}`." in table
    assert "| **partial** |" in table and "| **pending** |" in table


def test_docs_block_is_replaced_between_the_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"# Title\n\nintro\n{st.START_MARKER}\nold\n{st.END_MARKER}\n\nafter\n")
    st.update_docs(page, "| new |\n")
    assert page.read_text() == f"# Title\n\nintro\n{st.START_MARKER}\n| new |\n{st.END_MARKER}\n\nafter\n"
    assert st.table_in(page.read_text()) == "| new |\n"
    page.write_text("no markers\n")
    with pytest.raises(ValueError, match="needs one <!-- strength-table:start --> line"):
        st.update_docs(page, "x\n")


# ------------------------------------------------------------------ command line
def _write_config(tmp_path: Path, cfg=TINY) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    return path


def test_command_line_runs_resumes_and_renders(played, tmp_path, capsys, monkeypatch):
    config_path = _write_config(tmp_path)
    out = tmp_path / "out"
    shutil.copytree(played[0] / "lines", out / "lines")
    page = tmp_path / "page.md"
    page.write_text(f"# Page\n\n{st.START_MARKER}\n{st.END_MARKER}\n")
    no_games(monkeypatch)
    argv = ["--config", str(config_path), "--out", str(out), "--docs", str(page), "--no-progress", "--workers", "2"]
    assert st.main(argv) == 0
    printed = capsys.readouterr().out
    assert "0 games played, 0 chunk files written, 7 deals already held" in printed
    assert "target italia2-heuristic-vs-random (heuristic >= 60%): reached" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert st.table_in(page.read_text()) == st.render(summary) == (out / "table.md").read_text()
    page.write_text(f"# Page\n\n{st.START_MARKER}\nstale\n{st.END_MARKER}\n")
    assert st.main(["--config", str(config_path), "--out", str(out), "--docs", str(page), "--table-only"]) == 0
    assert st.table_in(page.read_text()) == st.render(summary)


@pytest.mark.parametrize("extra, message", [
    (["--lines", "nothing*"], "--lines: 'nothing*' matches no line"),
    (["--docs", "missing.md"], "--docs missing.md: no such file"),
])
def test_command_line_errors_are_one_line(tmp_path, capsys, monkeypatch, extra, message):
    no_games(monkeypatch)
    code = st.main(["--config", str(_write_config(tmp_path)), "--out", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err and "Traceback" not in err


def test_command_line_refuses_a_bad_config_in_one_line(tmp_path, capsys, monkeypatch):
    no_games(monkeypatch)
    path = _write_config(tmp_path, _bad("settings.0.players", 5))
    assert st.main(["--config", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"{st.PROG}: error: config {path}: settings[0].players must be 2 or 4 (a pair line gives each " \
                  f"agent half the seats), got 5\n"
    assert not (tmp_path / "out").exists()


def test_command_line_ctrl_c_exits_130(tmp_path, capsys, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(st_cli, "run_lines", interrupted)
    assert st.main(["--config", str(_write_config(tmp_path)), "--out", str(tmp_path / "out"), "--no-docs"]) == 130
    assert "interrupted; the chunks already written are kept" in capsys.readouterr().err


def test_command_line_warns_in_one_line_about_a_damaged_chunk(played, tmp_path, capsys):
    folder = _copy_line(played, tmp_path / "out", LINE_IDS[2])
    (folder / "deals_000-001.json").write_text("{")
    code = st.main(["--config", str(_write_config(tmp_path)), "--out", str(tmp_path / "out"), "--table-only"])
    err = capsys.readouterr().err
    assert code == 0 and err.startswith(f"{st.PROG}: warning: chunk ") and err.count("\n") == 1
    assert (folder / "deals_000-001.json").exists()  # --table-only changes no chunk


def test_no_page_is_written_unless_named(tmp_path, monkeypatch):
    """Output paths are arguments: without --docs only OUT is written, even for the committed folder's
    config (the old --no-docs is still accepted and changes nothing)."""
    no_games(monkeypatch)
    out = tmp_path / "out"
    docs = (ROOT / "docs" / "agents.md").read_bytes()
    for extra in ([], ["--no-docs"]):
        assert st.main(["--config", str(COMMITTED / "config.json"), "--out", str(out), "--table-only", *extra]) == 0
        assert sorted(p.name for p in out.iterdir()) == ["summary.json", "table.md"]
    assert (ROOT / "docs" / "agents.md").read_bytes() == docs


# ------------------------------------------------------------------ the committed table
def test_committed_table_is_what_the_committed_summary_renders():
    config = st.load_config(COMMITTED / "config.json")
    summary = json.loads((COMMITTED / "summary.json").read_text(encoding="utf-8"))
    docs = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    assert "## Strength table" in docs
    table = st.render(summary)
    assert st.table_in(docs, "docs/agents.md") == table
    assert (COMMITTED / "table.md").read_text(encoding="utf-8") == table
    assert summary["config"] == config.raw, "summary.json was made from another config: rerun with --table-only"
    if (COMMITTED / "lines").is_dir():  # the chunk files are committed: the summary is exactly theirs
        assert st.build_summary(config, COMMITTED) == summary
    lines = [line for s in summary["settings"] for line in s["lines"]]
    assert [line["id"] for line in lines] == [line.id for line in config.lines]
    for line in lines:
        assert line["planned"] == 200 and 0 <= line["games"] <= 200
        if line["games"] == 0:
            assert f"`{line['id']}` | 0 of 200 | pending |" in table
    pending = [f"`{line['id']}`" for line in lines if line["games"] == 0]
    if pending:
        assert "Pending lines (no games yet): " + ", ".join(pending) + "." in docs
    for t in summary["targets"]:
        assert f"`{t['line']}`" in table
        assert t["status"] == ("pending" if t["games"] == 0 else "partial" if t["games"] < 200 else t["status"])


STRENGTH_FOLDERS = sorted(p.parent for p in (ROOT / "results").glob("**/config.json")
                          if (p.parent / "lines").is_dir() and (p.parent / "summary.json").is_file())


@pytest.mark.parametrize("folder", STRENGTH_FOLDERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_committed_strength_folder_is_what_its_chunk_files_say(folder: Path) -> None:
    """The experiments under results/ played as strength lines (the table itself, az with values at scale,
    az over whole turns...): each summary is exactly its chunk files', each table its summary's."""
    config = st.load_config(folder / "config.json")
    summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    assert summary["config"] == config.raw
    assert st.build_summary(config, folder) == summary
    assert (folder / "table.md").read_text(encoding="utf-8") == st.render(summary)
