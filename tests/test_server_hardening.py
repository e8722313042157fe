"""``concordia serve`` against hostile or careless clients: bounded seeds (a refused new game keeps
the old one), malformed requests answered 4xx, half-sent requests timed out, no traceback when a
browser goes away, no framing, a token when listening beyond this machine, and the human's move
saved before the agents think. Each test runs a real server on a free port (``test_server.py``'s
helpers)."""

from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_server import SEAT, SEED, call, chosen, digest, new_session, quick_serve, served  # noqa: F401

from concordia_env.agents.base import make_agent
from concordia_env.agents.random_agent import RandomAgent
from concordia_env.arena.records import load_record
from concordia_env.cli import MAX_SEED, main
from concordia_env.server.app import PlayServer, make_server
from concordia_env.server.session import GameSession, Setup, free_path


def raw_request(server: PlayServer, data: bytes, timeout: float = 20) -> tuple[int, str]:
    """Send ``data`` as is on a new connection: (the answer's status, its body)."""
    with socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=timeout) as s:
        s.sendall(data)
        answer = b""
        while chunk := s.recv(65536):
            answer += chunk
    if not answer.startswith(b"HTTP/"):  # an HTTP/0.9 request is answered with the body alone
        return int(json.loads(answer)["error"].split()[0]), answer.decode("utf-8", "replace")
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode("utf-8", "replace")


def post(server: PlayServer, path: str, body: bytes, length: bytes | None = None) -> bytes:
    """A raw POST with the Host header the server answers and ``length`` as its Content-Length."""
    port = server.server_address[1]
    length = str(len(body)).encode() if length is None else length
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n".encode()
            + b"Content-Length: " + length + b"\r\n\r\n" + body)


# ---------------------------------------------------------------- numbers and malformed requests
def test_a_seed_out_of_range_is_refused_and_the_game_is_kept(tmp_path):
    session = new_session(tmp_path)
    first = session.save_path
    with served(session) as server:
        for seed in (10**250, -1, 2**63, "1" * 30, "-3", "12a", "١٢", 1.5, True, [1]):
            before = digest(session)
            status, answer, _ = call(server, "POST", "/api/new", {"seed": seed})
            assert status == 400 and "'seed' must be" in answer["error"], (seed, answer)
            assert len(answer["error"]) < 200  # a 251-digit seed is cut in the message
            assert digest(session) == before and session.save_path == first and session.game_id == 1
        # the old game goes on, saved to its own record
        n = len(session.actions)
        status, state, _ = call(server, "POST", "/api/move", {"action": chosen(session, make_agent("random")),
                                                              "decision": n})
        assert status == 200 and load_record(first)["actions"] == session.actions
        # a seed past 2**53 (rounded by a JavaScript number) arrives whole as a string, and is shown whole
        big = 2**53 + 1
        status, state, _ = call(server, "POST", "/api/new", {"seed": str(big)})
        assert status == 200 and session.setup.seed == big
        assert call(server, "GET", "/api/game")[1]["seed"] == str(big)
        status, _, _ = call(server, "POST", "/api/new", {"seed": MAX_SEED})
        assert status == 200 and session.setup.seed == MAX_SEED


def test_a_new_game_that_cannot_start_keeps_the_old_one(tmp_path, capsys):
    session = new_session(tmp_path)
    before = digest(session)

    def no_room(seed: int) -> Path:
        raise OSError(28, "No space left on device")

    session.next_save = no_room
    with served(session) as server:
        status, answer, _ = call(server, "POST", "/api/new", {"seed": 5})
        assert status == 500 and "No space left" in answer["error"]
        assert digest(session) == before and session.setup.seed == SEED and session.game_id == 1
        assert call(server, "GET", "/api/game")[1]["seed"] == str(SEED)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("length", ["١٢".encode(), "²".encode("latin-1"), b"-5", b"12abc", b"0x10", b" "],
                         ids=["arabic-digits", "superscript", "negative", "letters", "hex", "blank"])
def test_a_content_length_that_is_not_ascii_digits_is_400(tmp_path, length):
    session = new_session(tmp_path)
    before = digest(session)
    with served(session) as server:
        status, body = raw_request(server, post(server, "/api/new", b'{"seed": 12}', length))
        assert status == 400 and "Content-Length" in json.loads(body)["error"]
    assert digest(session) == before


