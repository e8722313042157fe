"""The released learned nets (concordia_env/agents/policies/az_{map}.npz + .json) are the very nets the
expert-iteration runs in releases/az_{map}/ logged: same bytes (sha256), same data sizes, and
the run's recorded command says how to make them again."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path

import pytest

from concordia_env.agents.az import released_net_path
from concordia_env.data import MAP_NAMES

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "releases"


def _log(map_name: str) -> list[dict]:
    lines = (RELEASE / f"az_{map_name}" / "log.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_released_net_is_the_logged_generation(map_name):
    npz = released_net_path(map_name)
    header = json.loads(npz.with_suffix(".json").read_text())
    digest = hashlib.sha256(npz.read_bytes()).hexdigest()
    assert header["npz_sha256"] == digest
    assert header["map"] == map_name
    generation = header["metadata"]["generation"]
    trained = [e for e in _log(map_name) if e["step"] == "train" and e["generation"] == generation]
    assert len(trained) == 1 and trained[0]["net_sha256"] == digest
    # the gate accepted it (the first generation is gated against the baselines only)
    gates = [e for e in _log(map_name) if e["step"] == "gate" and e["generation"] == generation]
    assert gates and gates[0]["accepted"] is True and gates[0]["net_sha256"] == digest


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_release_command_matches_the_run_and_the_net(map_name):
    folder = RELEASE / f"az_{map_name}"
    run = json.loads((folder / "run.json").read_text())
    argv = shlex.split(run["command"])
    assert argv[:3] == ["python", "-m", "concordia_env.training.expert_iteration"]
    assert argv[argv.index("--map") + 1] == map_name == run["arguments"]["map"]
    assert int(argv[argv.index("--games") + 1]) == run["arguments"]["games"]
    header = json.loads(released_net_path(map_name).with_suffix(".json").read_text())
    selfplay = [e for e in _log(map_name) if e["step"] == "selfplay" and e["generation"] == 0]
    trained = [e for e in _log(map_name) if e["step"] == "train" and e["generation"] == 0]
    assert selfplay[0]["games"] == run["arguments"]["games"]
    # the net's header carries what its training read (games whose positions it saw)
    assert trained[0]["games"] == header["metadata"]["games"] <= selfplay[0]["games"]
    assert selfplay[0]["positions"] == trained[0]["positions"] == header["metadata"]["positions"]
    assert header["architecture"]["layer_sizes"][1:] == run["arguments"]["hidden"]
    assert (folder / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
