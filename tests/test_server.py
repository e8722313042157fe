"""``concordia serve`` (:mod:`concordia_env.server`): a game in the browser against the agents.

Without a browser: the JSON API over a real server on a free loopback port (moves grouped by kind
and tied to map targets, illegal, malformed and stale moves refused with a message and the game
and its record unchanged, agents playing up to the human's next decision, the record saved after
every move, loadable, verifiable and replayable, a new game), the command (resume, Ctrl-C: one
line and exit 130, a port in use: one line and exit 2, bad options). In a real headless Chromium
(the system's, driven by Playwright; never a downloaded browser): a whole 2-player Italia game
against ``random`` played by clicking, from the grouped list and on the map and cards, with no
console errors, ending with the record's scores on the page. The browser test skips, with one
line saying why, when no Chromium binary or no Playwright is found.

``python tests/test_server.py docs/images/serve.png`` takes the screenshot in docs/serve.md.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browser import CHROMIUM, needs_chromium, needs_playwright  # tests/browser.py
from browser import sync_playwright as browser_sync_playwright

from concordia_env import engine as E
from concordia_env.actions import action_range
from concordia_env.agents.base import make_agent
from concordia_env.arena.records import final_state, is_unfinished, load_record, play_game, save_record, verify_record
from concordia_env.cli import main
from concordia_env.display.menu import build_menu
from concordia_env.encoding import observation
from concordia_env.server.app import PAGE_POLICY, PlayServer, make_server
from concordia_env.server.moves import TARGET_KINDS, target_of
from concordia_env.server.session import GameSession, Setup, free_path

SEED = 11
SEAT = 0


# ---------------------------------------------------------------- helpers
def new_session(folder: Path, seed: int = SEED, agent: str = "random", save: Path | None = None) -> GameSession:
    """A 2-player Italia game: the human at seat 0 against ``agent``, saved to ``save`` (default
    ``folder/game.json``)."""
    save = save or folder / "game.json"
    return GameSession(Setup("italia", 2, seed, SEAT), [None, make_agent(agent)], ["human", agent], save,
                       next_save=lambda s: free_path(folder / f"game-seed{s}.json"))


@contextlib.contextmanager
def served(session: GameSession, **options: Any) -> Iterator[PlayServer]:
    """``session`` served on a free loopback port from a thread, for the time of the block
    (``options``: :func:`make_server`'s, ``request_timeout`` say)."""
    server = make_server("127.0.0.1", 0, session, **options)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def call(server: PlayServer, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
         kind: str = "application/json", host_header: str | None = None) -> tuple[int, Any, dict[str, str]]:
    """One HTTP request: (status, the JSON answer or the text of a page, headers)."""
    host, port = server.server_address[:2]
    conn = http.client.HTTPConnection(host, port, timeout=60)
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    headers = {"Content-Type": kind} if data is not None else {}
    if host_header is not None:
        headers["Host"] = host_header
    conn.request(method, path, body=data, headers=headers)
    resp = conn.getresponse()
    text = resp.read().decode("utf-8")
    conn.close()
    answer = json.loads(text) if resp.getheader("Content-Type", "").startswith("application/json") else text
    return resp.status, answer, dict(resp.getheaders())


def digest(session: GameSession) -> tuple[bytes, int, bytes]:
    """The game (state array, actions) and its saved record, to show a refused move changed nothing."""
    return session.state.s.tobytes(), len(session.actions), session.save_path.read_bytes()


def chosen(session: GameSession, chooser) -> int:
    """The move ``chooser`` (an agent standing in for the human) makes now."""
    with session.lock:
        state = session.state.clone()
    return int(chooser.act(observation(state, SEAT), state.legal_action_mask(), state))


def one_line_error(capsys) -> str:
    """The error line on stderr (after argparse's usage line, if any), checked to be one line."""
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    lines = captured.err.strip().splitlines()
    assert lines and "error: " in lines[-1], captured.err
    assert len([ln for ln in lines if "error" in ln]) == 1, captured.err
    return lines[-1]


# ---------------------------------------------------------------- the API
def test_page_and_static_view(tmp_path):
    session = new_session(tmp_path)
    with served(session) as server:
        status, page, headers = call(server, "GET", "/")
        assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
        assert headers["Content-Security-Policy"] == PAGE_POLICY and "connect-src 'self'" in PAGE_POLICY
        assert "function concordiaDrawing(D)" in page and "@@" not in page  # the viewer's drawing, inlined
        assert "http://" not in page and "https://" not in page and "<script src" not in page
        status, view, _ = call(server, "GET", "/api/game")
        assert status == 200 and view["map"] == "italia" and view["seed"] == str(SEED) and view["seat"] == SEAT
        assert view["agents"] == ["you", "random"] and len(view["board"]["cities"]) == 26
        status, state, _ = call(server, "GET", "/api/state")
        assert status == 200 and len(state["frame"]) == view["frame_size"]
        assert call(server, "GET", "/nothing")[0] == 404
        assert call(server, "POST", "/api/nothing", {})[0] == 404
        assert call(server, "PUT", "/api/move", {})[0] == 405
        # another name pointed at this machine (DNS rebinding) gets nothing; localhost does
        port = server.server_address[1]
        status, answer, _ = call(server, "GET", "/api/state", host_header=f"evil.example:{port}")
        assert status == 403 and "answers only" in answer["error"]
        assert call(server, "POST", "/api/move", {"action": 0, "decision": 0}, host_header="evil.example")[0] == 403
        assert call(server, "GET", "/api/state", host_header=f"localhost:{port}")[0] == 200


def test_moves_are_grouped_as_the_menu_and_tied_to_the_map(tmp_path):
    session = new_session(tmp_path)
    chooser = make_agent("heuristic")
    chooser.reset(1)
    seen_kinds: set[str] = set()
    with served(session) as server:
        for _ in range(25):
            _, state, _ = call(server, "GET", "/api/state")
            legal = session.state.legal_actions()
            menu = build_menu(session.state, "you")
            assert state["your_turn"] and state["decision"] == len(session.actions)
            assert state["question"] == menu.title and state["question"].startswith(f"Player {SEAT} (you): ")
            # the terminal's groups, sections and entries, each move with its full name
            assert [g["title"] for g in state["moves"]] == [g.title for g in menu.groups]
            moves = [m for g in state["moves"] for s in g["sections"] for m in s["moves"]]
            assert [m["action"] for m in moves] == menu.actions() and sorted(menu.actions()) == legal
            assert [(m["number"], m["text"]) for m in moves] == [(e.number, e.text) for e in menu.entries]
            assert all(m["full"] == session.state.action_to_string(m["action"]) for m in moves)
            for group in state["moves"]:
                kinds = {action_range(m["action"]) for s in group["sections"] for m in s["moves"]}
                assert kinds == {group["kind"]}
                seen_kinds |= kinds
            targets = state["targets"]
            assert set(targets) == set(TARGET_KINDS)
            expected: dict[str, dict[str, list[int]]] = {kind: {} for kind in TARGET_KINDS}
            for a in legal:
                if (t := target_of(a)) is not None:
                    expected[t[0]].setdefault(str(t[1]), []).append(a)
            assert targets == expected
            call(server, "POST", "/api/move", {"action": chosen(session, chooser), "decision": state["decision"]})
    assert {"play", "move", "build", "done"} <= seen_kinds
    assert target_of(17) is None and target_of(0) == ("card", 0) and target_of(E.A_BUILD + 3) == ("city", 3)
    assert target_of(E.A_PLACE + E.NC + 5) == ("city", 5) and target_of(E.A_PRODUCE + 2) == ("province", 2)
    assert target_of(E.A_BUYCARD + 6) == ("display", 6) and target_of(E.A_MOVE + 3 * E.NL) == ("route", E.NL)


def test_illegal_and_malformed_moves_are_refused_and_change_nothing(tmp_path):
    session = new_session(tmp_path)
    before = digest(session)
    n = len(session.actions)
    illegal = int(np.flatnonzero(session.state.legal_action_mask() == 0)[0])
    with served(session) as server:
        refused = [
            ({"action": illegal, "decision": n}, 400, f"action {illegal} ("),
            ({"action": 402, "decision": n}, 400, "does not exist"),
            ({"action": -1, "decision": n}, 400, "does not exist"),
            ({"action": "3", "decision": n}, 400, "'action' must be an integer"),
            ({"action": True, "decision": n}, 400, "'action' must be an integer"),
            ({"action": 0}, 400, "'decision' must be the integer"),
            ([0, 1], 400, "must be a JSON object"),
        ]
        for body, code, words in refused:
            status, answer, _ = call(server, "POST", "/api/move", body)
            assert status == code and words in answer["error"], (body, answer)
        status, answer, _ = call(server, "POST", "/api/move", raw=b"{not json")
        assert status == 400 and "not JSON" in answer["error"]
        status, answer, _ = call(server, "POST", "/api/move", raw=b'{"action": 0}', kind="text/plain")
        assert status == 415 and "application/json" in answer["error"]
        status, answer, _ = call(server, "POST", "/api/move", raw=b" " * 5000)
        assert status == 413
        assert "is not legal now" in call(server, "POST", "/api/move", {"action": illegal, "decision": n})[1]["error"]
    assert digest(session) == before


def test_a_stale_decision_is_refused_with_409(tmp_path):
    session = new_session(tmp_path)
    before = digest(session)
    n, legal = len(session.actions), session.state.legal_actions()[0]
    with served(session) as server:
        for stale in (n - 1, n + 1):
            status, answer, _ = call(server, "POST", "/api/move", {"action": legal, "decision": stale})
            assert status == 409 and f"decision {stale} is stale: the game is at decision {n}" in answer["error"]
        assert digest(session) == before
        status, answer, _ = call(server, "POST", "/api/move", {"action": legal, "decision": n})
        assert status == 200 and answer["decision"] > n
        status, answer, _ = call(server, "POST", "/api/move", {"action": legal, "decision": n})  # sent twice
        assert status == 409


def test_agents_play_until_the_human_decides_and_every_move_is_saved(tmp_path, capsys):
    session = new_session(tmp_path)
    chooser = make_agent("heuristic")
    chooser.reset(3)
    agent_moves = 0
    with served(session) as server:
        for _ in range(30):
            n = len(session.actions)
            action = chosen(session, chooser)
            text = session.state.action_to_string(action)
            status, state, _ = call(server, "POST", "/api/move", {"action": action, "decision": n})
            assert status == 200 and state["decision"] == len(session.actions) > n
            assert state["log"][n] == {"index": n, "player": SEAT, "text": text}
            assert session.actions[n] == action
            assert state["your_turn"] and session.state.current_player == SEAT
            agent_moves += sum(1 for e in state["log"][n + 1:] if e["player"] != SEAT)
            record = load_record(session.save_path)  # saved after every move
            assert record["actions"] == session.actions and is_unfinished(record)
            assert record["agents"] == ["human", "random"]
            assert final_state(record) == session.state
    assert agent_moves > 10
    # the same seed and the same human moves give the same game: the agents are seeded as in play_game
    again = new_session(tmp_path / "again")
    for i, action in enumerate(session.actions):
        if i < len(again.actions):
            assert again.actions[i] == action
        elif again.state.current_player == SEAT:
            again.play(action, len(again.actions))
    assert again.actions == session.actions
    # the partial record replays in the viewer
    out = tmp_path / "game.html"
    assert main(["replay", str(session.save_path), "--html", str(out)]) == 0 and out.stat().st_size > 10_000
    capsys.readouterr()


def test_new_game_from_the_page(tmp_path):
    session = new_session(tmp_path)
    first = session.save_path
    call_log = len(session.actions)
    with served(session) as server:
        status, answer, _ = call(server, "POST", "/api/new", {"seed": "x"})
        assert status == 400 and "'seed' must be an integer" in answer["error"]
        status, state, _ = call(server, "POST", "/api/new", {"seed": 42})
        assert status == 200 and state["game"] == 2 and session.setup.seed == 42
        assert state["save"] == str(tmp_path / "game-seed42.json") and Path(state["save"]).exists()
        assert call(server, "GET", "/api/game")[1]["seed"] == "42"  # text: JS numbers round big seeds
        status, state, _ = call(server, "POST", "/api/new", {})
        assert status == 200 and session.setup.seed == 43 and state["game"] == 3
    assert len(load_record(first)["actions"]) == call_log  # the first game's record is kept


def test_a_finished_game_is_saved_finished_and_refuses_moves(tmp_path):
    session = new_session(tmp_path)
    chooser = make_agent("heuristic")  # a short game
    chooser.reset(0)
    while not session.state.is_terminal():
        session.play(chosen(session, chooser), len(session.actions))
    record = load_record(session.save_path)
    verify_record(record)
    assert not is_unfinished(record) and record["result"]["winner"] is not None
    with served(session) as server:
        _, state, _ = call(server, "GET", "/api/state")
        assert state["over"] and state["result"] == record["result"] and state["moves"] == []
        status, answer, _ = call(server, "POST", "/api/move", {"action": 0, "decision": len(session.actions)})
        assert status == 409 and "the game is over" in answer["error"]


# ---------------------------------------------------------------- the command
@pytest.fixture
def quick_serve(monkeypatch):
    """``concordia serve`` whose server stops at once as if Ctrl-C were pressed; the session served
    is kept in the returned list."""
    sessions: list[GameSession] = []

    def interrupted(self, poll_interval: float = 0.5) -> None:
        sessions.append(self.session)
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", interrupted)
    return sessions


def test_serve_resume_and_ctrl_c(tmp_path, capsys, quick_serve):
    save = tmp_path / "game.json"
    argv = ["serve", "--map", "italia", "--players", "2", "--agents", "random", "--seed", str(SEED),
            "--port", "0", "--save", str(save)]
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert "Play at http://127.0.0.1:" in captured.out and f"saved after every move to {save}" in captured.out
    err = captured.err.strip()
    assert err == f"Server stopped; the game is saved in {save} (continue with: concordia serve --resume {save})."
    started = quick_serve[0]
    assert load_record(save)["actions"] == started.actions
    # play some moves, then continue from the record: same game, same seat, same agents
    chooser = make_agent("heuristic")
    chooser.reset(5)
    for _ in range(12):
        started.play(chosen(started, chooser), len(started.actions))
    assert main(["serve", "--resume", str(save), "--port", "0"]) == 130
    assert f"continuing {save} after its {len(started.actions)} actions" in capsys.readouterr().out
    resumed = quick_serve[1]
    assert resumed.state == started.state and resumed.setup == started.setup and resumed.save_path == save
    # a game from concordia play continues here too, and a finished one is refused
    finished = tmp_path / "finished.json"
    save_record(play_game("italia", 2, 1, [make_agent("random"), make_agent("random")]), finished)
    assert main(["serve", "--resume", str(finished), "--port", "0"]) == 1
    assert "only an unfinished game can be resumed" in one_line_error(capsys)
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--resume", str(save), "--seat", "1", "--port", "0"])
    assert stop.value.code == 2 and f"--seat 1: in {save} you play seat 0" in one_line_error(capsys)


def test_port_in_use_gives_one_line_and_exit_2(tmp_path, capsys):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        save = tmp_path / "game.json"
        assert main(["serve", "--map", "italia", "--players", "2", "--port", str(port), "--save", str(save)]) == 2
    line = one_line_error(capsys)
    assert line == (f"concordia serve: error: port {port} on 127.0.0.1 is in use (another server?); choose another "
                    "with --port, or --port 0 for a free one")
    assert not save.exists()


@pytest.mark.parametrize("args, words", [
    (["--seat", "2"], "--seat must be 0..1 for 2 players, got 2"),
    (["--agents", "random,random"], "--agents: give one spec for all 1 other seats"),
    (["--agents", "nobody"], "unknown agent 'nobody'"),
    (["--port", "70000"], "--port must be 0..65535, got 70000"),
    (["--players", "5"], "players"),
], ids=["seat", "agents-count", "agent-name", "port", "players"])
def test_bad_options_give_one_line_and_exit_2(args, words, capsys, quick_serve):
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--map", "italia", "--players", "2", "--port", "0", *args])
    assert stop.value.code == 2
    assert words in one_line_error(capsys)
    assert quick_serve == []  # nothing was served


def test_bad_files_give_one_line(tmp_path, capsys, quick_serve):
    with pytest.raises(SystemExit) as stop:
        main(["serve", "--map", "italia", "--players", "2", "--port", "0", "--save", str(tmp_path)])
    assert stop.value.code == 2 and "is a folder" in one_line_error(capsys)
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["serve", "--map", "italia", "--players", "2", "--agents", "random", "--port", "0",
                 "--save", str(blocker / "game.json")]) == 1
    assert "cannot save the game to" in one_line_error(capsys)
    assert main(["serve", "--resume", str(tmp_path / "missing.json"), "--port", "0"]) == 1
    assert "No such file" in one_line_error(capsys)
    assert quick_serve == []


