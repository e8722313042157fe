"""The benchmark scripts run and print their figures (smoke tests; speed itself is never asserted)."""

import io
from pathlib import Path

import pytest

from concordia_env.tools import bench


def test_env_benchmark_prints_both_envs_their_ratio_and_batched_rows():
    out = io.StringIO()
    figures = bench.bench_env(0.05, 1, "italia", 2, [1, 8], seed=0, out=out)
    text = out.getvalue()
    assert "connect_four_v3" in text and "ratio" in text and "machine:" in text
    assert figures["aec_steps_per_s"] > 0 and figures["connect_four_steps_per_s"] > 0
    assert figures["ratio"] == pytest.approx(figures["aec_steps_per_s"] / figures["connect_four_steps_per_s"])
    assert set(figures["batched"]) == {1, 8}
    assert "turn-level AEC env" in text and figures["turn_decisions_per_s"] > 0
    assert 1 <= figures["turn_candidates"] <= 32 and figures["turn_atomic_per_s"] >= figures["turn_decisions_per_s"]


def test_core_benchmark_prints_every_combination():
    out = io.StringIO()
    rows = bench.bench_core(1, 1, seed=0, out=out)
    assert len(rows) == len(bench.COMBOS)
    assert all(r["api_decisions_per_s"] > 0 for r in rows)


def test_picture_benchmark_prints_cold_and_warm_figures_per_row():
    out = io.StringIO()
    rows = bench.bench_picture(1, seed=0, dpi=40, combos=[("italia", 2)], out=out)
    text = out.getvalue()
    assert "machine:" in text and "640x400" in text and "cold first frame" in text
    (row,) = rows
    assert row["frames"] == len(bench.game_states("italia", 2, 0)) > 100
    assert row["cold_s"] > 0 and row["frames_per_s"] > 0
    assert text.splitlines()[-1].split()[:3] == ["italia", "2", str(row["frames"])]
    assert bench.PICTURE_COMBOS == [("imperium", 3), ("imperium", 5), ("italia", 2), ("italia", 4)]


def test_search_benchmark_prints_az_against_mcts_per_simulation():
    from concordia_env.tools.bench_search import GAMES, bench_search

    out = io.StringIO()
    rows = bench_search(3, 1, seed=0, out=out)
    text = out.getvalue()
    assert "machine:" in text and "us/simulation" in text
    assert [(r["map"], r["players"]) for r in rows] == [g for g in GAMES for _ in range(4)]
    assert [r["agent"] for r in rows[:4]] == ["mcts:iterations=3", "az:simulations=3", "az:simulations=3:compiled=0",
                                              "az:simulations=3:turns=16"]
    assert all(r["us_per_simulation"] > 0 for r in rows) and rows[0]["vs_mcts"] == 1.0


def test_search_benchmark_adds_a_value_net_on_its_own_map():
    from concordia_env.tools.bench_search import bench_search

    net = Path(__file__).resolve().parents[1] / "results" / "az_values" / "value_italia"
    rows = bench_search(3, 1, seed=0, out=io.StringIO(), net=str(net))
    extra = [r for r in rows if r["agent"].startswith("az:net=")]
    assert [(r["map"], r["agent"]) for r in extra] == [("italia", f"az:net={net}:simulations=3")]
    assert extra[0]["us_per_simulation"] > 0


@pytest.mark.parametrize("argv,needle", [
    (["env", "--players", "6"], "players"),
    (["env", "--num-envs", "a,b"], "num-envs"),
    (["env", "--repeats", "0"], "repeats"),
    (["picture", "--games", "0"], "--games"),
    (["picture", "--dpi", "10"], "--dpi must be from 40 to 320"),
    (["search", "--simulations", "0"], "'0' must be >= 1"),
    (["search", "--net", "no/such/net"], "--net: "),
])
def test_bench_cli_rejects_bad_arguments(argv, needle, capsys):
    with pytest.raises(SystemExit):
        bench.main(argv)
    assert needle in capsys.readouterr().err
