"""Value-network pipeline end to end, tiny: self-play shards (resume, corrupt shards), training
(checkpoints, Ctrl-C, resume), the numpy export against torch, file validation, TD targets."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from concordia_env import encoding
from concordia_env.agents.value_net import ValueNet
from concordia_env.training.value import data as value_data

torch = pytest.importorskip("torch")
from concordia_env.training.value import train as value_train  # noqa: E402 - needs torch
from concordia_env.training.value.checkpoint import load_checkpoint  # noqa: E402 - needs torch
from concordia_env.training.value.model import ValueModel, predict_margin, torch_values  # noqa: E402 - needs torch
from concordia_env.training.value.targets import bootstrap_targets  # noqa: E402 - needs torch

GEN = ["--map", "italia", "--players", "2", "--games", "2", "--agents", "heuristic,random", "--shard-size", "2",
       "--every", "3", "--seed", "5", "--no-progress"]
TRAIN = ["--hidden", "16", "--batch", "32", "--eval-every", "5", "--checkpoint-every", "5", "--val-fraction", "0.5",
         "--no-progress"]


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("value") / "data"
    assert value_data.main(GEN + ["--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def run_dir(data_dir: Path) -> Path:
    out = data_dir.parent / "run"
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "10"]) == 0
    return out


def test_shard_contents(data_dir: Path) -> None:
    shards = sorted(p.name for p in data_dir.glob("shard_*.npz"))
    assert shards == ["shard_00000.npz"]
    d = value_data.load_shards(data_dir)
    m = len(d["step"])
    assert m > 20 and d["obs"].shape == (m, encoding.OBSERVATION_SIZE)
    assert set(np.unique(d["game"])) == {0, 1} and (d["num_players"] == 2).all()
    # row 0 is the deciding seat: seat_present rows 0-1, and the deciding-seat one-hot on row 0
    obs = d["obs"].astype(np.float32)
    assert (obs[:, encoding.OBSERVATION_LAYOUT["seat_present"]] == [1, 1, 0, 0, 0]).all()
    assert (obs[:, encoding.OBSERVATION_LAYOUT["deciding_seat"]][:, 0] == 1).all()
    assert np.allclose(d["win"].sum(axis=1), 1) and (d["win"][:, 2:] == 0).all()
    assert np.allclose(d["heuristic"].sum(axis=1), 1, atol=1e-5)
    assert set(np.unique(d["rank"][:, :2])) <= {-1.0, 1.0}
    # a game's winner is the same seat whichever seat looks at it
    for g in (0, 1):
        sel = d["game"] == g
        winner_seat = (d["seat"][sel] + d["win"][sel].argmax(axis=1)) % 2
        assert len(set(winner_seat)) == 1
        assert len(set(d["step"][sel] % 3)) == 1  # every third decision, from a per-game offset
    assert (d["step"] < d["decisions"]).all()


def test_same_seed_same_data_and_resume_skips(data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    shard = data_dir / "shard_00000.npz"
    before = shard.read_bytes()
    assert value_data.main(GEN + ["--out", str(data_dir)]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["skipped_shards"] == 1 and summary["games"] == 0
    assert shard.read_bytes() == before
    # other settings in the same directory are refused with one line
    assert value_data.main(GEN[:-3] + ["--seed", "6", "--no-progress", "--out", str(data_dir)]) == 2
    assert "other settings" in capsys.readouterr().err


def test_two_workers_write_the_same_shards_and_bad_backends_are_one_line(
        data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "two"
    assert value_data.main(GEN[:5] + ["4"] + GEN[6:] + ["--workers", "2", "--out", str(out)]) == 0
    one = tmp_path / "one"
    assert value_data.main(GEN[:5] + ["4"] + GEN[6:] + ["--out", str(one)]) == 0
    for name in ("shard_00000.npz", "shard_00001.npz"):
        assert (out / name).read_bytes() == (one / name).read_bytes(), name
    assert (out / "shard_00000.npz").read_bytes() == (data_dir / "shard_00000.npz").read_bytes()
    capsys.readouterr()
    assert value_data.main(GEN + ["--out", str(tmp_path / "x"), "--address", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err.strip() == "error: --address needs --backend ray"


def test_corrupt_shard_is_skipped_and_regenerated(data_dir: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    copy = tmp_path / "data"
    shutil.copytree(data_dir, copy)
    good = (copy / "shard_00000.npz").read_bytes()
    (copy / "shard_00001.npz").write_bytes(good[: len(good) // 2])  # a truncated shard
    d = value_data.load_shards(copy)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "shard_00001.npz" in err[0] and "corrupt or truncated" in err[0]
    assert len(d["step"]) == len(value_data.load_shards(data_dir)["step"])
    (copy / "shard_00000.npz").write_bytes(good[:1000])
    assert value_data.main(GEN + ["--out", str(copy)]) == 0  # regenerates shard 0, never fatal
    assert "shard_00000.npz" in capsys.readouterr().err
    assert (copy / "shard_00000.npz").read_bytes() == good  # same seed, same bytes


def test_observations_load_as_bytes_when_they_fit(data_dir: Path, tmp_path: Path) -> None:
    with np.load(data_dir / "shard_00000.npz") as z:
        arrays = {k: z[k] for k in z.files}
    d = value_data.load_shards(data_dir)
    assert d["obs"].dtype == np.uint8 and arrays["obs"].dtype == np.int16
    np.testing.assert_array_equal(d["obs"], arrays["obs"])  # exact: every count is in 0..255
    # one count of 300 anywhere in the set keeps the whole set int16, the value intact
    arrays["obs"][3, 7] = 300
    copy = tmp_path / "data"
    copy.mkdir()
    np.savez(copy / "shard_00000.npz", **arrays)
    shutil.copy(data_dir / "shard_00000.npz", copy / "shard_00001.npz")
    wide = value_data.load_shards(copy)
    assert wide["obs"].dtype == np.int16 and wide["obs"][3, 7] == 300
    np.testing.assert_array_equal(wide["obs"][len(arrays["obs"]):], d["obs"])


def test_several_data_sets_load_as_one_with_games_renumbered(data_dir: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    one = value_data.load_shards(data_dir)
    two = value_data.load_shards([data_dir, data_dir])
    m = len(one["step"])
    assert len(two["step"]) == 2 * m and two["obs"].shape == (2 * m, encoding.OBSERVATION_SIZE)
    np.testing.assert_array_equal(two["obs"][m:], one["obs"])
    # the second set's games follow the first's: games 0-1, then 2-3
    np.testing.assert_array_equal(two["game"], np.concatenate([one["game"], one["game"] + 2]))
    np.testing.assert_array_equal(two["game_index"], [0, 1, 2, 3])
    assert two["meta"]["settings"] == one["meta"]["settings"] and len(two["meta"]["shards"]) == 2
    # trained on together: the run's network names both sets
    out = tmp_path / "run"
    assert value_train.main(TRAIN + ["--data", str(data_dir), str(data_dir), "--out", str(out), "--steps", "5"]) == 0
    assert json.loads((out / "metrics.json").read_text())["positions"] == 2 * m
    # another player count, or a set with no shard: one line naming it
    other = tmp_path / "four"
    assert value_data.main(["--map", "italia", "--players", "4"] + GEN[4:] + ["--out", str(other)]) == 0
    with pytest.raises(ValueError, match="4"):
        value_data.load_shards([data_dir, other])
    with pytest.raises(ValueError, match="empty.*no readable shard"):
        value_data.load_shards([data_dir, tmp_path / "empty"])
    capsys.readouterr()
    assert value_train.main(TRAIN + ["--data", str(data_dir), str(tmp_path / "empty"), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no readable shard" in err[0]


def test_numpy_export_equals_torch(run_dir: Path, data_dir: Path) -> None:
    net = ValueNet.load(run_dir / "value_net")
    ck = torch.load(run_dir / "checkpoint.pt", weights_only=False)
    model = ValueModel(net.scale, net.unbounded, [16], "ReLU", margin=True)
    model.load_state_dict(ck["model"])
    model.eval()
    obs = value_data.load_shards(data_dir)["obs"][:200].astype(np.float32)
    got, want = net.values(obs), torch_values(model, obs)
    assert got.shape == (200, 5)
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert np.allclose(got.sum(axis=1), 1, atol=1e-5) and (got[:, 2:] == 0).all()
    with torch.no_grad():
        m = model(torch.as_tensor(obs))[1].numpy() * 50
    np.testing.assert_allclose(net.margins(obs)[:, :2], m[:, :2], atol=1e-3)
    # the training report's margins come in slices (a large validation set does not fit one pass): the same
    np.testing.assert_allclose(predict_margin(model, obs, batch=7), m, rtol=1e-5, atol=1e-4)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["numpy_vs_torch_max_abs_diff"] < 1e-5 and set(metrics["val"]) >= {"ce", "accuracy", "early"}


def test_interrupt_then_resume_equals_one_run(run_dir: Path, data_dir: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    real, calls = value_train.losses, []

    def interrupt_at_call_7(*a, **kw):  # Ctrl-C during step 6 (5 steps + 1 validation at step 5 before it)
        calls.append(1)
        if len(calls) == 7:
            raise KeyboardInterrupt
        return real(*a, **kw)

    monkeypatch.setattr(value_train, "losses", interrupt_at_call_7)  # where the training loop looks it up
    argv = TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "10"]
    assert value_train.main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "step 5" in err[0] and "--resume" in err[0]
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 5
    monkeypatch.setattr(value_train, "losses", real)
    assert value_train.main(argv + ["--resume"]) == 0
    # deterministic: the resumed run ends with the same weights as the uninterrupted one
    assert (out / "value_net.npz").read_bytes() == (run_dir / "value_net.npz").read_bytes()


def _rewrite(stem: Path, arrays: dict[str, np.ndarray], header_edit: dict | None = None) -> None:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    stem.with_suffix(".npz").write_bytes(buf.getvalue())
    header = json.loads(stem.with_suffix(".json").read_text())
    header["npz_sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    header.update(header_edit or {})
    stem.with_suffix(".json").write_text(json.dumps(header))


def test_bad_files_refused(run_dir: Path, tmp_path: Path) -> None:
    net = ValueNet.load(run_dir / "value_net")
    stem = tmp_path / "v"
    npz, js = net.save(stem)

    def refused(match: str, exc: type = ValueError) -> None:
        with pytest.raises(exc, match=match) as info:
            ValueNet.load(stem)
        assert "v.npz" in str(info.value) or "v.json" in str(info.value)
        assert "\n" not in str(info.value)
        net.save(stem)  # restore for the next case

    npz.write_bytes(npz.read_bytes()[:300])
    refused("corrupt or truncated")
    js.write_text("{not json")
    refused("corrupt JSON")
    npz.unlink()
    refused("not found", FileNotFoundError)
    arrays = net.arrays()
    _rewrite(stem, {k: v for k, v in arrays.items() if k != "win.bias"})
    refused("missing \\['win.bias'\\]")
    _rewrite(stem, dict(arrays, **{"win.weight": np.zeros((4, 16), np.float32)}))
    refused("'win.weight' is float32 \\(4, 16\\)")
    header = json.loads(js.read_text())
    header["observation"]["size"] = 1000
    js.write_text(json.dumps(header))
    refused("observation size is 1000")
    npz.write_bytes(npz.read_bytes() + b"x")
    refused("npz_sha256")
    with pytest.raises(ValueError, match="batch"):
        net.values(np.zeros(encoding.OBSERVATION_SIZE))


def test_td_targets_hand_checked() -> None:
    # one 2-player game, three recorded positions seen by seats 0, 1, 0 (given out of order);
    # seat 0 wins. Rows are each position's own view (row 0 = the deciding seat).
    step = np.array([20, 0, 10])
    seat = np.array([0, 0, 1])
    pred = np.zeros((3, 5))
    pred[1, :2], pred[2, :2], pred[0, :2] = [0.5, 0.5], [0.6, 0.4], [0.7, 0.3]  # absolute: .5/.5, .4/.6, .7/.3
    outcome = np.zeros((3, 5))
    outcome[1, :2], outcome[2, :2], outcome[0, :2] = [1, 0], [0, 1], [1, 0]
    args = (pred, outcome, np.zeros(3, int), step, seat, np.full(3, 2))
    td = bootstrap_targets(*args, lam=0.5)
    # G2 = z = (1, 0); G1 = .5 V2 + .5 G2 = (.85, .15) -> seat 1's rows (.15, .85);
    # G0 = .5 V1 + .5 G1 = .5 (.4, .6) + .5 (.85, .15) = (.625, .375)
    np.testing.assert_allclose(td[:, :2], [[1, 0], [0.625, 0.375], [0.15, 0.85]], atol=1e-6)
    assert (td[:, 2:] == 0).all()
    mc = bootstrap_targets(*args, lam=1.0)
    one_step = bootstrap_targets(*args, lam=0.0)
    np.testing.assert_allclose(mc, outcome, atol=1e-6)
    np.testing.assert_allclose(one_step, bootstrap_targets(*args, n=1), atol=1e-6)
    np.testing.assert_allclose(one_step[1, :2], [0.4, 0.6], atol=1e-6)  # V of the next position, seat 0's rows
    lo, hi = np.minimum(mc, one_step), np.maximum(mc, one_step)
    assert ((td >= lo - 1e-6) & (td <= hi + 1e-6)).all()  # between MC and the bootstrap values
    np.testing.assert_allclose(bootstrap_targets(*args, n=2)[1, :2], [0.7, 0.3], atol=1e-6)


def test_td_training_runs_from_a_previous_net(run_dir: Path, data_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "td"
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "3", "--targets", "td",
                                     "--lam", "0.8", "--bootstrap", str(run_dir / "value_net")]) == 0
    assert ValueNet.load(out / "value_net").metadata["targets"] == "td"


def test_td_targets_from_the_recorded_heuristic(data_dir: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}
    real = value_train.bootstrap_targets

    def spy(pred, *args, **kw):
        seen["pred"] = pred
        return real(pred, *args, **kw)

    monkeypatch.setattr(value_train, "bootstrap_targets", spy)
    out = tmp_path / "heur"
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "3", "--targets", "td",
                                     "--lam", "0.8", "--bootstrap", "heuristic"]) == 0
    # V is the heuristic's evaluation recorded with each position, in the order the data loads
    np.testing.assert_array_equal(seen["pred"], value_data.load_shards(data_dir)["heuristic"].astype(np.float64))
    assert ValueNet.load(out / "value_net").metadata["targets"] == "td"


def test_device_auto_without_a_gpu_trains_on_the_cpu_and_cuda_is_refused(
        run_dir: Path, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # whatever this machine has
    out = tmp_path / "auto"
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "10",
                                     "--device", "auto"]) == 0
    assert (out / "value_net.npz").read_bytes() == (run_dir / "value_net.npz").read_bytes()
    capsys.readouterr()
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(tmp_path / "cuda"), "--steps", "10",
                                     "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --device cuda: torch finds no CUDA device (use --device auto or cpu)"]
    assert not (tmp_path / "cuda" / "checkpoint.pt").exists()


def test_all_views(tmp_path: Path) -> None:
    out = tmp_path / "views"
    argv = GEN[:4] + ["--games", "1", "--agents", "heuristic", "--every", "5", "--views", "all", "--no-progress"]
    assert value_data.main(argv + ["--out", str(out)]) == 0
    d = value_data.load_shards(out)
    assert len(d["step"]) % 2 == 0 and (d["step"][::2] == d["step"][1::2]).all()
    assert (d["seat"][::2] == 0).all() and (d["seat"][1::2] == 1).all()
    np.testing.assert_array_equal(d["win"][::2, :2], d["win"][1::2, 1::-1])  # rows rotated between views
    np.testing.assert_allclose(d["heuristic"][::2, :2], d["heuristic"][1::2, 1::-1], atol=1e-6)
    # TD targets treat both views of a decision as one time step, valued by their mean
    pred = d["heuristic"].astype(np.float64)
    td = bootstrap_targets(pred, d["win"], d["game"], d["step"], d["seat"], d["num_players"], lam=0.5)
    np.testing.assert_allclose(td[::2, :2], td[1::2, 1::-1], atol=1e-6)


class CodeOnLoad:
    """Pickles as a call of ``exec``: loading it without ``weights_only`` would write ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",)


