"""Self-play keeps its games: a tiny value-data run, a tiny expert-iteration run and a tiny turn-level TD
run, each found by ``concordia dataset export`` through its settings file, exported and replayed to the
scores the run recorded (and to the positions it trained on); a shard written before games were kept
still loads for training and is counted in one line; a damaged shard is one warning naming it."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

from concordia_env._internal.files import npz_bytes
from concordia_env.cli import main as cli
from concordia_env.dataset import export_dataset, iter_games, replay_game
from concordia_env.state import new_game
from concordia_env.training.game_log import GAME_LOG_KEYS, read_games
from concordia_env.training.value import data as value_data

pytest.importorskip("torch")
from test_expert_iteration import TINY as EI_TINY  # noqa: E402
from test_turn_td import TINY as TD_TINY  # noqa: E402
from test_value_net import GEN, TRAIN  # noqa: E402

from concordia_env.training import expert_iteration as X  # noqa: E402 - needs torch
from concordia_env.training.turn_td.loop import main as turn_td_main  # noqa: E402
from concordia_env.training.value import train as value_train  # noqa: E402

#: GEN with 4 games: two shards of 2
VALUE = GEN[:5] + ["4"] + GEN[6:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder holding the three tiny runs: ``value`` (4 games, 2 shards), ``exit`` (2 generations of
    2 games: the heuristic-guided search, then a network's) and ``turn`` (1 round of 2 games)."""
    root = tmp_path_factory.mktemp("selfplay")
    assert value_data.main(VALUE + ["--out", str(root / "value")]) == 0
    assert X.main(EI_TINY + ["--out", str(root / "exit"), "--generations", "2", "--epochs", "1"]) == 0
    assert turn_td_main(TD_TINY[:5] + ["1"] + TD_TINY[6:] + ["--out", str(root / "turn")]) == 0
    return root


