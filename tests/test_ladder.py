"""The ladder (concordia_env.arena.ladder, `concordia ladder`): a tiny row played end to end through the
command, the table's own deals, resuming after Ctrl-C, the check of a submitted results file, and
one-line refusals of bad arguments."""

from __future__ import annotations

import copy
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from processes import interrupt_on_call

from concordia_env.arena import ladder as lad
from concordia_env.arena.evaluation import comparable
from concordia_env.arena.stats import openskill_ratings
from concordia_env.arena.strength import DEFAULT_DEALS_CHUNK
from concordia_env.arena.strength import chunks as st_chunks
from concordia_env.cli import ladder as cli_ladder
from concordia_env.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "results" / "strength"
#: a cheap agent that is none of the table's, against the table's two cheapest agents, two deals a setting
TINY = ["--agent", "mcts:iterations=2", "--name", "tiny", "--pool", "random,heuristic", "--deals", "2",
        "--deals-chunk", "1", "--no-progress"]
TINY_LINES = ["italia2-tiny-vs-heuristic", "italia2-tiny-vs-random", "imperium4-tiny-vs-heuristic",
              "imperium4-tiny-vs-random", "imperium4-tiny-plus-3-heuristic"]
TINY_GAMES = 2 * 2 * 2 + 3 * 2 * 4


def ladder(*argv: str) -> tuple[int, str]:
    """``concordia ladder ARGV``: exit status and what it printed on stdout."""
    out = io.StringIO()
    code = main(["ladder", *argv], out=out)
    return code, out.getvalue()


def no_games(monkeypatch) -> None:
    def refuse(task):
        raise AssertionError(f"a game was played: {task}")

    monkeypatch.setattr(st_chunks, "_play", refuse)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, str, dict[str, Any]]:
    """The tiny ladder played in one go: (its folder, what it printed, its results file)."""
    out = tmp_path_factory.mktemp("ladder") / "tiny"
    code, printed = ladder(*TINY, "--out", str(out))
    assert code == 0
    return out, printed, json.loads((out / lad.RESULTS_NAME).read_text())


def _committed_games(line_id: str, deals: int) -> list[dict[str, Any]]:
    data = json.loads((COMMITTED / "lines" / line_id / "deals_000-009.json").read_text())
    return [g for g in data["per_game"] if g["deal"] < deals]


# ------------------------------------------------------------------ playing
def test_a_tiny_ladder_runs_end_to_end(tiny):
    out, printed, doc = tiny
    assert lad.DEFAULT_TABLE == COMMITTED
    assert (doc["format"], doc["version"]) == ("concordia-env/ladder", 1)
    assert doc["agent"] == {"name": "tiny", "spec": "mcts:iterations=2"}
    assert doc["options"] == {"agent": "mcts:iterations=2", "name": "tiny", "map": ["italia", "imperium"],
                              "pool": ["heuristic", "random"], "deals": 2}
    assert doc["games"] == doc["planned"] == TINY_GAMES
    assert [line["id"] for s in doc["settings"] for line in s["lines"]] == TINY_LINES
    assert doc["comparable"] is False
    assert doc["settings"][0]["not_comparable"] == ["2 of the table's 100 deals",
                                                    "without turn, netv2, az, azv2, net, mcts1000, ppo in the pool"]
    assert sorted(p.name for p in out.iterdir()) == ["ladder.json", "lines", "settings.json"]
    assert printed.startswith(f"{TINY_GAMES} games played, 10 chunk files written, 0 deals already held")
    assert "| row vs column | heuristic | random | + 3 heuristic |" in printed
    for s in doc["settings"]:  # the row's cells: the agent's share of each line's games, 95% Wilson interval
        cells = [f"{100 * a['game_share']:.1f}% [{100 * a['game_share_ci95'][0]:.1f}–{100 * a['game_share_ci95'][1]:.1f}]"
                 for a in (line["per_agent"]["tiny"] for line in s["lines"])]
        assert f"| **tiny** | {' | '.join(cells)} |\n" in printed
        assert f"OpenSkill: ordinal {s['ordinal']:.2f} (mu {s['ratings']['tiny']['mu']:.2f}" in printed
    assert f"Results written to {out / 'ladder.json'}" in printed


