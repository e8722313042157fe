"""Game data sets: the export (records, folders, strength tables, bad inputs), the readers (with and
without replay, strict or skipping), the arrays they give against the env's, the command, and the
shipped sample."""

from __future__ import annotations

import gzip
import io
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from dataset_games import partial, records, write_records  # tests/dataset_games.py

from concordia_env.arena.records import save_record
from concordia_env.cli import main
from concordia_env.dataset import (
    DatasetError,
    DatasetWarning,
    export_dataset,
    iter_games,
    iter_replays,
    load_steps,
    read_header,
    replay_game,
    write_dataset,
)
from concordia_env.dataset.format import encode, line_from_record
from concordia_env.encoding import OBSERVATION_SIZE
from concordia_env.engine import NUM_ACTIONS
from concordia_env.env import raw_env

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "results" / "games" / "sample.jsonl.gz"


def lines_of(path: Path) -> list[dict]:
    return [json.loads(t) for t in gzip.decompress(path.read_bytes()).decode().splitlines()]


def write_lines(path: Path, objs: list) -> Path:
    path.write_bytes(gzip.compress(("\n".join(json.dumps(o) for o in objs) + "\n").encode()))
    return path


@pytest.fixture
def exported(tmp_path):
    """A records folder of the real games exported: (data-set path, its lines)."""
    write_records(tmp_path / "games")
    out = tmp_path / "games.jsonl.gz"
    report = export_dataset([tmp_path / "games"], out)
    assert (report.games, report.files, report.skipped) == (4, 4, [])
    return out, lines_of(out)


# ------------------------------------------------------------------ export
def test_export_keeps_every_game_as_its_record_has_it(exported):
    out, (header, *games) = exported
    assert header == {"format": "concordia-env/games", "version": 1, "games": 4, "num_actions": NUM_ACTIONS,
                      "concordia_env": header["concordia_env"]}
    for i, (line, record) in enumerate(zip(games, records())):
        assert line == {k: record[k] for k in ("map", "players", "seed", "intermediate_scoring", "agents", "actions")} | {
            k: record["result"][k] for k in ("scores", "ranking", "winner", "truncated", "turns")} | {
            "source": f"games/game_{i:05d}.json"}
    assert games[-1]["truncated"] and games[-1]["winner"] is None


def test_export_is_reproducible_and_reads_its_own_output(exported, tmp_path):
    out, lines = exported
    again = tmp_path / "again.jsonl.gz"
    export_dataset([tmp_path / "games"], again)
    assert again.read_bytes() == out.read_bytes()  # no time stamp in the gzip stream
    merged = tmp_path / "merged.jsonl.gz"
    report = export_dataset([out, tmp_path / "games" / "game_00001.json"], merged)
    assert report.games == 5 and lines_of(merged)[1:] == [*lines[1:], {**lines[2], "source": "game_00001.json"}]


def test_export_into_the_folder_it_reads_does_not_read_its_own_output(exported, tmp_path):
    out = tmp_path / "games" / "all.jsonl.gz"
    for _ in range(2):
        assert export_dataset([tmp_path / "games"], out).games == 4


def test_a_corrupt_record_is_skipped_with_one_line_naming_it_and_nothing_else_is_lost(tmp_path):
    paths = write_records(tmp_path / "games")
    paths[1].write_text(paths[1].read_text().replace('"map": "imperium"', '"map": "atlantis"'))
    bad = json.loads(paths[2].read_text())
    bad["actions"][40], bad["actions"][41] = bad["actions"][41], bad["actions"][40]
    save_record(bad, paths[2])
    save_record(partial(), tmp_path / "games" / "game_00009.json")
    (tmp_path / "games" / "notes.json").write_text("{not json")  # not a record: ignored
    out = tmp_path / "out.jsonl.gz"
    with pytest.warns(DatasetWarning) as caught:
        report = export_dataset([tmp_path / "games"], out)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3 and report.skipped == messages
    assert re.fullmatch(rf"game record {re.escape(str(paths[1]))}: record field 'map': unknown map 'atlantis'.*",
                        messages[0])
    assert messages[1].startswith(f"game record {paths[2]}: record action 40 ") and "illegal" in messages[1]
    assert "game_00009.json: a game left before its end" in messages[2]
    assert report.games == 2 and [g["seed"] for g in lines_of(out)[1:]] == [3, 6]
    with pytest.raises(ValueError, match=f"game record {re.escape(str(paths[1]))}: record field 'map'"):
        export_dataset([tmp_path / "games"], tmp_path / "strict.jsonl.gz", strict=True)
    assert not (tmp_path / "strict.jsonl.gz").exists()


def test_export_refuses_missing_inputs_empty_inputs_and_bad_names(tmp_path):
    with pytest.raises(ValueError, match="no such file or folder: .*nowhere"):
        export_dataset([tmp_path / "nowhere"], tmp_path / "x.jsonl.gz")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="no game to export in .*empty"):
        export_dataset([tmp_path / "empty"], tmp_path / "x.jsonl.gz")
    with pytest.raises(ValueError, match=r"must end in \.jsonl\.gz"):
        export_dataset([tmp_path / "empty"], tmp_path / "x.json")
    assert not (tmp_path / "x.jsonl.gz").exists()