def _export(inputs: list[Path], out: Path) -> tuple[int, str, str]:
    """``concordia dataset export INPUTS --out OUT``: (status, stdout, stderr)."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with redirect_stderr(stderr):
        code = cli(["dataset", "export", *map(str, inputs), "--out", str(out)], out=stdout)
    return code, stdout.getvalue(), stderr.getvalue()


def _rewrite(path: Path, change: Callable[[dict[str, np.ndarray]], None]) -> None:
    """Write a shard again with ``change(members)`` applied to its members."""
    with np.load(path, allow_pickle=False) as z:
        members = {k: z[k] for k in z.files}
    change(members)
    path.write_bytes(npz_bytes(members))


def _strip(path: Path) -> None:
    """Make ``path`` a shard as written before games were kept: without the game-log members."""

    def drop(members: dict[str, np.ndarray]) -> None:
        for key in GAME_LOG_KEYS:
            del members[key]

    _rewrite(path, drop)


# ---------------------------------------------------------------- value data
def test_value_data_games_replay_to_their_scores_and_positions(runs: Path, tmp_path: Path) -> None:
    code, out, err = _export([runs / "value"], tmp_path / "v.jsonl.gz")
    assert (code, err) == (0, "") and out.startswith("wrote 4 games from 2 file(s)")
    games = list(iter_games(tmp_path / "v.jsonl.gz", replay=True))
    d = value_data.load_shards(runs / "value")
    specs = d["meta"]["settings"]["agents"]
    assert [g["source"] for g in games] == [f"value/shard_{k // 2:05d}.npz#{k}" for k in range(4)]
    for k, game in enumerate(games):
        n = int(d["game_players"][k])
        assert (game["map"], game["players"], game["seed"], game["intermediate_scoring"]) == (
            "italia", n, int(d["game_seed"][k]), False)
        assert game["agents"] == [specs[a] for a in d["game_agents"][k][:n]]
        assert not game["truncated"] and len(game["actions"]) == d["game_decisions"][k]
        # every position of the game is the replay's observation at its step, with the game's final VP
        replayed = replay_game(game)
        rows = np.flatnonzero(d["game"] == k)
        assert len(rows) > 10
        for i in rows:
            seat, step = int(d["seat"][i]), int(d["step"][i])
            trajectory = replayed.seats[seat]
            t = int(np.flatnonzero(trajectory.steps == step)[0])
            assert np.array_equal(trajectory.observations[t], d["obs"][i].astype(np.float32))
            assert [int(d["vp"][i][j]) for j in range(n)] == [game["scores"][(seat + j) % n] for j in range(n)]


def test_a_truncated_value_game_is_kept_too(tmp_path: Path) -> None:
    out = tmp_path / "cut"
    assert value_data.main(GEN[:5] + ["1"] + GEN[6:] + ["--max-turns", "5", "--out", str(out)]) == 0
    shard = value_data.read_shard(out / "shard_00000.npz")
    assert list(shard["game_truncated"]) == [1] and len(shard["step"]) == 0  # no positions
    report = export_dataset([out], tmp_path / "cut.jsonl.gz")
    [game] = iter_games(tmp_path / "cut.jsonl.gz", replay=True)
    assert report.games == 1 and (game["truncated"], game["winner"], game["turns"]) == (True, None, 5)


# ---------------------------------------------------------------- expert iteration
def test_expert_iteration_games_replay_to_their_scores_and_states(runs: Path, tmp_path: Path) -> None:
    code, out, err = _export([runs / "exit"], tmp_path / "x.jsonl.gz")
    assert (code, err) == (0, "") and out.startswith("wrote 4 games from 2 file(s)")
    games = list(iter_games(tmp_path / "x.jsonl.gz", replay=True))
    assert [g["source"] for g in games] == [f"exit/gen_00{g}/selfplay/shard_00000.npz#{k}"
                                            for g in (0, 1) for k in (0, 1)]
    for g in (0, 1):
        shard = X.read_shard(runs / "exit" / f"gen_00{g}" / "selfplay" / "shard_00000.npz")
        expert = shard["meta"]["expert"]
        name = "mcts-heuristic-selfplay:gen=0:simulations=8" if g == 0 else \
            f"az-selfplay:gen=1:net={expert[:12]}:simulations=8"
        assert (g == 0) == (expert == X.HEURISTIC_EXPERT)
        for k, game in enumerate(games[2 * g:2 * g + 2]):
            assert game["agents"] == [name, name] and game["seed"] == X.game_seed(X.selfplay_config(
                X.build_parser().parse_args(EI_TINY + ["--out", "x"])), g, k) == shard["game_seed"][k]
            assert game["scores"] == list(shard["game_scores"][k][:2])
            assert game["truncated"] == bool(shard["game_truncated"][k])
            assert (game["winner"] if game["winner"] is not None else -1) == shard["game_winner"][k]
            assert (len(game["actions"]), game["turns"]) == (shard["game_decisions"][k], shard["game_turns"][k])
            # the stored state of every searched decision is the replay's state before that action
            state, rows = new_game("italia", 2, game["seed"]), np.flatnonzero(shard["game"] == k)
            at = {int(shard["step"][i]): i for i in rows}
            for step, action in enumerate(game["actions"]):
                if step in at:
                    assert np.array_equal(state.s, shard["state"][at[step]])
                state.apply(action)
            assert len(at) == shard["game_positions"][k]


# ---------------------------------------------------------------- turn-level TD
def test_turn_td_games_replay_to_their_scores(runs: Path, tmp_path: Path) -> None:
    code, out, err = _export([runs / "turn"], tmp_path / "t.jsonl.gz")
    assert (code, err) == (0, "") and out.startswith("wrote 2 games from 2 file(s)")
    games = list(iter_games(tmp_path / "t.jsonl.gz", replay=True))
    selfplay = json.loads((runs / "turn" / "round_00" / "selfplay.json").read_text())
    spec = json.loads((runs / "turn" / "curves.json").read_text())["rounds"][0]["selfplay"]["agent"]
    assert [g["source"] for g in games] == [f"turn/round_00/games/game_0000{k}.json" for k in (0, 1)]
    assert [g["agents"] for g in games] == [[spec, spec]] * 2
    assert [(g["seed"], g["scores"], g["ranking"]) for g in games] == [
        (e["seed"], e["scores"], e["ranking"]) for e in selfplay["per_game"]]


# ---------------------------------------------------------------- together
def test_a_folder_of_runs_exports_every_game_and_reads_nothing_else(runs: Path, tmp_path: Path) -> None:
    report = export_dataset([runs], tmp_path / "all.jsonl.gz", strict=True)
    assert (report.games, report.files, report.skipped, report.old_shards) == (10, 6, [], [])
    sources = [g["source"] for g in iter_games(tmp_path / "all.jsonl.gz")]
    name = runs.resolve().name
    assert sources[0] == f"{name}/exit/gen_000/selfplay/shard_00000.npz#0"
    assert sources[4] == f"{name}/turn/round_00/games/game_00000.json" and sources[6] == f"{name}/value/shard_00000.npz#0"
    one = export_dataset([runs / "value" / "shard_00001.npz"], tmp_path / "one.jsonl.gz")  # a shard named alone
    assert [g["source"] for g in iter_games(tmp_path / "one.jsonl.gz")] == ["shard_00001.npz#2", "shard_00001.npz#3"]
    assert one.games == 2


# ---------------------------------------------------------------- shards from before games were kept
def test_old_format_shards_still_train_and_are_counted_once(runs: Path, tmp_path: Path) -> None:
    value, exit_ = tmp_path / "value", tmp_path / "exit"
    shutil.copytree(runs / "value", value)
    shutil.copytree(runs / "exit", exit_, ignore=shutil.ignore_patterns("*.pt"))
    old = [value / "shard_00000.npz", value / "shard_00001.npz", exit_ / "gen_000" / "selfplay" / "shard_00000.npz"]
    for path in old:
        _strip(path)
        assert read_games(path) is None and not set(GAME_LOG_KEYS) & set(np.load(path).files)
    # training reads them as before
    fresh, stripped = value_data.load_shards(runs / "value"), value_data.load_shards(value)
    assert all(np.array_equal(fresh[k], stripped[k]) for k in value_data.POSITION_KEYS + value_data.GAME_KEYS)
    assert value_train.main(TRAIN + ["--data", str(value), "--out", str(tmp_path / "net"), "--steps", "2"]) == 0
    positions = X.load_positions([old[2].parent])
    assert positions["positions"] > 100
    X.Positions(positions, "italia", 0.5).batch(np.arange(4))
    # a resumed run keeps them
    meta = X.read_shard(old[2])["meta"]
    assert X.shard_ok(old[2], meta)
    before = old[0].read_bytes()
    assert value_data.main(VALUE + ["--out", str(value)]) == 0 and old[0].read_bytes() == before
    # the export says so once, and exports the rest
    code, out, err = _export([value, exit_], tmp_path / "mixed.jsonl.gz")
    assert code == 0 and out.startswith("wrote 2 games from 1 file(s)")
    assert err.splitlines() == [f"warning: 3 shards from before game actions were kept: their 6 games are not "
                                f"exported, e.g. {old[0]}"]
    code, out, err = _export([value], tmp_path / "none.jsonl.gz")
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "2 self-play shard(s) from before game actions were kept" in err


def test_a_damaged_shard_is_one_warning_naming_it(runs: Path, tmp_path: Path) -> None:
    value = tmp_path / "value"
    shutil.copytree(runs / "value", value)

    def wrong_score(members: dict[str, np.ndarray]) -> None:
        entries = json.loads(str(members["game_records"]))
        entries[1]["scores"][0] += 1
        members["game_records"] = np.array(json.dumps(entries))

    _rewrite(value / "shard_00000.npz", wrong_score)
    good = (value / "shard_00001.npz").read_bytes()
    (value / "shard_00001.npz").write_bytes(good[:len(good) // 2])
    code, out, err = _export([value], tmp_path / "v.jsonl.gz")
    lines = err.splitlines()
    assert code == 0 and out.startswith("wrote 1 games from 1 file(s)") and len(lines) == 2
    assert lines[0].startswith(f"warning: self-play shard {value / 'shard_00000.npz'}, game 1: stored scores")
    assert lines[1].startswith(f"warning: {value / 'shard_00001.npz'}: corrupt or truncated shard")
    with pytest.raises(ValueError, match="game 1: stored scores"):
        export_dataset([value], tmp_path / "strict.jsonl.gz", strict=True)
