"""results/az_values/generations.sh, expert iteration with values at scale, end to end at a tiny scale: a
generation plays az self-play with the last network, trains a network on it by TD(lambda) from that network,
gates it at equal simulations and against mcts1000, and keeps it when it does at least as well; the same command
resumes, and a later generation trains on the window of its own and the previous generation's games."""

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
    script = ROOT / "results" / "az_values" / "generations.sh"
    env = dict(os.environ, PY=sys.executable, MAP="italia", PLAYERS="2", GENERATIONS="1", ROOT=str(tmp_path / "gens"),
               GAMES="2", DATA_S="300", STEPS="3", BATCH="32", TRAIN_S="300", DEALS="1", EVAL_S="300", SIMS="5",
               SELF_SIMS="5", WORKERS="1", DEVICE="cpu", KEEP_ABOVE="0", WORK=str(tmp_path / "unused"))
    # a training cut short by its time limit: no line for the generation, an error, and the same command resumes
    cut = subprocess.run(["bash", str(script)], env=dict(env, TRAIN_S="1"), cwd=ROOT, capture_output=True, text=True,
                         timeout=900)
    assert cut.returncode == 1 and "generation 1 trained no network" in cut.stderr, cut.stderr[-2000:]
    assert not (tmp_path / "gens" / "generations.jsonl").exists()
    proc = subprocess.run(["bash", str(script)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    gen = tmp_path / "gens" / "gen_1"
    (line,) = (tmp_path / "gens" / "generations.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["generation"] == 1 and record["kept"] is True and record["net"] == str(gen / "value_italia")
    assert record["data"] == [str(gen / "work" / "data")] and record["workers"] == 1 and record["wall_s"] > 0
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

    # the same command again plays nothing and knows what it kept; with GENERATIONS=2 it goes on to generation 2,
    # which plays from generation 1's network with the next seed and trains on both generations' games
    again = subprocess.run(["bash", str(script)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and again.stdout.strip() == f"last kept: {gen / 'value_italia'}", again.stderr
    env.update(GENERATIONS="2", KEEP_ABOVE="2")  # the start's share set above any: generation 1 is not kept now
    more = subprocess.run(["bash", str(script)], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert more.returncode == 0, more.stderr[-2000:]
    first, second = [json.loads(t) for t in (tmp_path / "gens" / "generations.jsonl").read_text().splitlines()]
    assert first == record
    gen2 = tmp_path / "gens" / "gen_2"
    assert second["generation"] == 2 and second["kept"] is False
    assert second["data"] == [str(gen2 / "work" / "data"), str(gen / "work" / "data")]
    dataset = json.loads((gen2 / "work" / "data" / "dataset.json").read_text())
    start = ROOT / "results" / "az_values" / "value_italia"
    assert dataset["seed"] == 1 and dataset["agents"] == [f"az:net={start}:simulations=5:root_noise=0.25"]
    trained = json.loads((gen2 / "value_italia_config.json").read_text())
    assert trained["arguments"]["data"] == second["data"] and trained["arguments"]["bootstrap"] == str(start)
    assert trained["data"]["games"] == 4
    assert more.stdout.strip().endswith(f"last kept: {start}")


def test_the_committed_generations_match_their_gates() -> None:
    """Each line of results/az_values/generations/italia/generations.jsonl has its generation's gates as packed in
    its eval.tgz and gate200.tgz (the share of az's wins over every chunk), and its network loads."""
    folder = ROOT / "results" / "az_values" / "generations" / "italia"
    records = [json.loads(t) for t in (folder / "generations.jsonl").read_text().splitlines()]
    assert [r["generation"] for r in records] == list(range(1, len(records) + 1)) and len(records) >= 3
    for record in records:
        gen = folder / f"gen_{record['generation']}"
        for name in ("gate200", "eval"):
            wins = games = 0
            with tarfile.open(gen / f"{name}.tgz") as tar:
                for member in tar.getmembers():
                    if member.name.endswith(".json") and "/deals_" in member.name:
                        chunk = json.load(tar.extractfile(member))  # type: ignore[arg-type]
                        (az,) = [v for k, v in chunk["per_agent"].items() if k.startswith("az:")]
                        wins += az["wins"]
                        games += chunk["games"]
            assert games == 100 and f"{wins / games:g}" == f"{float(record[name]):g}", (gen, name)
        assert ValueNet.load(gen / "value_italia").map_name == "italia"
