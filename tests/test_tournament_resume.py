"""``concordia tournament --resume`` verifies what it reads: every kept record is replayed from its
seed and must give its stored result, and the results file must agree with the records (or, without
records, with its own checksum), so edited or damaged scores never reach the final table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from concordia_env.arena.records import load_record, verify_record
from concordia_env.cli import main

GAMES = 4


def argv(tmp_path: Path, records: bool = True) -> list[str]:
    out = ["tournament", "--map", "italia", "--players", "2", "--agents", "random,heuristic", "--games", str(GAMES),
           "--out", str(tmp_path / "results.json"), "--no-progress"]
    return out + (["--records", str(tmp_path / "records")] if records else [])


def results(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "results.json").read_text())


def without_timing(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "seconds"}


@pytest.fixture
def played(tmp_path, capsys) -> dict:
    """A finished tournament with records; its results (the reference)."""
    assert main(argv(tmp_path)) == 0
    capsys.readouterr()
    return results(tmp_path)


def rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def resume(tmp_path: Path, capsys, records: bool = True) -> tuple[int, str, str]:
    code = main(argv(tmp_path, records) + ["--resume"])
    out, err = capsys.readouterr()
    return code, out, err


def test_an_edited_score_in_a_record_is_played_again(tmp_path, capsys, played):
    record = tmp_path / "records" / "game_00001.json"

    def add_vp(data: dict) -> None:
        data["result"]["scores"][0] += 40
        data["result"]["vp_breakdown"][0][0] += 40

    rewrite(record, add_vp)
    code, out, err = resume(tmp_path, capsys)
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert str(record) in warning and "scores" in warning and "playing games 1-3 again" in warning
    assert without_timing(results(tmp_path)) == without_timing(played)
    verify_record(load_record(record))  # written again, whole


def test_a_garbled_action_in_a_record_is_played_again(tmp_path, capsys, played):
    record = tmp_path / "records" / "game_00002.json"
    actions = load_record(record)["actions"]
    # the first action the replay refuses or that changes the game: another id in range
    rewrite(record, lambda data: data["actions"].__setitem__(3, (actions[3] + 1) % 100))
    code, _, err = resume(tmp_path, capsys)
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert str(record) in warning and "playing games 2-3 again" in warning
    assert without_timing(results(tmp_path)) == without_timing(played)
    assert load_record(record)["actions"] == actions


def test_an_edited_score_in_the_results_file_gives_way_to_the_records(tmp_path, capsys, played):
    def edit(data: dict) -> None:
        data["per_game"][0]["scores"][0] += 40
        data["complete"] = False

    rewrite(tmp_path / "results.json", edit)
    code, out, err = resume(tmp_path, capsys)
    assert code == 0, err
    (warning,) = [line for line in err.splitlines() if line.startswith("warning:")]
    assert "game 0 differs from the verified record (scores of game 0); the records are used" in warning
    assert without_timing(results(tmp_path)) == without_timing(played)
    mean_vp = {spec: a["mean_vp"] for spec, a in played["per_agent"].items()}
    assert {spec: a["mean_vp"] for spec, a in results(tmp_path)["per_agent"].items()} == mean_vp


def test_an_edited_results_file_without_records_is_refused(tmp_path, capsys):
    assert main(argv(tmp_path, records=False)) == 0
    rewrite(tmp_path / "results.json", lambda data: data["per_game"][0]["scores"].__setitem__(0, 999))
    before = (tmp_path / "results.json").read_bytes()
    code, _, err = resume(tmp_path, capsys, records=False)
    assert code == 2 and err.count("\n") == 1, err
    assert "does not match its per_game_sha256 (edited or damaged)" in err and str(tmp_path / "results.json") in err
    assert (tmp_path / "results.json").read_bytes() == before
