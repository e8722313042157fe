"""The analysis panel: a search agent's visit shares and values for the position on screen, in
``concordia serve --analysis SPEC`` (``GET /api/analysis``, a worker process) and in
``concordia replay --html --analysis SPEC`` (embedded in the page), :mod:`concordia_env.display.analysis`.

Without a browser: a seeded position's analysis (every legal move by name, shares summing to 1,
values in range, the same analysis again from the same seed), the endpoint (the same analysis as
in-process, refusals as one JSON line, a long search answered 503 while the server keeps answering
the rest, a worker that died started again), the replay page's embedded analysis (every K-th
position, the same on every run) and bad options (one line, exit 2). In a real headless Chromium
(``tests/browser.py``): the panel toggled on both pages, its rows read back.
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
from browser import needs_chromium, needs_playwright  # tests/browser.py
from test_server import browser_tab, call, new_session, one_line_error, served

from concordia_env.agents.base import make_agent
from concordia_env.arena.records import play_game, save_record
from concordia_env.cli import main
from concordia_env.display.analysis import (
    PAGE_MOVE_FIELDS,
    analyse,
    analysis_seed,
    make_analyst,
    page_analysis,
    record_positions,
)
from concordia_env.server.analysis import ANALYSIS_OFF, Analyst, position_of
from concordia_env.server.app import PlayServer
from concordia_env.state import new_game

SPEC = "mcts:iterations=200"
#: a search long enough (random playouts to the end of the game) to still run while the test looks
SLOW_SPEC = "mcts:iterations=4000:rollout=random"
#: the legal moves of the human (seat 0) at decision 2 of test_server's seeded game (seed 11)
FIRST_MOVES = {"play Tribunus", "play Architectus", "play Praefectus", "play Mercator (3)", "play Senator",
               "play Diplomat (Jupiter)"}


@pytest.fixture(scope="module")
def analyst() -> Iterator[Analyst]:
    """One analyst (one worker process) for the endpoint tests of this module."""
    found = Analyst(SPEC)
    yield found
    found.close()


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    """A 2-player Italia game between the heuristic and random agents."""
    return play_game("italia", 2, 5, [make_agent("heuristic"), make_agent("random")])


def check_analysis(a: dict[str, Any], players: int) -> None:
    """What every searched position's analysis holds: every legal move once, shares of the root's
    visits summing to 1, most visited first, values of visited moves and of the seats in range."""
    assert not a["over"] and not a["forced"] and a["legal"] == len(a["moves"]) == len({m["action"] for m in a["moves"]})
    assert sum(m["visits"] for m in a["moves"]) == a["iterations"]
    assert sum(m["share"] for m in a["moves"]) == pytest.approx(1.0, abs=1e-12)
    assert all(m["share"] == m["visits"] / a["iterations"] for m in a["moves"])
    visits = [m["visits"] for m in a["moves"]]
    assert visits == sorted(visits, reverse=True)
    assert all((m["value"] is None) == (m["visits"] == 0) for m in a["moves"])
    assert all(0 <= m["value"] <= 1 for m in a["moves"] if m["value"] is not None)  # the end is not fixed yet
    assert len(a["values"]) == players and sum(a["values"]) == pytest.approx(1.0) and all(0 <= v <= 1 for v in a["values"])


# ---------------------------------------------------------------- one position
def test_a_seeded_position_has_every_legal_move_by_name_and_the_same_analysis_again():
    state = new_game("italia", 2, 11)
    agent = make_analyst(SPEC)
    a = analyse(agent, state, analysis_seed(11, 0))
    check_analysis(a, 2)
    assert a["player"] == state.current_player and a["iterations"] == 200
    assert [m["name"] for m in a["moves"]] == [state.action_to_string(m["action"]) for m in a["moves"]]
    assert {m["action"] for m in a["moves"]} == set(state.legal_actions())
    assert a["moves"][0]["name"] == "play Architectus"  # the heuristic's priors lead the search there
    assert analyse(make_analyst(SPEC), state, analysis_seed(11, 0)) == a  # a fresh agent, the same seed
    assert analysis_seed(11, 0) != analysis_seed(11, 1) != analysis_seed(12, 1)


def test_forced_and_finished_positions_are_not_searched(record):
    agent = make_analyst(SPEC)
    forced = next(state.clone() for _, state in record_positions(record) if len(state.legal_actions()) == 1)
    a = analyse(agent, forced, 0)
    (move,) = a["moves"]
    assert a["forced"] and a["values"] is None and move["share"] == 1.0 and move["value"] is None
    assert move["name"] == forced.action_to_string(forced.legal_actions()[0])
    *_, (last, end) = record_positions(record)
    assert analyse(agent, end, 0) == {"over": True, "forced": False, "player": None, "iterations": 0, "legal": 0,
                                      "values": None, "moves": []}


@pytest.mark.parametrize("spec, words", [
    ("heuristic", "analysis spec 'heuristic' is not a search agent: use mcts or az"),
    ("nobody", "unknown agent 'nobody'"),
    ("mcts:iterations=0", "iterations must be a positive int, got 0"),
    ("", "the analysis needs a search agent spec"),
], ids=["not-a-search", "unknown", "bad-option", "empty"])
def test_a_bad_spec_is_one_clear_error(spec, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        make_analyst(spec)
    with pytest.raises(ValueError, match=re.escape(words)):
        Analyst(spec)  # before any process starts


# ---------------------------------------------------------------- the endpoint
def test_the_endpoint_answers_the_analysis_of_the_position_now(tmp_path, analyst):
    session = new_session(tmp_path)
    with served(session, analyst=analyst) as server:
        status, view, _ = call(server, "GET", "/api/game")
        assert status == 200 and view["analysis"] == SPEC
        game, position = position_of(session)
        status, a, _ = call(server, "GET", f"/api/analysis?decision={position.decision}")
    assert status == 200 and (a["game"], a["decision"], a["spec"], a["player"]) == (1, 2, SPEC, 0)
    check_analysis(a, 2)
    assert {m["name"] for m in a["moves"]} == FIRST_MOVES
    state = session.state
    assert [m["name"] for m in a["moves"]] == [state.action_to_string(m["action"]) for m in a["moves"]]
    # the worker's analysis is the one made here, from the game's seed and the decision number
    here = analyse(make_analyst(SPEC), state, analysis_seed(session.setup.seed, position.decision))
    assert {k: a[k] for k in here} == here


def test_the_endpoint_refuses_in_one_json_line(tmp_path, analyst):
    session = new_session(tmp_path)
    with served(session) as server:  # no --analysis
        status, view, _ = call(server, "GET", "/api/game")
        assert view["analysis"] is None
        assert call(server, "GET", "/api/analysis")[:2] == (404, {"error": ANALYSIS_OFF})
    with served(session, analyst=analyst) as server:
        assert call(server, "GET", "/api/analysis?decision=7")[:2] == (
            409, {"error": "decision 7 is stale: the game is at decision 2"})
        for bad in ("x", "-1", "", "2&decision=2", "1" * 40):
            status, answer, _ = call(server, "GET", f"/api/analysis?decision={bad}")
            assert status == 400 and answer["error"].startswith("'decision' must be the decision number"), bad
        assert call(server, "GET", "/api/analysis")[0] == 200  # no decision: the position now


def test_a_long_search_is_answered_503_and_the_server_keeps_answering(tmp_path, capsys):
    session = new_session(tmp_path)
    slow = Analyst(SLOW_SPEC, wait=0.0)
    try:
        with served(session, analyst=slow) as server:
            _, position = position_of(session)
            status, answer, _ = call(server, "GET", "/api/analysis")
            assert status == 503 and answer["error"] == (f"the analysis ({SLOW_SPEC}) of decision 2 is still running "
                                                         "after 0 s; ask again in a moment")
            # the search runs in its own process: the game is served meanwhile
            assert call(server, "GET", "/api/state")[0] == 200
            assert not slow._jobs[position].done.is_set()
            done = slow.analysis(position, wait=float("inf"))
            status, answer, _ = call(server, "GET", "/api/analysis")
            assert status == 200 and {k: answer[k] for k in done} == done
            # a worker that died: one line for the position it had, a new worker for the next request
            slow.wait = 120.0
            assert slow._process is not None
            slow._process.kill()
            session.play(answer["moves"][0]["action"], position.decision)
            status, answer, _ = call(server, "GET", "/api/analysis")
            assert status == 500 and re.fullmatch(r"the analysis \(.*\) of decision \d+ failed: the analysis process "
                                                  r"stopped \(exit code -9\); the next position starts a new one",
                                                  answer["error"]), answer
            status, answer, _ = call(server, "GET", "/api/analysis")
            assert status == 200 and answer["decision"] == len(session.actions)
    finally:
        slow.close()
    err = capsys.readouterr().err  # the failure also on the terminal, once
    assert err.count(f"concordia serve: error: the analysis ({SLOW_SPEC}) of decision 3 failed: the analysis process "
                     "stopped (exit code -9)") == 1, err


# ---------------------------------------------------------------- the commands
@pytest.fixture
def quick_servers(monkeypatch) -> list[PlayServer]:
    """``concordia serve`` stopping at once as if Ctrl-C were pressed; the servers it would have served."""
    servers: list[PlayServer] = []

    def interrupted(self: PlayServer, poll_interval: float = 0.5) -> None:
        servers.append(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", interrupted)
    return servers


def test_serve_analysis_option(tmp_path, capsys, quick_servers):
    argv = ["serve", "--map", "italia", "--players", "2", "--agents", "random", "--port", "0",
            "--save", str(tmp_path / "game.json")]
    assert main([*argv, "--analysis", SPEC]) == 130
    assert f"Analysis panel: {SPEC} (the Analysis button on the page)" in capsys.readouterr().out
    (server,) = quick_servers
    assert server.analyst is not None and server.analyst.spec == SPEC and server.analyst._process is None  # closed
    for spec, words in (("heuristic", "--analysis: analysis spec 'heuristic' is not a search agent"),
                        ("nobody", "unknown agent 'nobody'")):
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--analysis", spec])
        line = one_line_error(capsys)
        assert stop.value.code == 2 and "concordia serve: error: --analysis: " in line and words in line
    assert len(quick_servers) == 1


def test_serve_stops_with_one_line_when_the_analysis_cannot_run(tmp_path, capsys, quick_servers, monkeypatch):
    def broken(self: Analyst) -> subprocess.Popen[str]:  # a worker process that exits at once
        if self._process is None:
            self._process = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, text=True)
        return self._process

    monkeypatch.setattr(Analyst, "_worker", broken)
    save = tmp_path / "game.json"
    assert main(["serve", "--map", "italia", "--players", "2", "--agents", "random", "--port", "0",
                 "--save", str(save), "--analysis", SPEC]) == 1
    assert one_line_error(capsys) == (f"concordia serve: error: the analysis ({SPEC}) of decision 0 failed: the analysis "
                                      "process stopped (exit code 3); the next position starts a new one")
    assert not save.exists() and quick_servers == []  # nothing saved, nothing served


def _embedded(html: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', html, re.S)
    assert m is not None
    return json.loads(m.group(1))


@pytest.fixture(scope="module")
def analysed_page(tmp_path_factory, record) -> Path:
    """``record``'s viewer page with the analysis of every 5th position, through the command line."""
    folder = tmp_path_factory.mktemp("analysed")
    save_record(record, folder / "game.json")
    assert main(["replay", str(folder / "game.json"), "--html", str(folder / "game.html"), "--analysis", SPEC,
                 "--analysis-every", "5"]) == 0
    return folder / "game.html"


