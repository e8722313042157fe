"""The evaluation harness (concordia_env.arena.evaluation): paired deals with seat rotation,
statistics, worker-count independence, atomic results files and the command line."""

from __future__ import annotations

import json
import math

import pytest

from concordia_env.agents import make_agent
from concordia_env.arena import evaluation as ev
from concordia_env.arena.evaluation import (
    agent_statistics,
    comparable,
    main,
    mean_interval,
    paired_summary,
    run_evaluation,
    schedule,
    t_quantile_975,
)
from concordia_env.arena.records import play_game
from concordia_env.arena.tournament import wilson_interval

LINEUP = ["heuristic", "random"]


@pytest.fixture(scope="module")
def base_run():
    """Italia, 2 players, heuristic vs random, 2 deals from seed 3, one process."""
    return run_evaluation("italia", LINEUP, deals=2, seed=3, workers=1, progress=False)


# ------------------------------------------------------------------ rotation and pairing
def test_schedule_plays_every_deal_once_per_rotation():
    games = schedule(["a", "b", "c"], deals=2, seed=5)
    assert [(k, r, s) for k, r, s, _ in games] == [(0, 0, 5), (0, 1, 5), (0, 2, 5), (1, 0, 6), (1, 1, 6), (1, 2, 6)]
    assert [seats for *_, seats in games[:3]] == [("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")]
    for k in range(2):
        deal = [seats for d, _, _, seats in games if d == k]
        for seat in range(3):  # each entry in each seat exactly once per deal
            assert sorted(seats[seat] for seats in deal) == ["a", "b", "c"]


def test_real_run_is_paired_and_replays_game_by_game(base_run):
    games = base_run["per_game"]
    assert base_run["games"] == len(games) == 4 and [g["game"] for g in games] == [0, 1, 2, 3]
    for k in range(2):
        deal = [g for g in games if g["deal"] == k]
        assert len(deal) == 2 and {g["seed"] for g in deal} == {3 + k}
        assert sorted(tuple(g["seats"]) for g in deal) == [("heuristic", "random"), ("random", "heuristic")]
    # agent seeds come from (game seed, seat) as in arena.records: a game replays on its own
    g = games[3]
    record = play_game("italia", 2, g["seed"], [make_agent(s) for s in g["seats"]])
    assert record["result"]["scores"] == g["scores"] and record["result"]["turns"] == g["turns"]
    assert all(d > 0 for g in games for d in g["decisions"])


# ------------------------------------------------------------------ statistics
def _game(g, deal, rot, seats, scores, ranking, winner, truncated=False, decisions=(10, 10), secs=(0.01, 0.01)):
    return {"game": g, "deal": deal, "rotation": rot, "seed": 100 + deal, "seats": seats, "scores": scores,
            "ranking": ranking, "winner_seat": winner, "truncated": truncated, "turns": 50,
            "decisions": list(decisions), "act_seconds": list(secs)}


# A vs B, two deals; the last game is truncated (played, not won, no VP)
HAND = [
    _game(0, 0, 0, ["A", "B"], [100, 80], [0, 1], 0, secs=(0.02, 0.01)),
    _game(1, 0, 1, ["B", "A"], [90, 95], [1, 0], 1, secs=(0.01, 0.02)),
    _game(2, 1, 0, ["A", "B"], [70, 110], [1, 0], 1, decisions=(5, 5), secs=(0.01, 0.005)),
    _game(3, 1, 1, ["B", "A"], [60, 50], [0, 1], None, truncated=True, decisions=(5, 5), secs=(0.005, 0.01)),
]


def test_statistics_match_hand_computed_values():
    stats = agent_statistics(HAND, ["A", "B"])
    a, b = stats["A"], stats["B"]
    assert (a["games"], a["wins"], a["finished"], a["truncated"], a["seats"]) == (4, 2, 3, 1, 1)
    assert a["win_rate"] == 0.5 and a["fair_share"] == 0.5
    assert a["win_rate_ci95"] == pytest.approx([0.150, 0.850], abs=1e-3)  # Wilson, 2 of 4
    assert a["mean_vp"] == pytest.approx(265 / 3)                     # 100, 95, 70
    assert a["mean_margin_best_other"] == pytest.approx(-5)             # +20, +5, -40
    assert a["mean_margin_mean_others"] == pytest.approx(-5)            # two players: the same
    assert a["mean_place"] == pytest.approx(4 / 3)
    assert (a["seat_games"], a["seat_wins"]) == ([2, 2], [1, 1])
    assert a["decisions"] == 30 and a["ms_per_decision"] == pytest.approx(2.0)
    assert (b["games"], b["wins"], b["mean_vp"]) == (4, 1, pytest.approx(280 / 3))
    assert b["mean_margin_best_other"] == pytest.approx(5) and b["mean_place"] == pytest.approx(5 / 3)
    assert b["seat_wins"] == [0, 1] and b["ms_per_decision"] == pytest.approx(1.0)
    assert b["win_rate_ci95"] == pytest.approx(list(wilson_interval(1, 4)))


