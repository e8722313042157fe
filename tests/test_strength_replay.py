"""Replaying strength-table chunks that have no games file (``--replay-games``): the files written are the
ones the run wrote, byte for byte; a chunk whose games do not replay to its results gets one warning line and
no file; a second run replays nothing; the export reads the files written."""

from __future__ import annotations

import copy
import io
import json
import shutil
from pathlib import Path

import pytest
from processes import interrupt_on_call

from concordia_env.arena import strength as st
from concordia_env.arena.strength import replay_games as rg
from concordia_env.cli import main as concordia
from concordia_env.dataset import chunk_games_path

TINY = {
    "format": "concordia-env/strength-config", "version": 1,
    "agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "random", "spec": "random"}],
    "settings": [
        {"id": "italia2", "map": "italia", "players": 2, "deals": 3, "seed": 5, "agents": ["heuristic", "random"]},
        {"id": "imperium4", "map": "imperium", "players": 4, "deals": 2, "seed": 7, "agents": ["heuristic", "random"],
         "field": "heuristic"},
    ],
}
ITALIA = "italia2-heuristic-vs-random"
CHUNKS = [f"{ITALIA}/deals_000-001.json", f"{ITALIA}/deals_002-002.json",
          "imperium4-heuristic-vs-random/deals_000-001.json", "imperium4-random-plus-3-heuristic/deals_000-001.json"]
GAMES = 3 * 2 + 2 * 4 + 2 * 4


@pytest.fixture(scope="module")
def config():
    return st.parse_config(copy.deepcopy(TINY), "tiny")


@pytest.fixture(scope="module")
def played(config, tmp_path_factory):
    """The tiny table played in chunks of 2 deals: its out folder, with the games files the run wrote."""
    out = tmp_path_factory.mktemp("strength")
    st.run_lines(config, out, deals_chunk=2, workers=1, progress=False)
    return out


def games_files(out: Path) -> dict[str, bytes]:
    return {c: chunk_games_path(out / "lines" / c).read_bytes()
            for c in CHUNKS if chunk_games_path(out / "lines" / c).exists()}


@pytest.fixture
def stripped(played, tmp_path):
    """A copy of the table without its games files, as chunks written before the table kept games: (out, config path)."""
    out = tmp_path / "strength"
    shutil.copytree(played, out)
    for chunk in CHUNKS:
        chunk_games_path(out / "lines" / chunk).unlink()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return out, path


def test_the_replayed_games_files_are_the_run_s_byte_for_byte(config, played, stripped):
    out, _ = stripped
    before = {p: p.stat().st_mtime_ns for p in (out / "lines").rglob("*.json")}
    report = rg.replay_chunk_games(config, out, progress=False)
    assert (report.chunks_written, report.games_replayed, report.chunks_kept) == (4, GAMES, 0)
    assert (report.mismatched, report.unusable) == ([], [])
    assert games_files(out) == games_files(played) and len(games_files(out)) == 4
    assert {p: p.stat().st_mtime_ns for p in (out / "lines").rglob("*.json")} == before  # chunks untouched
    again = rg.replay_chunk_games(config, out, workers=2, progress=False)  # resumable: nothing left to replay
    assert (again.chunks_written, again.games_replayed, again.chunks_kept) == (0, 0, 4)


def test_workers_and_line_globs(config, played, stripped):
    out, _ = stripped
    report = rg.replay_chunk_games(config, out, lines="imperium4-*", workers=2, progress=False)
    assert (report.chunks_written, report.games_replayed) == (2, 16)
    assert sorted(games_files(out)) == CHUNKS[2:]
    assert games_files(out) == {c: b for c, b in games_files(played).items() if c in CHUNKS[2:]}


def test_a_tampered_score_is_one_line_and_no_games_file(config, played, stripped):
    out, _ = stripped
    chunk = out / "lines" / ITALIA / "deals_000-001.json"
    data = json.loads(chunk.read_text())
    real = data["per_game"][1]["scores"]
    data["per_game"][1]["scores"] = [real[0] + 1, real[1]]
    chunk.write_text(json.dumps(data))
    with pytest.warns(st.StrengthWarning) as caught:
        report = rg.replay_chunk_games(config, out, lines=ITALIA, progress=False)
    assert [str(w.message) for w in caught] == [
        f"chunk {chunk}, game 1 (deal 0, seed 5, seats random, heuristic): the replay gives scores {real}, "
        f"the chunk {[real[0] + 1, real[1]]}; no games file written"]
    assert report.mismatched == [chunk] and report.chunks_written == 1
    assert sorted(games_files(out)) == [CHUNKS[1]] and not chunk_games_path(chunk).exists()


def test_the_mismatch_line_counts_the_other_games_that_differ():
    entries = [{"seed": 3, "seats": ["a", "b"], "scores": [1, 2], "turns": 9},
               {"seed": 3, "seats": ["b", "a"], "scores": [4, 5], "turns": 9}]
    played = [{"scores": [1, 2], "turns": 10}, {"scores": [4, 5], "turns": 8}]
    assert rg.chunk_mismatch(Path("c.json"), 6, 2, entries, played) == (
        "chunk c.json, game 0 (deal 6, seed 3, seats a, b): the replay gives card plays 10, the chunk 9; "
        "1 more game(s) of the chunk differ; no games file written")
    assert rg.chunk_mismatch(Path("c.json"), 6, 2, entries[:1], [{"scores": [1, 2], "turns": 9}]) is None


