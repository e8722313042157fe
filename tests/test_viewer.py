"""The replay viewer (``concordia replay game.json --html out.html``, :mod:`concordia_env.display.viewer`).

Python level: the per-step frames embedded in the page match the replayed :class:`GameState`,
the page is self-contained, records from ``demo``, ``play`` and ``tournament`` all work, and bad
input gives one line and exit 1. In a real browser (Chromium from the system packages, headless):
the page loads without console errors, stepping changes what is shown, and a screenshot has the
expected structure. The browser tests skip, saying why, only when no Chromium binary is found
(``apt-get install chromium``); the Playwright test also needs ``pip install playwright`` (it uses
the system Chromium, never a downloaded one).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import CHROMIUM, needs_chromium, needs_playwright  # tests/browser.py
from browser import sync_playwright as browser_sync_playwright

from concordia_env.agents.base import make_agent
from concordia_env.arena.records import load_record, play_game, replay_states, save_record
from concordia_env.cli import main
from concordia_env.display.viewer import frame_layout, frame_vector, replay_data, replay_html
from concordia_env.display.viewer.html import DATA_MARK, TITLE_MARK, embed_json, template
from concordia_env.display.viewer.snapshots import frames, layout_for
from concordia_env.state import new_game


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    """A real 2-player Italia game between the heuristic and random agents (a few hundred actions)."""
    return play_game("italia", 2, 5, [make_agent("heuristic"), make_agent("random")])


@pytest.fixture(scope="module")
def page(tmp_path_factory, record) -> Path:
    """The viewer page of ``record`` written through the command line."""
    folder = tmp_path_factory.mktemp("viewer")
    save_record(record, folder / "game.json")
    assert main(["replay", str(folder / "game.json"), "--html", str(folder / "game.html")]) == 0
    return folder / "game.html"


def _embedded(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


# ---------------------------------------------------------------- snapshot data
def test_frames_match_the_replayed_game_state(record):
    data = replay_data(record)
    rebuilt = frames(data)
    states = [s for _, s in replay_states(record)]
    n = len(record["actions"])
    assert len(rebuilt) == n + 1 and len(data["steps"]["text"]) == n
    layout = frame_layout(2, 26, 11)
    assert data["layout"] == layout.to_json() and data["frame_size"] == layout.size
    for pos in (0, 1, 7, 40, n // 2, n - 1, n):
        state = new_game("italia", 2, 5) if pos == 0 else states[pos - 1]
        f = rebuilt[pos]
        assert np.array_equal(layout.get(f, "coins"), state.field("coins")[:2]), pos
        assert np.array_equal(layout.get(f, "vp"), state.score_breakdown()), pos
        assert np.array_equal(layout.get(f, "houses"), state.field("houses")[:26]), pos
        assert np.array_equal(layout.get(f, "colonist"), state.field("colonist")[:2]), pos
        assert np.array_equal(layout.get(f, "hand"), state.field("hand")[:2]), pos
        assert np.array_equal(layout.get(f, "display"), state.field("display")), pos
        assert layout.get(f, "current") == state.current_player
        assert f == frame_vector(state, layout).tolist()
    assert [int(v) for v in layout.get(rebuilt[n], "vp").sum(axis=1)] == record["result"]["scores"]


def test_steps_turns_and_texts(record):
    data = replay_data(record)
    steps, starts = data["steps"], data["turn_start"]
    state = new_game("italia", 2, 5)
    for i, action in enumerate(record["actions"][:30]):
        assert steps["text"][i] == state.action_to_string(action)
        assert steps["player"][i] == state.current_player
        state.apply(action)
    turns = steps["turn"]
    assert turns[0] == 1 and all(b - a in (0, 1) for a, b in zip(turns, turns[1:]))
    assert starts[0] == 0 and len(starts) == turns[-1]
    assert all(turns[s] == t + 1 for t, s in enumerate(starts))
    assert steps["text"][starts[1]].startswith("play ")  # a turn opens with a card play
    assert turns[-1] - record["result"]["turns"] in (0, 1)


def test_board_geometry_for_both_maps():
    for map_name, players, cities, provinces in (("italia", 2, 26, 11), ("imperium", 5, 31, 12)):
        state = new_game(map_name, players, 0)
        rec = play_game(map_name, players, 0, [make_agent("heuristic")] * players, max_turns=3)
        board = replay_data(rec)["board"]
        assert len(board["cities"]) == cities and len(board["provinces"]) == provinces
        assert len(board["routes"]) == len(state.game.routes)
        for c in board["cities"]:
            assert 0 <= c["xy"][0] <= board["width"] and 0 <= c["xy"][1] <= board["height"]
        assert layout_for(state).size == len(replay_data(rec)["first"])


# ---------------------------------------------------------------- the page
def test_page_is_self_contained(record, page):
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"<script[^>]*\bsrc\s*=", html, re.I)
    assert not re.search(r"<(link|img|iframe)\b[^>]*\b(href|src)\s*=\s*\"(?!data:)", html, re.I)
    assert "@import" not in html and "url(" not in html
    assert DATA_MARK not in html and TITLE_MARK not in html
    assert html.count("</script>") == 2  # the data and the code
    assert _embedded(html) == json.loads(json.dumps(replay_data(record)))
    assert len(html.encode()) < 250_000, "a 2-player game's page should stay small"
    assert html == replay_html(record)


def test_embedded_text_cannot_close_the_script_element(record):
    hostile = dict(record, agents=["</script><script>alert(1)</script>", "a & <!-- b"])
    html = replay_html(hostile)
    assert "<script>alert" not in html and "<!-- b" not in html
    assert _embedded(html)["agents"] == hostile["agents"]
    assert json.loads(embed_json({"x": "</script>&"})) == {"x": "</script>&"}
    assert template().count(DATA_MARK) == 1


def test_records_from_demo_play_and_tournament(tmp_path, capsys):
    demo, played, games = tmp_path / "demo.json", tmp_path / "play.json", tmp_path / "games"
    assert main(["demo", "--map", "imperium", "--players", "3", "--agents", "heuristic,random,heuristic",
                 "--seed", "2", "--max-turns", "40", "--save", str(demo)]) == 0
    assert main(["play", "--map", "italia", "--players", "2", "--opponents", "heuristic", "--seed", "1",
                 "--save", str(played)], input_fn=lambda prompt="": "1") == 0
    assert main(["tournament", "--map", "italia", "--players", "2", "--agents", "heuristic,heuristic",
                 "--games", "2", "--records", str(games), "--no-progress"]) == 0
    capsys.readouterr()
    for source in (demo, played, games / "game_00001.json"):
        out = tmp_path / (source.stem + ".html")
        assert main(["replay", str(source), "--html", str(out)]) == 0
        assert f"written to {out}" in capsys.readouterr().out
        data = _embedded(out.read_text(encoding="utf-8"))
        assert data["agents"] == load_record(source)["agents"]
        assert len(data["deltas"]) == len(load_record(source)["actions"])
    assert _embedded((tmp_path / "demo.html").read_text())["result"]["truncated"] is True


def test_other_replay_options_still_work(page, capsys):
    game = str(page.with_name("game.json"))
    assert main(["replay", game, "--no-pause", "--from", "5", "--by-action"]) == 0
    out = capsys.readouterr().out
    assert "[5] player" in out and "[4] player" not in out and "Final scores" in out
    assert main(["replay", game, "--from", "3", "--by-action"], input_fn=lambda prompt="": "q") == 0
    assert "Stopped after action 3" in capsys.readouterr().out
    # by turn, the default since the replay stepped by turn
    assert main(["replay", game, "--no-pause", "--from", "5"]) == 0
    out = capsys.readouterr().out
    assert "  [5] " in out and "[4]" not in out and "Final scores" in out


def _one_line_error(capsys) -> str:
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in captured.err, captured.err
    return err


def test_bad_input_gives_one_line_and_exit_1(tmp_path, page, capsys, record):
    out = tmp_path / "out.html"
    assert main(["replay", str(tmp_path / "missing.json"), "--html", str(out)]) == 1
    assert "No such file" in _one_line_error(capsys)
    (tmp_path / "junk.json").write_text('{"format": "concordia-env/game", ')
    assert main(["replay", str(tmp_path / "junk.json"), "--html", str(out)]) == 1
    assert "not valid JSON" in _one_line_error(capsys)
    edited = dict(record, actions=list(record["actions"]))
    edited["actions"][3] = 0  # an action that is not legal there
    save_record(edited, tmp_path / "edited.json")
    assert main(["replay", str(tmp_path / "edited.json"), "--html", str(out)]) == 1
    assert "record action 3" in _one_line_error(capsys)
    assert not out.exists()  # nothing written for a record that does not replay

    game = str(page.with_name("game.json"))
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["replay", game, "--html", str(blocker / "out.html")]) == 1
    assert "is a file, not a folder" in _one_line_error(capsys)
    assert main(["replay", game, "--html", str(tmp_path)]) == 1
    assert "is a folder" in _one_line_error(capsys)
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert main(["replay", game, "--html", str(locked / "out.html")]) == 1
        assert "cannot write --html" in _one_line_error(capsys)
    assert list(tmp_path.glob(".*.tmp")) == []


# ---------------------------------------------------------------- in a real browser
def _chromium_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--no-first-run", "--virtual-time-budget=4000", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@needs_chromium
def test_chromium_renders_the_page_at_a_given_moment(page, record):
    """Chromium's own headless mode, no Python driver: the script ran to the end (data-ready),
    the board has every city, and ``#pos=N`` shows action N's text."""
    data = replay_data(record)
    for pos in (0, 40):
        dom = _chromium_cli("--dump-dom", page.as_uri() + f"#pos={pos}").stdout
        assert 'data-ready="1"' in dom, "the page's script did not finish (a JavaScript error?)"
        assert dom.count('class="city"') == 26
        text = re.search(r'id="action-text">([^<]*)<', dom).group(1)
        expected = "Start of the game." if pos == 0 else data["steps"]["text"][pos - 1]
        assert text == expected.replace("&", "&amp;")


