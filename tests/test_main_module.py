"""``python -m concordia_env``'s score table: final scores and a winner only once the game is over."""

from __future__ import annotations

import io

import numpy as np

from concordia_env.__main__ import print_result
from concordia_env.state import new_game


def _play(state, plays: int | None, seed: int = 0) -> None:
    """Random legal actions until the game ends, or ``plays`` actions."""
    rng = np.random.default_rng(seed)
    k = 0
    while not state.is_terminal() and (plays is None or k < plays):
        state.apply(int(rng.choice(state.legal_actions())))
        k += 1


def test_a_running_game_shows_scores_so_far_and_no_winner() -> None:
    state = new_game("italia", 2, seed=3)
    _play(state, 40)
    out = io.StringIO()
    print_result(state, out)
    text = out.getvalue()
    assert "Scores if the game ended now" in text and "Final scores" not in text
    assert "Winner" not in text and "None" not in text
    totals = [int(line.split()[-1]) for line in text.splitlines()[3:5]]
    assert totals == [int(row.sum()) for row in state.score_breakdown()]


def test_a_finished_game_shows_final_scores_and_the_winner() -> None:
    state = new_game("italia", 2, seed=3)
    _play(state, None)
    out = io.StringIO()
    print_result(state, out)
    text = out.getvalue()
    assert "Final scores" in text
    w = state.ranking()[0]
    scores = state.scores()
    tied = scores.count(scores[w]) > 1
    # "after tie-break" only when the most VP are tied
    assert (f"Winner after tie-break: player {w} with" if tied else f"Winner: player {w} with {scores[w]} VP") in text
    assert text.count("Winner") == 1 and ("tie-break" in text) == tied
