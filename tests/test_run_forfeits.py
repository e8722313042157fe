"""A failing agent in the strength table's runs and so in ``concordia ladder``: the game is a forfeit
(seat and one-line reason) in the chunk, its games file, the ladder's results and the data set; the
run goes on, every table counts the forfeits, OpenSkill rates the game with the forfeiting seat last,
``--check`` accepts the file and still refuses tampering, and old chunks without forfeits still read.
(Tournaments: tests/test_bots.py.)"""

from __future__ import annotations

import copy
import gzip
import json
import re
import sys
from pathlib import Path
from typing import Any

import jsonschema  # the dev extra: used only by the tests
import pytest
from test_bots import FAULTY
from test_ladder import ladder

from concordia_env.agents import make_agent
from concordia_env.arena import strength as st
from concordia_env.arena.ladder import RESULTS_NAME
from concordia_env.arena.records import play_game, verify_record
from concordia_env.arena.stats import openskill_ratings
from concordia_env.arena.strength import chunks as st_chunks
from concordia_env.cli import main
from concordia_env.dataset import check_game_line, iter_games, line_from_record, replay_line, schema

ROOT = Path(__file__).resolve().parents[1]
#: one deal of Italia against random: one line, 2 games (the bot in seat 0, then in seat 1)
QUICK = ["--pool", "random", "--map", "italia", "--deals", "1", "--no-progress"]
ILLEGAL = "answered action 4, which is not legal here (legal: 0, 1, 2, 3, 6, 8)"
#: a bot that exits before its handshake
QUITTER = 'import sys\nprint("no luck today", file=sys.stderr)\nsys.exit(4)\n'


def manifest(folder: Path, name: str, script: str, *args: str) -> str:
    """The spec of a bot manifest in ``folder`` running ``script`` (Python source) with ``args``."""
    (folder / f"{name}.py").write_text(script, encoding="utf-8")
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "argv": [sys.executable, f"{name}.py", *args]}), encoding="utf-8")
    return f"bot:manifest={path}"


@pytest.fixture(scope="module")
def illegal(tmp_path_factory) -> tuple[Path, str, str, dict[str, Any]]:
    """A ladder of a bot that answers an illegal id at its 3rd decision: (folder, spec, printed, results)."""
    folder = tmp_path_factory.mktemp("illegal")
    spec = manifest(folder, "faulty", FAULTY, "illegal", "2")
    code, printed = ladder("--agent", spec, "--name", "illbot", *QUICK, "--out", str(folder / "out"))
    assert code == 0, printed
    return folder / "out", spec, printed, json.loads((folder / "out" / RESULTS_NAME).read_text())


def _line(doc: dict[str, Any]) -> dict[str, Any]:
    (setting,) = doc["settings"]
    (line,) = setting["lines"]
    return line


def test_a_bot_answering_an_illegal_id_forfeits_and_the_ladder_goes_on(illegal):
    out, spec, printed, doc = illegal
    line = _line(doc)
    assert doc["games"] == doc["planned"] == 2 and line["complete"] and line["id"] == "italia2-illbot-vs-random"
    for g, game in enumerate(line["per_game"]):
        seat = game["seats"].index(spec)
        assert seat == g  # the bot sits in seat 0, then seat 1
        assert game["forfeit"]["seat"] == seat and game["ranking"][-1] == seat
        assert game["truncated"] is True and game["winner"] is None and game["winner_seat"] is None
        assert game["forfeit"]["reason"].endswith(f" ({spec}) at seat {seat}, at its decision 2: {ILLEGAL}")
        assert f"- forfeit: italia2-illbot-vs-random game {g}, seat {seat} ({spec}): {game['forfeit']['reason']}\n" \
            in printed
    me, other = line["per_agent"]["illbot"], line["per_agent"]["random"]
    assert (line["forfeits"], line["truncated"]) == (2, 0)
    assert (me["forfeits"], me["games"], me["wins"], me["finished"], me["truncated"]) == (2, 2, 0, 0, 0)
    assert (other["forfeits"], other["games"], other["wins"]) == (0, 2, 0)
    assert printed.startswith("2 games played (2 forfeited), 1 chunk files written, 0 deals already held\n")
    assert "Ladder: illbot (`" + spec + "`), 2 games, 2 forfeited; " in printed
    assert "rated with the forfeiting seat last): `italia2-illbot-vs-random`: illbot 2.\n" in printed


