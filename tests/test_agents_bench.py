"""concordia_env.tools.agents_bench: per-decision timing of agents in real games."""

import re

import pytest

from concordia_env.tools.agents_bench import main, time_agents


def test_time_agents_counts_only_decisions_with_a_choice():
    times = time_agents("italia", 2, ["random", "heuristic"], games=2, seed=3)
    assert set(times) == {"random", "heuristic"}
    assert all(len(v) > 20 and min(v) >= 0 for v in times.values())


def test_bench_prints_a_row_per_agent(capsys):
    assert main(["--map", "italia", "--players", "2", "--agents", "random,random", "--games", "2"]) == 0
    out = capsys.readouterr().out
    assert "cores" in out
    rows = [ln for ln in out.splitlines() if ln.startswith("random ")]
    assert len(rows) == 1 and re.search(r"random\s+\d+(\s+[\d.]+){4}$", rows[0])


def test_bench_rejects_a_game_count_that_does_not_rotate_seats(capsys):
    with pytest.raises(SystemExit):
        main(["--agents", "random,heuristic", "--games", "3"])
    assert "multiple" in capsys.readouterr().err
