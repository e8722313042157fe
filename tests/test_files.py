"""concordia_env._internal.files: a file is either the previous one or the complete new one, never truncated."""

from __future__ import annotations

import json
import os
import stat

import pytest

from concordia_env._internal import files  # (the module itself: a test patches through it)


def test_written_json_reads_back_with_a_final_newline_and_readable_permissions(tmp_path):
    path = tmp_path / "sub" / "result.json"  # missing folders are created
    files.write_json_atomic({"a": [1, 2]}, path)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == {"a": [1, 2]} and text.endswith("\n")
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # as open(path, "w") would make it
    assert sorted(p.name for p in path.parent.iterdir()) == ["result.json"]  # no temporary left


def test_an_unserialisable_document_leaves_the_previous_file_untouched(tmp_path):
    path = tmp_path / "result.json"
    files.write_json_atomic({"old": True}, path)
    with pytest.raises(TypeError):
        files.write_json_atomic({"bad": object()}, path)
    assert json.loads(path.read_text()) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["result.json"]


def test_a_failing_write_removes_its_temporary_file_and_keeps_the_old_one(tmp_path, monkeypatch):
    path = tmp_path / "weights.npz"
    files.write_bytes_atomic(path, b"old")

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        files.write_bytes_atomic(path, b"new" * 1000)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["weights.npz"]


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask,expected", [(0o077, 0o600), (0o022, 0o644), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path, umask, expected):
    before = os.umask(umask)
    try:
        assert files.current_umask() == umask
        files.write_json_atomic({"a": 1}, tmp_path / "new.json")
        files.write_bytes_atomic(tmp_path / "new.bin", b"x")
    finally:
        os.umask(before)
    assert mode(tmp_path / "new.json") == mode(tmp_path / "new.bin") == expected


@pytest.mark.parametrize("kept", [0o600, 0o640, 0o664])
def test_a_file_written_over_keeps_its_mode(tmp_path, kept):
    path = tmp_path / "private.json"
    path.write_text("{}")
    os.chmod(path, kept)
    files.write_json_atomic({"b": 2}, path)
    assert json.loads(path.read_text()) == {"b": 2} and mode(path) == kept


def test_a_failed_write_names_the_final_file_not_the_temporary_one(tmp_path, monkeypatch):
    path = tmp_path / "shard_00000.npz"

    def full_disk(fd):  # like a full disk's write: an OSError that names no file
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as m:
        m.setattr(os, "fsync", full_disk)
        with pytest.raises(OSError) as exc:
            files.write_bytes_atomic(path, b"data")
    assert exc.value.filename == str(path) and exc.value.errno == 28

    def read_only(*args, dir=None, prefix="", suffix="", **kwargs):  # mkstemp names the temporary file
        raise PermissionError(13, "Permission denied", os.path.join(dir, f"{prefix}abc123{suffix}"))

    monkeypatch.setattr(files.tempfile, "mkstemp", read_only)
    with pytest.raises(PermissionError) as exc:
        files.write_json_atomic({}, path)
    assert exc.value.filename == str(path) and ".tmp" not in str(exc.value)
    assert os.listdir(tmp_path) == []
