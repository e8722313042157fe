"""The shipped JSON Schemas agree with the package's own checks: every real record and data-set line
validates against them, and every corrupted one is rejected by both the schema and the validator."""

from __future__ import annotations

import copy
import gzip
import json
from collections.abc import Callable
from typing import Any

import jsonschema  # the dev extra: used only by the tests
import pytest
from dataset_games import partial, records  # tests/dataset_games.py

from concordia_env.arena.records import RECORD_FORMAT, RECORD_VERSION, validate_record
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.dataset import DATASET_FORMAT, DATASET_VERSION, check_game_line, line_from_record, schema
from concordia_env.dataset.format import check_header, encode
from concordia_env.engine import NUM_ACTIONS
from concordia_env.state import GOD_COLUMNS


def validator(name: str) -> Any:
    s = schema(name)
    jsonschema.Draft202012Validator.check_schema(s)
    return jsonschema.Draft202012Validator(s)


RECORD = validator("game_record")
LINE = validator("dataset_line")


def schema_accepts(v: Any, obj: Any) -> bool:
    return not list(v.iter_errors(obj))


def code_accepts(check: Callable[[Any], Any], obj: Any) -> bool:
    try:
        check(obj)
    except ValueError:
        return False
    return True


def test_the_schemas_name_the_codes_constants():
    r, line = schema("game_record"), schema("dataset_line")
    assert r["properties"]["format"]["const"] == RECORD_FORMAT
    assert r["properties"]["version"]["const"] == RECORD_VERSION
    header = line["$defs"]["header"]["properties"]
    assert header["format"]["const"] == DATASET_FORMAT and header["version"]["const"] == DATASET_VERSION
    assert header["num_actions"]["const"] == NUM_ACTIONS
    for s in (r, line):
        assert s["$defs"]["actions"]["items"]["maximum"] == NUM_ACTIONS - 1
    assert r["properties"]["map"]["enum"] == line["$defs"]["game"]["properties"]["map"]["enum"] == list(MAP_NAMES)
    vb = r["$defs"]["result"]["properties"]["vp_breakdown"]["items"]
    assert vb["minItems"] == vb["maxItems"] == len(GOD_COLUMNS)
    ranges = {rule["if"]["properties"]["map"]["const"]: rule["then"]["properties"]["players"] for rule in r["allOf"]
              if "map" in rule["if"]["properties"]}
    assert ranges == {m: {"minimum": min(load_map(m).players), "maximum": max(load_map(m).players)} for m in MAP_NAMES}


def test_every_real_record_validates_against_the_schema():
    games = [*records(), partial()]
    assert any(g["result"]["truncated"] for g in games) and any(g["intermediate_scoring"] for g in games)
    for record in games:
        validate_record(record)
        assert schema_accepts(RECORD, record), list(RECORD.iter_errors(record))[:1]
        # as a file stores it: JSON and back
        assert schema_accepts(RECORD, json.loads(json.dumps(record)))


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        for key in path[:-1]:
            obj = obj[key]
        obj[path[-1]] = value
    return change


