"""The learned completion: in-turn decisions distilled from the heuristic into a policy head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

from test_az import random_net  # noqa: E402

from concordia_env.agents.base import make_agent  # noqa: E402
from concordia_env.agents.value_net import ValueNet  # noqa: E402
from concordia_env.arena.records import play_game, save_record  # noqa: E402
from concordia_env.training.turn_td import completion  # noqa: E402
from concordia_env.turns import TurnGenerator  # noqa: E402


def test_in_turn_decisions_become_a_policy_head_the_candidate_search_uses(tmp_path: Path):
    for seed in range(2):
        record = play_game("italia", 2, seed, [make_agent("heuristic"), make_agent("heuristic")], max_turns=30)
        save_record(record, tmp_path / f"game_{seed:05d}.json")
    data = completion.completion_data(sorted(tmp_path.glob("game_*.json")), per_game=5, seed=0)
    groups = int(data["group"].max()) + 1
    assert groups == 10 and len(data["phase"]) == groups
    assert np.allclose(np.bincount(data["group"], weights=data["target"]), 1.0)  # one target per decision
    assert 0 not in data["phase"]  # no card choice: those are the candidates' own choice
    model, report = completion.train(data, random_net(2, policy=False), epochs=1, lr=1e-3, batch=4, seed=0)
    assert report["decisions"] == groups and 0.0 <= report["held_out"]["agreement"] <= 1.0
    net = completion.to_net(model, "italia", [2], {"trainer": "test"})
    net.save(tmp_path / "c")
    loaded = ValueNet.load(tmp_path / "c")
    assert loaded.has_policy and loaded.players == (2,)
    agent = make_agent(f"turn:net={tmp_path / 'c'}:w=0:complete=net:completer={tmp_path / 'c'}")
    record = play_game("italia", 2, 7, [agent, make_agent("heuristic")], max_turns=8)
    assert record["result"]["turns"] == 8
    assert TurnGenerator("italia", completion=loaded).completion[3].shape == (1,)  # ranks by the policy head


def test_records_without_an_in_turn_choice_are_refused(tmp_path: Path):
    with pytest.raises(ValueError, match="no in-turn decision"):
        completion.completion_data([], per_game=3, seed=0)
