"""The learned completion: in-turn decisions distilled from the heuristic into a policy head."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402
from test_az import random_net  # noqa: E402

from concordia_env import engine as E  # noqa: E402
from concordia_env.agents.base import make_agent  # noqa: E402
from concordia_env.agents.heuristic import position_value  # noqa: E402
from concordia_env.agents.value_net import ValueNet  # noqa: E402
from concordia_env.arena.records import initial_state, load_record, play_game, save_record  # noqa: E402
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


def _records(tmp_path: Path, map_name: str = "italia", players: int = 2, games: int = 2) -> list[Path]:
    for seed in range(games):
        record = play_game(map_name, players, seed, [make_agent("heuristic") for _ in range(players)], max_turns=30)
        save_record(record, tmp_path / f"game_{seed:05d}.json")
    return sorted(tmp_path.glob("game_*.json"))


def test_card_choices_are_candidate_turns_valued_by_the_heuristic_and_a_value_target_trains(tmp_path: Path):
    files = _records(tmp_path)
    data = completion.completion_data(files, per_game=0, seed=0, card_choices=1.0)
    assert set(data["phase"].tolist()) == {E.PH_PLAY}
    first = initial_state(load_record(files[0]))  # the first group: the game's first card choice
    gen = TurnGenerator("italia", completion.CARD_CHOICE_CANDIDATES)
    n = gen.generate(first.s, first.game.tables)
    vp = np.zeros(E.NGODS, np.int32)
    ends = [position_value(gen.states[k], first.game.tables, first.current_player, vp) for k in range(n)]
    rows = data["group"] == 0
    np.testing.assert_allclose(data["value"][rows], ends, rtol=1e-6)
    np.testing.assert_array_equal(data["obs"][rows], gen.observations(first.game.tables, first.current_player)[:n])
    assert data["target"][rows][int(np.argmax(ends))] > 0
    both = completion.completion_data(files, per_game=3, seed=0, card_choices=0.5)
    model, report = completion.train(both, None, epochs=2, lr=1e-3, batch=4, seed=0, target="value", hidden=16)
    assert report["held_out"]["regret"] >= 0 and report["epochs"][-1]["held_out_regret"] >= 0
    net = completion.to_net(model, "italia", [2], {"trainer": "test"})
    # its own completions: the candidates a network proposes, valued by the heuristic
    own = completion.completion_data(files[:1], per_game=0, seed=0, card_choices=1.0, completer=net)
    mine = TurnGenerator("italia", completion.CARD_CHOICE_CANDIDATES, completion=net)
    m = mine.generate(first.s, first.game.tables)
    np.testing.assert_array_equal(own["obs"][own["group"] == 0], mine.observations(first.game.tables, first.current_player)[:m])
    # continued: the policy head is carried over, so the network ranks as before
    again = completion.CompletionModel(net)
    with torch.no_grad():
        np.testing.assert_allclose(again.logits(both["obs"][:20]).numpy(), model.logits(both["obs"][:20]).numpy(),
                                   rtol=1e-4, atol=1e-4)


def test_the_command_names_a_record_of_another_game_and_bad_shares(tmp_path: Path, capsys):
    _records(tmp_path, "imperium", 3, games=1)
    rc = completion.main(["--records", str(tmp_path), "--map", "italia", "--players", "2", "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "a game of imperium with 3 players" in err
    assert not (tmp_path / "c.npz").exists()
    with pytest.raises(SystemExit) as exc:
        completion.main(["--records", str(tmp_path), "--map", "imperium", "--players", "3", "--card-choices", "1.5",
                         "--out", str(tmp_path / "c")])
    assert exc.value.code == 2 and "must be a share from 0 to 1" in capsys.readouterr().err


def test_the_command_trains_a_value_completion_the_turn_agent_plays(tmp_path: Path, capsys):
    _records(tmp_path, games=1)
    out = tmp_path / "net" / "c"
    rc = completion.main(["--records", str(tmp_path), "--map", "italia", "--players", "2", "--hidden", "8",
                          "--per-game", "3", "--card-choices", "0.5", "--epochs", "2", "--threads", "1",
                          "--out", str(out)])
    captured = capsys.readouterr()
    assert rc == 0 and captured.err.count("'epoch'") == 2 and "card choices" in captured.err
    net = ValueNet.load(out)
    assert net.has_policy and net.metadata["target"] == "value" and net.metadata["hidden"] == 8
    assert net.metadata["card_choices"] == 0.5 and 0 <= net.metadata["held_out_agreement"] <= 1
    agent = make_agent(f"turn:net=none:w=1:complete=net:completer={out}")
    record = play_game("italia", 2, 3, [agent, make_agent("heuristic")], max_turns=6)
    assert record["result"]["turns"] == 6