def test_each_line_counts_its_own_games(tiny):
    for s in tiny[2]["settings"]:
        for line in s["lines"]:
            a, b = line["agents"]
            wins = sum(g["winner"] == line["per_agent"][a]["spec"] for g in line["per_game"])
            share = line["per_agent"][a]["game_share"]
            assert (line["games"], line["per_agent"][a]["wins"], share) == (len(line["per_game"]), wins,
                                                                         wins / len(line["per_game"]))
            assert line["complete"] and line["per_agent"][b]["spec"] == line["lineup"][-1]


def test_the_ratings_go_on_from_the_table(tiny):
    summary = json.loads((COMMITTED / "summary.json").read_text())
    for s, table in zip(tiny[2]["settings"], summary["settings"]):
        assert s["table_ratings"] == {n: {k: r[k] for k in ("mu", "sigma", "ordinal", "games")}
                                      for n, r in table["ratings"].items()}
        rated = sum(not g["truncated"] for line in s["lines"] for g in line["per_game"])
        assert s["ratings"]["tiny"]["games"] == rated
        ranked = sorted(s["ratings"], key=lambda n: -s["ratings"][n]["ordinal"])
        assert s["rank"] == ranked.index("tiny") + 1 and s["ordinal"] == s["ratings"]["tiny"]["ordinal"]


def test_ratings_started_from_earlier_ones_equal_one_pass():
    games = [(["a", "b", "c"], [0, 2, 1]), (["b", "c", "a"], [1, 0, 2]), (["a", "c", "a"], [2, 1, 0]),
             (["c", "b", "a"], [0, 1, 2]), (["b", "a", "b"], [1, 0, 2])]
    first = openskill_ratings(games[:2], ["a", "b", "c"])
    assert openskill_ratings(games[2:], ["a", "b", "c"], start=first) == openskill_ratings(games, ["a", "b", "c"])


def test_the_ladder_plays_the_table_deals(tmp_path):
    """Random play against the heuristic on the ladder gives, game for game, the table's own games of
    that pair; random's own line (itself) is left out and not held against comparability."""
    out = tmp_path / "random"
    code, printed = ladder("--agent", "random", "--name", "rnd", "--pool", "heuristic,random", "--map", "italia",
                           "--deals", "2", "--no-progress", "--out", str(out))
    assert code == 0, printed
    (s,) = json.loads((out / "ladder.json").read_text())["settings"]
    assert (s["itself"], s["opponents"], [line["id"] for line in s["lines"]]) == (
        ["random"], ["heuristic"], ["italia2-rnd-vs-heuristic"])
    assert s["not_comparable"] == ["2 of the table's 100 deals", "without turn, netv2, az, azv2, net, mcts1000, ppo in the pool"]
    keep = ("seed", "seats", "scores", "ranking", "winner_seat", "turns", "truncated")
    ours = sorted([g[k] for k in keep] for g in s["lines"][0]["per_game"])
    table = sorted([g[k] for k in keep] for g in _committed_games("italia2-heuristic-vs-random", 2))
    assert ours == table and len(ours) == 4


def test_resuming_after_ctrl_c_gives_the_same_results_file(tiny, tmp_path, monkeypatch, capsys):
    out = tmp_path / "tiny"
    play = interrupt_on_call(monkeypatch, st_chunks, "_play")
    assert ladder(*TINY, "--out", str(out))[0] == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "concordia ladder: interrupted; the finished games are kept in" in err
    resume = err.split("go on with: ")[1].strip()
    assert resume.startswith("concordia ladder --agent mcts:iterations=2 --name tiny") and "--out" in resume
    assert not (out / "ladder.json").exists()
    held = sorted(p.relative_to(out).as_posix() for p in (out / "lines").rglob("deals_*.json"))
    assert held == ["lines/italia2-tiny-vs-heuristic/deals_000-000.json",
                    "lines/italia2-tiny-vs-heuristic/deals_001-001.json"]
    monkeypatch.setattr(st_chunks, "_play", play)
    code, printed = ladder(*TINY, "--out", str(out))
    assert code == 0 and printed.startswith(f"{TINY_GAMES - 4} games played, 8 chunk files written, 2 deals already held")
    assert comparable(json.loads((out / "ladder.json").read_text())) == comparable(tiny[2])
    no_games(monkeypatch)  # the same command again plays nothing and writes the same file
    before = json.loads((out / "ladder.json").read_text())
    assert ladder(*TINY, "--out", str(out))[0] == 0
    assert json.loads((out / "ladder.json").read_text()) == before