# ---------------------------------------------------------------- in a real browser
@contextlib.contextmanager
def browser_tab(problems: list[str]) -> Iterator[Any]:
    """A headless Chromium tab (1400 x 1000) that records console errors, page errors and any
    request leaving this machine in ``problems``."""
    sync_playwright = browser_sync_playwright()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1400, "height": 1000})
            tab.on("console", lambda m: problems.append(f"console.{m.type}: {m.text}")
                   if m.type in ("error", "warning") else None)
            tab.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            tab.on("request", lambda r: problems.append(f"request: {r.url}")
                   if not r.url.startswith(("http://127.0.0.1:", "data:")) else None)
            yield tab
        finally:
            browser.close()


def wait_for_decision(tab, decision: int) -> None:
    """Until the page shows a decision after ``decision`` and is not waiting for the server."""
    tab.wait_for_function("(d) => document.body.dataset.decision !== d && document.body.dataset.busy === '0'",
                          arg=str(decision), timeout=20000)


def click_target(tab, kind: str, key: int) -> None:
    """Click the map place or card a move acts on (see :func:`concordia_env.server.moves.target_of`)."""
    selector = {"city": f'#targets circle.city-target[data-city="{key}"]',
                "route": f'#targets circle.route-spot[data-route="{key}"]',
                "province": f'#targets circle.province-target[data-province="{key}"]',
                "display": f'#display .dcard.target[data-pos="{key}"]',
                "card": f'#player-{SEAT} .row.hand .cardtag.target[data-type="{key}"]'}[kind]
    tab.click(selector, timeout=5000)