def test_a_crafted_checkpoint_runs_no_code_on_resume(run_dir: Path, data_dir: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture) -> None:
    out = tmp_path / "run"
    shutil.copytree(run_dir, out)
    real = load_checkpoint(out / "checkpoint.pt")  # a real checkpoint loads with weights_only=True
    assert real["step"] == 10 and real["args"]["hidden"] == [16]
    marker = tmp_path / "marker"
    ckpt = out / "checkpoint.pt"
    torch.save({**real, "model": CodeOnLoad(marker)}, ckpt)
    capsys.readouterr()
    assert value_train.main(TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "20", "--resume"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: --resume: {ckpt}: refused: it holds objects other than tensors") and \
        "could run code" in line
    assert not marker.exists()


def test_a_failed_shard_write_names_the_shard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture) -> None:
    import os

    out = tmp_path / "data"
    assert value_data.main(GEN + ["--out", str(out)]) == 0  # dataset.json and shard 0: the next run only writes shard 1
    capsys.readouterr()

    def full_disk(fd: int) -> None:  # a full disk's write names no file
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    assert value_data.main(GEN[:5] + ["3"] + GEN[6:] + ["--out", str(out)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: could not write {out / 'shard_00001.npz'}: No space left on device"), line
    assert sorted(p.name for p in out.iterdir()) == ["dataset.json", "shard_00000.npz"]


def test_sigterm_during_training_saves_a_checkpoint_as_ctrl_c_does(data_dir: Path, tmp_path: Path) -> None:
    """A scheduler's stop (SIGTERM) in the training loop: the checkpoint of that moment, one line, 130."""
    import signal
    import subprocess
    import sys

    from processes import wait_for  # tests/processes.py

    out = tmp_path / "run"
    args = TRAIN + ["--data", str(data_dir), "--out", str(out), "--steps", "10000000", "--checkpoint-every", "50"]
    proc = subprocess.Popen([sys.executable, "-m", "concordia_env.training.value.train", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGTERM, signal.SIG_DFL))
    # training under way once the first checkpoint is written
    wait_for(lambda: (out / "checkpoint.pt").exists() or proc.poll() is not None, timeout=120, what="checkpoint")
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("value.train did not exit after SIGTERM")
    assert proc.returncode == 130 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith("interrupted at step ") and "--resume" in line
    step = int(line.split()[3].rstrip(":"))
    assert load_checkpoint(out / "checkpoint.pt")["step"] == step > 0