def test_every_malformed_request_gets_a_4xx_and_changes_nothing(tmp_path, capsys):
    session = new_session(tmp_path)
    before = digest(session)
    n = len(session.actions)
    with served(session) as server:
        port = server.server_address[1]
        bodies = [b"\xff\xfe{}", b"[" * 3000, b'{"action": NaN, "decision": 0}', b'{"action": 1e999}',
                  json.dumps({"action": int("9" * 4000), "decision": n}).encode(),
                  json.dumps({"action": 0, "decision": int("7" * 4000)}).encode(), b'"text"', b"null"]
        for body in bodies:
            status, text = raw_request(server, post(server, "/api/move", body))
            assert 400 <= status < 500, (body[:40], status, text)
            error = json.loads(text)["error"]
            assert len(error) < 300, error  # huge numbers are cut
        for data in [b"GARBAGE\r\n\r\n", b"GET / HTTP/x.y\r\n\r\n", b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n",
                     f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX: {'y' * 70000}\r\n\r\n".encode(),
                     f"POST /api/move HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n".encode(),
                     f"DELETE /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()]:
            status, _ = raw_request(server, data)
            assert 400 <= status < 500, (data[:40], status)
    assert digest(session) == before
    assert "Traceback" not in capsys.readouterr().err


# ---------------------------------------------------------------- connections
def test_half_sent_requests_are_dropped_after_the_timeout(tmp_path):
    session = new_session(tmp_path)
    with served(session, request_timeout=1.0) as server:
        port = server.server_address[1]
        clients = []
        for k in range(40):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            # half a request: a header line, or a POST whose body never comes
            s.sendall(f"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode() if k % 2 else
                      post(server, "/api/move", b"{", length=b"30"))
            clients.append(s)
        time.sleep(2.5)
        closed = 0
        for s in clients:
            with s:
                data = s.recv(65536)  # the server has answered (408) or just closed: never blocks
                closed += data == b"" or data.startswith(b"HTTP/1.0 408")
        assert closed == len(clients)
        assert call(server, "GET", "/api/state")[0] == 200  # and it still serves


def test_a_browser_going_away_is_no_traceback(tmp_path, capsys):
    session = new_session(tmp_path)
    with served(session) as server:
        port = server.server_address[1]
        for _ in range(5):  # ask for the page and reset the connection at once
            s = socket.create_connection(("127.0.0.1", port))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        time.sleep(0.5)
        assert call(server, "GET", "/api/state")[0] == 200
        for error in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset"), TimeoutError()):
            try:
                raise error
            except OSError:
                server.handle_error(None, ("127.0.0.1", 1))
        try:
            raise RuntimeError("something else")
        except RuntimeError:
            server.handle_error(None, ("127.0.0.1", 1))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines() == ["concordia serve: error answering a request: RuntimeError: something else"]


def test_no_page_may_frame_the_game(tmp_path):
    session = new_session(tmp_path)
    with served(session) as server:
        for path in ("/", "/api/state", "/api/game", "/nothing"):
            _, _, headers = call(server, "GET", path)
            assert headers["X-Frame-Options"] == "DENY", path
            assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], path


# ---------------------------------------------------------------- beyond loopback: the token
def test_beyond_loopback_every_request_needs_the_token(tmp_path):
    session = new_session(tmp_path)
    with served(session) as loopback:
        assert loopback.token is None and "token" not in loopback.url
    server = make_server("0.0.0.0", 0, session)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        token = server.token
        assert token and len(token) >= 32 and server.url.endswith(f"/?token={token}")
        before = digest(session)
        n = len(session.actions)
        move = {"action": session.state.legal_actions()[0], "decision": n}
        for method, path, body in (("GET", "/", None), ("GET", "/api/state", None), ("GET", "/api/game", None),
                                   ("POST", "/api/move", move), ("POST", "/api/new", {"seed": 3})):
            for suffix in ("", "?token=wrong", f"?token={token[:-1]}"):
                status, answer, _ = call(server, method, path + suffix, body, host_header="evil.example")
                assert status == 403 and "token" in answer["error"], (path, suffix)
        assert digest(session) == before
        # the printed address: the page, and the token as a cookie of this port for its calls
        status, page, headers = call(server, "GET", f"/?token={token}")
        assert status == 200 and "concordiaDrawing" in page
        cookie = headers["Set-Cookie"]
        assert cookie.startswith(f"concordia_token_{server.server_address[1]}={token};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        conn.request("GET", "/api/state", headers={"Cookie": cookie.split(";")[0]})
        assert conn.getresponse().status == 200
        conn.close()
        conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=30)
        conn.request("POST", "/api/move", body=json.dumps(move),
                     headers={"X-Concordia-Token": token, "Content-Type": "application/json"})
        assert conn.getresponse().status == 200 and len(session.actions) > n
        conn.close()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_serve_on_all_addresses_prints_the_address_with_its_token(tmp_path, capsys, quick_serve):  # noqa: F811
    assert main(["serve", "--map", "italia", "--players", "2", "--agents", "random", "--host", "0.0.0.0",
                 "--port", "0", "--save", str(tmp_path / "game.json")]) == 130
    captured = capsys.readouterr()
    assert quick_serve and "Play at http://0.0.0.0:" in captured.out
    token = captured.out.split("?token=")[1].split()[0]
    assert len(token) >= 32
    assert "with its token" in captured.err


# ---------------------------------------------------------------- saving
class WatchingAgent(RandomAgent):
    """A random agent that, each time it is asked to move, reads the record on disk (as a server
    killed at that moment would leave it)."""

    def __init__(self, save: Path) -> None:
        super().__init__()
        self.save = save
        self.seen: list[list[int]] = []

    def act(self, observation: np.ndarray, action_mask: np.ndarray, state=None) -> int:
        if self.save.exists():  # (the game's first record is written once the agents reach the human)
            self.seen.append(list(load_record(self.save)["actions"]))
        return super().act(observation, action_mask, state)


def test_the_human_move_is_saved_before_the_agents_think(tmp_path):
    save = tmp_path / "game.json"
    watcher = WatchingAgent(save)
    session = GameSession(Setup("italia", 2, SEED, SEAT), [None, watcher], ["human", "random"], save,
                          next_save=lambda s: free_path(tmp_path / f"game-seed{s}.json"))
    chooser = make_agent("heuristic")
    chooser.reset(1)
    watched = 0
    for _ in range(15):
        n = len(session.actions)
        action = chosen(session, chooser)
        watcher.seen.clear()
        session.play(action, n)
        if watcher.seen:  # the agents' turn came: the record they saw already holds the human's move
            assert watcher.seen[0][:n + 1] == session.actions[:n + 1] and len(watcher.seen[0]) > n
            watched += 1
    assert watched >= 3
    assert load_record(save)["actions"] == session.actions
