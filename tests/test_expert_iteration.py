"""Expert iteration end to end, tiny: two generations of Italia 2-player self-play (8 simulations,
2 games, a 16-unit net, 1 worker), the files of a run, resuming after deleted and corrupt files and
after Ctrl-C (same results), self-play independent of the worker count, bad input in one line.
First, the fast tests of generation 0's heuristic teacher (``--teacher heuristic``) and of the
default teacher's unchanged shards."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from concordia_env import encoding
from concordia_env.agents.heuristic import HeuristicAgent
from concordia_env.agents.mcts import evaluate, priors
from concordia_env.agents.numpy_policy import observation_scaling
from concordia_env.agents.value_net import ValueNet
from concordia_env.arena.records import play_game
from concordia_env.game import get_game
from concordia_env.state import GameState
from concordia_env.training.game_log import GAME_LOG_KEYS, read_games

torch = pytest.importorskip("torch")
from concordia_env.training import expert_iteration as X  # noqa: E402 - needs torch

TINY = ["--map", "italia", "--players", "2", "--games", "2", "--simulations", "8", "--workers", "1", "--seed", "0",
        "--hidden", "16", "--batch", "64", "--gate-deals", "1", "--eval-deals", "1", "--gate-simulations", "8",
        "--max-turns", "200", "--leaf-mix", "0.5", "--shard-size", "2", "--checkpoint-every", "5", "--no-progress"]


def _args(out: Path, *extra: str) -> argparse.Namespace:
    args = X.build_parser().parse_args(TINY + ["--out", str(out), *extra])
    X.check_args(args)
    return args


def _log(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]


# ------------------------------------------------------------ generation 0's teachers (fast)
#: sha256 over the members (name, then the decompressed bytes, in name order) of the shard that
#: ``run_selfplay`` wrote for TINY with the default teacher before ``--teacher`` existed: the
#: default teacher's shards must stay the same (members, not zip bytes: zlib versions may differ).
#: The members that keep the games (``game_log.GAME_LOG_KEYS``), added since, are left out: the
#: positions, the game table and ``meta`` are still those bytes
MCTS_SHARD_MEMBERS_SHA256 = "e1e8b06174540b5b4d6ea0e5510f5d7180e1e48591ca9c3e632cb740a112b052"


def _members_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with zipfile.ZipFile(path) as z:
        for name in sorted(z.namelist()):
            if name.removesuffix(".npy") in GAME_LOG_KEYS:
                continue
            h.update(name.encode())
            h.update(z.read(name))
    return h.hexdigest()


def _teacher(tmp_path: Path, *extra: str) -> tuple[X.SelfPlayConfig, X.Expert]:
    args = _args(tmp_path / "teacher-args", "--teacher", "heuristic", "--max-turns", "400", *extra)
    return X.selfplay_config(args), X.selfplay_expert(args, 0, X.Expert())


def test_heuristic_teacher_records_its_priors_and_win_shares(tmp_path: Path) -> None:
    cfg, teacher = _teacher(tmp_path)
    assert teacher == X.Expert(sha256="heuristic-priors") and teacher.is_teacher
    summaries = [X.run_selfplay(cfg, tmp_path / f"w{w}", 0, teacher, w, progress=False) for w in (1, 2)]
    one, two = (tmp_path / f"w{w}" / "gen_000" / "selfplay" / "shard_00000.npz" for w in (1, 2))
    assert one.read_bytes() == two.read_bytes()
    assert summaries[0] is not None and summaries[0]["expert"] == "heuristic-priors"
    shard = X.read_shard(one)
    assert shard["meta"]["expert"] == "heuristic-priors" and shard["meta"]["teacher_epsilon"] == 0.1
    assert shard["meta"]["version"] == X.DATA_VERSION and list(shard["game_truncated"]) == [0, 0]
    assert len(shard["step"]) == summaries[0]["positions"] > 300
    T = get_game("italia").tables
    mask, prior, value = np.zeros(X.E.NUM_ACTIONS, np.int8), np.zeros(X.E.NUM_ACTIONS), np.zeros(X.E.MAXP)
    offset = np.concatenate([[0], np.cumsum(shard["visit_len"])])
    for i, s in enumerate(shard["state"]):
        X.E.legal_mask(s, T, mask)
        legal = np.flatnonzero(mask)
        assert legal.size >= 2 and shard["seat"][i] == s[X.E.O_CURRENT]
        assert np.array_equal(shard["visit_actions"][offset[i]:offset[i + 1]], legal)
        priors(s, T, mask, prior)
        assert np.array_equal(shard["visit_counts"][offset[i]:offset[i + 1]], np.rint(1000 * prior[legal]))
        evaluate(s, T, 8.0, value)
        assert np.array_equal(shard["root_value"][i], np.float32(np.r_[value[:2], 0, 0, 0]))
    # the exploration moves take the games off the heuristic's own line
    plain, _ = X.play_selfplay_game(dataclasses.replace(cfg, teacher_epsilon=0.0), 0, 0, teacher)
    explored = shard["state"][shard["game"] == 0]
    assert len(plain["state"]) != len(explored) or not np.array_equal(plain["state"], explored)
    # a shard of the other teacher is regenerated
    assert X.run_selfplay(cfg, tmp_path / "w1", 0, teacher, 1, progress=False) is None
    assert not X.shard_ok(one, X.shard_meta(cfg, 0, 0, X.Expert()))


def test_heuristic_teacher_without_exploration_plays_the_heuristics_game(tmp_path: Path) -> None:
    cfg, teacher = _teacher(tmp_path, "--teacher-epsilon", "0")
    arrays, info = X.play_selfplay_game(cfg, 0, 1, teacher)
    seen: list[np.ndarray] = []

    def keep(state: GameState, seat: int, action: int) -> None:
        if np.count_nonzero(state.legal_action_mask()) > 1:
            seen.append(state.s.copy())

    record = play_game("italia", 2, info["game_seed"], [HeuristicAgent()] * 2, max_turns=400, on_step=keep)
    assert info["game_seed"] == X.game_seed(cfg, 0, 1) and not record["result"]["truncated"]
    assert list(info["game_scores"][:2]) == record["result"]["scores"]
    assert info["game_decisions"] == len(record["actions"]) and info["game_positions"] == len(seen)
    assert info["actions"] == record["actions"] and info["game_record"]["scores"] == record["result"]["scores"]
    assert info["game_record"]["agents"] == ["heuristic-teacher:gen=0:epsilon=0"] * 2
    assert np.array_equal(arrays["state"], np.asarray(seen))


def test_the_default_teacher_keeps_its_shards(tmp_path: Path) -> None:
    default = X.selfplay_config(_args(tmp_path / "x"))
    explicit = X.selfplay_config(_args(tmp_path / "y", "--teacher", "mcts", "--teacher-epsilon", "0.3"))
    assert X.selfplay_expert(_args(tmp_path / "y", "--teacher", "mcts"), 0, X.Expert()) == X.Expert()
    assert X.selfplay_expert(_args(tmp_path / "z", "--teacher", "heuristic"), 1, X.Expert()) == X.Expert()
    for cfg, out in ((default, tmp_path / "default"), (explicit, tmp_path / "explicit")):
        assert X.run_selfplay(cfg, out, 0, X.Expert(), 1, progress=False) is not None
    a, b = (tmp_path / d / "gen_000" / "selfplay" / "shard_00000.npz" for d in ("default", "explicit"))
    assert a.read_bytes() == b.read_bytes()
    assert "teacher_epsilon" not in X.read_shard(a)["meta"]
    assert _members_sha256(a) == MCTS_SHARD_MEMBERS_SHA256
    games = read_games(a)  # and the shard now keeps its games
    assert games is not None and [g["game"] for g in games] == [0, 1]
    assert games[0]["agents"] == ["mcts-heuristic-selfplay:gen=0:simulations=8"] * 2


def test_the_teacher_is_fixed_for_a_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    X.check_run_file(_args(out, "--teacher", "heuristic"), out)
    run = json.loads((out / "run.json").read_text())["arguments"]
    assert run["teacher"] == "heuristic" and run["teacher_epsilon"] == 0.1
    for extra, change in (([], "--teacher 'heuristic' there, 'mcts' here"),
                          (["--teacher", "heuristic", "--teacher-epsilon", "0.2"], "--teacher-epsilon 0.1 there, 0.2 here")):
        assert X.main(TINY + ["--out", str(out), "--resume", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and "other settings" in err and change in err, err
    assert not (out / "gen_000").exists()
    # a run.json from before --teacher existed was a --teacher mcts run
    doc = json.loads((out / "run.json").read_text())
    for key in ("teacher", "teacher_epsilon"):
        del doc["arguments"][key]
    (out / "run.json").write_text(json.dumps(doc))
    X.check_run_file(_args(out, "--resume"), out)
    with pytest.raises(ValueError, match="--teacher 'mcts' there, 'heuristic' here"):
        X.check_run_file(_args(out, "--resume", "--teacher", "heuristic"), out)
    assert X.checkpoint_fixed(_args(out)) == {k: v for k, v in run.items() if not k.startswith("teacher")}


def test_a_heuristic_teacher_run(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    argv = TINY + ["--out", str(out), "--generations", "1", "--epochs", "1", "--max-turns", "400",
                   "--teacher", "heuristic"]
    assert X.main(argv) == 0
    log = _log(out)
    assert [(e["generation"], e["step"]) for e in log] == [(0, "selfplay"), (0, "train"), (0, "gate")]
    assert log[0]["expert"] == "heuristic-priors" and log[0]["positions"] == log[1]["positions"] > 300
    gate = json.loads((out / "gen_000" / "gate.json").read_text())
    assert gate["accepted"] and gate["gate"] is None and gate["heuristic"]["net"]["games"] == 2
    assert (out / "best.npz").read_bytes() == (out / "gen_000" / "net.npz").read_bytes()
    text = (out / "log.jsonl").read_text()
    assert X.main(argv + ["--resume"]) == 0  # complete: the teacher's shards are recognised as such
    assert (out / "log.jsonl").read_text() == text


def test_teacher_epsilon_outside_0_1_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert X.main(TINY + ["--out", str(tmp_path / "run"), "--teacher", "heuristic", "--teacher-epsilon", "1.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "--teacher-epsilon must lie in [0, 1], got 1.5" in err and "Traceback" not in err
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------ the whole loop
def _check_run_files(out: Path, resumed: bool = False) -> None:
    run = json.loads((out / "run.json").read_text())
    assert run["format"] == X.RUN_FORMAT and run["arguments"]["simulations"] == 8
    for g in (0, 1):
        d = out / f"gen_{g:03d}"
        for name in ("selfplay/shard_00000.npz", "net.npz", "net.json", "train.json", "gate.json", "checkpoint.pt",
                     "eval_heuristic_az.json", "eval_heuristic_net.json"):
            assert (d / name).is_file(), d / name
        net = ValueNet.load(d / "net")
        assert net.has_policy and net.layer_sizes == [encoding.OBSERVATION_SIZE, 16] and net.map_name == "italia"
        train = json.loads((d / "train.json").read_text())
        assert train["positions"] > 100 and train["steps"] >= 1
        assert max(train["numpy_vs_torch_max_abs_diff"].values()) < 1e-4
        assert train["train"]["policy_ce"] > 0 and 0 <= train["train"]["winner_accuracy"] <= 1
        gate = json.loads((d / "gate.json").read_text())
        for kind in ("az", "net"):
            h = gate["heuristic"][kind]
            assert h["games"] == 2 and 0 <= h["win_rate"] <= 1 and len(h["win_rate_ci95"]) == 2
        assert isinstance(gate["accepted"], bool)
    gate0, gate1 = (json.loads((out / f"gen_{g:03d}/gate.json").read_text()) for g in (0, 1))
    assert gate0["gate"] is None and gate0["accepted"]  # generation 0 has no network to beat
    assert gate1["gate"]["games"] == 2 and gate1["gate"]["threshold"] == 0.55
    assert gate1["gate"]["new"]["games"] == 2 and gate1["best_before_generation"] == 0
    best = 1 if gate1["accepted"] else 0
    assert (out / "best.npz").read_bytes() == (out / f"gen_{best:03d}/net.npz").read_bytes()
    assert ValueNet.load(out / "best").has_policy
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    steps = [(e["generation"], e["step"]) for e in _log(out)]
    expected = [(g, s) for g in (0, 1) for s in ("selfplay", "train", "gate")]
    assert set(steps) == set(expected) if resumed else steps == expected
    # the recorded decisions: searched ones only (2+ legal actions), visits summing to the simulations
    d = X.load_positions([out / "gen_000" / "selfplay"])
    assert d["positions"] > 100 and (d["visit_len"] >= 2).all()
    sums = np.add.reduceat(d["visit_counts"], d["offset"][:-1])
    assert (sums == 8).all()
    assert (d["state"][:, X.E.O_CURRENT] == d["seat"]).all()


def _same_results(a: Path, b: Path) -> None:
    for g in (0, 1):
        for name in ("selfplay/shard_00000.npz", "net.npz"):
            assert (a / f"gen_{g:03d}" / name).read_bytes() == (b / f"gen_{g:03d}" / name).read_bytes(), (g, name)
        ga, gb = (json.loads((o / f"gen_{g:03d}/gate.json").read_text()) for o in (a, b))
        assert ga["accepted"] == gb["accepted"] and ga["net_sha256"] == gb["net_sha256"]
        for kind in ("az", "net"):
            assert ga["heuristic"][kind]["wins"] == gb["heuristic"][kind]["wins"]
        assert (ga["gate"] or {}).get("wins") == (gb["gate"] or {}).get("wins")


def test_run_files_resume_and_interrupt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture) -> None:
    a = tmp_path / "a"
    assert X.main(TINY + ["--out", str(a), "--generations", "2"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["generations"] == 2 and summary["accepted"][0] is True
    _check_run_files(a)

    # a finished run resumed does nothing
    log = (a / "log.jsonl").read_text()
    assert X.main(TINY + ["--out", str(a), "--generations", "2", "--resume"]) == 0
    assert (a / "log.jsonl").read_text() == log

    # resume after losing generation 1 and corrupting a generation-0 shard; Ctrl-C in training first
    b = tmp_path / "b"
    shutil.copytree(a, b)
    shutil.rmtree(b / "gen_001")
    shard = b / "gen_000" / "selfplay" / "shard_00000.npz"
    shard.write_bytes(shard.read_bytes()[:5000])
    real, calls = X.compute_losses, []

    def interrupt_at_call_4(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(X, "compute_losses", interrupt_at_call_4)
    argv = TINY + ["--out", str(b), "--generations", "2", "--resume"]
    capsys.readouterr()
    assert X.main(argv) == 130
    err = capsys.readouterr().err
    assert "shard_00000.npz: corrupt or truncated shard" in err and "regenerating it" in err
    last = err.strip().splitlines()[-1]
    assert "interrupted at training step 3" in last and "--resume" in last
    assert torch.load(b / "gen_001" / "checkpoint.pt", weights_only=False)["step"] == 3
    assert not (b / "gen_001" / "net.npz").exists()
    monkeypatch.setattr(X, "compute_losses", real)
    assert X.main(argv) == 0
    _same_results(a, b)  # regenerated shards, resumed training, the gate: all as in the uninterrupted run
    _check_run_files(b, resumed=True)
    assert [(e["generation"], e["step"]) for e in _log(b)][-4:] == [(0, "selfplay"), (1, "selfplay"), (1, "train"),
                                                                    (1, "gate")]

    # other fixed arguments are refused in one line
    capsys.readouterr()
    assert X.main(TINY[:-1] + ["--out", str(b), "--simulations", "9", "--resume", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "other settings" in err and "--simulations 8 there, 9 here" in err


def test_selfplay_independent_of_workers(tmp_path: Path) -> None:
    args = _args(tmp_path / "x")
    cfg = X.selfplay_config(args)
    summaries = []
    for workers in (1, 2):
        out = tmp_path / f"w{workers}"
        summaries.append(X.run_selfplay(cfg, out, 0, X.Expert(), workers, progress=False))
    one, two = (tmp_path / f"w{w}" / "gen_000" / "selfplay" / "shard_00000.npz" for w in (1, 2))
    assert one.read_bytes() == two.read_bytes()
    assert summaries[0] is not None and summaries[0]["positions"] == summaries[1]["positions"] > 100
    # complete shards are kept
    assert X.run_selfplay(cfg, tmp_path / "w1", 0, X.Expert(), 1, progress=False) is None
    # a game's arrays replay from its seed alone
    arrays, info = X.play_selfplay_game(cfg, 0, 1, X.Expert())
    shard = X.read_shard(one)
    sel = shard["game"] == 1
    assert np.array_equal(arrays["state"], shard["state"][sel]) and info["game_winner"] == shard["game_winner"][1]


def _random_net(hidden: int = 16, seed: int = 0) -> ValueNet:
    rng = np.random.default_rng(seed)
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game("italia").tables)[1])
    n = encoding.OBSERVATION_SIZE
    return ValueNet([(rng.normal(size=(hidden, n)) * 0.01, np.zeros(hidden))],
                    {"win": (rng.normal(size=(5, hidden)) * 0.1, np.zeros(5)),
                     "policy": (rng.normal(size=(1, hidden)) * 0.1, np.zeros(1))},
                    "ReLU", scale, unbounded, map_name="italia")


def test_init_net_is_the_first_expert_and_best(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    init = tmp_path / "init"
    _random_net().save(init)
    out = tmp_path / "run"
    argv = TINY + ["--out", str(out), "--generations", "1", "--init-net", str(init), "--leaf-mix", "1.0",
                   "--max-turns", "600"]
    assert X.main(argv) == 0
    shard = X.read_shard(out / "gen_000" / "selfplay" / "shard_00000.npz")
    assert shard["meta"]["expert"] == X.file_sha256(init.with_suffix(".npz"))
    gate = json.loads((out / "gen_000" / "gate.json").read_text())
    assert gate["best_before"] == str(init) and gate["gate"]["games"] == 2
    best = out / "gen_000/net.npz" if gate["accepted"] else init.with_suffix(".npz")
    assert (out / "best.npz").read_bytes() == best.read_bytes()
    train = json.loads((out / "gen_000" / "train.json").read_text())
    assert train["warm_start"] == str(init)


def test_truncated_checkpoint_and_corrupt_shard_are_skipped(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "checkpoint.pt"
    expect = {"generation": 1, "steps": 10}
    model = torch.nn.Linear(2, 2)
    X._save_checkpoint(path, model, torch.optim.AdamW(model.parameters()), dict(expect, step=4))  # type: ignore[arg-type]
    assert X._load_checkpoint(path, expect)["step"] == 4  # type: ignore[index]
    assert X._load_checkpoint(path, {"generation": 2, "steps": 10}) is None
    assert "other settings or data" in capsys.readouterr().err
    path.write_bytes(path.read_bytes()[:200])
    assert X._load_checkpoint(path, expect) is None
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "truncated or corrupt checkpoint" in err and "checkpoint.pt" in err

    cfg = X.selfplay_config(_args(tmp_path / "x"))
    arrays, info = X.play_selfplay_game(cfg, 0, 0, X.Expert())
    d = tmp_path / "shards"
    for i in range(2):
        X.write_shard(d / f"shard_{i:05d}.npz", X.shard_meta(cfg, 0, i, X.Expert()), [(arrays, info)])
    good = (d / "shard_00001.npz").read_bytes()
    (d / "shard_00001.npz").write_bytes(good[: len(good) // 2])
    data = X.load_positions([d])
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "skipping" in err and "shard_00001.npz" in err
    assert data["positions"] == len(arrays["step"]) and len(data["shards"]) == 1
    pos = X.Positions(data, "italia", 0.5)
    batch = pos.batch(np.arange(min(8, pos.n)))
    assert batch.obs.shape == (len(batch.value), encoding.OBSERVATION_SIZE)
    assert np.allclose(batch.pi.sum(axis=1), 1) and np.allclose(batch.value.sum(axis=1), 1, atol=1e-5)
    assert len(batch.after) == len(batch.seg) == int(data["visit_len"][:len(batch.pi)].sum())


def test_value_targets_and_gate_score() -> None:
    # 3-player game won by seat 2; positions seen by seats 0 and 2
    data = {"seat": np.array([0, 2]), "num_players": np.array([3, 3]), "winner": np.array([2, 2]),
            "root_value": np.array([[0.2, 0.3, 0.5, 0, 0], [0.1, -0.2, 1.1, 0, 0]], np.float32)}
    target, outcome = X.value_targets(data, 0.0)
    np.testing.assert_array_equal(outcome[:, :3], [[0, 0, 1], [1, 0, 0]])
    target, _ = X.value_targets(data, 0.5)
    np.testing.assert_allclose(target[0, :3], [0.1, 0.15, 0.75], atol=1e-6)
    v = np.array([1.0, 0.1, 0.0]) / 1.1  # seat 2's view of the clipped, renormalised (0.1, 0, 1) -> rows 2, 0, 1
    np.testing.assert_allclose(target[1, :3], 0.5 * np.array([1, 0, 0]) + 0.5 * v, atol=1e-6)
    assert (target[:, 3:] == 0).all()

    result = {"per_agent": {"new": {"wins": 6, "seats": 2}, "old": {"wins": 2, "seats": 2}}}
    g = X.gate_score(result, "new", "old")
    assert g["score"] == pytest.approx(0.75) and g["score_ci95"][0] < 0.75 < g["score_ci95"][1]
    odd = {"per_agent": {"new": {"wins": 4, "seats": 2}, "old": {"wins": 2, "seats": 1}}}
    assert X.gate_score(odd, "new", "old")["score"] == pytest.approx(0.5)
    assert X.gate_score({"per_agent": {"new": {"wins": 0, "seats": 1}, "old": {"wins": 0, "seats": 1}}},
                        "new", "old")["score"] is None
    assert X.gate_lineup("n", "b", 4) == ["n", "b", "n", "b"]


def test_bad_input_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = str(tmp_path / "run")

    def fails(argv: list[str], match: str) -> None:
        assert X.main(TINY + ["--out", out] + argv) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and match in err and "Traceback" not in err, err

    fails(["--players", "7"], "cannot be played by 7 players")
    fails(["--init-net", str(tmp_path / "missing")], "not found")
    _random_net(hidden=8).save(tmp_path / "small")
    fails(["--init-net", str(tmp_path / "small")], "--warm-start none")
    fails(["--out", str(tmp_path / "a:b")], "':'")
    fails(["--address", "127.0.0.1:6379"], "--address needs --backend ray")
    if not torch.cuda.is_available():
        fails(["--device", "cuda"], "no CUDA device")
    for argv, match in ((["--games", "0"], "must be >= 1"), (["--map", "nowhere"], "invalid choice"),
                        (["--value-target-mix", "2"], "must lie in [0, 1]"), (["--hidden", "a"], "widths")):
        with pytest.raises(SystemExit) as info:
            X.main(TINY + ["--out", out] + argv)
        assert info.value.code == 2 and match in capsys.readouterr().err
    # a directory that holds a run needs --resume
    X.check_run_file(_args(Path(out)), Path(out))
    fails([], "holds a run already")
    assert not (tmp_path / "run" / "gen_000").exists()


class CodeOnLoad:
    """Pickles as a call of ``exec``: loading it without ``weights_only`` would write ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",)


