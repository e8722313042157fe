"""The arena's one result type: a record's result block and a results file's per-game entry are
both views of a GameResult, and it reads back what it writes."""

from __future__ import annotations

from concordia_env.agents import make_agent
from concordia_env.arena.game_result import GameResult
from concordia_env.arena.records import final_state, partial_record, play_game


def test_a_finished_game_round_trips_and_its_entry_names_the_winner_by_spec():
    specs = ["heuristic", "random"]
    record = play_game("italia", 2, 5, [make_agent(s) for s in specs])
    result = GameResult.from_json(record["result"])
    assert result.to_json() == record["result"] and not result.truncated and result.winner is not None
    assert result == GameResult.from_state(final_state(record), truncated=False)
    entry = result.entry({"game": 3, "seed": 5}, specs)
    assert list(entry) == ["game", "seed", "seats", "scores", "ranking", "winner_seat", "winner", "truncated",
                           "turns"]
    assert entry["winner"] == specs[entry["winner_seat"]] and entry["scores"] == record["result"]["scores"]
    timed = result.timed([10, 12], [0.5, 0.25])
    assert GameResult.from_json(timed.to_json()) == timed
    assert timed.entry({"game": 0}, specs)["act_seconds"] == [0.5, 0.25]


def test_a_left_game_is_unfinished_truncated_and_has_no_winner_in_its_entry():
    record = play_game("imperium", 3, 1, [make_agent("random") for _ in range(3)], max_turns=4)
    partial = partial_record("imperium", 3, 1, record["agents"], record["actions"][:20])
    result = GameResult.from_json(partial["result"])
    assert result.unfinished and result.truncated and result.to_json() == partial["result"]
    entry = result.entry({"game": 0, "seed": 1}, ["random"] * 3)
    assert entry["truncated"] is True and (entry["winner"] is None) == (entry["winner_seat"] is None)


def test_training_targets_come_from_the_result():
    # seats 0..2 with 70, 82, 82 VP; the tie between seats 1 and 2 broken for seat 2
    result = GameResult(scores=(70, 82, 82), ranking=(2, 1, 0), winner=2, truncated=False, turns=40)
    assert result.wins().tolist() == [0.0, 0.0, 1.0]
    assert result.margins().tolist() == [-12.0, 0.0, 0.0]
    assert result.rewards("rank").tolist() == [-1.0, 0.0, 1.0]
    assert result.rewards("win").tolist() == [-0.5, -0.5, 1.0]