def test_forfeited_games_are_rated_with_the_forfeiting_seat_last(illegal):
    (setting,) = illegal[3]["settings"]
    games = [(["illbot" if s == illegal[1] else "random" for s in g["seats"]], g["ranking"])
             for g in _line(illegal[3])["per_game"]]
    assert [seats[ranking[-1]] for seats, ranking in games] == ["illbot", "illbot"]
    start = setting["table_ratings"]
    assert setting["ratings"] == openskill_ratings(games, [*start, "illbot"], start=start)
    assert setting["ratings"]["illbot"]["games"] == 2
    assert setting["ratings"]["random"]["games"] == start["random"]["games"] + 2
    assert setting["ratings"]["random"]["mu"] > start["random"]["mu"]  # it beat the forfeiting bot twice


def test_the_chunk_and_its_games_file_keep_the_forfeits(illegal, tmp_path):
    out, spec, _, doc = illegal
    folder = out / "lines" / "italia2-illbot-vs-random"
    chunk = json.loads((folder / "deals_000-000.json").read_text())
    assert chunk["per_game"] == _line(doc)["per_game"] and (chunk["forfeits"], chunk["truncated"]) == (2, 0)
    assert chunk["per_agent"][spec]["forfeits"] == 2
    with gzip.open(folder / "deals_000-000.games.jsonl.gz", "rt") as f:
        lines = [json.loads(text) for text in f][1:]
    assert [g["forfeit"] for g in lines] == [g["forfeit"] for g in chunk["per_game"]]
    for g in lines:  # each stops where the bot was to decide: the replay checks it
        assert replay_line(g).current_player == g["forfeit"]["seat"]
    exported = tmp_path / "games.jsonl.gz"
    assert main(["dataset", "export", str(out), "--out", str(exported)]) == 0
    games = list(iter_games(exported, replay=True))
    assert [g["forfeit"] for g in games] == [g["forfeit"] for g in chunk["per_game"]]


def test_check_accepts_a_ladder_with_forfeits(illegal, capsys):
    path = illegal[0] / RESULTS_NAME
    assert ladder("--check", str(path)) == (0, f"{path}: valid ladder results: illbot (`{illegal[1]}`), 2 games, "
                                                f"2 forfeited: italia2 (not comparable)\n")
    assert capsys.readouterr().err == ""


def _move_forfeit(game: dict[str, Any]) -> dict[str, Any]:
    return {**game, "forfeit": {**game["forfeit"], "seat": 1 - game["forfeit"]["seat"]}}


def _drop_forfeit(game: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in game.items() if k != "forfeit"}


LINE = "settings[0].lines[0] (italia2-illbot-vs-random)"


@pytest.mark.parametrize("change, message", [
    (lambda line: line["per_game"].__setitem__(0, _move_forfeit(line["per_game"][0])),
     f"{LINE} game 0: a forfeit by seat 1 needs truncated true, no winner and seat 1 ranked last"),
    (lambda line: line["per_game"].__setitem__(0, _drop_forfeit(line["per_game"][0])),
     f"{LINE} game 0: truncated after 3 card plays, before the limit of 2000, without a forfeit"),
    (lambda line: line["per_game"][1]["forfeit"].__setitem__("seat", 2),
     f"{LINE} game 1: result 'forfeit' must be {{\"seat\": 0..1, \"reason\": text}}, got {{'seat': 2, "),
    (lambda line: line["per_agent"]["illbot"].__setitem__("forfeits", 1),
     "settings[0].lines[0].per_agent.illbot.forfeits is 1, the games give 2: the figures do not follow"),
    (lambda line: line.__setitem__("forfeits", 0),
     "settings[0].lines[0].forfeits is 0, the games give 2: the figures do not follow"),
])
def test_check_refuses_tampered_forfeits(illegal, tmp_path, capsys, change, message):
    doc = copy.deepcopy(illegal[3])
    change(_line(doc))
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(doc))
    assert ladder("--check", str(path)) == (1, "")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"concordia ladder: refused: ladder results {path}: ") \
        and message in err, err


def test_a_bot_that_exits_at_once_forfeits_every_game_and_the_run_resumes(tmp_path, capsys, monkeypatch):
    spec = manifest(tmp_path, "quitter", QUITTER)
    out = tmp_path / "out"
    argv = ["--agent", spec, "--name", "quitter", *QUICK, "--out", str(out)]
    code, printed = ladder(*argv)
    assert code == 0 and printed.startswith("2 games played (2 forfeited), ")
    doc = json.loads((out / RESULTS_NAME).read_text())
    for g, game in enumerate(_line(doc)["per_game"]):
        assert game["forfeit"] == {"seat": g, "reason": f"bot 'quitter' ({spec}) at seat {g}, in its handshake: "
                                                        f"exited with status 4; its stderr ends: no luck today"}
        assert game["ranking"] == [1 - g, g] and game["winner"] is None
    assert ladder("--check", str(out / RESULTS_NAME))[0] == 0
    monkeypatch.setattr(st_chunks, "_play", lambda task: pytest.fail(f"a game was played: {task}"))
    code, printed = ladder(*argv)  # the forfeited games are kept, not played again
    assert code == 0 and printed.startswith("0 games played, 0 chunk files written, 1 deals already held")
    assert json.loads((out / RESULTS_NAME).read_text())["settings"] == doc["settings"]
    assert capsys.readouterr().err == ""