@needs_chromium
@needs_playwright
def test_browser_loads_steps_and_draws(page, record, tmp_path):
    from PIL import Image

    data = replay_data(record)
    n = len(record["actions"])
    sync_playwright = browser_sync_playwright()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            problems: list[str] = []
            tab.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}")
                   if m.type in ("error", "warning") else None)
            tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            tab.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:")) else None)
            tab.goto(page.as_uri())
            tab.wait_for_function("document.body.dataset.ready === '1'", timeout=15000)

            def shown() -> tuple[str, str, str]:
                return (tab.inner_text("#action-text"), tab.inner_text("#where"), tab.inner_text("#players"))

            # structure: every city, every route, a panel per player, 7 display places, a VP line per player
            assert tab.locator("svg#board g.city").count() == 26
            assert tab.locator("svg#board polyline.route").count() == len(data["board"]["routes"])
            assert tab.locator("#players .player").count() == 2
            assert tab.locator("#display .dcard").count() == 7
            assert tab.locator("svg#chart polyline.vp-line").count() == 2
            start = shown()
            assert start[0] == "Start of the game." and "action 0 / " in start[1]

            tab.click("#nextStep")
            after_one = shown()
            assert after_one[0] == data["steps"]["text"][0] and after_one != start
            tab.keyboard.press("ArrowRight")
            assert tab.inner_text("#action-text") == data["steps"]["text"][1]
            tab.keyboard.press("ArrowDown")  # to the end of the next turn that ends after action 2
            ends = data["turn_start"][1:] + [n]
            down = min(e for e in ends if e > 2)
            assert int(tab.evaluate("document.body.dataset.pos")) == down
            tab.keyboard.press("ArrowUp")  # back to the end of the turn before
            assert int(tab.evaluate("document.body.dataset.pos")) == max([0] + [e for e in ends if e < down])
            tab.fill("#turnInput", "20")
            tab.click("#goTurn")
            pos = int(tab.evaluate("document.body.dataset.pos"))
            assert pos == data["turn_start"][20] and "turn 20 / " in tab.inner_text("#where")
            coins = [int(v) for v in frames(data)[pos][data["layout"]["coins"][0]:][:2]]
            panels = tab.inner_text("#players")
            assert all(f"{c} sestertii" in panels for c in coins)
            houses = tab.locator("svg#board rect.house").count()
            assert houses == sum(bin(h).count("1") for h in frames(data)[pos][data["layout"]["houses"][0]:][:26])
            assert houses > 0

            tab.keyboard.press("End")
            assert tab.inner_text("#where").startswith(f"action {n} / {n}")
            assert "winner" in tab.inner_text("#players")
            tab.keyboard.press("Home")
            tab.click("#play")
            tab.wait_for_function("Number(document.body.dataset.pos) >= 2", timeout=10000)
            tab.click("#play")  # pause
            paused = tab.evaluate("document.body.dataset.pos")
            tab.wait_for_timeout(600)
            assert tab.evaluate("document.body.dataset.pos") == paused

            tab.evaluate("location.hash = '#turn=20'")
            tab.wait_for_function(f"document.body.dataset.pos === '{data['turn_start'][20]}'", timeout=5000)
            shot = tmp_path / "viewer.png"
            tab.screenshot(path=str(shot))
            board_box = tab.locator("svg#board").bounding_box()
            panel_box = tab.locator("#player-0").bounding_box()
        finally:
            browser.close()
    assert problems == []

    img = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert img.shape == (1000, 1400, 3) and img.std() > 20  # not blank

    def share(box: dict[str, float], rgb: tuple[int, int, int], tol: int = 40) -> float:
        x0, y0 = int(box["x"]), int(box["y"])
        crop = img[y0:min(y0 + int(box["height"]), 1000), x0:x0 + int(box["width"])]
        return float((np.abs(crop - np.array(rgb)).sum(axis=2) < tol).mean())

    assert share(board_box, (0xFB, 0xF8, 0xEE), 6) > 0.4  # the map's background fills the board
    assert share(board_box, (0xA1, 0x7A, 0x52)) > 0.002  # land routes drawn (brown at 80% opacity)
    assert share(board_box, (0xF3, 0xD3, 0x4A)) > 0.0005  # food cities
    assert share(panel_box, (0xE4, 0x1A, 0x1C)) > 0.001  # player 0's red in its panel


def test_a_seed_past_2_53_is_shown_whole(tmp_path):
    """A JavaScript number rounds integers from 2**53 on: the page gets the seed as a string of
    digits and shows it whole (in the title the page's script writes, checked in Chromium when one
    is installed)."""
    from concordia_env.arena.records import partial_record

    seed = 2**53 + 1  # as a JavaScript number: 9007199254740992
    record = partial_record("italia", 2, seed, ["heuristic", "random"], [])
    page = replay_html(record)
    assert _embedded(page)["seed"] == str(seed) == "9007199254740993"
    if CHROMIUM is None:
        return
    path = tmp_path / "big-seed.html"
    path.write_text(page, encoding="utf-8")
    dom = _chromium_cli("--dump-dom", path.as_uri()).stdout
    assert 'data-ready="1"' in dom
    assert re.search(r'id="title">[^<]*seed 9007199254740993[,<]', dom), re.search(r'id="title">[^<]*<', dom)
