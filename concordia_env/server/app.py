"""The HTTP side of ``concordia serve``: a standard-library ``ThreadingHTTPServer`` serving the play
page and a small JSON API over one :class:`~concordia_env.server.session.GameSession`.

====================  ======  ==================================================================
path                  method  answers
====================  ======  ==================================================================
``/``                 GET     the play page (``page.html`` with the viewer's shared drawing)
``/api/game``         GET     the static view of the game (map, cards, colours, names, layout)
``/api/state``        GET     the game now: frame, moves grouped by kind, map targets, log, result
``/api/analysis``     GET     ``?decision=n`` (optional): a search agent's analysis of the position
                              (``--analysis``: :mod:`~concordia_env.server.analysis`; 404 without)
``/api/move``         POST    ``{"action": id, "decision": n}``: the human's move; the new state
``/api/new``          POST    ``{"seed": s}`` (optional): a new game; the new state
====================  ======  ==================================================================

Errors answer ``{"error": "one line"}``: 400 for a malformed request or an illegal move, 409 for a
stale one (the game is unchanged either way), 403 for a request that may not play (below), 404,
405, 408, 411, 413 and 415 for requests the API does not take (and 500 and 503 from the analysis,
see its module). A POST must say
``Content-Type: application/json``, which a page from another site cannot send without the browser
asking first (and this server never allows it), so only the play page moves. No page may show this
one in a frame (``frame-ancestors 'none'``, ``X-Frame-Options: DENY``).

Who may play: on a loopback address, requests naming it (or ``localhost``) in their ``Host``
header (a web page whose name was pointed at this machine gets 403). On any other address
(``--host 0.0.0.0``), anyone on the network could reach the port, so every request must carry the
server's random token: the address it prints ends in ``?token=...``, the page's answer sets it as a
cookie for this server's port (``SameSite=Strict``), and the page's API calls carry that cookie (or
an ``X-Concordia-Token`` header); 403 without it.

Every connection has :data:`REQUEST_TIMEOUT` seconds for each read and write, so half-sent requests
do not pile up; a browser that goes away mid-answer is not an error worth a traceback.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..display.viewer.html import assemble, asset
from .analysis import Analyst, analysis_answer
from .session import GameSession, MoveRejected, shown

#: the largest request body taken (a move is a few dozen bytes)
MAX_BODY = 4096
#: seconds a connection may take for each read or write before it is closed
REQUEST_TIMEOUT = 10.0
#: what the play page may load (its own inline code and style, and the API of this server), and
#: that no page may frame it
PAGE_POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
               "connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
#: the headers of every answer besides its type and length
COMMON_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
                  "Content-Security-Policy": "frame-ancestors 'none'"}
#: the header a script may carry the token in instead of the cookie
TOKEN_HEADER = "X-Concordia-Token"


def play_page() -> str:
    """The play page: ``server/page.html`` with the viewer's drawing (``draw.js``, ``draw.css``) inlined."""
    return assemble(asset("concordia_env.server", "page.html"), {})


class PlayServer(ThreadingHTTPServer):
    """The server: one session, the page built once, one thread per request (daemon threads, so
    Ctrl-C never waits for a browser's open connection)."""

    daemon_threads = True
    allow_reuse_port = False  # never share the port with another server

    def __init__(self, address: tuple[str, int], session: GameSession | None = None,
                 request_timeout: float = REQUEST_TIMEOUT, analyst: Analyst | None = None) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, PlayHandler)
        self.session = session
        self.request_timeout = request_timeout
        #: the search agent of the analysis panel (``--analysis``), or None: the panel is off
        self.analyst = analyst
        self.page = play_page().encode("utf-8")
        #: on a loopback address None (the Host check guards it); else what every request must carry
        self.token: str | None = None if self.loopback else secrets.token_urlsafe(24)

    @property
    def host(self) -> str:
        host = self.server_address[0]
        if isinstance(host, bytes):  # pragma: no cover - only for AF_UNIX servers
            host = host.decode()
        return str(host)

    @property
    def loopback(self) -> bool:
        """Whether only this machine can reach the server (127.0.0.0/8, ``::1``)."""
        return ipaddress.ip_address(self.host).is_loopback

    @property
    def cookie_name(self) -> str:
        """The token's cookie, one per port: cookies are shared by every port of a host."""
        return f"concordia_token_{self.server_address[1]}"

    @property
    def url(self) -> str:
        """The page's address, e.g. ``http://127.0.0.1:8765/``, with ``?token=...`` when the server
        needs one (listening beyond this machine)."""
        host, port = self.host, self.server_address[1]
        base = f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
        return base + (f"?token={self.token}" if self.token else "")

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that failed outside the API's own error answers: a browser that closed the
        connection or timed out is no error; anything else is one line on the terminal, never a
        traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        print(f"concordia serve: error answering a request: {type(exc).__name__}: {exc}", file=sys.stderr)