def test_a_chunk_that_does_not_fit_the_config_is_left_alone(config, stripped):
    out, _ = stripped
    chunk = out / "lines" / ITALIA / "deals_002-002.json"
    chunk.write_text(chunk.read_text().replace('"seed": 7,', '"seed": 8,', 1))
    with pytest.warns(st.StrengthWarning, match=r"deals_002-002.json: seed is 8, this config needs 7; its games are "
                                                r"not replayed$"):
        report = rg.replay_chunk_games(config, out, lines=ITALIA, progress=False)
    assert report.unusable == [chunk] and report.chunks_written == 1 and chunk.exists()


def test_the_command_line_replays_and_the_export_reads_the_files(played, stripped, capsys):
    out, config_path = stripped
    argv = ["--replay-games", "--config", str(config_path), "--out", str(out), "--no-progress"]
    assert st.main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in printed[:-1]] == [
        f"wrote lines/{c.removesuffix('.json')}.games.jsonl.gz" for c in CHUNKS]
    assert printed[-1] == f"{GAMES} games replayed, 4 games files written, 0 chunks already had theirs"
    assert not (out / "summary.json").exists()  # nothing but the games files is written
    assert st.main(argv) == 0
    assert capsys.readouterr().out == "0 games replayed, 0 games files written, 4 chunks already had theirs\n"
    text = io.StringIO()
    assert concordia(["dataset", "export", str(out), "--out", str(out.parent / "table.jsonl.gz")], out=text) == 0
    assert text.getvalue().startswith(f"wrote {GAMES} games from 4 file(s) to ")
    assert capsys.readouterr().err == ""  # no chunk without its games


def test_the_command_line_reports_a_mismatch_in_one_line_and_exits_1(stripped, capsys):
    out, config_path = stripped
    chunk = out / "lines" / ITALIA / "deals_002-002.json"
    chunk.write_text(chunk.read_text().replace('"turns": ', '"turns": 1', 1))
    assert st.main(["--replay-games", "--config", str(config_path), "--out", str(out), "--lines", ITALIA]) == 1
    captured = capsys.readouterr()
    warning = [line for line in captured.err.splitlines() if "warning" in line]
    assert len(warning) == 1 and warning[0].startswith(
        f"python -m concordia_env.arena.strength: warning: chunk {chunk}, game 0 (deal 2, seed 7, seats heuristic, "
        "random): the replay gives card plays ")
    assert captured.out.splitlines()[-1] == ("6 games replayed, 1 games files written, 0 chunks already had theirs, "
                                             "1 chunk(s) left without one (see the warnings)")


@pytest.mark.parametrize("extra, message", [
    (["--table-only"], "--replay-games writes only the chunks' games files: leave out --table-only and --docs"),
    (["--lines", "nope-*"], "--lines: 'nope-*' matches no line"),
])
def test_the_command_line_refuses_bad_arguments_in_one_line(stripped, capsys, extra, message):
    out, config_path = stripped
    assert st.main(["--replay-games", "--config", str(config_path), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_an_out_folder_without_lines_is_refused(stripped, tmp_path, capsys):
    _, config_path = stripped
    assert st.main(["--replay-games", "--config", str(config_path), "--out", str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err == (f"python -m concordia_env.arena.strength: error: --out {tmp_path / 'empty'}: "
                                       "no lines folder, so no chunk to replay\n")


def test_ctrl_c_keeps_the_games_files_written(config, stripped, monkeypatch):
    replay = interrupt_on_call(monkeypatch, rg, "_replay")
    out, _ = stripped
    with pytest.raises(KeyboardInterrupt):
        rg.replay_chunk_games(config, out, lines=ITALIA, progress=False)
    assert sorted(games_files(out)) == [CHUNKS[0]]
    monkeypatch.setattr(rg, "_replay", replay)
    report = rg.replay_chunk_games(config, out, lines=ITALIA, progress=False)
    assert (report.chunks_written, report.games_replayed, report.chunks_kept) == (1, 2, 1)


def test_numpy_search_specs_set_compiled_0_on_az_only():
    assert rg.numpy_search_specs(["az:simulations=200:prior_mix=1", "net"]) == (
        "az:simulations=200:prior_mix=1:compiled=0", "net")
    assert rg.numpy_search_specs(["az:compiled=1", "heuristic"]) is None
    assert rg.numpy_search_specs(["mcts:iterations=10", "azure"]) is None


def test_a_game_that_differs_with_the_compiled_search_is_played_with_the_numpy_one(monkeypatch):
    entry = {"scores": [1, 2], "ranking": [1, 0]}
    calls = []

    def play(task, specs):
        calls.append(tuple(specs))
        return {"scores": [1, 2] if len(calls) == 2 else [3, 4], "ranking": [1, 0], "actions": [7]}

    monkeypatch.setattr(rg, "_play", play)
    monkeypatch.setattr(rg, "CHECKED", (("scores", "scores", "scores"), ("ranking", "ranking", "ranking")))
    task = ("italia", 2, 5, ("az:simulations=5", "net"), False, 2000, entry)
    played = rg._replay(task)
    assert calls == [("az:simulations=5", "net"), ("az:simulations=5:compiled=0", "net")]
    assert played["scores"] == [1, 2] and played["actions"] == [7]
    calls.clear()
    assert rg._replay(("italia", 2, 5, ("heuristic", "net"), False, 2000, entry))["scores"] == [3, 4]
    assert calls == [("heuristic", "net")]  # no az seat: played once, and the chunk is reported