def _drop(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        for key in path[:-1]:
            obj = obj[key]
        del obj[path[-1]]
    return change


def _append(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(obj: dict[str, Any]) -> None:
        for key in path:
            obj = obj[key]
        obj.append(value)
    return change


# corruptions of the first record (italia, 2 players)
RECORD_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "missing map": _drop(("map",)),
    "missing result": _drop(("result",)),
    "missing scores": _drop(("result", "scores")),
    "wrong format": _set(("format",), "concordia-env/evaluation"),
    "version 2": _set(("version",), 2),
    "version as text": _set(("version",), "1"),
    "bad map": _set(("map",), "atlantis"),
    "players as text": _set(("players",), "2"),
    "players true": _set(("players",), True),
    "too many players for italia": _set(("players",), 5),
    "seed as float": _set(("seed",), 1.5),
    "seed as text": _set(("seed",), "3"),
    "scoring as int": _set(("intermediate_scoring",), 0),
    "one agent too few": _set(("agents",), ["heuristic"]),
    "agent not a string": _set(("agents",), ["heuristic", 7]),
    "action out of range": _append(("actions",), NUM_ACTIONS),
    "negative action": _append(("actions",), -1),
    "action as text": _append(("actions",), "3"),
    "actions not a list": _set(("actions",), 3),
    "scores of the wrong length": _append(("result", "scores"), 10),
    "score as float": _set(("result", "scores"), [100.5, 90]),
    "vp breakdown row too short": _set(("result", "vp_breakdown"), [[0] * 6, [0] * 7]),
    "vp breakdown one row": _set(("result", "vp_breakdown"), [[0] * 7]),
    "ranking repeats a seat": _set(("result", "ranking"), [0, 0]),
    "ranking names seat 2": _set(("result", "ranking"), [0, 2]),
    "winner out of range": _set(("result", "winner"), 2),
    "winner as text": _set(("result", "winner"), "0"),
    "truncated as text": _set(("result", "truncated"), "no"),
    "negative turns": _set(("result", "turns"), -1),
    "unfinished but not truncated": _set(("result", "unfinished"), True),
    "unfinished as int": _set(("result", "unfinished"), 1),
    "result not an object": _set(("result",), [1, 2]),
}


@pytest.mark.parametrize("damage", list(RECORD_DAMAGE), ids=list(RECORD_DAMAGE))
def test_a_corrupted_record_is_rejected_by_schema_and_validator(damage):
    record = copy.deepcopy(records()[0])
    RECORD_DAMAGE[damage](record)
    assert not code_accepts(validate_record, record)
    assert not schema_accepts(RECORD, record)


def test_not_an_object_is_rejected_by_both():
    for obj in ([], "game", 3, None):
        assert not code_accepts(validate_record, obj) and not schema_accepts(RECORD, obj)


# ------------------------------------------------------------------ data-set lines
def _file_lines() -> list[Any]:
    data = gzip.decompress(encode([line_from_record(r, f"game_{i:05d}.json") for i, r in enumerate(records())]))
    return [json.loads(t) for t in data.decode().splitlines()]


def test_every_line_of_a_real_data_set_validates_against_the_schema():
    header, *games = _file_lines()
    check_header(header)
    assert schema_accepts(LINE, header)
    assert len(games) == header["games"] == len(records())
    for line in games:
        check_game_line(line)
        assert schema_accepts(LINE, line), list(LINE.iter_errors(line))[:1]


LINE_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "missing actions": _drop(("actions",)),
    "missing winner": _drop(("winner",)),
    "bad map": _set(("map",), "atlantis"),
    "players as text": _set(("players",), "2"),
    "seed as text": _set(("seed",), "3"),
    "action out of range": _append(("actions",), NUM_ACTIONS),
    "scores of the wrong length": _append(("scores",), 1),
    "ranking repeats a seat": _set(("ranking",), [1, 1]),
    "winner out of range": _set(("winner",), 5),
    "truncated as int": _set(("truncated",), 0),
    "turns as text": _set(("turns",), "99"),
    "three agents for two players": _append(("agents",), "random"),
    "source not a string": _set(("source",), 12),
}


@pytest.mark.parametrize("damage", list(LINE_DAMAGE), ids=list(LINE_DAMAGE))
def test_a_corrupted_game_line_is_rejected_by_schema_and_checker(damage):
    line = _file_lines()[1]
    LINE_DAMAGE[damage](line)
    assert not code_accepts(check_game_line, line)
    assert not schema_accepts(LINE, line)


@pytest.mark.parametrize("field, value", [("format", "concordia-env/game"), ("version", 2), ("games", -1),
                                          ("num_actions", NUM_ACTIONS + 1)])
def test_a_corrupted_header_is_rejected_by_schema_and_checker(field, value):
    header = _file_lines()[0]
    header[field] = value
    assert not code_accepts(check_header, header)
    assert not schema_accepts(LINE, header)
