"""TD learning at turn boundaries: a tiny end-to-end run, its resume rules, and its targets."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from test_az import random_net  # noqa: E402

from concordia_env.agents.turn import TurnAgent  # noqa: E402
from concordia_env.agents.value_net import ValueNet  # noqa: E402
from concordia_env.arena.records import play_game  # noqa: E402
from concordia_env.training.turn_td.data import game_positions, td_targets  # noqa: E402
from concordia_env.training.turn_td.loop import main  # noqa: E402
from concordia_env.training.turn_td.model import model_from_net  # noqa: E402
from concordia_env.training.value.model import torch_values  # noqa: E402

TINY = ["--map", "italia", "--players", "2", "--rounds", "2", "--games", "2", "--gate-games", "2", "--epochs", "1",
        "--candidates", "4", "--init", "none", "--hidden", "8", "--gate", "heuristic", "--no-progress"]


def test_a_tiny_run_trains_gates_and_resumes_without_redoing_anything(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(TINY + ["--out", str(out)]) == 0
    curves = json.loads((out / "curves.json").read_text())
    assert [r["round"] for r in curves["rounds"]] == [0, 1]
    assert curves["rounds"][0]["selfplay"]["agent"] == "turn:net=none:w=1:win=40:candidates=4:explore=0.1"
    assert curves["rounds"][1]["selfplay"]["agent"].startswith(f"turn:net={out / 'round_00' / 'net.npz'}:w=0.5")
    assert [(g["opponent"], g["w"], g["games"]) for g in curves["rounds"][0]["gate"]] == [
        ("heuristic", 0.5, 2), ("heuristic", 0.0, 2)]
    assert [g["w"] for g in curves["rounds"][1]["gate"]] == [0.0]  # the last round: the network alone
    net = ValueNet.load(out / "round_01" / "net.npz")
    assert net.players == (2,) and net.map_name == "italia" and set(net.heads) == {"win", "margin"}
    assert net.metadata["round"] == 1 and net.metadata["window_rounds"] == [0, 1]
    assert len(list((out / "round_00" / "games").glob("game_*.json"))) == 2
    assert curves["cpu_seconds"] > 0 and curves["cpu_hours"] >= 0
    # the trained network plays as the turn agent
    play_game("italia", 2, 0, [TurnAgent(net=out / "round_01" / "net"), TurnAgent(net="none", w=1)], max_turns=10)
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(TINY + ["--out", str(out), "--resume"]) == 0
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p.name != "curves.json"} == {
        p: t for p, t in before.items() if p.name != "curves.json"}


def test_the_gates_default_to_the_heuristic_and_the_search_at_200_iterations():
    from concordia_env.training.turn_td.loop import parser

    assert parser().parse_args(["--out", "x"]).gate == ["heuristic", "mcts:iterations=200"]


def test_a_run_folder_is_refused_unless_it_is_the_same_run(tmp_path: Path, capsys):
    out = tmp_path / "run"
    assert main(TINY + ["--out", str(out), "--rounds", "1"]) == 0
    capsys.readouterr()
    assert main(TINY + ["--out", str(out), "--rounds", "1"]) == 2
    assert "holds a run already (settings.json); add --resume" in capsys.readouterr().err
    assert main(TINY + ["--out", str(out), "--rounds", "1", "--lam", "0.5", "--resume"]) == 2
    assert "other settings (--lam " in capsys.readouterr().err
    assert main(TINY + ["--out", str(tmp_path / "none"), "--resume"]) == 2
    assert "no run in" in capsys.readouterr().err
    (tmp_path / "full" / "round_00").mkdir(parents=True)
    (tmp_path / "full" / "round_00" / "net.npz").write_text("x")
    assert main(TINY + ["--out", str(tmp_path / "full")]) == 2
    assert "(round_00/net.npz) without a settings.json" in capsys.readouterr().err
    for bad, message in ((["--explore", "2"], "--explore must be"), (["--games", "3"], "multiple"),
                         (["--init", str(tmp_path / "nope")], "no such network")):
        assert main(TINY + ["--out", str(tmp_path / "b")] + bad) == 2
        assert message in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_positions_are_each_turns_end_with_the_games_outcome_and_margins():
    record = play_game("italia", 2, 7, [TurnAgent(net="none", w=1), TurnAgent(net="none", w=1)])
    pos = game_positions(record)
    turns = record["result"]["turns"]
    assert len(pos["seat"]) in (turns, turns + 1)  # every card play ends a turn (and the last one)
    winner = record["result"]["winner"]
    assert pos["outcome"][:, 0].tolist() == [1.0 if s == winner else 0.0 for s in pos["seat"]]
    scores = record["result"]["scores"]
    assert pos["margin"][0, 0] == scores[pos["seat"][0]] - scores[1 - pos["seat"][0]]
    data = {**pos, "game": np.zeros(len(pos["seat"]), np.int64), "players": np.full(len(pos["seat"]), 2)}
    np.testing.assert_array_equal(td_targets(data, None, 0.7), pos["outcome"])
    np.testing.assert_array_equal(td_targets(data, random_net(), 1.0), pos["outcome"])
    t = td_targets(data, random_net(), 0.0)  # TD(0): the net's value of the next turn end, as that seat sees it
    v = random_net().values(pos["obs"])
    np.testing.assert_allclose(t[0, :2], v[1, :2][::-1], atol=1e-6)
    np.testing.assert_allclose(t[-1], pos["outcome"][-1])


def test_the_warm_start_model_computes_what_the_numpy_network_computes():
    net = random_net(4)
    obs = np.abs(np.random.default_rng(0).normal(size=(6, net.trunk[0][0].shape[1]))).astype(np.float32)
    obs[:, :] = np.round(obs)
    from concordia_env.encoding import OBSERVATION_LAYOUT
    obs[:, OBSERVATION_LAYOUT["seat_present"]] = [1, 1, 0, 0, 0]
    np.testing.assert_allclose(torch_values(model_from_net(net), obs), net.values(obs), atol=1e-5)


def test_a_run_with_board_features_warm_starts_from_az_and_its_networks_read_them(tmp_path: Path, capsys):
    from test_board_features import feature_net

    net = feature_net()
    obs = np.stack([game_positions(play_game("italia", 2, 3, [TurnAgent(net="none", w=1)] * 2))["obs"][i]
                    for i in (0, 5, 9)])
    np.testing.assert_allclose(torch_values(model_from_net(net), obs), net.values(obs), atol=1e-5)
    plain = random_net(4, policy=False)
    widened = model_from_net(plain, "board-v1")  # zero weights on the features: the same values
    np.testing.assert_allclose(torch_values(widened, obs), plain.values(obs), atol=1e-5)
    with pytest.raises(ValueError, match="reads 'board-v1' features"):
        model_from_net(net, "board-v2")
    out = tmp_path / "run"
    args = TINY + ["--rounds", "1", "--init", "az", "--features", "board-v1", "--out", str(out)]
    assert main(args) == 0
    assert json.loads((out / "settings.json").read_text())["features"] == "board-v1"
    trained = ValueNet.load(out / "round_00" / "net.npz")
    assert trained.features == "board-v1" and trained.trunk[0][0].shape == (128, 2378 + 130)
    capsys.readouterr()
    assert main([a for a in args if a not in ("--features", "board-v1")] + ["--resume"]) == 2
    assert "other settings (--features" in capsys.readouterr().err
