"""Game records (play, save, load, exact replay, corruption checks) and tournaments
(seat rotation, worker independence, Wilson intervals, OpenSkill ratings)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

import concordia_env.agents.base
from concordia_env import GOD_COLUMNS, NUM_ACTIONS
from concordia_env.agents import Agent, make_agent
from concordia_env.agents.base import check_mask
from concordia_env.arena.records import (
    RECORD_FORMAT,
    AgentError,
    agent_seed,
    load_record,
    play_game,
    replay_states,
    replay_steps,
    save_record,
    verify_record,
)
from concordia_env.arena.results import RECORDS_MANIFEST
from concordia_env.arena.tournament import (
    format_table,
    run_tournament,
    seat_specs,
    wilson_interval,
    write_results,
)


class FirstAgent(Agent):
    """Always the lowest legal action id: a deterministic, very weak player."""

    name = "first"

    def __init__(self, seed: int = 0) -> None:
        pass

    def act(self, observation, action_mask, state=None) -> int:
        return int(check_mask(action_mask)[0])


class IllegalAgent(Agent):
    """Answers with an action that is never legal for a card play."""

    name = "illegal"

    def __init__(self, seed: int = 0) -> None:
        pass

    def act(self, observation, action_mask, state=None) -> int:
        return int(np.flatnonzero(np.asarray(action_mask) == 0)[-1])


@pytest.fixture
def with_first_agent(monkeypatch):
    """Adds the spec 'first' to the agent registry (in-process only: use workers=1)."""
    monkeypatch.setitem(concordia_env.agents.base.AGENTS, "first", FirstAgent)


def randoms(n: int) -> list[Agent]:
    return [make_agent("random") for _ in range(n)]


# ---------------------------------------------------------------- records
@pytest.mark.parametrize("map_name,players,seed", [("italia", 2, 1), ("italia", 4, 2), ("imperium", 3, 3),
                                                   ("imperium", 5, 4)])
def test_record_round_trip_and_exact_replay(tmp_path, map_name, players, seed):
    record = play_game(map_name, players, seed, randoms(players))
    assert record["format"] == RECORD_FORMAT and record["version"] == 1
    assert (record["map"], record["players"], record["seed"]) == (map_name, players, seed)
    assert record["agents"] == ["random"] * players
    result = record["result"]
    assert not result["truncated"] and result["winner"] == result["ranking"][0]
    assert len(result["vp_breakdown"]) == players and all(len(r) == len(GOD_COLUMNS) for r in result["vp_breakdown"])
    assert [sum(r) for r in result["vp_breakdown"]] == result["scores"]

    path = tmp_path / "game.json"
    save_record(record, path)
    loaded = load_record(path)
    assert loaded == record
    state = verify_record(loaded)
    assert state.is_terminal() and state.scores() == result["scores"]
    assert int(state.field("turn")) == result["turns"]

    steps = list(replay_states(loaded))
    assert [a for a, _ in steps] == record["actions"]
    assert steps[-1][1] == state
    # states are copies: the first one is not the final one
    assert not steps[0][1].is_terminal()


def test_same_seed_same_game_and_agent_seeds():
    a = play_game("italia", 2, 7, randoms(2))
    b = play_game("italia", 2, 7, randoms(2))
    assert a == b
    assert play_game("italia", 2, 8, randoms(2))["actions"] != a["actions"]
    seeds = {agent_seed(s, k) for s in range(5) for k in range(5)}
    assert len(seeds) == 25 and all(0 <= x < 2**63 for x in seeds)
    assert agent_seed(3, 1) == agent_seed(3, 1)
    assert agent_seed(-1, 0) >= 0  # negative game seeds are allowed by the core


def test_one_agent_object_in_every_seat_is_deterministic():
    shared = make_agent("random")
    assert play_game("italia", 3, 5, [shared] * 3) == play_game("italia", 3, 5, [shared] * 3)


def test_truncated_game():
    record = play_game("imperium", 4, 0, randoms(4), max_turns=25)
    result = record["result"]
    assert result["truncated"] and result["winner"] is None and result["turns"] == 25
    assert not verify_record(record).is_terminal()


def test_on_step_sees_the_state_before_each_action():
    seen = []
    record = play_game("italia", 2, 0, randoms(2),
                       on_step=lambda st, seat, a: seen.append((seat, a, st.action_to_string(a))))
    assert [a for _, a, _ in seen] == record["actions"]
    steps = list(replay_steps(record))
    assert [(s.player, s.action, s.text) for s in steps] == seen


def test_illegal_agent_action_names_agent_seat_and_action():
    agents_ = [make_agent("random"), IllegalAgent()]
    with pytest.raises(AgentError, match=r"'illegal' at seat 1 chose illegal action \d+"):
        # seat 1 decides within its first turn whoever starts
        play_game("italia", 2, 0, agents_)


def test_wrong_agent_count():
    with pytest.raises(ValueError, match="2 players need 2 agents, got 3"):
        play_game("italia", 2, 0, randoms(3))


@pytest.fixture(scope="module")
def record():
    return play_game("italia", 2, 11, randoms(2))


def _changed(record, edit):
    bad = copy.deepcopy(record)
    edit(bad)
    return bad


@pytest.mark.parametrize("edit,message", [
    (lambda r: r["result"]["scores"].__setitem__(0, r["result"]["scores"][0] + 1), "'scores'"),
    (lambda r: r["result"].__setitem__("turns", r["result"]["turns"] + 1), "'turns'"),
    (lambda r: r["result"].__setitem__("winner", r["result"]["ranking"][1]), "'winner'"),
    (lambda r: r["result"]["vp_breakdown"][1].__setitem__(0, 99), "'vp_breakdown'"),
    (lambda r: r["result"].__setitem__("truncated", True), "truncated"),
    (lambda r: r["actions"].pop(), "still running"),
    (lambda r: r["actions"].append(0), r"record action \d+ \(0\) is illegal"),
    (lambda r: r.__setitem__("seed", r["seed"] + 1), r"record action \d+ .* is illegal|but the replay gives"),
    (lambda r: r.__setitem__("format", "something/else"), "format"),
    (lambda r: r.__setitem__("version", 2), "version"),
    (lambda r: r.pop("actions"), r"lacks field\(s\) \['actions'\]"),
    (lambda r: r["result"].pop("ranking"), r"lacks field\(s\) \['ranking'\]"),
    (lambda r: r.__setitem__("players", "2"), "'players' must be an int"),
    (lambda r: r.__setitem__("players", 6), "cannot be played by 6 players"),
    (lambda r: r.__setitem__("map", "atlantis"), "unknown map"),
    (lambda r: r["actions"].__setitem__(3, 1.5), "'actions' must be a list of ints"),
    (lambda r: r["actions"].__setitem__(3, 10**6), "outside the action ids"),
    (lambda r: r.__setitem__("agents", ["random"]), "'agents' must be a list of 2 names"),
    (lambda r: r["result"].__setitem__("ranking", [0, 0]), "ordering of seats"),
    (lambda r: r.__setitem__("intermediate_scoring", 0), "true or false"),
])
def test_corrupt_records_are_rejected(record, edit, message):
    verify_record(record)  # the pristine record passes
    with pytest.raises(ValueError, match=message):
        verify_record(_changed(record, edit))


def test_changed_action_is_caught(record):
    """One action changed, to another legal choice or to an id illegal there, is caught."""
    # the first decision after move 40 with a real choice
    i, state = next((i, s) for i, (_, s) in enumerate(replay_states(record))
                    if i >= 40 and len(s.legal_actions()) > 1)
    i += 1  # the action chosen in `state`
    other_legal = next(a for a in state.legal_actions() if a != record["actions"][i])
    illegal = next(a for a in range(NUM_ACTIONS) if a not in state.legal_actions())
    for replacement in (other_legal, illegal):
        bad = _changed(record, lambda r, a=replacement: r["actions"].__setitem__(i, a))
        with pytest.raises(ValueError, match="is illegal|but the replay gives|still running|truncated"):
            verify_record(bad)


def test_load_record_file_errors(tmp_path, record):
    with pytest.raises(FileNotFoundError):
        load_record(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_record(tmp_path / "junk.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="JSON object"):
        load_record(tmp_path / "list.json")
    path = tmp_path / "bad.json"
    save_record(_changed(record, lambda r: r.pop("seed")), path)
    with pytest.raises(ValueError, match=r"\['seed'\]"):
        load_record(path)


# ---------------------------------------------------------------- tournaments
def test_seat_rotation():
    specs = ["a", "b", "c"]
    assert [seat_specs(specs, g) for g in range(4)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_seat_rotation_balance(with_first_agent, tmp_path):
    result = run_tournament("imperium", 3, ["random", "first", "random"], games=6, seed=3, progress=False,
                            record_dir=tmp_path)
    per = result["per_agent"]
    assert list(per) == ["random", "first"]  # a spec listed twice is one entry
    assert per["first"]["games"] == 6 and per["first"]["seat_games"] == [2, 2, 2]
    assert per["random"]["games"] == 12 and per["random"]["seat_games"] == [4, 4, 4]
    assert sum(a["wins"] for a in per.values()) == 6
    assert all(sum(a["seat_wins"]) == a["wins"] for a in per.values())
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [f"game_{g:05d}.json" for g in range(6)] + [RECORDS_MANIFEST]
    files.remove(RECORDS_MANIFEST)
    for g, name in enumerate(files):
        rec = load_record(tmp_path / name)
        verify_record(rec)
        assert rec["seed"] == 3 + g and rec["agents"] == seat_specs(["random", "first", "random"], g)


def test_results_identical_for_any_worker_count(tmp_path):
    args = ("italia", 2, ["random", "random"], 6)
    one = run_tournament(*args, seed=5, workers=1, progress=False, record_dir=tmp_path / "w1")
    two = run_tournament(*args, seed=5, workers=2, progress=False, record_dir=tmp_path / "w2")
    assert one.pop("seconds") >= 0 and two.pop("seconds") >= 0
    assert one == two
    assert len(one["per_game"]) == len(one["rating_history"]) == 6
    assert one["per_game"] == two["per_game"] and one["rating_history"] == two["rating_history"]
    for g in range(6):
        name = f"game_{g:05d}.json"
        assert (tmp_path / "w1" / name).read_text() == (tmp_path / "w2" / name).read_text()


def test_per_game_and_rating_history(with_first_agent, tmp_path):
    specs = ["random", "first", "random"]
    result = run_tournament("imperium", 3, specs, games=6, seed=3, progress=False, record_dir=tmp_path)
    per_game, history, per = result["per_game"], result["rating_history"], result["per_agent"]
    assert len(per_game) == len(history) == 6
    wins = {spec: 0 for spec in per}
    for g, game in enumerate(per_game):
        assert (game["game"], game["seed"]) == (g, 3 + g)
        assert game["seats"] == seat_specs(specs, g)  # the rotation
        rec = load_record(tmp_path / f"game_{g:05d}.json")["result"]
        assert (game["scores"], game["ranking"], game["truncated"], game["turns"]) == (
            rec["scores"], rec["ranking"], rec["truncated"], rec["turns"])
        assert game["winner_seat"] == rec["winner"] == game["ranking"][0]
        assert game["winner"] == game["seats"][game["winner_seat"]]
        wins[game["winner"]] += 1
        assert set(history[g]) == set(per)
    assert wins == {spec: a["wins"] for spec, a in per.items()}
    assert history[-1] == {spec: [a["mu"], a["sigma"]] for spec, a in per.items()}
    # ratings move game by game: the weak agent only loses, so its mu only falls
    first_mu = [h["first"][0] for h in history]
    assert first_mu == sorted(first_mu, reverse=True) and first_mu[0] < 25
    assert json.loads(json.dumps(result)) == result  # plain JSON types throughout


def test_truncated_games_in_per_game():
    result = run_tournament("italia", 2, ["random", "random"], games=2, progress=False, max_turns=10)
    for game in result["per_game"]:
        assert game["truncated"] and game["turns"] == 10
        assert game["winner_seat"] is None and game["winner"] is None
    # not rated: the history stays at the initial rating
    assert result["rating_history"] == [{"random": [pytest.approx(25.0), pytest.approx(25 / 3)]}] * 2


def test_wilson_interval_known_values():
    # z = 1.96, z^2 = 3.8416. 0 of 10: upper = (z^2/n) / (1 + z^2/n) = 0.38416 / 1.38416 = 0.27754
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.27754, abs=1e-4))
    # 5 of 10: centre 0.5, half = 1.96 * sqrt(0.025 + 0.009604) / 1.38416 = 0.26341
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.23659, abs=1e-4) and hi == pytest.approx(0.76341, abs=1e-4)
    # all wins mirrors no wins
    assert wilson_interval(10, 10) == (pytest.approx(0.72246, abs=1e-4), 1.0)
    # 1 of 4: centre (0.25 + 0.4802) / 1.9604 = 0.37247, half = 1.96 * sqrt(0.046875 + 0.2401) / 1.9604 = 0.53562
    assert wilson_interval(1, 4) == (pytest.approx(0.04559, abs=1e-4), pytest.approx(0.69936, abs=1e-4))
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_openskill_rates_the_stronger_agent_higher(with_first_agent, tmp_path):
    result = run_tournament("italia", 2, ["random", "first"], games=6, progress=False)
    per = result["per_agent"]
    # choosing the first legal action never builds a house: random beats it every game
    assert per["random"]["wins"] == 6 and per["first"]["wins"] == 0
    assert per["random"]["mu"] > 25 > per["first"]["mu"]
    assert per["random"]["ordinal"] == pytest.approx(per["random"]["mu"] - 3 * per["random"]["sigma"])
    assert per["random"]["sigma"] < 25 / 3
    assert per["random"]["mean_rank"] == 1.0 and per["first"]["mean_rank"] == 2.0
    assert per["random"]["win_rate"] == 1.0 and per["random"]["win_rate_ci95"][1] == 1.0
    table = format_table(result)
    assert table.index("random") < table.index("first")  # sorted by ordinal
    path = tmp_path / "results.json"
    write_results(result, path)
    assert json.loads(path.read_text()) == json.loads(json.dumps(result))


def test_spec_in_every_seat_keeps_its_rating():
    result = run_tournament("italia", 2, ["random", "random"], games=2, progress=False)
    a = result["per_agent"]["random"]
    assert a["games"] == 4 and a["wins"] == 2 and a["mu"] == pytest.approx(25.0)


def test_truncated_games_count_but_are_not_rated():
    result = run_tournament("italia", 2, ["random", "random"], games=2, progress=False, max_turns=10)
    a = result["per_agent"]["random"]
    assert result["truncated"] == 2
    assert a["games"] == 4 and a["wins"] == 0 and a["finished"] == 0 and a["mean_vp"] is None
    assert (a["mu"], a["sigma"]) == (pytest.approx(25.0), pytest.approx(25 / 3))
    assert "2 truncated" in format_table(result)


@pytest.mark.parametrize("kwargs,message", [
    (dict(games=5), "multiple of the 2 players.*try 4 or 6"),
    (dict(games=1), "try 2"),
    (dict(games=0), "positive int"),
    (dict(agent_specs=["random"] * 3), "2 players need 2 agent specs"),
    (dict(agent_specs=["random", "nosuchagent"]), "unknown agent 'nosuchagent'"),
    (dict(num_players=5), "cannot be played by 5"),
    (dict(workers=0), "workers"),
])
def test_bad_tournament_arguments(kwargs, message):
    args = dict(map_name="italia", num_players=2, agent_specs=["random", "random"], games=4, progress=False)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        run_tournament(**args)