@needs_chromium
@needs_playwright
def test_browser_plays_a_whole_game(tmp_path):
    session = new_session(tmp_path)
    chooser = make_agent("heuristic")  # stands in for the human: short games, every kind of move
    chooser.reset(2)
    problems: list[str] = []
    clicks = {"list": 0, "map": 0, "card": 0, "picker": 0}
    with served(session) as server, browser_tab(problems) as tab:
        tab.goto(server.url)
        tab.wait_for_function("() => document.body.dataset.ready === '1'", timeout=15000)
        assert tab.locator("svg#board g.city").count() == 26 and tab.locator("#players .player").count() == 2
        assert tab.inner_text("#title") == f"Concordia — Italia, 2 players, seed {SEED} — you are player {SEAT}"
        eligible = 0
        while not session.state.is_terminal():
            n, legal = len(session.actions), session.state.legal_actions()
            shown = tab.evaluate("() => [document.body.dataset.decision, document.querySelectorAll('#moves button.move').length]")
            assert shown == [str(n), len(legal)]
            action = chosen(session, chooser)
            target = target_of(action)
            if target is not None:
                eligible += 1
            if target is not None and eligible % 2 == 1:  # every other move that has a place: click it
                click_target(tab, *target)
                if sum(target_of(a) == target for a in legal) > 1:  # several moves there: pick from the list shown
                    tab.click(f'#picker button[data-action="{action}"]', timeout=5000)
                    clicks["picker"] += 1
                clicks["map" if target[0] in ("city", "route", "province") else "card"] += 1
            else:
                tab.click(f'#moves button.move[data-action="{action}"]', timeout=5000)
                clicks["list"] += 1
            wait_for_decision(tab, n)
            assert session.actions[n] == action
        record = load_record(session.save_path)
        verify_record(record)
        scores = record["result"]["scores"]
        assert tab.get_attribute("#result", "data-scores") == ",".join(map(str, scores))
        w = record["result"]["winner"]
        assert f"Winner: player {w} (" in tab.inner_text("#result")
        panel_vp = [int(tab.inner_text(f"#player-{p} [data-field=vp]").split()[0]) for p in range(2)]
        assert panel_vp == scores and "winner" in tab.inner_text(f"#player-{w}")
        assert tab.locator("#moves button.move").count() == 0
        assert not is_unfinished(record) and record["actions"] == session.actions
        # a new game from the page
        tab.fill("#newSeed", "5")
        tab.click("#newGame")
        tab.wait_for_function("() => document.body.dataset.game === '2' && document.body.dataset.busy === '0'",
                              timeout=20000)
        assert "seed 5" in tab.inner_text("#title")
    assert min(clicks.values()) > 0, clicks  # the list, the map, the cards, and a place shared by several moves
    assert problems == []
    print(f"\nbrowser game: {len(record['actions'])} actions, clicks {clicks}", file=sys.stderr)