def test_a_failed_write_leaves_the_old_file(exported, tmp_path, monkeypatch):
    out, _ = exported
    before = out.read_bytes()
    import concordia_env._internal.files as files

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full_disk)
    with pytest.raises(OSError):
        export_dataset([tmp_path / "games" / "game_00000.json"], out)
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["games", "games.jsonl.gz"]


# ------------------------------------------------------------------ readers
def test_iter_games_reads_without_replay_and_checks_the_header(exported):
    out, (header, *games) = exported
    assert read_header(out) == header
    assert list(iter_games(out)) == games == list(iter_games(out, replay=True))


def test_replay_gives_the_envs_observations_masks_and_rewards(exported):
    out, (_, *games) = exported
    replayed = list(iter_replays(out, reward="rank"))
    assert [g.index for g in replayed] == [0, 1, 2, 3]
    for game in replayed[:2]:  # finished games: compared step by step with the AEC env
        line = game.game
        env = raw_env(map_name=line["map"], num_players=line["players"],
                      intermediate_scoring=line["intermediate_scoring"], reward="rank")
        env.reset(seed=line["seed"])
        count = [0] * line["players"]
        for i, action in enumerate(line["actions"]):
            seat = env.agents.index(env.agent_selection)
            t, k = game.seats[seat], count[seat]
            seen = env.observe(env.agent_selection)
            assert t.steps[k] == i and t.actions[k] == action
            np.testing.assert_array_equal(t.observations[k], seen["observation"])
            np.testing.assert_array_equal(t.masks[k], seen["action_mask"])
            count[seat] += 1
            env.step(action)
        assert count == [len(t.actions) for t in game.seats]
        for seat, t in enumerate(game.seats):
            np.testing.assert_array_equal(t.final_observation, env.observe(env.possible_agents[seat])["observation"])
        np.testing.assert_array_equal(game.rewards, [env._cumulative_rewards[a] for a in env.possible_agents])
        for t in game.seats:
            assert t.observations.shape == (len(t.actions), OBSERVATION_SIZE) and t.observations.dtype == np.float32
            assert t.masks.dtype == np.int8 and t.masks[np.arange(len(t.actions)), t.actions].all()
            assert (t.returns == np.float32(t.reward)).all()
    assert (replayed[3].rewards == 0).all()  # truncated: the env pays nothing


def test_returns_are_discounted_per_seat_decision(exported):
    out, (_, first, *_) = exported
    game = replay_game(first, gamma=0.5, reward="win")
    t = game.seats[first["ranking"][0]]
    assert t.reward == 1.0 and t.returns[-1] == 1.0 and t.returns[-2] == 0.5 and t.returns[0] == 0.5 ** (len(t.returns) - 1)
    with pytest.raises(ValueError, match="gamma"):
        next(iter_replays(out, gamma=1.5))
    with pytest.raises(ValueError, match="reward"):
        next(iter_replays(out, reward="money"))


def test_load_steps_concatenates_every_decision(exported):
    out, (_, *games) = exported
    steps = load_steps(out, max_games=2)
    n = sum(len(g["actions"]) for g in games[:2])
    assert {k: v.shape[0] for k, v in steps.items()} == dict.fromkeys(steps, n)
    assert steps["observations"].shape == (n, OBSERVATION_SIZE) and steps["masks"].shape == (n, NUM_ACTIONS)
    assert sorted(set(steps["game"].tolist())) == [0, 1]
    for g in (0, 1):
        rows = steps["game"] == g
        order = np.argsort(steps["step"][rows])
        assert steps["actions"][rows][order].tolist() == games[g]["actions"]
    assert load_steps(out, max_games=0)["observations"].shape == (0, OBSERVATION_SIZE)


def _damaged(tmp_path: Path, lines: list[dict]) -> Path:
    header, *games = lines
    games[1]["actions"][40], games[1]["actions"][41] = games[1]["actions"][41], games[1]["actions"][40]
    games[2]["scores"] = [s + 1 for s in games[2]["scores"]]
    games[3]["players"] = "three"
    return write_lines(tmp_path / "damaged.jsonl.gz", [header, *games])


def test_a_bad_game_raises_or_is_skipped_naming_its_index(exported, tmp_path):
    _, lines = exported
    path = _damaged(tmp_path, lines)
    with pytest.raises(DatasetError, match=r"game 3 \(line 5, from games/game_00003.json\): field 'players'"):
        list(iter_games(path))
    with pytest.raises(DatasetError, match=r"game 1 \(line 3, from games/game_00001.json\): action 40 \(\d+\) is illegal"):
        list(iter_replays(path))
    with pytest.warns(DatasetWarning) as caught:
        kept = list(iter_replays(path, strict=False))
    assert [g.index for g in kept] == [0]
    assert [re.search(r"game (\d)", str(w.message))[1] for w in caught] == ["1", "2", "3"]
    assert any("stored scores" in str(w.message) and "the replay gives" in str(w.message) for w in caught)
    assert len(list(iter_games(path, strict=False, on_skip=lambda m: None))) == 3  # no replay: 1 and 2 pass


