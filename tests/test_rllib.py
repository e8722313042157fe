"""RLlib and Ray: the multi-agent wrapper, training.ppo.rllib on a local Ray instance, the Ray tournament backend.

One local Ray instance (2 CPUs, no dashboard) serves the whole module; sizes are the smallest
that exercise each path (a couple of tiny PPO iterations, a few Italia games)."""

from __future__ import annotations

import importlib
import json
import os
import socket
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if os.environ.get("CONCORDIA_REQUIRE_RAY") == "1":  # .ci/run's rllib venv: a missing Ray is a failure there
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is not installed; .ci/run runs this file in a venv with the "
                              "rllib extra")

from concordia_env import engine as E  # noqa: E402
from concordia_env.arena.tournament import run_tournament  # noqa: E402
from concordia_env.cli import main as cli_main  # noqa: E402
from concordia_env.integrations import ray_backend  # noqa: E402
from concordia_env.state import IllegalActionError  # noqa: E402

AGENTS = ["heuristic", "random"]


@pytest.fixture(scope="module")
def local_ray() -> Any:
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    if started:
        ray.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


REQUIRED = os.environ.get("CONCORDIA_REQUIRE_RAY") == "1"


def _rllib() -> Any:
    for name in ("ray.rllib", "torch"):
        if REQUIRED:
            importlib.import_module(name)
        else:
            pytest.importorskip(name)
    from concordia_env.integrations import rllib

    return rllib


# ---------------------------------------------------------------- the wrapper
def test_wrapper_passes_rllibs_env_check() -> None:
    rllib = _rllib()
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments

    env = rllib.ConcordiaMultiAgentEnv({"map_name": "italia", "num_players": 2})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the check's unmasked action ends the game with a warning
        check_multiagent_environments(env)


def test_wrapper_keys_masks_and_every_seats_final_reward() -> None:
    rllib = _rllib()
    env = rllib.ConcordiaMultiAgentEnv({"map_name": "italia", "num_players": 2})
    space = env.observation_spaces["player_0"]
    assert set(space.spaces) == {"observations", "action_mask"}
    obs, infos = env.reset(seed=5)
    rng = np.random.default_rng(0)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(5000):
        (agent, o), = obs.items()
        assert set(o) == {"observations", "action_mask"} and o["action_mask"].dtype == np.float32
        assert space.contains(o)
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminated, truncated, infos = env.step({agent: action})
        for a, r in rewards.items():
            returns[a] += r
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert terminated["__all__"] and not truncated["__all__"]
    assert set(obs) == set(rewards) == set(env.possible_agents)  # every seat: final obs and reward
    assert sorted(returns.values()) == [-1.0, 1.0]  # "win": winner +1, the other -1
    assert all(not o["action_mask"].any() for o in obs.values())