@needs_chromium
@needs_playwright
@pytest.mark.parametrize("width, height", [(1366, 768), (1400, 1000), (1024, 768)])
def test_the_card_display_is_on_screen_when_its_cards_are_the_targets(tmp_path, width, height):
    session = new_session(tmp_path)
    senator = [t.name for t in session.state.game.components.card_types].index("Senator")
    session.play(E.A_PLAY + senator, len(session.actions))
    assert session.state.phase == E.PH_BUY
    problems: list[str] = []
    with served(session) as server, browser_tab(problems) as tab:
        tab.set_viewport_size({"width": width, "height": height})
        tab.goto(server.url)
        tab.wait_for_function("() => document.body.dataset.ready === '1'", timeout=15000)
        assert "click a highlighted place or card" in tab.inner_text("#status")
        shown = tab.evaluate("""() => {
            const bar = document.getElementById("bar").getBoundingClientRect();
            return Array.from(document.querySelectorAll("#display .dcard.target")).map(function (c) {
                const r = c.getBoundingClientRect();
                return r.top >= bar.bottom && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth;
            });
        }""")
        assert len(shown) == len([a for a in session.state.legal_actions() if target_of(a) and target_of(a)[0] == "display"])
        assert shown and all(shown), shown  # every card to buy is on screen, below the status bar
        if width >= 1366:  # the board and the display fit together: nothing had to scroll
            assert tab.evaluate("() => window.scrollY") == 0
    assert problems == []


