"""The strength table keeps its games: each chunk's games file beside it, exported by ``concordia dataset
export``, checked against its chunk; chunks written before the table kept games still read and are counted."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from concordia_env.arena import strength as st
from concordia_env.dataset import DatasetWarning, chunk_games_path, export_dataset, iter_games

CONFIG = {
    "format": "concordia-env/strength-config", "version": 1,
    "agents": [{"name": "heuristic", "spec": "heuristic"}, {"name": "random", "spec": "random"}],
    "settings": [{"id": "italia2", "map": "italia", "players": 2, "deals": 3, "seed": 5,
                  "agents": ["heuristic", "random"]}],
    "targets": [],
}
LINE = "italia2-heuristic-vs-random"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The tiny table played in chunks of 2 deals: its out folder."""
    out = tmp_path_factory.mktemp("strength")
    config = st.parse_config(json.loads(json.dumps(CONFIG)), "tiny")
    st.run_lines(config, out, deals_chunk=2, workers=1, progress=False)
    return out


def copy_table(table: Path, tmp_path: Path) -> Path:
    shutil.copytree(table, tmp_path / "strength")
    return tmp_path / "strength"


def test_every_chunk_has_its_games_beside_it(table):
    folder = table / "lines" / LINE
    chunks = sorted(folder.glob("deals_*.json"))
    assert [p.name for p in chunks] == ["deals_000-001.json", "deals_002-002.json"]
    for chunk in chunks:
        per_game = json.loads(chunk.read_text())["per_game"]
        games = list(iter_games(chunk_games_path(chunk), replay=True))
        assert [(g["seed"], g["agents"], g["scores"], g["ranking"], g["winner"], g["turns"]) for g in games] == [
            (e["seed"], e["seats"], e["scores"], e["ranking"], e["winner_seat"], e["turns"]) for e in per_game]
        assert games[0]["source"] == f"{LINE}/{chunk.name}#0"


def test_exporting_a_strength_folder_gathers_every_game_in_order(table, tmp_path):
    report = export_dataset([table], tmp_path / "table.jsonl.gz")
    assert (report.games, report.files, report.skipped, report.without_actions) == (6, 2, [], [])
    games = list(iter_games(tmp_path / "table.jsonl.gz"))
    assert [g["seed"] for g in games] == [5, 5, 6, 6, 7, 7]
    assert [g["agents"] for g in games[:2]] == [["heuristic", "random"], ["random", "heuristic"]]
    one = export_dataset([table / "lines" / LINE / "deals_002-002.json"], tmp_path / "one.jsonl.gz")
    assert one.games == 2  # a chunk named on its own is read through its games file


def test_chunks_without_games_still_read_and_are_counted(table, tmp_path):
    out = copy_table(table, tmp_path)
    chunk = out / "lines" / LINE / "deals_000-001.json"
    chunk_games_path(chunk).unlink()  # as the table wrote chunks before it kept games
    config = st.parse_config(json.loads(json.dumps(CONFIG)), "tiny")
    assert sorted(st.scan_line(config.lines[0], out).games) == [0, 1, 2]
    report = export_dataset([out], tmp_path / "x.jsonl.gz")
    assert report.games == 2 and report.without_actions == [chunk] and report.without_actions_games == 4
    chunk_games_path(out / "lines" / LINE / "deals_002-002.json").unlink()
    with pytest.raises(ValueError, match=r"no game to export in .*\(2 strength-table chunk\(s\) hold no actions"):
        export_dataset([out], tmp_path / "y.jsonl.gz")


def test_a_games_file_that_disagrees_with_its_chunk_is_skipped(table, tmp_path):
    out = copy_table(table, tmp_path)
    games = chunk_games_path(out / "lines" / LINE / "deals_002-002.json")
    other = chunk_games_path(out / "lines" / LINE / "deals_000-001.json")
    games.write_bytes(gzip.compress(gzip.decompress(other.read_bytes())))  # another chunk's games
    with pytest.warns(DatasetWarning, match=f"strength games file {games}: it holds 4 games, its chunk "
                                            "deals_002-002.json 2; its games are not exported"):
        report = export_dataset([out], tmp_path / "x.jsonl.gz")
    assert report.games == 4 and len(report.skipped) == 1
