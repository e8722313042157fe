"""The run folder every resumable run keeps its work in: settings checked, units kept or set aside."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from concordia_env.arena.run_folder import RunFolder, differences, flag_label

SETTINGS = {"map": "italia", "players": 2, "seed": 7}


def _open(path: Path, settings=SETTINGS, **kw) -> RunFolder:
    return RunFolder.open(path, settings, units=("shard_*.npz", "round_*/*"), **kw)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_new_folder_is_claimed_and_the_same_run_continues(tmp_path):
    run = _open(tmp_path / "run")
    assert not run.resumed and json.loads(run.settings_path.read_text()) == SETTINGS
    (run.path / "shard_00000.npz").write_bytes(b"x")
    again = _open(tmp_path / "run")
    assert again.resumed and again.unit_files() == [run.path / "shard_00000.npz"]


def test_other_settings_are_refused_naming_each_difference_and_nothing_changes(tmp_path):
    _open(tmp_path / "run")
    before = _snapshot(tmp_path / "run")
    with pytest.raises(ValueError) as info:
        _open(tmp_path / "run", {**SETTINGS, "seed": 8, "players": 3}, label=flag_label)
    assert "(--players 2 there, 3 here; --seed 7 there, 8 here)" in str(info.value)
    assert "\n" not in str(info.value)
    assert _snapshot(tmp_path / "run") == before


def test_resume_false_refuses_a_folder_with_a_run_and_resume_true_needs_one(tmp_path):
    _open(tmp_path / "run")
    with pytest.raises(ValueError, match=r"holds a run already \(settings.json\); add --resume"):
        _open(tmp_path / "run", resume=False)
    with pytest.raises(ValueError, match=r"--resume: no run in .*none \(settings.json is missing\)"):
        _open(tmp_path / "none", resume=True)
    assert not (tmp_path / "none").exists()
    assert _open(tmp_path / "run", resume=True).resumed


def test_units_without_settings_are_refused_unless_overwrite_and_other_files_stay(tmp_path):
    folder = tmp_path / "run"
    (folder / "round_00").mkdir(parents=True)
    (folder / "round_00" / "net.npz").write_bytes(b"x")
    (folder / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"unknown run \(round_00/net.npz\) without a settings.json; use another --out$"):
        _open(folder)
    with pytest.raises(ValueError, match="or --overwrite to delete them"):
        _open(folder, overwrite=False)
    run = _open(folder, overwrite=True)
    assert run.unit_files() == [] and (folder / "notes.txt").read_text() == "mine"


def test_an_unreadable_or_foreign_settings_file_is_refused(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "settings.json").write_text("{not json")
    with pytest.raises(ValueError, match="settings.json"):
        _open(folder)
    (folder / "settings.json").write_text(json.dumps({"format": "other"}))
    with pytest.raises(ValueError, match="its settings.json is not this kind of run's"):
        _open(folder, unwrap=lambda doc: doc.get("settings"))


def test_temporaries_of_killed_writes_are_removed_on_opening(tmp_path):
    run = _open(tmp_path / "run")
    (run.path / "round_01").mkdir()
    left = [run.path / ".shard_00003.npz.ab12cd.tmp", run.path / "round_01" / ".net.npz.x9y8.tmp",
            run.path / ".settings.json.qq.tmp"]
    for path in left:
        path.write_bytes(b"cut short")
    (run.path / ".mine.tmp").write_text("not ours")
    _open(tmp_path / "run")
    assert not any(p.exists() for p in left) and (run.path / ".mine.tmp").exists()


def test_a_bad_unit_is_set_aside_with_one_warning_and_good_ones_are_kept(tmp_path, capsys):
    run = _open(tmp_path / "run")
    good, bad, missing = (run.path / f"shard_0000{i}.npz" for i in range(3))
    good.write_bytes(b"good")
    bad.write_bytes(b"bad")
    kept = run.keep([good, bad, missing], lambda p: None if p.read_bytes() == b"good" else "corrupt", "regenerating it")
    assert kept == [good]
    assert capsys.readouterr().err == f"warning: {bad}: corrupt; regenerating it\n"
    assert not bad.exists() and Path(f"{bad}.invalid").read_bytes() == b"bad"


def test_differences_compare_as_json():
    assert differences({"a": True, "b": 2.0}, {"a": 1, "b": 2.0}) == ["a True there, 1 here"]
    assert differences({"a": 1}, {"a": 1, "b": 2}) == ["b missing there, 2 here"]
    assert differences([1], {"a": 1}) == ["it is not a JSON object"]