@needs_chromium
@needs_playwright
def test_the_page_keeps_a_seed_past_2_53_whole(tmp_path):
    seed = 2**53 + 1  # a JavaScript number would make it 9007199254740992
    session = new_session(tmp_path, seed=seed)
    problems: list[str] = []
    with served(session) as server, browser_tab(problems) as tab:
        tab.goto(server.url)
        tab.wait_for_function("() => document.body.dataset.ready === '1'", timeout=15000)
        assert f"seed {seed} " in tab.inner_text("#title")
        assert tab.input_value("#newSeed") == str(seed + 1)
        tab.click("#newGame")
        tab.wait_for_function("() => document.body.dataset.game === '2' && document.body.dataset.busy === '0'",
                              timeout=20000)
        assert session.setup.seed == seed + 1 and f"seed {seed + 1} " in tab.inner_text("#title")
        tab.fill("#newSeed", "12x")
        tab.click("#newGame")
        assert "whole number" in tab.inner_text("#message") and session.game_id == 2
    assert problems == []


# ---------------------------------------------------------------- the screenshot in docs/serve.md
def _shared_target(session: GameSession) -> tuple[str, int] | None:
    """A city or route that several legal moves of the human share now (the page lists them on a click)."""
    targets = [target_of(a) for a in session.state.legal_actions()]
    return next((t for t in targets if t is not None and t[0] in ("city", "route") and targets.count(t) > 1), None)


