"""concordia_env.files: a file is either the previous one or the complete new one, never truncated."""

from __future__ import annotations

import json
import os
import stat

import pytest

from concordia_env import files


def test_written_json_reads_back_with_a_final_newline_and_readable_permissions(tmp_path):
    path = tmp_path / "sub" / "result.json"  # missing folders are created
    files.write_json_atomic({"a": [1, 2]}, path)
    text = path.read_text(encoding="utf-8")
    assert json.loads(text) == {"a": [1, 2]} and text.endswith("\n")
    assert stat.S_IMODE(path.stat().st_mode) == files.FILE_MODE
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