def test_replay_html_embeds_the_analysis_of_every_kth_position(analysed_page, record, tmp_path, capsys):
    html = analysed_page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html and "<script src" not in html
    data = _embedded(html)["analysis"]
    n = len(record["actions"])
    assert (data["spec"], data["every"], data["fields"]) == (SPEC, 5, list(PAGE_MOVE_FIELDS))
    assert [p for p, a in enumerate(data["positions"]) if a is not None] == sorted({*range(0, n + 1, 5), n})
    agent = make_analyst(SPEC)
    for p, state in record_positions(record):
        if data["positions"][p] is not None and p in (0, 5, 100, n):
            assert data["positions"][p] == page_analysis(analyse(agent, state, analysis_seed(record["seed"], p)))
    searched = [a for a in data["positions"] if a is not None and not a["forced"] and not a["over"]]
    assert searched and all(sum(m[2] for m in a["moves"]) == a["iterations"] for a in searched)
    assert data["positions"][n]["over"]
    # the same page again: the seeds reproduce the analysis
    again = tmp_path / "again.html"
    assert main(["replay", str(analysed_page.with_name("game.json")), "--html", str(again), "--analysis", SPEC,
                 "--analysis-every", "5"]) == 0
    assert f"with the analysis of {len(range(0, n + 1, 5)) + (n % 5 != 0)} positions by {SPEC}" in capsys.readouterr().out
    assert _embedded(again.read_text(encoding="utf-8"))["analysis"] == data