def take_screenshot(path: str, decisions: int = 45) -> None:
    """The play page after at least ``decisions`` human moves (the heuristic agent standing in), at
    the first decision after that with fewer than 20 moves and several on one city or route, with
    that place clicked (the page lists its moves), written to ``path`` as a PNG of 256 colours."""
    import tempfile

    from PIL import Image

    target_path = os.path.abspath(path)
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)  # the page shows the record's path as given: a plain file name, as by default
        try:
            session = new_session(Path("."), save=Path(f"concordia-italia-2p-seed{SEED}.json"))
            chooser = make_agent("heuristic")
            chooser.reset(2)
            for i in range(decisions + 200):
                if session.state.is_terminal() or (i >= decisions and len(session.state.legal_actions()) < 20
                                                   and _shared_target(session)):
                    break
                session.play(chosen(session, chooser), len(session.actions))
            problems: list[str] = []
            with served(session) as server, browser_tab(problems) as tab:
                tab.goto(server.url)
                tab.wait_for_function("() => document.body.dataset.ready === '1'", timeout=15000)
                target = _shared_target(session)
                if target is not None:
                    click_target(tab, *target)
                tab.screenshot(path="shot.png")
            assert problems == [], problems
            shot = Image.open("shot.png").convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
            shot.save(target_path, optimize=True)
        finally:
            os.chdir(here)
    print(f"{path}: {Path(target_path).stat().st_size / 1024:.0f} kB")


if __name__ == "__main__":
    take_screenshot(sys.argv[1] if len(sys.argv) > 1 else "docs/images/serve.png")
