"""The HTTP side of ``concordia serve``: a standard-library ``ThreadingHTTPServer`` serving the play
page and a small JSON API over one :class:`~concordia_env.server.session.GameSession`.

====================  ======  ==================================================================
path                  method  answers
====================  ======  ==================================================================
``/``                 GET     the play page (``page.html`` with the viewer's shared drawing)
``/api/game``         GET     the static view of the game (map, cards, colours, names, layout)
``/api/state``        GET     the game now: frame, moves grouped by kind, map targets, log, result
``/api/move``         POST    ``{"action": id, "decision": n}``: the human's move; the new state
``/api/new``          POST    ``{"seed": s}`` (optional): a new game; the new state
====================  ======  ==================================================================

Errors answer ``{"error": "one line"}``: 400 for a malformed or illegal move, 409 for a stale one
(the game is unchanged either way), 404, 405, 411, 413 and 415 for requests the API does not take.
A POST must say ``Content-Type: application/json``, which a page from another site cannot send
without the browser asking first (and this server never allows it), so only the play page moves.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from ..viewer.html import assemble, asset
from .session import GameSession, MoveRejected

#: the largest request body taken (a move is a few dozen bytes)
MAX_BODY = 4096
#: what the play page may load: its own inline code and style, and the API of this server
PAGE_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
               "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'")


def play_page() -> str:
    """The play page: ``server/page.html`` with the viewer's drawing (``draw.js``, ``draw.css``) inlined."""
    return assemble(asset("concordia_env.server", "page.html"), {})


class PlayServer(ThreadingHTTPServer):
    """The server: one session, the page built once, one thread per request (daemon threads, so
    Ctrl-C never waits for a browser's open connection)."""

    daemon_threads = True
    allow_reuse_port = False  # never share the port with another server

    def __init__(self, address: tuple[str, int], session: GameSession | None = None) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, PlayHandler)
        self.session = session
        self.page = play_page().encode("utf-8")

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8765/``."""
        host, port = self.server_address[:2]
        if isinstance(host, bytes):  # pragma: no cover - only for AF_UNIX servers
            host = host.decode()
        return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


class PlayHandler(BaseHTTPRequestHandler):
    """One request: the page or a JSON API call (see the module doc)."""

    server: PlayServer
    server_version = "concordia-serve"
    error_content_type = "application/json"
    error_message_format = '{"error": "%(code)d %(message)s"}'

    # ------------------------------------------------------------ routing
    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        path = urlsplit(self.path).path
        if not self._host_allowed():
            return
        if path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8",
                       {"Content-Security-Policy": PAGE_POLICY})
        elif path == "/api/game":
            self._answer(lambda session: session.view())
        elif path == "/api/state":
            self._answer(lambda session: session.status())
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: GET {path}"})

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        path = urlsplit(self.path).path
        if not self._host_allowed():
            return
        if path == "/api/move":
            self._answer(lambda session, body: session.play(body.get("action"), body.get("decision")), body=True)
        elif path == "/api/new":
            self._answer(lambda session, body: session.new_game(body.get("seed")), body=True)
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such API call: POST {path}"})

    def _answer(self, call: Callable[..., Any], body: bool = False) -> None:
        """Answer with ``call(session)`` (or ``call(session, request body)``) as JSON: a refused
        request with its status and message, anything else that fails (an agent's error) with 500
        and one line, also on the terminal."""
        try:
            session = self._session()
            answer = call(session, self._body()) if body else call(session)
        except MoveRejected as exc:
            self._json(exc.status, {"error": str(exc)})
            return
        except Exception as exc:  # noqa: BLE001 - the server keeps running and says what failed
            print(f"concordia serve: error: {type(exc).__name__}: {exc}", file=sys.stderr)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})
            return
        self._json(HTTPStatus.OK, answer)

    def do_PUT(self) -> None:  # noqa: N802
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "use GET for the page and the state, POST for moves"})

    do_DELETE = do_PATCH = do_PUT  # noqa: N815

    # ------------------------------------------------------------ helpers
    def _host_allowed(self) -> bool:
        """On a loopback address, only requests naming it (or ``localhost``) in their ``Host``
        header are answered (403 otherwise): a web page whose name was pointed at this machine
        (DNS rebinding) cannot reach the game. A server on another address answers any name."""
        host = str(self.server.server_address[0])
        if not ipaddress.ip_address(host).is_loopback:
            return True
        port = self.server.server_address[1]
        allowed = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", f"{host}:{port}"}
        if self.headers.get("Host", "").lower() in allowed:
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": f"this server answers only http://localhost:{port}/ and "
                                                   f"http://127.0.0.1:{port}/"})
        return False

    def _session(self) -> GameSession:
        session = self.server.session
        if session is None:  # pragma: no cover - the server is started only once the session is ready
            raise MoveRejected(HTTPStatus.SERVICE_UNAVAILABLE, "the game is being set up; reload in a moment")
        return session

    def _body(self) -> dict[str, Any]:
        """The request's JSON object; :class:`MoveRejected` with the fitting status otherwise."""
        kind = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise MoveRejected(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "send the request body as application/json")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise MoveRejected(HTTPStatus.LENGTH_REQUIRED, "the request needs a Content-Length")
        if int(length) > MAX_BODY:
            raise MoveRejected(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request body is over {MAX_BODY} bytes")
        raw = self.rfile.read(int(length))
        try:
            body = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise MoveRejected(HTTPStatus.BAD_REQUEST, f"the request body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise MoveRejected(HTTPStatus.BAD_REQUEST, f"the request body must be a JSON object, got {type(body).__name__}")
        return body

    def _json(self, status: int, data: Any) -> None:
        self._send(status, json.dumps(data, separators=(",", ":")).encode("utf-8"), "application/json")

    def _send(self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        """Quiet: the terminal shows the URL, game ends and errors, not every request."""


def make_server(host: str, port: int, session: GameSession | None = None) -> PlayServer:
    """A :class:`PlayServer` listening on ``host:port`` (0: a free port); ``OSError`` if it cannot
    (a port in use, an address not of this machine). Give it a session before serving."""
    return PlayServer((host, port), session)
