"""Golden playthroughs (concordia_env.tools.golden): the committed games still replay exactly.

Every golden game is replayed and compared line by line with ``tests/golden/``: the
action each agent picks, its name, the digests of the legal actions, of every
seat's observation and of the whole state after the action, the VP, and the
final result. Also: the digest notices a change of any single int of the state,
``--check`` finds modified, truncated, corrupt, missing and stale files and names
the game and the step, ``--write`` is deterministic, and the command's errors.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.state import new_game
from concordia_env.tools.golden import (
    GOLDEN_FORMAT,
    GOLDEN_VERSION,
    SUFFIX,
    GoldenGame,
    check_golden,
    digest,
    dump_line,
    golden_bytes,
    golden_games,
    main,
    read_golden,
    state_digest,
    write_golden,
)

GOLDEN = Path(__file__).parent / "golden"
SAMPLE = "italia_2p_random"  # the game the tampering tests edit


def _games(*names: str) -> list[GoldenGame]:
    """The golden games of these names: the tampering tests replay only the games they edit."""
    return [g for g in golden_games() if g.name in names]


def _rewrite(path: Path, lines: list[dict]) -> None:
    path.write_bytes(gzip.compress("".join(dump_line(x) + "\n" for x in lines).encode("utf-8"), mtime=0))


@pytest.fixture
def golden_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "golden"
    shutil.copytree(GOLDEN, folder)
    return folder


def test_golden_playthroughs_replay_exactly():
    divergences = check_golden(GOLDEN)
    assert not divergences, "\n".join(d.report() for d in divergences)


def test_golden_files_cover_every_map_player_count_and_agent():
    games = golden_games()
    assert sorted(p.name for p in GOLDEN.glob("*" + SUFFIX)) == sorted(g.filename for g in games)
    combos = {(m, n) for m in MAP_NAMES for n in load_map(m).players}
    assert {(g.map, g.players) for g in games} == combos
    for m, n in combos:
        assert {g.kind for g in games if (g.map, g.players) == (m, n)} == {"random", "heuristic", "mixed"}
    total = sum(p.stat().st_size for p in GOLDEN.iterdir())
    assert total < 2_000_000, f"golden files take {total:,} bytes"
    lines = read_golden(GOLDEN / (SAMPLE + SUFFIX))
    header, steps, result = lines[0], lines[1:-1], lines[-1]
    assert header["format"] == GOLDEN_FORMAT and header["version"] == GOLDEN_VERSION
    assert "--write" in header["generated_by"] and set(header["fields"]) == set(steps[0])
    assert [x["step"] for x in steps] == list(range(len(steps))) == list(range(result["result"]["steps"]))
    assert steps[-1]["phase"] == "game over" and steps[-1]["vp"] == result["result"]["scores"]


def test_digest_changes_with_any_single_int_of_the_state():
    state = new_game("imperium", 5, seed=7)
    for action in (0, 385, 17):  # a few steps in, so most fields hold something
        if action in state.legal_actions():
            state.apply(action)
    s = state.s
    assert s.size == E.STATE_SIZE
    base = state_digest(state)
    assert base == state_digest(s.copy()) == digest(s) and len(base) == 16
    seen = {base}
    for i in range(s.size):
        for edit in (int(s[i]) + 1, int(s[i]) - 1):
            t = s.copy()
            t[i] = edit
            d = state_digest(t)
            assert d != base, f"digest ignores state index {i}"
            seen.add(d)
    assert len(seen) == 1 + 2 * s.size  # no two single-int edits collide either
    assert state_digest(s[:-1]) != base  # the length counts too


def test_digest_refuses_arrays_it_would_have_to_convert():
    with pytest.raises(ValueError, match="int32 or float32"):
        digest(np.arange(4, dtype=np.int64))
    with pytest.raises(ValueError, match="flat int32"):
        state_digest(np.zeros((2, 2), np.int32))
    big_endian = np.arange(5, dtype=">i4")
    assert digest(big_endian) == digest(np.arange(5, dtype="<i4"))


@pytest.mark.parametrize("key, value", [("state", "0123456789abcdef"), ("action", 17), ("vp", [0, 0]),
                                        ("obs", "0" * 16), ("name", "play nothing")])
def test_check_finds_a_modified_step_and_names_game_step_and_action(golden_copy, capsys, key, value):
    path = golden_copy / (SAMPLE + SUFFIX)
    lines = read_golden(path)
    original = dict(lines[1 + 40])
    assert original[key] != value
    lines[1 + 40][key] = value
    lines[1 + 90]["state"] = "ffffffffffffffff"  # a later change: only the first is reported
    _rewrite(path, lines)
    [d] = check_golden(golden_copy, _games(SAMPLE))
    assert (d.game, d.step, d.path) == (SAMPLE, 40, path)
    assert d.expected == lines[1 + 40] and d.got == original
    report = d.report()
    assert f"{SAMPLE}" in report and "step 40" in report and f"differing keys: {key}" in report
    assert f"action got:      {original['action']} {original['name']!r}" in report
    assert main(["--check", "--dir", str(golden_copy), "--game", SAMPLE]) == 1
    out = capsys.readouterr().out
    assert "step 40" in out and "FAILED: 1 file(s)" in out


def test_check_finds_truncated_changed_corrupt_missing_and_stale_files(golden_copy, capsys):
    lines = read_golden(golden_copy / (SAMPLE + SUFFIX))
    _rewrite(golden_copy / (SAMPLE + SUFFIX), lines[:-3])  # last two steps and the result cut off
    result = read_golden(golden_copy / "italia_2p_heuristic.jsonl.gz")
    result[-1]["result"]["scores"][0] += 1
    _rewrite(golden_copy / "italia_2p_heuristic.jsonl.gz", result)
    header = read_golden(golden_copy / "italia_4p_mixed.jsonl.gz")
    header[0]["seed"] = 99
    _rewrite(golden_copy / "italia_4p_mixed.jsonl.gz", header)
    (golden_copy / "imperium_3p_heuristic.jsonl.gz").write_bytes(b"not gzip")
    (golden_copy / "imperium_4p_random.jsonl.gz").unlink()
    shutil.copy(golden_copy / "imperium_5p_mixed.jsonl.gz", golden_copy / "old_game.jsonl.gz")
    edited = [SAMPLE, "italia_2p_heuristic", "italia_4p_mixed", "imperium_3p_heuristic", "imperium_4p_random"]
    found = {d.game: d for d in check_golden(golden_copy, _games(*edited))}
    assert set(found) == {*edited, "old_game"}
    assert found[SAMPLE].step == len(lines) - 4 and "goes on after the file ends" in found[SAMPLE].message
    assert found["italia_2p_heuristic"].message == "result differs"
    assert found["italia_2p_heuristic"].step == len(result) - 2
    assert found["italia_4p_mixed"].step is None and "differing keys: seed" in found["italia_4p_mixed"].report()
    assert "cannot read" in found["imperium_3p_heuristic"].message
    assert "missing" in found["imperium_4p_random"].message
    assert "no golden game produces" in found["old_game"].message
    assert main(["--check", "--dir", str(golden_copy), *(f"--game={n}" for n in edited)]) == 1
    assert "FAILED: 6 file(s)" in capsys.readouterr().out


def test_check_refuses_a_file_of_another_format(golden_copy):
    path = golden_copy / (SAMPLE + SUFFIX)
    lines = read_golden(path)
    lines[0]["version"] = GOLDEN_VERSION + 1
    _rewrite(path, lines)
    path2 = golden_copy / "italia_3p_mixed.jsonl.gz"
    path2.write_bytes(gzip.compress(b'{"step": 0}\n[1, 2]\n', mtime=0))
    found = {d.game: d.message for d in check_golden(golden_copy, _games(SAMPLE, "italia_3p_mixed"))}
    assert "version" in found[SAMPLE] and "expected a JSON object" in found["italia_3p_mixed"]


def test_a_wrong_effect_is_named_by_its_state_field(monkeypatch):
    """An engine that pays seat 0 one coin too many at its 41st action: the report names the step
    and the state field ``coins``, and nothing else."""
    from concordia_env.state import GameState

    real_apply = GameState.apply
    applied = []

    def apply_with_a_bug(self, action):
        real_apply(self, action)
        applied.append(action)
        if len(applied) == 41:
            self.field("coins")[0] += 1

    monkeypatch.setattr(GameState, "apply", apply_with_a_bug)
    [d] = check_golden(GOLDEN, _games(SAMPLE))
    assert d.step == 40 and d.message == "step differs"
    report = d.report()
    assert "  state fields that differ: coins\n" in report
    assert "observation fields that differ" not in report  # observations are taken before the action


def test_a_wrong_observation_is_named_by_its_field(monkeypatch):
    """An encoder that shows the deck one card larger from step 12 on: named ``deck_size``."""
    from concordia_env.encoding import OBSERVATION_LAYOUT, observation
    from concordia_env.tools import golden

    calls = []

    def observation_with_a_bug(state, seat):
        obs = observation(state, seat)
        calls.append(seat)
        if len(calls) > 12 * (state.num_players + 1):  # each step: every seat, then the deciding one
            obs[OBSERVATION_LAYOUT["deck_size"]] += 1
        return obs

    monkeypatch.setattr(golden, "observation", observation_with_a_bug)
    [d] = check_golden(GOLDEN, _games(SAMPLE))
    assert d.step == 12
    report = d.report()
    assert "differing keys: obs, obs_changed" in report
    assert "  observation fields that differ: deck_size\n" in report
    assert "state fields that differ" not in report


def test_check_reports_a_replay_that_raises(monkeypatch):
    from concordia_env.agents.random_agent import RandomAgent

    calls = []

    def broken(self, observation, action_mask, state=None):
        calls.append(1)
        if len(calls) > 25:
            raise RuntimeError("agent broke")
        return int(np.flatnonzero(action_mask)[self.rng.integers(np.count_nonzero(action_mask))])

    monkeypatch.setattr(RandomAgent, "act", broken)
    [d] = check_golden(GOLDEN, _games(SAMPLE))
    assert d.step == 25 and "the replay raised RuntimeError: agent broke" in d.report()


def test_write_is_deterministic_and_reproduces_the_committed_files(tmp_path, capsys):
    game = next(g for g in golden_games() if g.name == SAMPLE)
    data = golden_bytes(game)
    assert data == golden_bytes(game)
    assert data[4:8] == b"\0\0\0\0"  # gzip mtime 0: no timestamp in the file
    assert gzip.decompress(data) == gzip.decompress((GOLDEN / game.filename).read_bytes())
    folder = tmp_path / "new" / "golden"
    (folder.parent).mkdir()
    folder.mkdir()
    (folder / "stale.jsonl.gz").write_bytes(b"x")
    (folder / "notes.txt").write_text("kept")
    assert write_golden(folder, [game]) == [folder / game.filename]
    assert sorted(p.name for p in folder.iterdir()) == [game.filename, "notes.txt"]
    assert (folder / game.filename).read_bytes() == data
    assert check_golden(folder, [game]) == []
    json.loads(gzip.decompress(data).decode("utf-8").splitlines()[0])  # the header is one JSON line


def test_command_line_errors(tmp_path, capsys):
    for argv, message in [(["--dir", str(GOLDEN)], "one of the arguments --write --check is required"),
                          (["--write", "--check", "--dir", str(GOLDEN)], "not allowed with"),
                          (["--check"], "the following arguments are required: --dir"),  # never a default in the repository
                          (["--check", "--dir", str(tmp_path / "nowhere")], "does not exist"),
                          (["--check", "--dir", __file__], "is not a folder"),
                          (["--check", "--dir", str(GOLDEN), "--game", "italia_9p_random"],
                           "unknown game(s) italia_9p_random")]:
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert message in capsys.readouterr().err
    assert main(["--check", "--dir", str(GOLDEN), "--game", SAMPLE]) == 0
    assert "golden check passed: 1 game(s)" in capsys.readouterr().out