@pytest.mark.parametrize("args, words", [
    (["--html", "OUT", "--analysis", "heuristic"], "--analysis: analysis spec 'heuristic' is not a search agent"),
    (["--html", "OUT", "--analysis", "mcts:depth=2"], "unexpected keyword argument 'depth'"),
    (["--html", "OUT", "--analysis", SPEC, "--analysis-every", "0"], "--analysis-every must be 1 or more, got 0"),
    (["--analysis", SPEC, "--no-pause"], "--analysis needs --html"),
], ids=["not-a-search", "bad-option", "every", "no-html"])
def test_replay_bad_analysis_options_give_one_line_and_exit_2(args, words, tmp_path, record, capsys):
    save_record(record, tmp_path / "game.json")
    args = [str(tmp_path / "out.html") if a == "OUT" else a for a in args]
    with pytest.raises(SystemExit) as stop:
        main(["replay", str(tmp_path / "game.json"), *args])
    assert stop.value.code == 2 and words in one_line_error(capsys)
    assert not (tmp_path / "out.html").exists()


# ---------------------------------------------------------------- in a real browser
def fixed(x: float | None, digits: int) -> str:
    """``x.toFixed(digits)`` as JavaScript writes it (the exact value rounded, a tie away from zero),
    or the page's dash for no value."""
    if x is None:
        return "\u2013"
    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def panel_rows(tab) -> list[list[str]]:
    """The analysis panel's rows as shown: [move, share, value] of each."""
    return tab.eval_on_selector_all("#analysisMoves tbody tr:not(.unvisited)",
                                    "rows => rows.map(r => [...r.cells].map(c => c.textContent))")