def test_paired_summary_matches_hand_computed_values():
    p = paired_summary(HAND, ["A", "B"])
    assert p["agents"] == ["A", "B"] and p["deals"] == 2
    d0, d1 = p["per_deal"]
    assert (d0["wins"], d0["difference"], d0["win_rate_difference"], d0["vp_difference"]) == ([2, 0], 2, 1.0, 12.5)
    assert (d1["wins"], d1["difference"], d1["win_rate_difference"], d1["vp_difference"]) == ([0, 1], -1, -0.5, -40)
    assert d0["seed"] == 100 and d1["seed"] == 101
    # mean 0.5, sd 1.5 * sqrt(2), t(1) = 12.706: half width 12.706 * 1.5
    assert p["difference"]["mean"] == 0.5
    assert p["difference"]["ci95"] == pytest.approx([0.5 - 12.7062 * 1.5, 0.5 + 12.7062 * 1.5], abs=1e-3)
    # the mean per-deal win-rate difference is exactly A's win rate minus B's (0.5 - 0.25)
    assert p["win_rate_difference"]["mean"] == 0.25
    assert p["vp_difference"]["mean"] == -13.75 and p["vp_difference"]["n"] == 2


def test_more_players_pool_seats_and_measure_margins_against_the_others():
    game = _game(0, 0, 0, ["A", "B", "B"], [50, 60, 30], [1, 0, 2], 1, decisions=(1, 1, 1), secs=(0, 0, 0))
    stats = agent_statistics([game], ["A", "B", "B"])
    a, b = stats["A"], stats["B"]
    assert a["mean_margin_best_other"] == -10 and a["mean_margin_mean_others"] == 5
    assert b["seats"] == 2 and b["games"] == 2 and b["wins"] == 1 and b["mean_place"] == 2
    assert b["mean_margin_best_other"] == -10 and b["mean_margin_mean_others"] == -2.5  # (+10, -30), (+20, -25)
    assert b["fair_share"] == pytest.approx(1 / 3) and b["seat_games"] == [0, 1, 1]
    p = paired_summary([game], ["A", "B", "B"])
    assert p["per_deal"][0]["win_rate_difference"] == -0.5 and p["per_deal"][0]["vp_difference"] == 5
    assert p["difference"]["ci95"] is None  # one deal: no interval
    assert paired_summary([game], ["A", "B", "C"]) is None


def test_real_run_statistics_are_consistent(base_run):
    h, r = base_run["per_agent"]["heuristic"], base_run["per_agent"]["random"]
    assert h["games"] == r["games"] == 4 and h["wins"] + r["wins"] == 4 - base_run["truncated"]
    assert h["mean_margin_best_other"] == pytest.approx(-r["mean_margin_best_other"])
    p = base_run["paired"]
    assert p["win_rate_difference"]["mean"] == pytest.approx(h["win_rate"] - r["win_rate"])
    assert sum(d["difference"] for d in p["per_deal"]) == h["wins"] - r["wins"]
    assert h["ms_per_decision"] > 0 and h["decisions"] == sum(
        g["decisions"][g["seats"].index("heuristic")] for g in base_run["per_game"])


def test_t_quantile_and_mean_interval():
    for df, t in [(1, 12.706), (2, 4.303), (5, 2.571), (19, 2.093), (30, 2.042), (100, 1.984), (5000, 1.960)]:
        assert t_quantile_975(df) == pytest.approx(t, abs=1e-3)
    m = mean_interval([1.0, 2.0, 3.0])
    assert m["mean"] == 2 and m["ci95"] == pytest.approx([2 - 4.303 / math.sqrt(3), 2 + 4.303 / math.sqrt(3)], abs=1e-3)
    assert mean_interval([]) == {"mean": None, "ci95": None, "n": 0}


