"""Agents from outside the package play where a built-in does: the C example bot (compiled with ``cc``),
the JavaScript one (Node.js) and a ``module:Class`` agent each rank a row with ``concordia ladder``,
whose results file passes ``--check`` and names the agent's spec; and a bot and a ``module:Class``
agent face the human in ``concordia serve``, deciding as the human's moves come in over the HTTP
API, the saved record naming their specs; a bot's process ends with its game and with the server.
(``concordia tournament``: tests/test_bots.py and tests/test_own_agents.py.)"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from test_bots import JS_BOT, _gone, c_bot  # noqa: F401 - c_bot: the fixture, the C bot compiled with cc
from test_ladder import ladder
from test_own_agents import own_agents  # noqa: F401 - the fixture: tests/own_agents on sys.path
from test_server import SEAT, call, chosen, new_session, served

from concordia_env.agents import make_agent
from concordia_env.arena.ladder import RESULTS_NAME
from concordia_env.arena.records import load_record, verify_record
from concordia_env.cli import main
from concordia_env.server.app import PlayServer
from concordia_env.server.session import GameSession

#: one deal of Italia against the table's two cheapest agents: 2 lines x 1 deal x 2 seat rotations
QUICK = ["--pool", "random,heuristic", "--map", "italia", "--deals", "1", "--no-progress"]
QUICK_GAMES = 4
MODULE_AGENT = "tiny_agents:Offset:offset=1"


def _ladder_row(spec: str, name: str, out: Path) -> dict:
    """``concordia ladder`` for ``spec``, checked with ``--check``: its results file."""
    code, printed = ladder("--agent", spec, "--name", name, *QUICK, "--out", str(out))
    assert code == 0, printed
    results = out / RESULTS_NAME
    doc = json.loads(results.read_text())
    assert doc["agent"] == {"name": name, "spec": spec} and doc["games"] == doc["planned"] == QUICK_GAMES
    (setting,) = doc["settings"]
    assert [line["id"] for line in setting["lines"]] == [f"italia2-{name}-vs-heuristic", f"italia2-{name}-vs-random"]
    for line in setting["lines"]:
        row = line["per_agent"][name]
        assert line["complete"] and row["spec"] == spec and row["games"] == 2 and row["decisions"] > 100
        assert all(spec in game["seats"] and not game["truncated"] for game in line["per_game"])
    code, printed = ladder("--check", str(results))
    assert (code, printed) == (0, f"{results}: valid ladder results: {name} (`{spec}`), {QUICK_GAMES} games: "
                                  "italia2 (not comparable)\n")
    return doc


# ------------------------------------------------------------------ concordia ladder
def test_the_javascript_bot_climbs_the_ladder(tmp_path):
    _ladder_row(f"bot:manifest={JS_BOT}", "jsbot", tmp_path / "js")


def test_the_c_bot_climbs_the_ladder(c_bot, tmp_path):  # noqa: F811 - the fixture
    _ladder_row(f"bot:manifest={c_bot}", "cbot", tmp_path / "c")


def test_a_module_agent_climbs_the_ladder(own_agents, tmp_path):  # noqa: F811 - the fixture
    _ladder_row(MODULE_AGENT, "offset1", tmp_path / "module")


# ------------------------------------------------------------------ concordia serve
def post_move(server: PlayServer, session: GameSession, chooser) -> list[int]:
    """The human's move (``chooser``'s) through the API, checked to be played and the game to wait for
    the human again: the seats that moved after it."""
    n = len(session.actions)
    status, state, _ = call(server, "POST", "/api/move", {"action": chosen(session, chooser), "decision": n})
    assert status == 200 and state["decision"] == len(session.actions) > n, state
    assert state["log"][n]["player"] == SEAT and (state["your_turn"] or state["over"])
    return [entry["player"] for entry in state["log"][n + 1:]]


@pytest.fixture
def serve_and_play(monkeypatch):
    """``concordia serve`` served for real (a thread) while ``play(server, session)`` posts the human's
    moves over HTTP; then stopped as by Ctrl-C. The sessions served are kept in the returned list."""
    sessions: list[GameSession] = []
    plays: list = []
    serve = PlayServer.serve_forever

    def served_then_stopped(self, poll_interval: float = 0.5) -> None:
        sessions.append(self.session)
        thread = threading.Thread(target=serve, args=(self, 0.05), daemon=True)
        thread.start()
        try:
            plays.pop(0)(self, self.session)
        finally:
            self.shutdown()
            thread.join()
        raise KeyboardInterrupt

    monkeypatch.setattr(PlayServer, "serve_forever", served_then_stopped)
    return sessions, plays


def test_a_bot_and_a_module_agent_face_the_human_in_serve(own_agents, tmp_path, serve_and_play):  # noqa: F811
    bot = f"bot:manifest={JS_BOT}"
    save = tmp_path / "game.json"
    chooser = make_agent("heuristic")
    chooser.reset(2)
    replied: list[int] = []  # the seats that moved after a human move, before the human's next decision
    pids: list[int] = []

    def play(server: PlayServer, session: GameSession) -> None:
        for _ in range(40):  # the human's moves through the API; the agents answer up to the next decision
            replied.extend(post_move(server, session, chooser))
            if min(replied.count(1), replied.count(2)) >= 3:
                break
        pids.append(session.agents[2].process.proc.pid)  # the bot is still in the game

    sessions, plays = serve_and_play
    plays.append(play)
    argv = ["serve", "--map", "italia", "--players", "3", "--seed", "5", "--agents", f"{MODULE_AGENT},{bot}",
            "--port", "0", "--save", str(save)]
    assert main(argv) == 130
    (session,) = sessions
    assert session.names == ["human", MODULE_AGENT, bot]
    assert min(replied.count(1), replied.count(2)) >= 3  # each agent decided, in answer to the human's moves
    assert session.agents[2].decisions >= 3 and session.agents[2].bot_name == "js-random"
    assert type(session.agents[1]).__name__ == "Offset" and session.agents[1].offset == 1
    record = load_record(save)
    assert record["agents"] == ["human", MODULE_AGENT, bot] and record["actions"] == session.actions
    assert session.agents[2].process is None and _gone(pids[0])  # serve stopped: the bot's process with it


def test_a_bot_in_serve_ends_with_its_game(c_bot, tmp_path):  # noqa: F811 - the fixture
    bot = f"bot:manifest={c_bot}"
    session = new_session(tmp_path, agent=bot)
    chooser = make_agent("heuristic")
    chooser.reset(0)
    with served(session) as server:
        while 1 not in post_move(server, session, chooser):
            pass
        pid = session.agents[1].process.proc.pid
        while not session.state.is_terminal():
            session.play(chosen(session, chooser), len(session.actions))
        assert session.agents[1].process is None and _gone(pid)  # the game is over: so is the bot's process
        record = load_record(session.save_path)
        assert record["agents"] == ["human", bot] and record["result"]["winner"] is not None
        verify_record(record)
        status, state, _ = call(server, "POST", "/api/new", {"seed": 3})  # a new game: a new process when it decides
        assert status == 200 and state["game"] == 2 and state["your_turn"]
        while 1 not in post_move(server, session, chooser):
            pass
        assert session.agents[1].process.proc.pid != pid
    session.agents[1].close()
