"""training/: a tiny MaskablePPO run completes, saves, resumes and reloads; the loaded policy
plays full games in every player count; evaluation and plotting scripts work; bad arguments fail clearly;
a run says how it is going once per rollout without a progress bar (and without rich), and never
writes into an earlier run's directory or leaves a half-made one behind."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")  # the "train" extra

REPO = Path(__file__).resolve().parents[1]

from sb3_contrib import MaskablePPO  # noqa: E402

from concordia_env.agents.numpy_policy import NumpyPolicy  # noqa: E402
from concordia_env.agents.policy import TRAIN_EXTRA_INSTALL, PolicyAgent  # noqa: E402
from concordia_env.agents.random_agent import RandomAgent  # noqa: E402
from concordia_env.arena.records import play_game  # noqa: E402
from concordia_env.data import load_map  # noqa: E402
from concordia_env.training import evaluate, plot_curves  # noqa: E402
from concordia_env.training.ppo import command as ppo_command  # noqa: E402
from concordia_env.training.ppo import loop as ppo_loop  # noqa: E402
from concordia_env.training.ppo.callbacks import format_duration, rollout_line  # noqa: E402
from concordia_env.training.ppo.checkpoints import checkpoint_step  # noqa: E402
from concordia_env.training.ppo.settings import PROG  # noqa: E402
from concordia_env.training.selfplay import SingleLearnerEnv  # noqa: E402

TINY = ["--total-steps", "2048", "--n-envs", "2", "--n-steps", "512", "--batch-size", "256",
        "--checkpoint-every", "1024", "--eval-every", "1024", "--eval-episodes", "1",
        "--net-arch", "32,32", "--opponents", "random=2,heuristic=1,self=2", "--no-progress"]


@pytest.fixture(scope="module", params=["italia", "imperium"])
def tiny_run(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"run-{request.param}")
    release = out / "released" / f"ppo_{request.param}.zip"
    assert ppo_command.main(["--map", request.param, "--seed", "3", "--out", str(out), "--release", str(release)]
                            + TINY) == 0
    return request.param, out, release


def test_tiny_run_writes_everything(tiny_run):
    map_name, out, release = tiny_run
    for name in ("config.json", "final.zip", "policy.zip", "wall_time.json", "eval/evaluations.npz",
                 "checkpoints/step_1024.zip", "checkpoints/step_2048.zip", "logs/progress.csv"):
        assert (out / name).is_file(), name
    assert list((out / "logs").glob("events.out.tfevents.*")), "no TensorBoard log"
    assert release.read_bytes() == (out / "policy.zip").read_bytes()
    assert release.with_suffix(".npz").is_file() and release.with_suffix(".json").is_file()
    assert (out / "policy.zip").stat().st_size < 0.6 * (out / "final.zip").stat().st_size  # no optimizer state
    config = json.loads((out / "config.json").read_text())
    assert config["map"] == map_name and config["seed"] == 3 and config["net_arch"] == [32, 32]
    assert json.loads((out / "wall_time.json").read_text())["timesteps"] == 2048
    progress = plot_curves.load_progress(out)
    assert progress["time/total_timesteps"].max() == 2048
    assert not np.isnan(progress["selfplay/win_rate_vs_random"]).all()
    # the untrained policy, then each checkpoint (saved before the rollout's figures are logged)
    assert set(progress["selfplay/snapshots"][~np.isnan(progress["selfplay/snapshots"])]) == {2.0, 3.0}
    evals = np.load(out / "eval" / "evaluations.npz")
    assert list(evals["timesteps"]) == [1024, 2048] and evals["successes"].shape == (2, 1)


def test_loaded_policy_plays_a_full_game_in_every_player_count(tiny_run):
    map_name, out, release = tiny_run
    agent = PolicyAgent(release)
    assert agent.policy.algorithm == "MaskablePPO" and agent.policy.maskable
    for n in load_map(map_name).players:
        for seat in (0, n - 1):
            agents = [RandomAgent() for _ in range(n)]
            agents[seat] = agent
            record = play_game(map_name, n, seed=n, agents=agents)
            assert record["result"]["truncated"] is False
            assert len(record["result"]["scores"]) == n


def test_release_writes_the_numpy_pair_export_policy_would(tiny_run, tmp_path):
    from concordia_env.training.export_policy import export

    map_name, out, release = tiny_run
    policy = NumpyPolicy.load(release.with_suffix(".npz"))
    assert policy.map_name == map_name and policy.layer_sizes[1:-1] == [32, 32]
    assert policy.metadata["source"]["file"] == release.name and policy.metadata["num_timesteps"] == 2048
    # the same bytes as exporting the released zip afterwards (the in-memory model is the saved one)
    again = export(release, tmp_path / release.stem, map_name=map_name)
    assert again[0].read_bytes() == release.with_suffix(".npz").read_bytes()
    assert again[1].read_bytes() == release.with_suffix(".json").read_bytes()
    torch_agent, numpy_agent = PolicyAgent(release), PolicyAgent(release.with_suffix(".npz"))
    env = SingleLearnerEnv(map_name, opponents="random")
    obs, _ = env.reset(seed=1)
    for _ in range(40):
        mask = env.action_masks().astype(np.int8)
        action = numpy_agent.act(obs, mask)
        assert action == torch_agent.act(obs, mask)
        obs, _, term, trunc, _ = env.step(action)
        if term or trunc:
            break


def test_slim_policy_predicts_like_the_full_model(tiny_run):
    map_name, out, _ = tiny_run
    full = MaskablePPO.load(out / "final.zip", device="cpu")
    agent = PolicyAgent(out / "policy.zip")
    env = SingleLearnerEnv(map_name, opponents="random")
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        mask = env.action_masks()
        expected, _ = full.predict(obs, action_masks=mask, deterministic=True)
        assert agent.act(obs, mask.astype(np.int8)) == int(expected)
        obs, _, term, trunc, _ = env.step(int(expected))
        if term or trunc:
            break


def test_resume_continues_the_step_count_and_refills_the_pool(tmp_path):
    def args(steps: str) -> list[str]:
        a = ["--map", "italia", "--out", str(tmp_path)] + TINY
        a[a.index("--total-steps") + 1] = steps
        return a

    assert ppo_command.main(args("2048")) == 0
    ckpt = tmp_path / "checkpoints" / "step_2048.zip"
    # --total-steps is the run's total: 3072 goes on from step 2048 for 1024 more steps
    assert ppo_command.main(args("3072") + ["--resume", str(ckpt)]) == 0
    assert json.loads((tmp_path / "wall_time.json").read_text())["timesteps"] == 3072
    assert (tmp_path / "checkpoints" / "step_3072.zip").is_file()
    assert list(tmp_path.glob("config-resume-*.json"))
    progress = plot_curves.load_progress(tmp_path)
    assert progress["time/total_timesteps"].max() == 3072
    # the pool was refilled from the two earlier checkpoints, then the new one joined
    assert np.nanmax(progress["selfplay/snapshots"][progress["time/total_timesteps"] == 3072]) == 3


def test_resume_from_a_zip_of_the_earlier_layout(tmp_path):
    # releases/ppo_italia.zip pickled its features extractor as agents.nets.ObservationScaler
    released = REPO / "releases" / "ppo_italia.zip"
    start = checkpoint_step(released)
    assert start > 6_000_000
    args = ["--map", "italia", "--out", str(tmp_path), "--resume", str(released)] + TINY
    args[args.index("--total-steps") + 1] = str(start + 1024)  # the run's total: 1024 steps more
    assert ppo_command.main(args) == 0
    assert json.loads((tmp_path / "wall_time.json").read_text())["timesteps"] == start + 1024


def test_same_seed_same_policy(tmp_path):
    def run(out: Path, seed: int) -> dict:
        args = ["--map", "italia", "--seed", str(seed), "--out", str(out)] + TINY
        args[args.index("--total-steps") + 1] = "1024"
        assert ppo_command.main(args) == 0
        return MaskablePPO.load(out / "policy.zip", device="cpu").policy.state_dict()

    a, b, c = run(tmp_path / "a", 5), run(tmp_path / "b", 5), run(tmp_path / "c", 6)
    assert a.keys() == b.keys()
    assert all((a[k] == b[k]).all() for k in a)
    assert not all((a[k] == c[k]).all() for k in a)


def test_subprocess_vector_env(tmp_path):
    args = ["--map", "italia", "--vec", "subproc", "--out", str(tmp_path)] + TINY
    args[args.index("--total-steps") + 1] = "1024"
    assert ppo_command.main(args) == 0
    assert (tmp_path / "checkpoints" / "step_1024.zip").is_file()


def test_evaluate_writes_tournament_results(tiny_run, tmp_path, capsys):
    map_name, out, release = tiny_run
    n = min(load_map(map_name).players)
    path = tmp_path / "eval.json"
    assert evaluate.main(["--policy", str(release), "--map", map_name, "--players", str(n), "--vs", "random",
                          "--games", "3", "--out", str(path), "--no-progress"]) == 0
    results = json.loads(path.read_text())
    (m,) = results["matchups"]
    assert m["players"] == n and m["opponent"] == "random"
    assert m["games"] == -(-3 // n) * n  # rounded up to a multiple of the players (seat rotation)
    assert m["wins"] == round(m["win_rate"] * m["games"])
    assert m["tournament"]["agents"] == [f"policy:path={release}"] + ["random"] * (n - 1)
    assert f"{m['wins']}/{m['games']}" in capsys.readouterr().out
    # the numpy pair beside the release evaluates too (the ppo agent's own files, no torch needed)
    npz_out = tmp_path / "eval_npz.json"
    assert evaluate.main(["--policy", str(release.with_suffix(".npz")), "--map", map_name, "--players", str(n),
                          "--vs", "random", "--games", str(n), "--out", str(npz_out), "--no-progress"]) == 0
    assert json.loads(npz_out.read_text())["matchups"][0]["games"] == n


def test_plot_curves_writes_a_png(tiny_run, tmp_path):
    _, out, _ = tiny_run
    png = tmp_path / "curves.png"
    assert plot_curves.main([str(out), "--out", str(png), "--smooth", "2"]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def run_script(name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", f"concordia_env.training.{Path(name).stem}", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["ppo", "evaluate.py", "plot_curves.py", "export_policy.py"])
def test_help(name):
    proc = run_script(name, "--help")
    assert proc.returncode == 0 and "usage:" in proc.stdout


@pytest.mark.parametrize("args, message", [
    (["--map", "rome"], "invalid choice: 'rome'"),
    (["--map", "imperium", "--players", "2"], "imperium is played by [3, 4, 5] players"),
    (["--map", "italia", "--players", "2-4", "--seat", "2"], "--seat 2 does not exist in a 2-player game"),
    (["--map", "italia", "--opponents", "wizard=1"], "unknown opponent kind 'wizard'"),
    (["--map", "italia", "--total-steps", "0"], "must be >= 1"),
    (["--map", "italia", "--n-envs", "1", "--n-steps", "64", "--batch-size", "128"], "exceeds a rollout"),
    (["--map", "italia", "--resume", "nowhere.zip"], "--resume nowhere.zip: no such file"),
    (["--map", "italia", "--shaping", "-1"], "--shaping must be >= 0"),
    (["--map", "italia", "--players", "4-2"], "not a range"),
])
def test_train_rejects_bad_arguments(args, message, capsys):
    with pytest.raises(SystemExit) as exc:
        ppo_command.main(args)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


def test_evaluate_rejects_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit):
        evaluate.main(["--policy", str(tmp_path / "none.zip"), "--map", "italia", "--out", str(tmp_path / "x")])
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate.main(["--policy", __file__, "--map", "italia", "--players", "5", "--out", str(tmp_path / "x")])
    assert "italia is played by [2, 3, 4] players" in capsys.readouterr().err


def test_train_without_the_train_extra_says_what_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "sb3_contrib", None)
    with pytest.raises(SystemExit) as exc:
        ppo_command.main(["--map", "italia", "--total-steps", "10"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert TRAIN_EXTRA_INSTALL in err
    assert ("pip install torch --index-url https://download.pytorch.org/whl/cpu, then "
            'pip install ".[train]" in the concordia-env source folder') in err


def test_without_rich_a_run_prints_a_line_per_rollout_instead_of_failing(tmp_path, monkeypatch, capsys):
    # sb3's progress bar needs rich (and tqdm); without it sb3 raised ImportError inside learn(),
    # after the run directory was written
    monkeypatch.setitem(sys.modules, "rich", None)
    args = ["--map", "italia", "--out", str(tmp_path / "run")] + [a for a in TINY if a != "--no-progress"]
    assert ppo_command.main(args) == 0
    captured = capsys.readouterr()
    assert "note: no progress bar: it needs rich (pip install rich, or the train extra); " \
           "printing a line per rollout instead" in captured.err
    lines = [line for line in captured.out.splitlines() if line.startswith("step ")]
    # 2 envs x 512 steps per rollout, 2048 steps: two rollouts, two lines
    assert [line.split(" (")[0] for line in lines] == ["step 1,024/2,048", "step 2,048/2,048"], captured.out
    assert "steps/s" in lines[0] and "left" in lines[0] and "wins this rollout vs " in lines[0]
    assert (tmp_path / "run" / "policy.zip").is_file()


def test_no_progress_still_prints_a_line_per_rollout_and_an_earlier_run_is_never_reused(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["--map", "italia", "--out", str(out)] + TINY
    args[args.index("--total-steps") + 1] = "1024"
    assert ppo_command.main(args) == 0
    captured = capsys.readouterr()
    assert re.search(r"^step 1,024/1,024 \(100%\), [\d,]+ steps/s, ", captured.out, re.M), captured.out
    # the same command again: refused in one line, the finished run left as it was
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert ppo_command.main(args) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (f"{PROG}: error: --out {out} holds a run already (config.json); "
                    f"continue it with --resume {out}, or use another --out")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_run_that_cannot_start_leaves_no_directory_and_a_half_made_one_is_reported(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"

    def broken(args, vec_env):
        raise ImportError("No module named 'something_optional'")

    monkeypatch.setattr(ppo_loop, "new_model", broken)  # where train() looks it up
    with pytest.raises(ImportError):
        ppo_command.main(["--map", "italia", "--out", str(out)] + TINY)
    assert not out.exists(), "a run that never started left its directory behind"
    # a directory an older version left half-made (config and logs, no checkpoint): said so, not reused
    (out / "logs").mkdir(parents=True)
    (out / "config.json").write_text("{}")
    monkeypatch.undo()
    assert ppo_command.main(["--map", "italia", "--out", str(out)] + TINY) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (f"{PROG}: error: --out {out} holds a run already (config.json); it has no "
                    f"checkpoint to resume: delete it, or use another --out")
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "logs"]


def test_rollout_line():
    line = rollout_line(204_800, 400_000, 0, 400.0, {"heuristic": (0, 2), "random": (9, 10), "self": (0, 0)})
    assert line == ("step 204,800/400,000 (51%), 512 steps/s, 6 min 40 s elapsed, about 6 min 21 s left; "
                    "wins this rollout vs heuristic 0/2, random 9/10")
    # a resumed run: the speed counts this session's steps only
    assert rollout_line(3072, 3072, 2048, 2.0, {}).startswith("step 3,072/3,072 (100%), 512 steps/s, 2 s "
                                                              "elapsed, about 0 s left")
    assert format_duration(3725) == "1 h 02 min"


def test_a_resume_keeps_the_game_and_the_network_shape(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"map": "italia", "players": None, "net_arch": [32, 32],
                                                 "reward": "rank"}))
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert ppo_command.main(["--map", "imperium", "--resume", str(out)] + TINY) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and "holds a run with other settings (--map 'italia' there, 'imperium' here)" in line
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
