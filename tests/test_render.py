"""Rendering through the env: PettingZoo's render_test for every mode, and what the text shows:
the owners of houses as players (P0 P2), the status block, the score table, 80 columns."""

from __future__ import annotations

import io
import re

import matplotlib
import numpy as np
import pytest
from pettingzoo.test import render_test

import concordia_env as ce
from concordia_env import scenario as sc
from concordia_env.display.render import (
    WIDTH,
    TurnPrinter,
    card_label,
    pack,
    score_table,
    state_to_text,
    status_lines,
    winner_line,
)

matplotlib.use("Agg")  # headless: "human" draws into an off-screen figure


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 5)])
def test_pettingzoo_render_test(map_name, n):
    def make(render_mode=None):
        return ce.env(map_name=map_name, num_players=n, render_mode=render_mode)

    render_test(make, custom_tests={
        "ansi": lambda text: f"Concordia — {map_name.capitalize()}, {n} players" in text,
        "rgb_array": lambda img: img.shape[2] == 3 and img.std() > 0,
    })


def test_ansi_shows_board_storehouses_display_prices_and_scores():
    env = ce.env(map_name="imperium", num_players=3, render_mode="ansi")
    env.reset(seed=4)
    text = env.render()
    state = env.unwrapped.game_state
    assert "Roma" not in text.split("\n")[1]  # provinces first, Roma has none
    for province in state.game.map.province_names:
        assert province in text
    for p, vp in enumerate(state.scores()):
        assert f"Player {p}" in text and f"VP now {vp}" in text
    assert "Display (" in text and text.count("price ") == 7
    assert "2 food" in text  # starting storehouses


def test_rgb_frames_keep_their_shape_and_follow_the_game():
    env = ce.env(map_name="italia", num_players=3, render_mode="rgb_array")
    env.reset(seed=0)
    first = env.render()
    rng = np.random.default_rng(0)
    for _ in range(30):
        obs = env.last()[0]
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    later = env.render()
    assert first.shape == later.shape and first.dtype == np.uint8
    assert (first != later).any()


def test_render_without_mode_warns_and_before_reset_raises():
    env = ce.raw_env()
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None
    with pytest.raises(RuntimeError, match="reset"):
        ce.raw_env(render_mode="ansi").render()


# ---------------------------------------------------------------- the text in 80 columns
def _houses_position():
    st = ce.new_game("imperium", 5, seed=0)
    sc.set_city_good(st, "Sirmium", "brick")
    sc.set_city_good(st, "Tomis", "food")
    sc.add_house(st, 0, "Sirmium")
    sc.add_house(st, 2, "Sirmium")
    sc.add_house(st, 4, "Tomis")
    sc.set_colonists(st, 1, land=["Roma", ("Aquileia", "Roma")], sea=[("Massilia", "Roma")])
    sc.set_hand(st, 1, {"Tribunus": 1, "Architectus": 2, "Diplomat (Saturnus)": 1, "Mercator (5)": 1,
                        "Senator": 1, "Consul": 1, "Diplomat (Jupiter)": 1})
    sc.set_discard(st, 1, ["Praefectus"])
    sc.give_pm(st, 1)
    sc.set_marker(st, "Dacia", False)
    return st


def test_house_owners_are_named_players_never_a_bare_number():
    text = state_to_text(_houses_position())
    assert "   VII Dacia (bonus tools: coin side): Napoca [tools]\n" \
           "       Sirmium [brick] houses P0 P2; Tomis [food] houses P4\n" in text
    assert not re.search(r"houses \d", text)


def test_status_block_and_score_table():
    st = _houses_position()
    assert status_lines(st, 1) == [
        "You (P1) [Praefectus Magnus]: 5 sestertii; VP now 9; houses left 15",
        "  goods: 1 brick, 2 food, 1 tools, 1 wine, 1 cloth; storehouse 9/12 slots used",
        "  hand: Tribunus (Mars), 2x Architectus (Jupiter), Mercator (5, Mercurius),",
        "    Senator (Vesta), Consul (Jupiter), Diplomat (Jupiter), Diplomat (Saturnus);",
        "    discard top: Praefectus (Saturnus)",
        "  colonists: land Roma, (Aquileia–Roma); sea (Massilia–Roma)",
    ]
    assert score_table(st).splitlines() == [
        "Scores if the game ended now",
        "player    Vesta  Jupiter Saturnus  Mercur.     Mars  Minerva Concord.    total",
        "     0        3        0        2        2        4        0        0       11",
        "     1        3        0        0        0        6        0        0        9",
        "     2        3        0        2        2        4        0        0       11",
        "     3        3        0        0        0        4        0        0        7",
        "     4        3        2        2        2        4        0        0       13",
    ]


