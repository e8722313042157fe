"""Pictures of states (concordia_env.picture): fixed shape, deterministic, follow the state."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import concordia_env as ce
from concordia_env.picture import PLAYER_COLOURS, draw_state, render_rgb
from concordia_env.scenario import play_random
from concordia_env.state import GameState

COMBOS = [("imperium", 3), ("imperium", 4), ("imperium", 5), ("italia", 2), ("italia", 3), ("italia", 4)]
SHAPE = (800, 1280, 3)


def played(map_name: str, n: int, steps: int, seed: int = 0) -> GameState:
    return play_random(ce.new_game(map_name, n, seed), steps, seed)


def finished(map_name: str, n: int, seed: int = 0) -> GameState:
    state = played(map_name, n, 10**6, seed)
    assert state.is_terminal()
    return state


def colour_pixels(img: np.ndarray, hex_colour: str) -> int:
    rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
    return int((img == rgb).all(axis=-1).sum())


@pytest.mark.parametrize("map_name,n", COMBOS)
def test_same_shape_and_dtype_for_every_map_player_count_and_moment(map_name, n):
    for state in (ce.new_game(map_name, n, 1), finished(map_name, n, 1)):
        img = render_rgb(state)
        assert img.shape == SHAPE and img.dtype == np.uint8
        assert img.min() < 50 and img.max() == 255, "something dark is drawn on a white ground"


@pytest.mark.parametrize("map_name,n", [("imperium", 5), ("italia", 2)])
def test_each_player_is_drawn_in_their_colour_and_only_they(map_name, n):
    img = render_rgb(played(map_name, n, 60))
    for p, colour in enumerate(PLAYER_COLOURS):
        if p < n:
            assert colour_pixels(img, colour) > 300, f"player {p} missing"
        else:
            assert colour_pixels(img, colour) < 20, f"player {p} drawn in a {n}-player game"


def test_picture_follows_the_state():
    state = ce.new_game("imperium", 4, 3)
    before = render_rgb(state)
    later = played("imperium", 4, 40, seed=3)
    after = render_rgb(later)
    changed = (before != after).any(axis=-1)
    assert changed.sum() > 1000, "40 moves should change a visible part of the picture"


def test_a_single_move_changes_the_picture():
    state = ce.new_game("italia", 3, 0)
    before = render_rgb(state)
    state.apply(state.legal_actions()[0])
    assert not np.array_equal(before, render_rgb(state))


def test_equal_states_give_identical_pictures():
    state = played("italia", 4, 150, seed=7)
    img = render_rgb(state)
    assert np.array_equal(img, render_rgb(state))
    assert np.array_equal(img, render_rgb(state.clone()))
    assert np.array_equal(img, render_rgb(GameState.from_json(state.to_json())))


def test_render_does_not_change_the_state():
    state = played("imperium", 3, 80, seed=2)
    snapshot = state.clone()
    render_rgb(state)
    assert state == snapshot and state.legal_actions() == snapshot.legal_actions()


def test_draw_state_on_own_figure_matches_render_rgb():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    state = finished("italia", 2, 4)
    fig = Figure(figsize=(16, 10), dpi=80)
    canvas = FigureCanvasAgg(fig)
    draw_state(state, fig)
    canvas.draw()
    own = np.asarray(canvas.buffer_rgba())[..., :3].astype(int)
    # render_rgb composes a cached background with the state layer: same picture
    # up to rounding of anti-aliased edges.
    assert np.abs(own - render_rgb(state).astype(int)).max() <= 3
    draw_state(ce.new_game("imperium", 5, 0), fig)  # a figure can be reused
    canvas.draw()


def test_dpi_scales_the_shape():
    img = render_rgb(ce.new_game("imperium", 3, 0), dpi=40)
    assert img.shape == (400, 640, 3) and img.dtype == np.uint8


def test_player_colours_are_distinct():
    assert len(PLAYER_COLOURS) == 5 and len(set(PLAYER_COLOURS)) == 5


def test_importing_the_package_does_not_import_matplotlib():
    code = "import sys, concordia_env; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
