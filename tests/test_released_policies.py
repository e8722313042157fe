"""The released policies (agents/policies/ppo_*.zip): present, small, loadable, legal in every player
count, made by the command the README gives, and the README's figures match the committed evaluation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sb3_contrib")  # the "train" extra

from concordia_env.agents import make_agent  # noqa: E402
from concordia_env.agents.policy import PolicyAgent, released_policy_path  # noqa: E402
from concordia_env.arena.records import play_game  # noqa: E402
from concordia_env.arena.tournament import run_tournament  # noqa: E402
from concordia_env.data import MAP_NAMES, load_map  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "training" / "release"
README = (ROOT / "README.md").read_text(encoding="utf-8")
MAX_BYTES = 5_000_000


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_released_file_is_small_and_loads(map_name):
    path = released_policy_path(map_name)
    assert path.is_file(), path
    assert path.stat().st_size < MAX_BYTES
    agent = PolicyAgent(path)
    assert agent.policy.algorithm == "MaskablePPO" and agent.policy.maskable
    assert type(agent.model.policy.features_extractor).__name__ == "ObservationScaler"


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_ppo_spec_plays_every_player_count(map_name):
    for n in load_map(map_name).players:
        result = run_tournament(map_name, n, ["ppo"] + ["random"] * (n - 1), games=n, seed=7, progress=False)
        assert result["truncated"] == 0
        assert result["per_agent"]["ppo"]["games"] == n


def test_ppo_reads_the_map_and_is_deterministic():
    a, b = make_agent("ppo", seed=1), make_agent("ppo", seed=2)
    for map_name in MAP_NAMES:
        n = min(load_map(map_name).players)
        r1 = play_game(map_name, n, seed=3, agents=[a] + [make_agent("heuristic") for _ in range(n - 1)])
        r2 = play_game(map_name, n, seed=3, agents=[b] + [make_agent("heuristic") for _ in range(n - 1)])
        assert r1["actions"] == r2["actions"]  # deterministic play does not depend on the agent seed


def test_concordia_tournament_takes_the_ppo_spec(tmp_path):
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "concordia_env.cli", "tournament", "--map", "italia", "--players", "2",
                           "--agents", "ppo,random", "--games", "2", "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["per_agent"]["ppo"]["games"] == 2


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_release_was_made_by_the_readme_command(map_name):
    config = json.loads((RELEASE / f"{map_name}_config.json").read_text())
    wall = json.loads((RELEASE / f"{map_name}_wall_time.json").read_text())
    assert config["map"] == map_name and config["resume"] is None
    assert wall["timesteps"] >= config["total_steps"]
    command = config["command"].replace("training/train_ppo.py", "python training/train_ppo.py", 1)
    assert command in README, command
    assert f"{wall['seconds'] / 60:.0f} min" in README


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_readme_evaluation_figures_match_the_committed_results(map_name):
    results = json.loads((RELEASE / f"eval_{map_name}.json").read_text())
    assert results["policy"] == f"agents/policies/ppo_{map_name}.zip" and results["deterministic"]
    assert {m["players"] for m in results["matchups"]} == set(load_map(map_name).players)
    for m in results["matchups"]:
        lo, hi = m["win_rate_ci95"]
        claim = (f"| {map_name.capitalize()} {m['players']} | {m['opponent']} | **{m['wins']} of {m['games']}** "
                 f"({100 * m['win_rate']:.1f}%, 95% CI {100 * lo:.1f}–{100 * hi:.1f}%) | {m['mean_vp']:.1f} |")
        assert claim in README, claim
        assert m["tournament"]["truncated"] == 0