def test_a_damaged_chunk_is_set_aside_with_one_warning_and_played_again(tiny, tmp_path, capsys):
    out = tmp_path / "tiny"
    shutil.copytree(tiny[0], out)
    chunk = out / "lines" / TINY_LINES[1] / "deals_001-001.json"
    chunk.write_text("{")
    code, printed = ladder(*TINY, "--out", str(out))
    err = capsys.readouterr().err
    assert code == 0 and printed.startswith("2 games played, 1 chunk files written, ")
    assert err.count("\n") == 1 and err.startswith(f"concordia ladder: warning: chunk {chunk}: unreadable")
    assert chunk.with_name(chunk.name + ".invalid").exists()
    assert comparable(json.loads((out / "ladder.json").read_text())) == comparable(tiny[2])


# ------------------------------------------------------------------ checking
def test_a_valid_results_file_is_accepted(tiny, capsys):
    path = tiny[0] / "ladder.json"
    code, printed = ladder("--check", str(path))
    assert code == 0 and capsys.readouterr().err == ""
    assert printed == (f"{path}: valid ladder results: tiny (`mcts:iterations=2`), {TINY_GAMES} games: "
                       f"italia2 (not comparable), imperium4 (not comparable)\n")


def _edit(doc: dict[str, Any], where: str, value: Any) -> None:
    *path, last = [int(p) if p.isdigit() else p for p in where.split(".")]
    for key in path:
        doc = doc[key]
    if value is _DELETE:
        del doc[last]
    else:
        doc[last] = value(doc[last]) if callable(value) else value


_DELETE = object()
LINE0 = "settings[0].lines[0] (italia2-tiny-vs-heuristic)"


@pytest.mark.parametrize("where, value, message", [
    ("version", 2, "version 2: this concordia-env reads ladder results of version 1"),
    ("format", "concordia-env/evaluation", "format is 'concordia-env/evaluation', a ladder results file has "
                                           "'concordia-env/ladder'"),
    ("settings.0.lines.0.per_game.1.seed", 7, f"{LINE0} game 1: seed is 7, expected 0"),
    ("settings.0.lines.0.per_game.2.seats", ["heuristic", "mcts:iterations=2"],
     f"{LINE0} game 2: seats is ['heuristic', 'mcts:iterations=2'], expected ['mcts:iterations=2', 'heuristic']"),
    ("settings.0.lines.0.per_game.3", _DELETE, f"{LINE0}: per_game lists 3 games, the line has 4 (2 deals x 2 "
                                               f"seat rotations)"),
    ("options.deals", 3, f"{LINE0}: per_game lists 4 games, the line has 6"),
    ("options.pool", ["random", "nobody"], "options: --pool: 'nobody' is not an agent of the strength table"),
    ("settings.1.lines.2.per_agent.tiny.wins", lambda w: w + 1,
     "settings[1].lines[2].per_agent.tiny.wins is {new}, the games give {old}: the figures do not follow"),
    ("settings.0.ordinal", 99.5, "settings[0].ordinal is 99.5, the games give {old}: the figures do not follow"),
    ("comparable", True, "comparable is True, the games give False: the figures do not follow from its games"),
    ("settings.0.lines.1.per_game.0.scores.0", lambda v: v + 50,
     "settings[0].lines[1].per_agent.tiny.mean_vp is"),
    ("settings.0.table_ratings.az.mu", 3.0, "it was made against another strength table than"),
])
def test_a_tampered_results_file_is_refused_in_one_line(tiny, tmp_path, capsys, where, value, message):
    doc = copy.deepcopy(tiny[2])
    keys = [int(p) if p.isdigit() else p for p in where.split(".")]
    old = doc
    for key in keys:
        old = old[key] if not isinstance(old, list) or key < len(old) else None
    _edit(doc, where, value)
    new = doc
    for key in keys if value is not _DELETE else ():
        new = new[key]
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(doc))
    assert ladder("--check", str(path)) == (1, "")
    err = capsys.readouterr().err
    expected = message.format(old=old, new=new)
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"concordia ladder: refused: ladder results {path}: ") and expected in err, err