def test_wrapper_illegal_action_modes() -> None:
    rllib = _rllib()
    env = rllib.ConcordiaMultiAgentEnv({"map_name": "italia", "num_players": 2})
    obs, _ = env.reset(seed=1)
    (agent, o), = obs.items()
    illegal = int(np.flatnonzero(o["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, rewards, terminated, _, infos = env.step({agent: illegal})
    assert terminated["__all__"] and rewards[agent] == -1.0 and infos[agent]["illegal_action"] == illegal
    strict = rllib.ConcordiaMultiAgentEnv({"map_name": "italia", "num_players": 2, "illegal_action": "raise"})
    strict.reset(seed=1)
    with pytest.raises(IllegalActionError):
        strict.step({agent: illegal})
    with pytest.raises(ValueError, match="unknown env_config key"):
        rllib.ConcordiaMultiAgentEnv({"map": "italia"})
    assert rllib.shared_policy("player_1") == rllib.SHARED_POLICY
    assert rllib.per_seat_policy("player_1") == "player_1"
    assert E.NUM_ACTIONS == env.action_spaces["player_0"].n


# ---------------------------------------------------------------- training.ppo.rllib
def test_train_rllib_tiny_run_checkpoints_exports_and_evaluates(local_ray: Any, tmp_path: Path) -> None:
    _rllib()
    from concordia_env.training.ppo.rllib import main

    out = tmp_path / "run"
    code = main(["--map", "italia", "--players", "2", "--iterations", "2", "--batch-size", "128",
                 "--minibatch-size", "64", "--epochs", "1", "--hiddens", "16", "--eval-games", "2",
                 "--out", str(out)])
    assert code == 0
    rows = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2] and rows[-1]["env_steps"] >= 256
    assert (out / "checkpoint").is_dir() and any((out / "checkpoint").iterdir())
    assert (out / "policy.npz").is_file() and (out / "policy.json").is_file()
    result = json.loads((out / "eval.json").read_text())
    assert result["complete"] and result["games"] == 2
    assert result["agents"][0] == f"policy:path={out / 'policy'}.npz"


def test_train_rllib_bad_arguments_and_address(local_ray: Any, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    _rllib()
    from concordia_env.training.ppo.rllib import main

    with pytest.raises(SystemExit) as exc:
        main(["--players", "5", "--out", str(tmp_path / "a")])
    assert exc.value.code == 2 and "--players 5" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--iterations", "0"])
    assert exc.value.code == 2 and "--iterations: '0' must be >= 1" in capsys.readouterr().err
    port = _free_port()
    assert main(["--address", f"127.0.0.1:{port}", "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"127.0.0.1:{port}" in err and "ray start --head" in err


# ---------------------------------------------------------------- the Ray tournament backend
def test_ray_backend_gives_the_local_result(local_ray: Any, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    local = run_tournament("italia", 2, AGENTS, 4, seed=7, progress=False, out=tmp_path / "local.json")
    args = ["tournament", "--map", "italia", "--players", "2", "--agents", ",".join(AGENTS), "--games", "4",
            "--seed", "7", "--backend", "ray", "--workers", "2", "--no-progress", "--out", str(tmp_path / "ray.json"),
            "--records", str(tmp_path / "records")]
    assert cli_main(args) == 0
    capsys.readouterr()
    on_ray = json.loads((tmp_path / "ray.json").read_text())
    for r in (local, on_ray):
        r.pop("seconds")
    assert on_ray == json.loads(json.dumps(local))
    assert len(list((tmp_path / "records").glob("game_*.json"))) == 4
    # the library call, resuming the ray run's results file: nothing left, same result
    again = run_tournament("italia", 2, AGENTS, 4, seed=7, progress=False, out=tmp_path / "ray.json",
                           resume=True, backend="ray", workers=2)
    again.pop("seconds")
    assert again == on_ray


def test_ray_backend_resumes_a_partial_local_run(local_ray: Any, tmp_path: Path) -> None:
    full = run_tournament("italia", 2, AGENTS, 4, seed=2, progress=False)
    out = tmp_path / "r.json"
    partial = run_tournament("italia", 2, AGENTS, 2, seed=2, progress=False)
    partial.update(games=4, complete=False)  # the first 2 of 4 games, as a save mid-run leaves them
    out.write_text(json.dumps(partial))
    resumed = run_tournament("italia", 2, AGENTS, 4, seed=2, progress=False, out=out, resume=True,
                             backend="ray", workers=2)
    for r in (full, resumed):
        r.pop("seconds")
    assert resumed == full


def test_value_data_on_ray_writes_the_local_shards(local_ray: Any, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture) -> None:
    from concordia_env.training.value import data as value_data

    args = ["--map", "italia", "--players", "2", "--games", "4", "--agents", "heuristic,random", "--shard-size", "2",
            "--every", "3", "--seed", "5", "--no-progress"]
    assert value_data.main(args + ["--out", str(tmp_path / "local")]) == 0
    assert value_data.main(args + ["--backend", "ray", "--out", str(tmp_path / "ray")]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 4 and summary["shards"] == 2
    for name in ("dataset.json", "shard_00000.npz", "shard_00001.npz"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes(), name
    # an unreachable cluster: one line, exit 2, nothing played
    assert value_data.main(args + ["--backend", "ray", "--address", f"127.0.0.1:{_free_port()}",
                                   "--out", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot reach a Ray cluster at 127.0.0.1:") and "\n" not in err
    assert not list((tmp_path / "nowhere").glob("shard_*"))


def test_expert_iteration_selfplay_on_ray_writes_the_local_shards(local_ray: Any, tmp_path: Path) -> None:
    from concordia_env.training import expert_iteration as X

    args = X.build_parser().parse_args(["--map", "italia", "--players", "2", "--games", "2", "--simulations", "8",
                                        "--max-turns", "200", "--shard-size", "2", "--out", str(tmp_path / "x")])
    cfg = X.selfplay_config(args)
    local = X.run_selfplay(cfg, tmp_path / "local", 0, X.Expert(), 1, progress=False)
    remote = X.run_selfplay(cfg, tmp_path / "ray", 0, X.Expert(), 1, progress=False, backend="ray")
    assert local is not None and remote is not None and local["positions"] == remote["positions"] > 100
    shard = Path("gen_000") / "selfplay" / "shard_00000.npz"
    assert (tmp_path / "ray" / shard).read_bytes() == (tmp_path / "local" / shard).read_bytes()


def test_cli_ray_bad_address_missing_ray_and_usage(local_ray: Any, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    base = ["tournament", "--map", "italia", "--players", "2", "--agents", "random,random", "--games", "2",
            "--no-progress"]
    port = _free_port()
    assert cli_main(base + ["--backend", "ray", "--address", f"127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach a Ray cluster" in err
    assert cli_main(base + ["--backend", "ray", "--address", "nonsense"]) == 2
    assert "bad Ray address" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        cli_main(base + ["--address", "auto"])
    assert exc.value.code == 2
    assert "--address needs --backend ray" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert cli_main(base + ["--backend", "ray"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install ".[ray]" in the concordia-env source folder' in err
    with pytest.raises(ImportError, match="concordia-env"):
        ray_backend.require_ray()
    with pytest.raises(ValueError, match="backend must be one of"):
        run_tournament("italia", 2, ["random", "random"], 2, progress=False, backend="spark")


def test_the_rllib_example_in_the_docs_runs(local_ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _rllib()
    import re

    text = (Path(__file__).parent.parent / "docs" / "integrations.md").read_text()
    section = text.split("\n## RLlib\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"^```py\n(.*?)^```", section, flags=re.S | re.M)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(ray, "init", lambda *a, **k: None)  # the module's instance stands in for it
    exec(compile(block, "docs/integrations.md RLlib example", "exec"), {"__name__": "__doc_example__"})
    assert (tmp_path / "rllib_policy.npz").is_file()
    from concordia_env.agents.base import make_agent

    assert make_agent(f"policy:path={tmp_path / 'rllib_policy.npz'}") is not None
