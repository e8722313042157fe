"""Values trained on more MCTS-100 games: the data-size tables (2-player Italia, 4-player Imperium) and the
targets tables of results/az_values/README.md quote the files of each network (its export config) and of its
strength line against mcts1000 (the line's summary); its paired comparisons quote the lines' games files."""

from __future__ import annotations

import json
import re
from math import comb
from pathlib import Path

import pytest

from concordia_env.dataset import iter_games

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "results" / "az_values"


def _rows(heading: str) -> list[list[str]]:
    """The cells of each network's row of the table under one of the README's headings."""
    text = (FOLDER / "README.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    return [[c.strip() for c in line.split("|")[1:-1]] for line in section.splitlines()
            if line.startswith("| ") and "`value_" in line]


def _quoted(pattern: str, cell: str) -> str:
    """The first group of ``pattern`` in a table cell (the test fails naming the cell if it is not there)."""
    match = re.search(pattern, cell)
    assert match, f"{pattern!r} not in {cell!r}"
    return match.group(1)


def _check_row(cells: list[str]) -> dict:
    """Check a row's network and line cells (from the network's column on) against the network's export
    config and its line's summary; returns the config."""
    stem = _quoted(r"`(value_(?:italia|imperium)[_a-z0-9]*)`", cells[1])
    folder = _quoted(r"`([a-z_0-9]+)/`", cells[-1])
    config = json.loads((FOLDER / f"{stem}_config.json").read_text())
    data = config["data"]
    assert data["settings"]["agents"] == ["mcts:iterations=100"] and data["settings"]["seed"] == 0
    assert cells[2] == f"{config['val']['ce']:.3f} ({config['heuristic']['ce']:.3f})"
    assert cells[3] == f"{100 * config['val']['accuracy']:.1f}%"

    summary = json.loads((FOLDER / folder / "summary.json").read_text())
    setting = summary["settings"][0]
    line = setting["lines"][0]
    # one az seat against the rest mcts1000, every seat rotated over the deals: 200 games
    assert setting["map"] == config["map"] and line["complete"] and line["games"] == 200
    assert line["deals"] * setting["players"] == 200
    az, mcts = line["agents"]
    assert line["lineup"] == [line["per_agent"][az]["spec"]] + ["mcts:iterations=1000"] * (setting["players"] - 1)
    assert line["lineup"][0].endswith(f"{stem}:simulations=1000")
    stats = line["per_agent"][az]
    lo, hi = stats["win_rate_ci95"]
    assert cells[4] == f"{stats['wins']} of 200"
    assert cells[5] == f"{100 * lo:.1f}–{100 * hi:.1f}%"
    assert cells[6] == f"{line['vp_difference']['mean']:+.1f}"
    assert cells[7] == f"{stats['ms_per_decision']:.1f}, {line['per_agent'][mcts]['ms_per_decision']:.1f}"
    return config


def _data_size_table(heading: str, map_name: str) -> list[dict]:
    """Check a data-size table's rows, one recipe down the table (TD(lambda = 0.8) from the map's released
    `az` network, a 256-128 trunk) and more games on each row; returns the networks' configs."""
    rows = _rows(heading)
    configs = [_check_row(cells) for cells in rows]
    for cells, config in zip(rows, configs):
        args, data = config["arguments"], config["data"]
        assert config["map"] == map_name
        assert (args["targets"], args["lam"], args["hidden"]) == ("td", 0.8, [256, 128])
        assert args["bootstrap"] == f"concordia_env/agents/policies/az_{map_name}"
        assert cells[0] == f"{data['games']:,} ({data['positions']:,})"
    games = [config["data"]["games"] for config in configs]
    assert games == sorted(games) and len(set(games)) == len(games)
    return configs


def test_the_data_size_table_quotes_each_networks_files():
    configs = _data_size_table("## More games for the same recipe", "italia")
    assert len(configs) >= 3
    # only the number of games changes
    assert {(c["arguments"]["steps"], c["arguments"]["batch"]) for c in configs} == {(8000, 1024)}


def test_the_imperium_table_quotes_each_networks_files():
    # the steps may change (the first network trained for fewer; the text gives them row by row)
    configs = _data_size_table("## 4-player Imperium", "imperium")
    assert len(configs) >= 2 and all(c["data"]["settings"]["players"] == [4] for c in configs)


@pytest.mark.parametrize("heading, games", [("## Other targets on the same 10,000 games", 10000),
                                            ("### Other targets on the same 3,925 games", 3925)])
def test_the_targets_tables_quote_each_networks_files(heading: str, games: int):
    rows = _rows(heading)
    assert len(rows) >= 2
    for cells in rows:
        config = _check_row(cells)
        args = config["arguments"]
        assert config["data"]["games"] == games and (args["hidden"], args["steps"], args["batch"]) == ([256, 128], 8000, 1024)
        # the first cell names the targets: TD(lambda) from a network or the heuristic, or the outcome alone
        if args["targets"] == "td" and args["bootstrap"] == "heuristic":
            assert cells[0] == f"TD(lambda = {args['lam']}) from the heuristic's evaluation"
        elif args["targets"] == "td":
            assert cells[0] == f"TD(lambda = {args['lam']}) from `{Path(args['bootstrap']).name}`"
        else:
            assert args["targets"] == "mc" and cells[0] == "the outcome (Monte Carlo)"


def _az_won(folder: str) -> dict[tuple[int, int], bool]:
    """Whether `az` won each game of a line against mcts1000 (one az seat), by (deal seed, az's seat), from its
    games files."""
    won = {}
    for path in sorted((FOLDER / folder / "lines").glob("*/*.games.jsonl.gz")):
        for game in iter_games(path):
            seat = next(i for i, spec in enumerate(game["agents"]) if spec.startswith("az:"))
            won[game["seed"], seat] = game["winner"] == seat
    return won


def test_the_paired_comparisons_quote_the_games_files():
    """The README's game-by-game comparisons of two networks on the same 200 games (same deal and seat; the
    search is deterministic): games only one of them won, both won, and the exact two-sided sign test."""
    text = " ".join((FOLDER / "README.md").read_text(encoding="utf-8").split())
    sentences = {
        ("italia_10000_1000", "device_1000"):
            "wins {a} games `v2` loses and loses {b} that `v2` wins (both win {both}): an exact sign test gives p = {p}",
        ("italia_10000_heur_1000", "device_1000"):
            "wins {a} that `v2` loses and loses {b} that `v2` wins (both win {both}): exact sign test p = {p}",
        ("italia_10000_heur_1000", "italia_10000_1000"):
            "wins {a} that network loses and loses {b} it wins (both win {both}): p = {p}",
        ("imperium_10000_1000", "imperium_1000"):
            "wins {a} games `v2` loses and loses {b} that `v2` wins (both win {both}): p = {p}",
        ("imperium_3925_heur_1000", "imperium_3925_1000"):
            "wins {a} that network loses and loses {b} it wins (both win {both}): p = {p}",
    }
    for (new, old), sentence in sentences.items():
        x, y = _az_won(new), _az_won(old)
        assert len(x) == 200 and x.keys() == y.keys(), (new, old)
        a = sum(x[k] and not y[k] for k in x)
        b = sum(y[k] and not x[k] for k in x)
        both = sum(x[k] and y[k] for k in x)
        p = min(1.0, 2 * sum(comb(a + b, i) for i in range(min(a, b) + 1)) / 2 ** (a + b))
        assert sentence.format(a=a, b=b, both=both, p=f"{p:.2g}") in text, (new, old)