def test_a_cut_short_or_miscounted_file_is_reported(exported, tmp_path):
    out, lines = exported
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(out.read_bytes()[:-200])
    with pytest.raises(DatasetError, match="cut short"):
        list(iter_games(cut))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(iter_games(cut, strict=False))
    assert len(caught) == 1 and "cut short" in str(caught[0].message)
    short = write_lines(tmp_path / "short.jsonl.gz", lines[:3])
    with pytest.raises(DatasetError, match="the header says 4 games, the file holds 2"):
        list(iter_games(short))


# mtime=0 and explicit ids: pytest-xdist needs every worker to collect the same test ids,
# and a gzip stream stamped with the time differs between workers that start a second apart.
@pytest.mark.parametrize("content, problem", [
    (b"not gzip at all", "not a readable gzip file"),
    (gzip.compress(b'{"format": "concordia-env/game", "version": 1}\n', mtime=0), "not a Concordia data set"),
    (gzip.compress(b'{"format": "concordia-env/games", "version": 9, "games": 0}\n', mtime=0),
     "unsupported data-set version 9"),
    (gzip.compress(b"[[[[\n", mtime=0), "the header line is not valid JSON"),
    (gzip.compress(b"", mtime=0), "the header line is not valid JSON"),
], ids=["not-gzip", "one-game-file", "version-9", "header-not-json", "empty"])
def test_a_file_that_is_not_a_data_set_always_raises(tmp_path, content, problem):
    path = tmp_path / "x.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=f"data set {re.escape(str(path))}.*{problem}"):
        list(iter_games(path, strict=False))


def test_write_dataset_round_trips(tmp_path):
    lines = [line_from_record(r) for r in records()]
    size = write_dataset(tmp_path / "d.jsonl.gz", lines)
    assert size == (tmp_path / "d.jsonl.gz").stat().st_size and list(iter_games(tmp_path / "d.jsonl.gz")) == lines
    assert encode(lines) == (tmp_path / "d.jsonl.gz").read_bytes()


# ------------------------------------------------------------------ the command
def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return main(argv, out=out), out.getvalue()


def test_the_command_exports_and_checks(tmp_path, capsys):
    write_records(tmp_path / "games")
    save_record(partial(), tmp_path / "games" / "game_00009.json")
    out = tmp_path / "d.jsonl.gz"
    code, text = run(["dataset", "export", str(tmp_path / "games"), "--out", str(out)])
    assert code == 0 and text.startswith(f"wrote 4 games from 4 file(s) to {out} (") and "1 bad input(s) skipped" in text
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("warning: game record ") and "left before its end" in err[0]
    code, text = run(["dataset", "check", str(out)])
    assert code == 0 and "4 of 4 games replayed to their stored results" in text
    assert "setups: imperium 3p x1, imperium 4p x1, italia 2p x1, italia 3p x1" in text


def test_the_command_gives_one_line_errors(tmp_path, capsys):
    write_records(tmp_path / "games")
    (tmp_path / "games" / "game_00001.json").write_text("{")
    code, _ = run(["dataset", "export", str(tmp_path / "games"), "--out", str(tmp_path / "d.jsonl.gz"), "--strict"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("error: game record ") and "not valid JSON" in err
    (tmp_path / "x.jsonl.gz").write_bytes(b"nope")
    assert run(["dataset", "check", str(tmp_path / "x.jsonl.gz")])[0] == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a readable gzip file" in err
    with pytest.raises(SystemExit) as exc:
        run(["dataset", "export", str(tmp_path / "games"), "--out", str(tmp_path / "d.json")])
    assert exc.value.code == 2 and "ends in .jsonl.gz" in capsys.readouterr().err


# ------------------------------------------------------------------ the shipped sample
def test_the_shipped_sample_replays_to_its_recorded_scores():
    header = read_header(SAMPLE)
    games = list(iter_games(SAMPLE))
    assert header["games"] == len(games) == 200
    assert {(g["map"], g["players"]) for g in games} == {("italia", 2), ("imperium", 4)}
    assert {a for g in games for a in g["agents"]} == {"heuristic", "mcts"}
    for i in (0, 60, 120, 199):
        replayed = replay_game(games[i], i)
        assert [t.reward for t in replayed.seats] == [1.0 if s == games[i]["ranking"][0] else
                                                     -1.0 / (games[i]["players"] - 1) for s in range(games[i]["players"])]
    readme = (SAMPLE.parent / "README.md").read_text(encoding="utf-8")
    assert f"{SAMPLE.stat().st_size:,} bytes" in readme and f"{sum(len(g['actions']) for g in games):,} actions" in readme
