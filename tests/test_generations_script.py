"""results/az_values/generations.sh, expert iteration with values at scale, end to end at a tiny scale: a
generation plays az self-play with the last network, trains a network on it by TD(lambda) from that network,
gates it at equal simulations and against mcts1000, and keeps it when it does at least as well."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

pytest.importorskip("torch")

from concordia_env.agents.value_net import ValueNet  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def test_a_tiny_generation_trains_gates_and_keeps_its_network(tmp_path: Path) -> None:
    env = dict(os.environ, PY=sys.executable, MAP="italia", PLAYERS="2", GENERATIONS="1", ROOT=str(tmp_path / "gens"),
               GAMES="2", DATA_S="300", STEPS="3", BATCH="32", TRAIN_S="300", DEALS="1", EVAL_S="300", SIMS="5",
               SELF_SIMS="5", WORKERS="1", DEVICE="cpu", KEEP_ABOVE="0", WORK=str(tmp_path / "unused"))
    proc = subprocess.run(["bash", str(ROOT / "results" / "az_values" / "generations.sh")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    gen = tmp_path / "gens" / "gen_1"
    (line,) = (tmp_path / "gens" / "generations.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["generation"] == 1 and record["kept"] is True and record["net"] == str(gen / "value_italia")
    assert 0 <= float(record["gate200"]) <= 1 and 0 <= float(record["eval"]) <= 1
    assert proc.stdout.strip().endswith(f"last kept: {gen / 'value_italia'}")
    net = ValueNet.load(gen / "value_italia")
    assert net.map_name == "italia" and set(net.heads) == {"win", "margin"}
    settings = json.loads((gen / "value_italia_config.json").read_text())["arguments"]
    assert settings["bootstrap"] == str(ROOT / "results" / "az_values" / "value_italia")
    # self-play by the last network, with exploration at the root
    dataset = json.loads((gen / "work" / "data" / "dataset.json").read_text())
    assert dataset["agents"] == [f"az:net={ROOT / 'results' / 'az_values' / 'value_italia'}:simulations=5:root_noise=0.25"]
    for name, opponent, sims in (("gate200", "mcts:iterations=200", 200), ("eval", "mcts:iterations=1000", 5)):
        with tarfile.open(gen / f"{name}.tgz") as tar:
            config = json.load(tar.extractfile(f"{name}/config.json"))  # type: ignore[arg-type]
        assert [a["spec"] for a in config["agents"]] == [f"az:net={gen / 'value_italia'}:simulations={sims}", opponent]
