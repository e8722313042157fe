"""Faults during training, in real processes: Ctrl-C (SIGINT) saves a checkpoint of the moment and
exits 130, and ``--resume RUN_DIR`` goes on from it; a truncated checkpoint is skipped with a
warning when a run directory is resumed and is a one-line error (status 2) when named; SIGKILL
leaves no half-written file under a final name; a full disk (a file size limit) stops the run in
one line with the earlier files intact and no temporary files. The same for expert iteration
(Ctrl-C, a file size limit, a truncated network), and plot_curves on a failed write.

Runs are tiny (Italia, 2 envs of 512 steps, a 32-32 net); the file takes about a minute on 2 cores."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")  # the "train" extra

from concordia_env.training import plot_curves  # noqa: E402
from concordia_env.training.ppo import command as ppo_command  # noqa: E402
from concordia_env.training.ppo.checkpoints import (  # noqa: E402
    TEMPORARY_NAME,
    checkpoint_step,
    drop_partial_optimizer_state,
    remove_stale_temporaries,
)
from concordia_env.training.ppo.settings import PROG  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TINY = ["--map", "italia", "--n-envs", "2", "--n-steps", "512", "--batch-size", "256", "--checkpoint-every", "1024",
        "--eval-every", "1024", "--eval-episodes", "1", "--net-arch", "32,32",
        "--opponents", "random=2,heuristic=1,self=2", "--no-progress"]
#: a file size limit above every small file of a tiny run and below a checkpoint (about 2 MB)
FILE_LIMIT = 1_000_000


def tiny(total: int, **changes: str) -> list[str]:
    """TINY with ``--total-steps total`` and the given options changed (``checkpoint_every="256"``)."""
    args = TINY + ["--total-steps", str(total)]
    for name, value in changes.items():
        args[args.index("--" + name.replace("_", "-")) + 1] = value
    return args


def start(module: str, args: list[str], file_limit: int | None = None) -> subprocess.Popen:
    """``python -m concordia_env.training.MODULE ARGS`` in the background; with ``file_limit``, under
    ``ulimit -f`` (and SIGXFSZ ignored, so a write past the limit fails with EFBIG like a full disk)."""

    def preexec() -> None:
        # Ctrl-C as from a terminal even when the tests run with SIGINT ignored (started in the
        # background), which the child would inherit and Python would keep
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return subprocess.Popen([sys.executable, "-m", f"concordia_env.training.{module}", *args], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=preexec)


def finish(proc: subprocess.Popen, timeout: float = 120) -> tuple[int, str]:
    """Exit status and stderr of ``proc`` (killed, and the test failed, past ``timeout`` seconds)."""
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"no exit within {timeout} s; stderr: {err[-2000:]}")
    return proc.returncode, err


def interrupted_status(code: int) -> bool:
    """Exit status 130, or an exit by SIGINT (which a shell reports as 130 as well): CPython now and
    then ends a process by SIGINT after the program handled the KeyboardInterrupt and returned 130."""
    return code in (130, -signal.SIGINT)


def wait_for(proc: subprocess.Popen, path: Path, timeout: float = 90) -> None:
    """Wait until ``path`` exists while ``proc`` runs."""
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"exited with {proc.returncode} before {path} appeared: {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{path} did not appear within {timeout} s")
        time.sleep(0.05)


def temporaries(run: Path) -> list[Path]:
    return [p for p in run.rglob(".*.tmp")]


def snapshot(run: Path) -> dict[str, bytes]:
    return {p.relative_to(run).as_posix(): p.read_bytes() for p in run.rglob("*") if p.is_file()}


def assert_files_whole(run: Path) -> None:
    """Every file under a final name reads completely: checkpoints pass their CRC check, JSON and CSV
    parse, the evaluations load."""
    for path in run.rglob("*"):
        if not path.is_file() or TEMPORARY_NAME.fullmatch(path.name):
            continue
        if path.suffix == ".zip":
            checkpoint_step(path)
        elif path.suffix == ".json":
            json.loads(path.read_text())
        elif path.name == "progress.csv":
            plot_curves.load_progress(path)
        elif path.suffix == ".npz":
            with np.load(path) as z:
                assert len(z["timesteps"]) >= 1


def cut_in_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    """A finished tiny run: checkpoints at steps 1024 and 2048, final.zip at 2048."""
    out = tmp_path_factory.mktemp("finished")
    assert ppo_command.main(tiny(2048) + ["--out", str(out)]) == 0
    return out


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_saves_a_checkpoint_and_resume_run_dir_continues(tmp_path, capsys, sent):
    out = tmp_path / "run"
    quick = {"n_steps": "128", "batch_size": "128", "checkpoint_every": "1000000", "eval_every": "1000000"}
    proc = start("ppo", tiny(1_000_000, **quick) + ["--out", str(out)])
    wait_for(proc, out / "logs" / "progress.csv")  # a rollout (256 steps) done: training is under way
    proc.send_signal(sent)
    code, err = finish(proc, timeout=60)
    assert interrupted_status(code) if sent == signal.SIGINT else code == 130, err
    assert "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "interrupted at step" in line and "checkpoint saved to" in line and f"--resume {out}" in line
    (saved,) = (out / "checkpoints").glob("step_*.zip")
    step = checkpoint_step(saved)
    assert saved.name == f"step_{step}.zip" and step >= 256 and f"saved to {saved}" in line
    assert not temporaries(out)

    # the same command with --resume RUN_DIR goes on from there (--total-steps is the run's total)
    assert ppo_command.main(tiny(step + 1, **quick) + ["--resume", str(out)]) == 0
    assert f"resuming from {saved} at step {step}" in capsys.readouterr().err
    assert json.loads((out / "wall_time.json").read_text())["timesteps"] == step + 256  # one rollout more
    assert checkpoint_step(out / "final.zip") == step + 256
    progress = plot_curves.load_progress(out)
    assert progress["time/total_timesteps"].max() == step + 256


def test_a_truncated_checkpoint_named_in_resume_is_a_one_line_error(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    cut_in_half(run / "checkpoints" / "step_2048.zip")
    before = snapshot(run)
    proc = start("ppo", tiny(3072) + ["--resume", str(run / "checkpoints" / "step_2048.zip")])
    code, err = finish(proc)
    assert code == 2
    (line,) = err.strip().splitlines()
    assert line.startswith(f"{PROG}: error: --resume: {run / 'checkpoints' / 'step_2048.zip'}: ")
    assert "truncated or corrupt checkpoint" in line
    assert snapshot(run) == before  # nothing written


def test_truncated_checkpoints_are_skipped_when_resuming_a_run_dir(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    for name in ("final.zip", "checkpoints/step_2048.zip"):
        cut_in_half(run / name)
    assert ppo_command.main(tiny(2048) + ["--resume", str(run)]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    for name in ("final.zip", "checkpoints/step_2048.zip"):
        assert any(line.startswith(f"warning: skipping {run / name}: truncated or corrupt checkpoint (")
                   for line in lines), lines
    assert f"resuming from {run / 'checkpoints' / 'step_1024.zip'} at step 1024" in lines
    # trained again from 1024 to the run's total, 2048: whole files in place of the cut ones
    assert checkpoint_step(run / "final.zip") == checkpoint_step(
        run / "checkpoints" / "step_2048.zip") == 2048
    assert list(np.load(run / "eval" / "evaluations.npz")["timesteps"]) == [1024, 2048]

    # with no readable checkpoint left, resuming the directory is a one-line error
    for name in ("final.zip", "checkpoints/step_1024.zip", "checkpoints/step_2048.zip"):
        cut_in_half(run / name)
    assert ppo_command.main(tiny(2048) + ["--resume", str(run)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == f"{PROG}: error: --resume: {run}: no readable checkpoint (final.zip or " \
                   f"checkpoints/step_*.zip) to resume"


def test_a_truncated_checkpoint_is_left_out_of_the_refilled_pool(finished_run, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    cut_in_half(run / "checkpoints" / "step_1024.zip")
    # final.zip is at the run's total already: nothing to train, the pool refilled, the final files written
    assert ppo_command.main(tiny(2048) + ["--resume", str(run)]) == 0
    err = capsys.readouterr().err
    assert f"warning: skipping {run / 'checkpoints' / 'step_1024.zip'}: truncated or corrupt checkpoint (" in err
    assert "(not added to the opponent pool)" in err and "nothing to train" in err
    assert checkpoint_step(run / "policy.zip") == 2048


def test_sigkill_leaves_no_half_written_file(tmp_path):
    out = tmp_path / "run"
    # a checkpoint every 128 steps: saves keep coming while the run is killed
    proc = start("ppo", tiny(1_000_000, n_steps="128", batch_size="128", checkpoint_every="128",
                             eval_every="1000000") + ["--out", str(out)])
    wait_for(proc, out / "checkpoints" / "step_256.zip")
    time.sleep(0.3)
    proc.kill()
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert_files_whole(out)
    # a temporary file a killed save leaves behind is removed by the next run in the directory
    stale = out / "checkpoints" / ".step_99.zip.abcd1234.tmp"
    stale.write_bytes(b"PK\x03\x04 cut short")
    remove_stale_temporaries(out)
    assert not temporaries(out)
    assert sorted(int(p.stem[5:]) for p in (out / "checkpoints").glob("step_*.zip"))[:2] == [128, 256]


def test_a_full_disk_stops_the_run_in_one_line_and_keeps_the_earlier_files(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    # (the finished run cached the compiled kernels the run needs: under the limit, only the run's own files grow)
    before = snapshot(run)
    assert max(len(data) for data in before.values()) > FILE_LIMIT  # a checkpoint cannot be written
    # the next checkpoint is due at step 2304, a quarter of a rollout on
    proc = start("ppo", tiny(3072, checkpoint_every="256") + ["--resume", str(run)], file_limit=FILE_LIMIT)
    code, err = finish(proc)
    assert code == 1, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"{PROG}: error: could not write {run / 'checkpoints' / 'step_2304.zip'}: ")
    assert "File too large" in last and "the files written before are intact" in last
    after = snapshot(run)
    assert {k: v for k, v in after.items() if k in before} == before  # every earlier file, byte for byte
    assert not temporaries(run) and not (run / "checkpoints" / "step_2304.zip").exists()
    assert_files_whole(run)


# ------------------------------------------------------------ expert iteration
EXIT_TINY = ["--map", "italia", "--players", "2", "--games", "1", "--simulations", "8", "--workers", "1", "--seed", "0",
             "--hidden", "16", "--batch", "64", "--gate-deals", "1", "--eval-deals", "1", "--gate-simulations", "8",
             "--max-turns", "200", "--leaf-mix", "0.5", "--shard-size", "2", "--checkpoint-every", "5",
             "--no-progress", "--generations", "1"]


def test_expert_iteration_ctrl_c_and_a_full_disk(tmp_path):
    out = tmp_path / "ctrl-c"
    proc = start("expert_iteration", EXIT_TINY + ["--out", str(out)])
    wait_for(proc, out / "run.json")  # self-play under way
    proc.send_signal(signal.SIGINT)
    code, err = finish(proc, timeout=60)
    assert interrupted_status(code) and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    assert line.startswith("interrupted") and "--resume" in line

    # a self-play shard (tens of kB) past an 8 kB file size limit: one line, run.json intact, no temporaries
    out = tmp_path / "full"
    from concordia_env.training import expert_iteration as X

    # the game's compiled kernels are cached first (here, without a limit): the run must only fail on its shard
    X.play_selfplay_game(X.selfplay_config(X.build_parser().parse_args(EXIT_TINY + ["--out", str(out)])), 0, 0,
                         X.Expert())
    proc = start("expert_iteration", EXIT_TINY + ["--out", str(out)], file_limit=8_000)
    code, err = finish(proc)
    assert code == 1 and "Traceback" not in err, err
    (line,) = err.strip().splitlines()
    shard = out / "gen_000" / "selfplay" / "shard_00000.npz"
    assert line.startswith(f"python -m concordia_env.training.expert_iteration: error: could not write {shard}: ")
    assert "File too large" in line and "--resume" in line
    assert json.loads((out / "run.json").read_text())["arguments"]["games"] == 1
    assert not shard.exists() and not temporaries(out)


def test_expert_iteration_trains_a_truncated_network_again(tmp_path, capsys):
    torch = pytest.importorskip("torch")  # noqa: F841 - expert_iteration needs it
    from concordia_env import encoding
    from concordia_env.agents.numpy_policy import observation_scaling
    from concordia_env.agents.value_net import ValueNet
    from concordia_env.game import get_game
    from concordia_env.training import expert_iteration as X

    rng = np.random.default_rng(0)
    scale, unbounded = observation_scaling(encoding.observation_bounds(get_game("italia").tables)[1])
    net = ValueNet([(rng.normal(size=(8, encoding.OBSERVATION_SIZE)) * 0.01, np.zeros(8))],
                   {"win": (rng.normal(size=(5, 8)) * 0.1, np.zeros(5))}, "ReLU", scale, unbounded, map_name="italia")
    stem = X.gen_dir(tmp_path, 0) / "net"
    net.save(stem)
    X.write_json_atomic({"net_sha256": X.file_sha256(stem.with_suffix(".npz"))}, X.gen_dir(tmp_path, 0) / "train.json")
    assert X.train_done(tmp_path, 0) is not None
    cut_in_half(stem.with_suffix(".npz"))
    assert X.train_done(tmp_path, 0) is None
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"warning: {stem.with_suffix('.npz')}") and "training generation 0 again" in line


def test_plot_curves_keeps_the_previous_png_when_the_write_fails(finished_run, tmp_path, monkeypatch, capsys):
    png = tmp_path / "curves.png"
    assert plot_curves.main([str(finished_run), "--out", str(png)]) == 0
    before = png.read_bytes()

    def full(path: object, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(plot_curves, "write_bytes_atomic", full)
    capsys.readouterr()
    assert plot_curves.main([str(finished_run), "--out", str(png)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"plot_curves.py: error: could not write {png}: No space left on device"
    assert png.read_bytes() == before and not list(tmp_path.glob(".*.tmp"))
    assert os.listdir(tmp_path) == ["curves.png"]


def test_value_train_resume_of_a_damaged_checkpoint_is_one_line(tmp_path):
    torch = pytest.importorskip("torch")
    from concordia_env.training.value.checkpoint import load_checkpoint, save_checkpoint

    path = tmp_path / "checkpoint.pt"
    with pytest.raises(ValueError, match="no checkpoint to resume"):
        load_checkpoint(path)
    model = torch.nn.Linear(2, 2)
    save_checkpoint(path, model, torch.optim.AdamW(model.parameters()), 3, {"seed": 0}, [], 1.0)
    assert load_checkpoint(path)["step"] == 3
    cut_in_half(path)
    with pytest.raises(ValueError) as info:
        load_checkpoint(path)
    message = str(info.value)
    assert "\n" not in message and "truncated or corrupt checkpoint" in message and str(path) in message


def test_an_interrupt_inside_an_optimizer_step_leaves_no_half_built_state_in_the_checkpoint():
    import torch

    a, b = torch.nn.Parameter(torch.ones(3)), torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([a, b])
    (a.sum() + b.sum()).backward()
    opt.step()
    opt.state[b].pop("exp_avg")  # what Ctrl-C between Adam's lazy-init lines leaves
    opt.state[b].pop("exp_avg_sq")
    assert drop_partial_optimizer_state(opt) == 1
    assert set(opt.state[a]) == {"step", "exp_avg", "exp_avg_sq"} and b not in opt.state
    reloaded = torch.optim.Adam([a, b])
    reloaded.load_state_dict(opt.state_dict())
    (a.sum() + b.sum()).backward()
    reloaded.step()  # the resumed run's first step: no KeyError
    assert set(reloaded.state[b]) == {"step", "exp_avg", "exp_avg_sq"}
    assert drop_partial_optimizer_state(reloaded) == 0