@pytest.mark.parametrize("text, message", [
    ("{", "is not valid JSON"),
    ("[1, 2]", ": not a JSON object"),
    ('{"format": "concordia-env/ladder", "version": 1}', ": agent must be"),
    ('{"format": "concordia-env/ladder", "version": 1, "agent": {"name": "x", "spec": "random"}, "options": '
     '{"agent": "random", "name": "x", "map": "italia", "pool": null, "deals": null}}', ": options: --map must name"),
])
def test_a_malformed_results_file_is_refused_in_one_line(tmp_path, capsys, text, message):
    path = tmp_path / "ladder.json"
    path.write_text(text)
    assert ladder("--check", str(path)) == (1, "")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and message in err, err


# ------------------------------------------------------------------ arguments
@pytest.mark.parametrize("argv, message", [
    ([], "give --agent SPEC (and --out DIR) to play a ladder, or --check FILE to check one"),
    (["--agent", "random"], "--out DIR is needed"),
    (["--agent", "nosuch", "--out", "{tmp}/o"], "--agent: "),  # then make_agent's own words
    (["--agent", "random", "--out", "{tmp}/o", "--pool", "random,nobody"],
     "--pool: 'nobody' is not an agent of the strength table; its agents: turn, netv2, az"),
    (["--agent", "random", "--out", "{tmp}/o", "--deals", "0"], "--deals must be a positive integer, got '0'"),
    (["--agent", "random", "--out", "{tmp}/o", "--workers", "two"], "--workers must be a positive integer"),
    (["--agent", "random", "--out", "{tmp}/o", "--map", "roma"], "--map must name maps of the table's settings"),
    (["--agent", "random", "--out", "{tmp}/o", "--name", "heuristic"], "--name heuristic: the table has an agent"),
    (["--agent", "random", "--out", "{tmp}/o", "--name", "a b"], "--name must be letters, digits"),
    (["--agent", "random", "--out", "{tmp}/o", "--table", "{tmp}/none"], "--table {tmp}/none: no such folder"),
    (["--agent", "random", "--out", "{tmp}/o", "--pool", "random", "--map", "italia"],
     "--pool leaves the agent no opponent in setting italia2"),
    (["--check", "x.json", "--agent", "random"], "--check takes only --table"),
])
def test_bad_arguments_are_one_line_and_status_2(tmp_path, capsys, monkeypatch, argv, message):
    no_games(monkeypatch)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert ladder(*argv) == (2, "")
    err = capsys.readouterr().err
    assert err.startswith(f"concordia ladder: error: {message.replace('{tmp}', str(tmp_path))}"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()  # refused before the folder is claimed


def test_a_folder_of_another_ladder_is_refused(tiny, tmp_path, capsys, monkeypatch):
    no_games(monkeypatch)
    out = tmp_path / "tiny"
    shutil.copytree(tiny[0], out)
    other = [a if a != "2" else "3" for a in TINY]  # --deals 3
    assert ladder(*other, "--out", str(out)) == (2, "")
    err = capsys.readouterr().err
    assert err == (f"concordia ladder: error: ladder folder {out} holds another ladder run (--deals 2 there, 3 here); "
                   f"repeat its settings, or use another --out\n")


def test_the_help_names_the_arena_defaults():
    assert (cli_ladder.NAME_HELP, cli_ladder.CHUNK_HELP) == (lad.DEFAULT_NAME, DEFAULT_DEALS_CHUNK)