@contextlib.contextmanager
def opened(url: str) -> Iterator[Any]:
    """A headless Chromium tab on ``url``, checked at the end for console errors and outside requests."""
    problems: list[str] = []
    with browser_tab(problems) as tab:
        tab.goto(url)
        tab.wait_for_function("() => document.body.dataset.ready === '1'", timeout=20000)
        yield tab
    assert [p for p in problems if p != f"request: {url.split('#')[0]}"] == []  # (the page itself is no problem)


@needs_chromium
@needs_playwright
def test_browser_toggles_the_serve_panel_and_reads_its_rows(tmp_path, analyst):
    session = new_session(tmp_path)
    with served(session, analyst=analyst) as server, opened(server.url) as tab:
        assert tab.is_hidden("#analysisBox") and tab.is_visible("#analysisToggle")
        tab.click("#analysisToggle")
        tab.wait_for_function("() => document.body.dataset.analysis === '1:2'", timeout=30000)
        a = call(server, "GET", "/api/analysis?decision=2")[1]
        visited = [m for m in a["moves"] if m["visits"]]
        assert panel_rows(tab) == [[m["name"], fixed(100 * m["share"], 1) + "%", fixed(m["value"], 3)] for m in visited]
        assert tab.inner_text("#analysisTitle") == f"Analysis by {SPEC}"
        assert "player 0 (you) to decide" in tab.inner_text("#analysisInfo")
        values = tab.inner_text("#analysisValues")
        assert all(f"player {p} {fixed(v, 3)}" in values for p, v in enumerate(a["values"]))
        # a move: the panel follows the new position
        tab.click(f'#moves button.move[data-action="{visited[0]["action"]}"]')
        tab.wait_for_function("() => document.body.dataset.analysis.startsWith('1:') && "
                              "document.body.dataset.analysis !== '1:2'", timeout=30000)
        assert tab.inner_text("#analysisInfo").startswith("player 0 (you)")
        tab.click("#analysisToggle")
        assert tab.is_hidden("#analysisBox")


@needs_chromium
@needs_playwright
def test_browser_toggles_the_replay_panel_and_reads_its_rows(analysed_page):
    data = _embedded(analysed_page.read_text(encoding="utf-8"))["analysis"]
    with opened(analysed_page.as_uri() + "#pos=5") as tab:
        assert tab.is_hidden("#analysisBox") and tab.is_visible("#analysisToggle")
        tab.click("#analysisToggle")
        assert tab.is_visible("#analysisBox") and tab.inner_text("#analysisTitle") == f"Analysis by {SPEC}"
        a = data["positions"][5]
        rows = [[m[1], fixed(100 * m[3], 1) + "%", fixed(m[4], 3)] for m in a["moves"]]
        assert panel_rows(tab) == rows and rows
        tab.keyboard.press("ArrowRight")  # position 6: not analysed
        assert tab.inner_text("#analysisInfo").startswith("Position 6 is not analysed: the page has the analysis of "
                                                          "positions 0, 5, 10,")
        assert panel_rows(tab) == []
        tab.keyboard.press("a")  # the key hides it again
        assert tab.is_hidden("#analysisBox")
