"""Rendering through the env: PettingZoo's render_test for every mode, and what the text shows."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from pettingzoo.test import render_test

import concordia_env as ce

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