class PlayHandler(BaseHTTPRequestHandler):
    """One request: the page or a JSON API call (see the module doc)."""

    server: PlayServer
    server_version = "concordia-serve"
    error_content_type = "application/json"
    error_message_format = '{"error": "%(code)d %(message)s"}'

    def setup(self) -> None:
        self.request.settimeout(self.server.request_timeout)  # every read and write of the connection
        super().setup()

    # ------------------------------------------------------------ routing
    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        path = urlsplit(self.path).path
        if not self._allowed():
            return
        if path in ("/", "/index.html"):
            headers = {"Content-Security-Policy": PAGE_POLICY}
            if self.server.token:  # the page's own calls carry the token as a cookie of this port
                headers["Set-Cookie"] = (f"{self.server.cookie_name}={self.server.token}; Path=/; HttpOnly; "
                                         "SameSite=Strict")
            self._send(HTTPStatus.OK, self.server.page, "text/html; charset=utf-8", headers)
        elif path == "/api/game":
            analysis = None if self.server.analyst is None else self.server.analyst.spec
            self._answer(lambda session: {**session.view(), "analysis": analysis})
        elif path == "/api/state":
            self._answer(lambda session: session.status())
        elif path == "/api/analysis":
            query = urlsplit(self.path).query
            self._answer(lambda session: analysis_answer(self.server.analyst, session, query))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: GET {path}"})

    def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
        path = urlsplit(self.path).path
        if not self._allowed():
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
    def _allowed(self) -> bool:
        """Whether this request may see and play the game (see the module doc); a 403 answer if not."""
        if self.server.token is None:
            return self._host_allowed()
        if any(hmac.compare_digest(given.encode(), self.server.token.encode()) for given in self._tokens()):
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": "this server plays only with its token: open the address it "
                                                   "printed, which ends in ?token=..."})
        return False

    def _tokens(self) -> list[str]:
        """The tokens the request carries: in the query, the header, the cookie."""
        found = parse_qs(urlsplit(self.path).query).get("token", [])
        found += self.headers.get_all(TOKEN_HEADER) or []
        try:
            cookie = SimpleCookie(self.headers.get("Cookie", ""))
        except CookieError:
            cookie = SimpleCookie()
        if self.server.cookie_name in cookie:
            found.append(cookie[self.server.cookie_name].value)
        return found

    def _host_allowed(self) -> bool:
        """On a loopback address, only requests naming it (or ``localhost``) in their ``Host``
        header are answered (403 otherwise): a web page whose name was pointed at this machine
        (DNS rebinding) cannot reach the game."""
        host = self.server.host
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
        if length is None:
            raise MoveRejected(HTTPStatus.LENGTH_REQUIRED, "the request needs a Content-Length")
        length = length.strip()
        # ASCII digits only: int() also reads other scripts' digits, and str.isdigit() takes '²'
        if not (length.isascii() and length.isdigit()):
            raise MoveRejected(HTTPStatus.BAD_REQUEST, f"the Content-Length must be a number of bytes, got "
                                                       f"{shown(length)}")
        if len(length) > 6 or int(length) > MAX_BODY:
            raise MoveRejected(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"the request body is over {MAX_BODY} bytes")
        try:
            raw = self.rfile.read(int(length))
        except TimeoutError:
            raise MoveRejected(HTTPStatus.REQUEST_TIMEOUT, "the request body did not arrive in time") from None
        if len(raw) != int(length):
            raise MoveRejected(HTTPStatus.BAD_REQUEST, "the request body is shorter than its Content-Length")
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
        for key, value in {**COMMON_HEADERS, **(headers or {})}.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        """Quiet: the terminal shows the URL, game ends and errors, not every request."""


def make_server(host: str, port: int, session: GameSession | None = None,
                request_timeout: float = REQUEST_TIMEOUT, analyst: Analyst | None = None) -> PlayServer:
    """A :class:`PlayServer` listening on ``host:port`` (0: a free port); ``OSError`` if it cannot
    (a port in use, an address not of this machine). Give it a session before serving."""
    return PlayServer((host, port), session, request_timeout, analyst)