def test_a_crafted_checkpoint_is_refused_and_runs_no_code(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "checkpoint.pt"
    expect = {"generation": 1, "fixed": {"hidden": (16, 8), "init_net": None}, "steps": 10}
    model = torch.nn.Linear(2, 2)
    X._save_checkpoint(path, model, torch.optim.AdamW(model.parameters()), dict(expect, step=4))  # type: ignore[arg-type]
    assert X._load_checkpoint(path, expect)["step"] == 4  # type: ignore[index]  # weights_only=True reads it
    marker = tmp_path / "marker"
    torch.save({"model": CodeOnLoad(marker), **expect, "step": 4}, path)
    capsys.readouterr()
    assert X._load_checkpoint(path, expect) is None
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"warning: skipping {path}: refused: it holds objects other than tensors") and \
        line.endswith("training this generation from its start")
    assert not marker.exists()


def test_a_stop_signal_after_an_evaluations_last_game_still_stops_the_gate(tmp_path, monkeypatch, capfd):
    """Ctrl-C while an evaluation plays its last game leaves that evaluation nothing to cut short;
    the gate then stops before its next evaluation rather than carrying on."""
    import os
    import signal

    from concordia_env.arena import evaluation
    from concordia_env.arena.pools import Interrupted

    calls = []

    def last_game_then_ctrl_c(*args, **kwargs):
        calls.append(args)
        os.kill(os.getpid(), signal.SIGINT)  # arrives as the evaluation returns, complete
        return {}

    monkeypatch.setattr(evaluation, "run_evaluation", last_game_then_ctrl_c)
    args = X.build_parser().parse_args(TINY + ["--out", str(tmp_path)])
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a command run from a terminal
    try:
        with pytest.raises(Interrupted):
            X.run_gate(args, tmp_path, 0, X.Expert())
    finally:
        signal.signal(signal.SIGINT, before)
    assert len(calls) == 1  # no second evaluation after the stop
    assert "Ctrl-C: no new games" in capfd.readouterr().err