def test_the_strength_command_lists_forfeits_and_the_table_counts_them(tmp_path, capsys):
    spec = manifest(tmp_path, "quitter", QUITTER)
    config = {"format": "concordia-env/strength-config", "version": 1,
              "agents": [{"name": "quitter", "spec": spec}, {"name": "random", "spec": "random"}],
              "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 1, "seed": 3,
                            "agents": ["quitter", "random"]}]}
    (tmp_path / "config.json").write_text(json.dumps(config))
    out = tmp_path / "out"
    assert st.main(["--config", str(tmp_path / "config.json"), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == [
        "2 games played (2 forfeited), 1 chunk files written, 0 deals already held",
        f"forfeit: italia2-quitter-vs-random game 0, seat 0 ({spec}): bot 'quitter' ({spec}) at seat 0, in its "
        f"handshake: exited with status 4; its stderr ends: no luck today",
        f"forfeit: italia2-quitter-vs-random game 1, seat 1 ({spec}): bot 'quitter' ({spec}) at seat 1, in its "
        f"handshake: exited with status 4; its stderr ends: no luck today"]
    summary = json.loads((out / "summary.json").read_text())
    (setting,) = summary["settings"]
    assert setting["forfeits"] == setting["lines"][0]["forfeits"] == 2
    assert setting["ratings"]["quitter"]["games"] == setting["ratings"]["random"]["games"] == 2
    assert setting["ratings"]["random"]["ordinal"] > setting["ratings"]["quitter"]["ordinal"]
    assert ("rated with the forfeiting seat last): `italia2-quitter-vs-random`: quitter 2.\n"
            in (out / "table.md").read_text())


def test_chunks_written_before_forfeits_still_read():
    committed = ROOT / "results" / "strength"
    config = st.load_config(committed / "config.json")
    line = config.line("italia2-heuristic-vs-random")
    data = json.loads((st.line_folder(committed, line) / "deals_000-009.json").read_text())
    assert "forfeits" not in data and "forfeits" not in data["per_agent"]["heuristic"]
    assert st.chunk_problem(data, line, 0, 9) is None
    merged = st.merged_line_result(line, st.scan_line(line, committed))
    assert merged["forfeits"] == 0 and merged["per_agent"]["heuristic"]["forfeits"] == 0


@pytest.mark.parametrize("change, message", [
    (lambda g: g.__setitem__("forfeit", {"seat": 0}), "field 'forfeit' must be {\"seat\": 0..1, \"reason\": text}"),
    (lambda g: g["forfeit"].__setitem__("seat", 1 - g["forfeit"]["seat"]),
     "a game forfeited by seat 1 is truncated, has no winner and ranks seat 1 last"),
])
def test_a_data_set_line_with_a_bad_forfeit_is_refused(illegal, change, message):
    with gzip.open(illegal[0] / "lines" / "italia2-illbot-vs-random" / "deals_000-000.games.jsonl.gz", "rt") as f:
        game = [json.loads(text) for text in f][1]  # game 0: seat 0 forfeited
    check_game_line(game)
    change(game)
    with pytest.raises(ValueError, match=re.escape(message)):
        check_game_line(game)


def test_forfeited_games_follow_the_shipped_schemas(illegal):
    with gzip.open(illegal[0] / "lines" / "italia2-illbot-vs-random" / "deals_000-000.games.jsonl.gz", "rt") as f:
        lines = [json.loads(text) for text in f]
    line_schema = jsonschema.Draft202012Validator(schema("dataset_line"))
    assert all(line_schema.is_valid(line) for line in lines) and "forfeit" in lines[1]
    assert not line_schema.is_valid({**lines[1], "forfeit": {"seat": 0}})
    record = play_game("italia", 2, 0, [make_agent("random"), make_agent(illegal[1])], forfeit=True)
    verify_record(record)
    assert record["result"]["forfeit"]["seat"] == 1 and line_from_record(record)["forfeit"] == record["result"]["forfeit"]
    assert jsonschema.Draft202012Validator(schema("game_record")).is_valid(record)