# ------------------------------------------------------------------ determinism
def test_results_do_not_depend_on_workers_and_repeat_for_a_seed(base_run):
    two = run_evaluation("italia", LINEUP, deals=2, seed=3, workers=2, progress=False)
    assert comparable(two) == comparable(base_run)
    assert two["run"]["arguments"]["workers"] == 2 and "ms_per_decision" in two["per_agent"]["random"]
    again = run_evaluation("italia", LINEUP, deals=2, seed=3, workers=1, progress=False)
    assert comparable(again) == comparable(base_run)
    other = run_evaluation("italia", LINEUP, deals=1, seed=4, workers=1, progress=False)
    assert other["per_game"][0]["scores"] != base_run["per_game"][0]["scores"]


# the atomic writer itself is tested in tests/test_files.py


def _no_games(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("a game was played")

    monkeypatch.setattr(ev, "play_game", refuse)


def test_missing_out_folder_is_refused_before_any_game(tmp_path, monkeypatch, capsys):
    _no_games(monkeypatch)
    out = tmp_path / "missing" / "results.json"
    with pytest.raises(ValueError, match="does not exist"):
        run_evaluation("italia", LINEUP, deals=1, out=out, progress=False)
    with pytest.raises(SystemExit) as exc:
        main(["--map", "italia", "--lineup", "heuristic,random", "--deals", "1", "--out", str(out)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Traceback" not in err
    with pytest.raises(ValueError, match="is a folder"):
        run_evaluation("italia", LINEUP, deals=1, out=tmp_path, progress=False)


@pytest.mark.parametrize("args, message", [
    (["--lineup", "heuristic"], "a line-up has 2-5 agent specs (one per seat), got 1"),
    (["--lineup", "random,random,random,random,random,random"], "got 6"),
    (["--lineup", "heuristic,,random"], "has an empty entry"),
    (["--lineup", " , "], "the line-up is empty"),
    (["--lineup", "heuristic,wizard"], "unknown agent 'wizard'"),
    (["--lineup", "mcts:fast,random"], "option 'fast' is not key=value"),
    (["--lineup", "heuristic,random", "--players", "3"], "3 players need 3 agent specs"),
    (["--lineup", "heuristic,random", "--map", "imperium"], "imperium cannot be played by 2 players"),
    (["--lineup", "heuristic,random", "--deals", "0"], "'0' must be >= 1"),
    (["--lineup", "heuristic,random", "--workers", "x"], "'x' is not an integer"),
    (["--lineup", "heuristic,random", "--map", "rome"], "invalid choice: 'rome'"),
])
def test_bad_arguments_give_one_clear_line(args, message, monkeypatch, capsys):
    _no_games(monkeypatch)
    argv = ["--map", "italia", "--deals", "1"] + args  # a later --map/--deals overrides these
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith(f"{ev.PROG}: error:")


# ------------------------------------------------------------------ command line
def test_cli_prints_the_table_and_writes_the_results(tmp_path, capsys):
    out = tmp_path / "results.json"
    argv = ["--map", "italia", "--players", "2", "--lineup", "heuristic,random", "--deals", "1", "--seed", "3",
            "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith("italia, 2 players: 1 deals x 2 seat rotations = 2 games from seed 3")
    for column in ("agent", "games", "wins", "win rate [95% CI]", "mean VP", "margin", "place", "ms/dec"):
        assert column in lines[1]
    assert lines[3].startswith("heuristic ") and lines[4].startswith("random ")
    assert "paired over 1 deals, heuristic minus random" in text and f"results written to {out}" in text
    result = json.loads(out.read_text())
    assert result["format"] == "concordia-env/evaluation" and result["lineup"] == LINEUP
    assert result["run"]["command"] == f"{ev.PROG} " + " ".join(argv)
    assert result["run"]["arguments"]["out"] == str(out)
    assert result["run"]["arguments"]["deals"] == 1 and "numpy" in result["run"]["versions"]
    assert "cores" in result["run"]["machine"]
    wins = result["per_agent"]["heuristic"]["wins"]
    assert f" {wins} " in lines[3]


def test_cli_failing_write_still_prints_the_table(tmp_path, monkeypatch, capsys):
    def disk_full(obj, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ev, "write_json_atomic", disk_full)
    out = tmp_path / "results.json"
    assert main(["--map", "italia", "--lineup", "random,random", "--deals", "1", "--out", str(out),
                 "--no-progress"]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("italia, 2 players") and "Traceback" not in captured.err
    assert f"could not write {out}: [Errno 28] No space left on device" in captured.err and not out.exists()
