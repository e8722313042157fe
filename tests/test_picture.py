"""The board picture (concordia_env.display.picture, drawn with Pillow by concordia_env.display.drawing): a fixed
shape for every map, player count and moment, identical bytes for equal states, the static layer
drawn once per map and size, the state's content where it belongs, labels clear of routes and of
each other (checked geometrically), clear errors on bad input."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

import concordia_env as ce
from concordia_env import scenario as sc
from concordia_env.data import MAP_NAMES, load_map
from concordia_env.display import picture
from concordia_env.display.drawing.board import colonist_centres, house_centres
from concordia_env.display.drawing.canvas import font
from concordia_env.display.drawing.labels import LABEL_GAP, ROUTE_CLEARANCE, conflicts, map_labels
from concordia_env.display.drawing.panels import block_rect
from concordia_env.display.drawing.style import LABEL_SIZE
from concordia_env.display.picture import PLAYER_COLOURS, draw_state, frame_size, render_rgb, save_png
from concordia_env.state import GameState

COMBOS = [(m, n) for m in MAP_NAMES for n in load_map(m).players]
SHAPE = (800, 1280, 3)


def played(map_name: str, n: int, steps: int, seed: int = 0) -> GameState:
    return sc.play_random(ce.new_game(map_name, n, seed), steps, seed)


def rgb(hex_colour: str) -> np.ndarray:
    return np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


def colour_pixels(img: np.ndarray, hex_colour: str) -> int:
    return int((img == rgb(hex_colour)).all(axis=-1).sum())


# ------------------------------------------------------------------ shape and determinism
@pytest.mark.parametrize("map_name,n", COMBOS)
def test_same_shape_and_dtype_for_every_map_player_count_and_moment(map_name, n):
    start, middle, end = ce.new_game(map_name, n, 1), played(map_name, n, 150, 1), played(map_name, n, 10**6, 1)
    assert end.is_terminal()
    for state in (start, middle, end):
        img = render_rgb(state)
        assert img.shape == SHAPE and img.dtype == np.uint8 and img.flags.writeable
        assert img.min() < 40, "dark text is drawn"
    assert frame_size() == (1280, 800)


def test_equal_states_give_identical_bytes_warm_or_cold_and_in_threads():
    state = played("italia", 4, 150, seed=7)
    img = render_rgb(state)
    assert render_rgb(state).tobytes() == img.tobytes()
    assert render_rgb(state.clone()).tobytes() == img.tobytes()
    assert render_rgb(GameState.from_json(state.to_json())).tobytes() == img.tobytes()
    picture.clear_cache()  # every cache emptied: the cold frame is the same picture
    assert render_rgb(state).tobytes() == img.tobytes()
    states = [played("imperium", 5, s * 40, seed=s) for s in range(4)]
    alone = [render_rgb(s).tobytes() for s in states]
    picture.clear_cache()
    with ThreadPoolExecutor(4) as pool:
        assert [a.tobytes() for a in pool.map(render_rgb, states)] == alone


def test_the_static_layer_is_drawn_once_per_map_and_size():
    picture.clear_cache()
    before = dict(picture.STATIC_DRAWS)
    render_rgb(played("imperium", 3, 10))
    render_rgb(played("imperium", 5, 90))  # same map, other players and moment: no static drawing
    render_rgb(ce.new_game("italia", 2, 0))
    render_rgb(ce.new_game("italia", 2, 0), dpi=40)
    drawn = {key: picture.STATIC_DRAWS[key] - before.get(key, 0) for key in picture.STATIC_DRAWS}
    assert drawn == {**{key: 0 for key in before}, ("imperium", 1.0): 1, ("italia", 1.0): 1, ("italia", 0.5): 1}


def test_render_does_not_change_the_state():
    state = played("imperium", 3, 80, seed=2)
    snapshot = state.clone()
    render_rgb(state)
    assert state == snapshot and state.legal_actions() == snapshot.legal_actions()


# ------------------------------------------------------------------ what is drawn where
def _pixel(img: np.ndarray, xy: tuple[float, float]) -> np.ndarray:
    return img[int(round(xy[1])), int(round(xy[0]))]


def test_houses_and_colonists_are_drawn_in_their_owners_colour_at_their_places():
    state = ce.new_game("imperium", 5, 0)
    bare = render_rgb(state)
    sc.add_house(state, 0, "Sirmium")
    sc.add_house(state, 2, "Sirmium")
    sc.add_house(state, 4, "Tomis")
    sc.set_colonists(state, 1, land=[("Aquileia", "Roma")], sea=[("Massilia", "Roma")])
    img = render_rgb(state)
    houses = house_centres(state)
    assert sorted((state.game.map.city_names[c], p) for c, p, _x, _y in houses) == [
        ("Sirmium", 0), ("Sirmium", 2), ("Tomis", 4)]
    for _c, p, x, y in houses:
        for dx in (-3, 0, 3):  # the square's inside, not only its centre
            assert (_pixel(img, (x + dx, y + dx)) == rgb(PLAYER_COLOURS[p])).all()
            assert not (_pixel(bare, (x + dx, y + dx)) == rgb(PLAYER_COLOURS[p])).all()
    routes = colonist_centres(state)
    on_routes = [(p, land) for p, land, x, y in routes if (x, y) in map_labels("imperium").pixels.spots.values()]
    assert sorted(on_routes) == [(1, False), (1, True)]
    for p, _land, x, y in routes:
        assert (_pixel(img, (x, y)) == rgb(PLAYER_COLOURS[p])).all()


@pytest.mark.parametrize("map_name,n", [("imperium", 5), ("italia", 2)])
def test_each_player_is_drawn_in_their_colour_and_only_they(map_name, n):
    img = render_rgb(played(map_name, n, 60))
    for p, colour in enumerate(PLAYER_COLOURS):
        if p < n:
            assert colour_pixels(img, colour) > 300, f"player {p} missing"
        else:
            assert colour_pixels(img, colour) < 20, f"player {p} drawn in a {n}-player game"


def _changed_region(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero((a != b).any(axis=-1))
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_a_hand_or_discard_change_changes_only_that_players_block():
    state = ce.new_game("imperium", 4, 3)
    before = render_rgb(state)
    sc.set_hand(state, 2, {"Tribunus": 1, "Consul": 2, "Weaver": 1})
    after_hand = render_rgb(state)
    sc.set_discard(state, 2, ["Architectus", "Mercator (5)"])
    after_discard = render_rgb(state)
    x0, y0, x1, y1 = block_rect(2, 4)
    for a, b in ((before, after_hand), (after_hand, after_discard)):
        cx0, cy0, cx1, cy1 = _changed_region(a, b)
        assert x0 <= cx0 and y0 <= cy0 and cx1 <= x1 and cy1 <= y1, "a change outside player 2's block"


def test_a_single_move_changes_the_picture_and_a_game_changes_much():
    state = ce.new_game("italia", 3, 0)
    before = render_rgb(state)
    state.apply(state.legal_actions()[0])
    assert not np.array_equal(before, render_rgb(state))
    later = render_rgb(played("italia", 3, 40, seed=0))
    assert (before != later).any(axis=-1).sum() > 1000


def test_praefectus_magnus_and_concordia_badges_move_between_headers():
    state = ce.new_game("italia", 3, 5)
    old_pm = int(state.field("pm"))
    new_pm = (old_pm + 1) % 3
    plain = render_rgb(state)
    sc.give_pm(state, new_pm)
    sc.set_concordia(state, new_pm)  # also 7 VP more for new_pm
    badged = render_rgb(state)
    changed = (plain != badged).any(axis=-1)
    for p in range(3):
        x0, y0, x1, y1 = (int(v) for v in block_rect(p, 3))
        header = changed[y0:y0 + 30, x0:x1 + 1].any()
        assert header == (p in (old_pm, new_pm)), f"player {p}'s header"
        changed[y0:y1 + 1, x0:x1 + 1] = False if p in (old_pm, new_pm) else changed[y0:y1 + 1, x0:x1 + 1]
    assert not changed.any(), "a change outside the two players' blocks"


# ------------------------------------------------------------------ labels
def _segments_points(labels, step: float = 0.5) -> np.ndarray:
    """Points every ``step`` px along every route as drawn (an independent check of the clipping)."""
    pts = []
    for line in labels.pixels.land + labels.pixels.sea:
        for a, b in zip(line[:-1], line[1:]):
            n = max(2, int(np.ceil(np.hypot(*(b - a)) / step)) + 1)
            t = np.linspace(0.0, 1.0, n)[:, None]
            pts.append(a + t * (b - a))
    return np.vstack(pts)


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_no_label_touches_a_route_a_city_a_spot_or_another_label(map_name):
    labels = map_labels(map_name)
    assert conflicts(labels) == []
    boxes = np.vstack([labels.city_boxes, labels.province_boxes])
    pts = _segments_points(labels)
    c = ROUTE_CLEARANCE - 0.3  # sampling every 0.5 px can miss a corner by at most 0.25 px
    near = ((pts[None, :, 0] > boxes[:, None, 0] - c) & (pts[None, :, 0] < boxes[:, None, 2] + c)
            & (pts[None, :, 1] > boxes[:, None, 1] - c) & (pts[None, :, 1] < boxes[:, None, 3] + c))
    assert not near.any(), f"labels on routes: {np.flatnonzero(near.any(axis=1)).tolist()}"
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            a, b = boxes[i], boxes[j]
            apart = a[2] + LABEL_GAP <= b[0] or b[2] + LABEL_GAP <= a[0] or \
                a[3] + LABEL_GAP <= b[1] or b[3] + LABEL_GAP <= a[1]
            assert apart, f"labels {i} and {j} overlap"
    x, y, w, h = labels.pixels.rect
    assert (boxes[:, 0] >= x).all() and (boxes[:, 2] <= x + w).all()
    assert (boxes[:, 1] >= y).all() and (boxes[:, 3] <= y + h).all()
    things = np.vstack([labels.pixels.city, np.array(list(labels.pixels.spots.values()))])
    inside = ((things[None, :, 0] >= boxes[:, None, 0]) & (things[None, :, 0] <= boxes[:, None, 2])
              & (things[None, :, 1] >= boxes[:, None, 1]) & (things[None, :, 1] <= boxes[:, None, 3]))
    assert not inside.any(), "a label covers a city or a route spot"


@pytest.mark.parametrize("map_name", MAP_NAMES)
def test_each_city_name_is_written_inside_its_box_near_its_city(map_name):
    labels = map_labels(map_name)
    names = load_map(map_name).city_names
    f = font("regular", LABEL_SIZE)
    for c, (x0, y0, x1, y1) in enumerate(labels.city_boxes):
        left, top, right, bottom = f.getbbox(names[c], anchor="mm")
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        assert x0 - 0.5 <= cx + left and cx + right <= x1 + 0.5 and y0 - 0.5 <= cy + top and cy + bottom <= y1 + 0.5
        city = labels.pixels.city[c]
        gap = np.hypot(max(x0 - city[0], 0, city[0] - x1), max(y0 - city[1], 0, city[1] - y1))
        assert gap < 40, f"the name of {names[c]} is {gap:.0f} px from its city"


# ------------------------------------------------------------------ API, matplotlib, errors
def test_draw_state_shows_exactly_the_picture_on_a_matplotlib_figure():
    state = played("italia", 2, 300, seed=4)
    fig = Figure(figsize=picture.FIGSIZE, dpi=80)
    canvas = FigureCanvasAgg(fig)
    draw_state(state, fig)
    canvas.draw()
    assert np.array_equal(np.asarray(canvas.buffer_rgba())[..., :3], render_rgb(state))
    draw_state(ce.new_game("imperium", 5, 0), fig)  # a figure can be reused
    canvas.draw()
    assert len(fig.axes) == 1


def test_dpi_scales_the_picture():
    state = ce.new_game("imperium", 3, 0)
    assert render_rgb(state, dpi=40).shape == (400, 640, 3)
    assert render_rgb(state, dpi=np.int64(120)).shape == (1200, 1920, 3)
    assert frame_size(40) == (640, 400)


@pytest.mark.parametrize("dpi", [0, 39, 321, -80, 80.0, "80", True, None])
def test_a_bad_dpi_is_refused_with_a_clear_error(dpi):
    with pytest.raises(ValueError, match=r"dpi must be an integer from 40 to 320 .*got"):
        render_rgb(ce.new_game("italia", 2, 0), dpi=dpi)


def test_something_else_than_a_state_is_refused():
    with pytest.raises(TypeError, match="GameState; got ndarray"):
        render_rgb(ce.new_game("italia", 2, 0).s)
    with pytest.raises(TypeError, match="GameState; got str"):
        draw_state("state", Figure())


def test_save_png_writes_the_picture(tmp_path):
    from PIL import Image

    state = played("imperium", 4, 200)
    path = save_png(state, tmp_path / "frame.png")
    with Image.open(path) as img:
        assert img.size == (1280, 800)
        assert np.array_equal(np.asarray(img.convert("RGB")), render_rgb(state))
    assert [p.name for p in tmp_path.iterdir()] == ["frame.png"]


def test_the_picture_needs_no_matplotlib():
    code = ("import sys, concordia_env as ce; from concordia_env.display.picture import render_rgb; "
            "img = render_rgb(ce.new_game('italia', 2, 0)); "
            "sys.exit(1 if 'matplotlib' in sys.modules else 0 if img.shape == (800, 1280, 3) else 2)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_importing_the_package_does_not_import_matplotlib():
    code = "import sys, concordia_env; sys.exit('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_player_colours_are_distinct():
    assert len(PLAYER_COLOURS) == 5 and len(set(PLAYER_COLOURS)) == 5