def test_pack_keeps_items_whole_and_wraps_only_an_item_wider_than_a_line():
    assert pack(["alpha beta", "gamma", "delta epsilon"], width=20, first="x: ") == [
        "x: alpha beta; gamma", "    delta epsilon"]
    assert pack(["one two three four five six"], width=12, first="- ", indent="  ") == [
        "- one two", "  three four", "  five six"]
    assert pack([], first="hand: ") == ["hand:"]


@pytest.mark.parametrize("map_name,n", [("italia", 2), ("imperium", 5)])
def test_board_and_turn_lines_fit_80_columns(map_name, n):
    st = sc.play_random(ce.new_game(map_name, n, seed=3), 600, seed=3)
    city = st.game.map.city_names[1]
    for p in range(n):  # every player's house in one city: the longest list of owners
        if not st.field("houses")[1] >> p & 1:
            sc.add_house(st, p, city)
    lines = state_to_text(st).splitlines() + [ln for p in range(n) for ln in status_lines(st, p)]
    out = io.StringIO()
    printer = TurnPrinter([f"agent-with-a-long-name-{p}" for p in range(n)], out)
    game = ce.new_game(map_name, n, seed=3)
    rng = np.random.default_rng(3)
    for _ in range(300):
        action = int(rng.choice(game.legal_actions()))
        printer(game, game.current_player, action)
        game.apply(action)
    printer.flush()
    lines += out.getvalue().splitlines()
    assert max(map(len, lines)) <= WIDTH, [ln for ln in lines if len(ln) > WIDTH]
    assert out.getvalue().startswith("Turn   0, player ")


class _Finished:
    """A finished game's scores as :func:`score_table` reads them, with the winner the rules' tie-break picks."""

    def __init__(self, totals: list[int], winner: int) -> None:
        self.totals, self.w = totals, winner

    def is_terminal(self) -> bool:
        return True

    def score_breakdown(self):
        import numpy as np

        return np.array([[t, 0, 0, 0, 0, 0, 0] for t in self.totals])

    def scores(self) -> list[int]:
        return list(self.totals)

    def winner(self) -> int:
        return self.w


def test_the_winner_is_named_once_and_a_tie_break_only_for_a_tie():
    untied = score_table(_Finished([40, 52, 47], 1), ["random", "heuristic", "mcts"]).splitlines()
    assert untied[-1] == "Winner: player 1 (heuristic) with 52 VP"
    assert sum("Winner" in line for line in untied) == 1 and "tie-break" not in "\n".join(untied)
    tied = score_table(_Finished([52, 52, 47], 1)).splitlines()
    assert "\n".join(tied).count("Winner") == 1
    assert tied[-2].startswith("Winner after tie-break: player 1 with 52 VP, tied with player 0;")
    assert all(len(line) <= WIDTH for line in tied)
    assert winner_line(_Finished([3, 3, 3], 2)).startswith(
        "Winner after tie-break: player 2 with 3 VP, tied with player 0, player 1;")


def test_cards_are_listed_with_their_god_and_the_header_counts_card_plays_as_the_menu():
    from concordia_env.display.menu import build_menu
    from concordia_env.state import new_game

    assert [card_label(*x) for x in (("Farmer", "Minerva"), ("Mercator (3)", "Mercurius"),
                                     ("Diplomat (Jupiter)", "Jupiter"))] == [
        "Farmer (Minerva)", "Mercator (3, Mercurius)", "Diplomat (Jupiter)"]
    st = new_game("italia", 2, seed=3)
    for _ in range(12):
        text = state_to_text(st)
        plays = int(st.field("turn"))
        assert f", card play {plays + 1}, player {st.current_player} to decide: " in text.splitlines()[0]
        if st.phase == 0:
            assert f"(card play {plays + 1} of the game)" in build_menu(st, "you").title
        st.apply(st.legal_actions()[0])
    labels = {card_label(t.name, t.god) for t in st.game.components.card_types}
    display = [ln.split(": ", 1)[1].split(" price ")[0].strip() for ln in state_to_text(st).splitlines()
               if " price " in ln]
    assert len(display) == 7 and set(display) <= labels  # every display card with its god
