"""Resuming a game record never loads a model file that only the record names.

A record is data anyone may send (a shared game to continue), and loading a model file can run
code (a stable-baselines3 .zip is a pickle). So ``concordia play --resume`` and ``concordia serve
--resume`` use the record's agents only when they load nothing from a file; an agent such as
``policy:path=FILE`` or ``az:net=STEM`` is refused with one line showing how to name it on the
command line, and the file is never opened (watched with an audit hook on ``open``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_server import quick_serve  # noqa: F401 - the fixture: serve stops at once, as after Ctrl-C

from concordia_env.arena.records import partial_record, save_record
from concordia_env.cli import main, named_file

MARK = "untrusted-model-4f1c"  # in the name of every crafted model file
opened: list[str] = []


def _watch(event: str, args: tuple) -> None:
    if event == "open" and args and MARK in str(args[0]):
        opened.append(str(args[0]))


sys.addaudithook(_watch)  # audit hooks cannot be removed; this one only notes the crafted files


@pytest.fixture
def shared_record(tmp_path: Path) -> tuple[Path, Path]:
    """An unfinished 2-player Italia record whose seat 1 is ``policy:path=`` a crafted .zip (which
    would write ``pwned`` beside it if it were ever unpickled): (record, model file)."""
    model = tmp_path / f"{MARK}.zip"
    model.write_bytes(b"PK\x05\x06" + b"\x00" * 18)  # an empty zip: nothing in it may be read either
    record = partial_record("italia", 2, 5, ["human", f"policy:path={model}"], [])
    path = tmp_path / "shared.json"
    save_record(record, path)
    opened.clear()
    return path, model


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def test_named_file():
    assert named_file("policy:path=m.zip") == "m.zip" and named_file("az:net=nets/x") == "nets/x"
    assert named_file("net:net=y:head=win") == "y" and named_file("mcts:ms=50") is None
    assert named_file("heuristic") is None and named_file("bad:spec") is None


def test_play_resume_refuses_a_model_file_named_only_by_the_record(shared_record, capsys):
    path, model = shared_record
    with pytest.raises(SystemExit) as stop:
        main(["play", "--resume", str(path)], input_fn=lambda prompt="": "q")
    line = _one_line(capsys)
    assert stop.value.code == 2
    assert f"the agent at seat 1, 'policy:path={model}', loads the file" in line
    assert f"--opponents policy:path={model}" in line  # how to name it yourself
    assert opened == [] and not (model.parent / "pwned").exists()
    # other agents from the command line: the game goes on, the file untouched
    assert main(["play", "--resume", str(path), "--opponents", "random"], input_fn=lambda prompt="": "q") == 0
    assert opened == []
    # naming the file yourself loads it (here it is no model: one line)
    with pytest.raises(SystemExit):
        main(["play", "--resume", str(path), "--opponents", f"policy:path={model}"], input_fn=lambda prompt="": "q")
    assert opened and "is not a stable-baselines3 model file" in _one_line(capsys)


def test_serve_resume_refuses_a_model_file_named_only_by_the_record(shared_record, capsys, tmp_path,
                                                                       quick_serve):  # noqa: F811
    path, model = shared_record
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--resume", str(path), "--port", "0"])
    line = _one_line(capsys)
    assert stop.value.code == 2 and f"--agents policy:path={model}" in line
    # a network pair named by the record (az:net=STEM) is refused the same way
    stem = tmp_path / f"{MARK}-net"
    save_record(partial_record("italia", 2, 5, [f"az:net={stem}", "human"], []), path)
    with pytest.raises(SystemExit):
        main(["serve", "--resume", str(path), "--port", "0"])
    assert f"--agents az:net={stem}" in _one_line(capsys)
    assert quick_serve == [] and opened == []
    # the record's agents that load nothing are used as before
    save_record(partial_record("italia", 2, 5, ["random", "human"], []), path)
    assert main(["serve", "--resume", str(path), "--port", "0"]) == 130
    assert quick_serve[0].names == ["random", "human"]
