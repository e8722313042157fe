"""Golden searches (concordia_env.tools.search_golden): the search returns exactly what it returned
when ``tests/golden/search_results.json`` was written.

Each case searches one seeded position once and must give the same move, the same root visits
and the same root values bit for bit: a change to the search meant to keep its decisions (the
compiled tree) cannot drift in a draw order, a tie-break or a floating-point sum unnoticed.
The ``az`` cases run the released networks in float32 through numpy's BLAS, so they hold on
the machines the file was written for (x86-64 with the same numpy); another BLAS kernel may
round differently."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from concordia_env import engine as E
from concordia_env.agents.mcts import SearchRoot, resample_deck
from concordia_env.agents.tree import deck_samples
from concordia_env.tools.search_golden import CASES, FORMAT, VERSION, check, main, position, run_case

STORED_PATH = Path(__file__).parent / "golden" / "search_results.json"
STORED = json.loads(STORED_PATH.read_text())


def test_the_golden_file_holds_every_case_once() -> None:
    assert STORED["format"] == FORMAT and STORED["version"] == VERSION
    assert [c["name"] for c in STORED["cases"]] == [case.name for case in CASES]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_search_returns_the_stored_result_exactly(case) -> None:
    stored = next(c for c in STORED["cases"] if c["name"] == case.name)
    got = run_case(case)
    assert got["visit_ids"] == stored["visit_ids"] and got["visit_counts"] == stored["visit_counts"]
    assert got["action"] == stored["action"]
    assert got["value"] == stored["value"]  # float64 round-trips through JSON: exact


@pytest.mark.parametrize("case", [CASES[0], CASES[5], CASES[7]], ids=["early", "mid", "end"])
def test_the_compiled_deck_samples_draw_what_resample_deck_draws(case) -> None:
    """The search samples decks in numba from the agent's generator: the same orders, and the
    generator left in the same state, as numpy's ``permutation`` in ``resample_deck``."""
    state = position(case)
    root = SearchRoot.of(state, state.legal_action_mask())
    for seed in range(5):
        compiled, python = np.random.default_rng(seed), np.random.default_rng(seed)
        decks = np.empty((7, E.NCARD), np.int32)
        deck_samples(state.s, root.starts, root.stops, compiled, decks)
        for deck in decks:
            s = state.s.copy()
            resample_deck(s, root.blocks, python)
            assert np.array_equal(deck, s[E.O_DECK:E.O_DECK + E.NCARD])
        assert compiled.bit_generator.state == python.bit_generator.state
        assert compiled.random() == python.random()


def test_check_names_a_case_that_differs(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(STORED))
    doc["cases"][0]["visit_counts"][0] += 1
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(doc))
    bad = check(path, CASES[:1])
    assert len(bad) == 1 and bad[0].startswith(CASES[0].name + ": stored ")


def test_check_of_a_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--check", "--path", str(tmp_path / "none.json")])
    assert exc.value.code == 2 and "does not exist" in capsys.readouterr().err
