"""gunicorn's worker for the gateway, so that a request gunicorn itself refuses is answered as a problem too.

gunicorn reads each request's line and headers before the app sees it.  A
request line longer than ``--limit-request-line`` (4094 bytes by default),
a header past ``--limit-request-field_size`` or more headers than
``--limit-request-fields``, or bytes that are not HTTP, never reach Flask:
the worker's ``handle_error`` answers them, with an HTML page.  This worker
(gunicorn's threaded one, which the Procfile's ``--threads`` asks for)
answers them with an RFC 9457 problem document instead, like every other
error of the API: ``414 uri_too_long``, ``431
request_header_fields_too_large``, and for a request that is not HTTP the
plain ``400 bad_request`` (``about:blank``).  Anything else (a bug of the
app, TLS, a forbidden proxy line) keeps gunicorn's own handling.

It also serves the gateway's live event streams without a thread per
client (``gateway.streaming``).  Before the app runs, the worker tells it
(``CAN_HAND_OFF`` in the environ) that it may take the connection over:
only for plain HTTP/1.x, whose socket carries nothing but the stream.  That
is known from the connection, never from the request: gunicorn answers
HTTP/2 with a response class of its own, and TLS on a socket of its own,
while a header (``Version: 2`` is ``HTTP_VERSION`` in the environ, as
gunicorn's HTTP/2 path also spells it) is whatever the client sent.  It
also tells the view how many request threads it has
(``streaming.REQUEST_THREADS``), which bounds the streams a request
thread writes where no hand-off can happen.  When
the view asks for it (``HANDED_OFF``) and answers 200, the worker sends the
response's head itself, close-delimited (no chunked coding: the body ends
with the connection), gives a duplicate of the socket to the process's hub,
and lets gunicorn forget the connection: it is neither kept alive nor
half-closed (which would end the hub's copy too), only its own descriptor
closed.  The hub's streams end with the worker (``end``, ``reason:
shutdown``), so that their clients reconnect to another.

``observability.gunicorn_config`` selects it: ``worker_class``.
"""

from __future__ import annotations

import json
import ssl
from datetime import datetime
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.http import errors, wsgi
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.workers.gthread import ThreadWorker

from gateway import streaming
from gateway.browser import ALWAYS as ALWAYS_SENT
from gateway.browser import CSP, NOT_A_PAGE
from gateway.problems import CATALOGUE, MEDIA_TYPE, type_of

#: What this worker names it, as ``observability.gunicorn_config`` and the tests give it to gunicorn.
WORKER_CLASS = "gateway.gunicorn_worker.ProblemWorker"

_NOT_HTTP = (
    errors.InvalidRequestLine,
    errors.InvalidRequestMethod,
    errors.InvalidHTTPVersion,
    errors.InvalidHeader,
    errors.InvalidHeaderName,
    errors.ObsoleteFolding,
    errors.InvalidSchemeHeaders,
    errors.InvalidChunkSize,
    errors.ChunkMissingTerminator,
    errors.InvalidChunkExtension,
)
# A header the app tried to send is the app's fault, not the client's: gunicorn's 500 stays.
_THE_APPS = (errors.InvalidResponseHeader, errors.InvalidResponseHeaderName)


class ProblemWorker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        # The sockets of connections handed to the hub, until gunicorn's thread is done with them.
        self._handed_off: set[Any] = set()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi: Any = self._handing_off(self.wsgi)

    def _handing_off(self, app: Any) -> Any:
        def wsgi_app(environ: dict[str, Any], start_response: Any) -> Any:
            response = getattr(start_response, "__self__", None)
            environ[streaming.REQUEST_THREADS] = self.cfg.threads
            # Only a plain HTTP/1.x connection (not TLS, not HTTP/2) is the socket's alone to take over.
            can = (
                type(response) is wsgi.Response  # HTTP/2's is a subclass
                and not self.cfg.is_ssl
                and not isinstance(environ.get("gunicorn.socket"), ssl.SSLSocket)
            )
            if can:
                environ[streaming.CAN_HAND_OFF] = True
            body = app(environ, start_response)
            hand_off = environ.get(streaming.HANDED_OFF)
            if hand_off is None:
                return body
            if hasattr(body, "close"):
                body.close()
            if not can or response is None or response.status_code != 200:
                hand_off.session.ticket.release()
                return body
            sock = environ["gunicorn.socket"]
            response.force_close()
            response.chunked = False  # a close-delimited body: the hub writes plain bytes, and the end is the close
            duplicate = None
            try:
                response.send_headers()
                duplicate = sock.dup()
                streaming.hub_for(hand_off).adopt(duplicate, hand_off.session)
            except BaseException:
                hand_off.session.ticket.release()
                if duplicate is not None:
                    duplicate.close()  # the hub never took it: gunicorn closes the connection's own
                raise
            self._handed_off.add(sock)
            return []

        return wsgi_app

    def finish_request(self, conn: Any, fs: Any) -> None:
        if conn.sock in self._handed_off:
            self._handed_off.discard(conn.sock)
            self.nr_conns -= 1
            util.close(conn.sock)  # this descriptor only: the hub's duplicate keeps the connection
            return
        super().finish_request(conn, fs)

    def run(self) -> None:
        try:
            super().run()
        finally:
            streaming.stop_hub()

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        problem = self.problem_of(exc)
        if problem is None:
            super().handle_error(req, client, addr, exc)
            return
        started = datetime.now()
        status, body = problem
        addr = addr or ("", -1)  # a unix socket has no address
        self.log.warning("Invalid request from ip=%s: %s", addr[0], exc)
        if req is None and isinstance(exc, errors.InvalidHeader):
            req = exc.req  # the request whose header it was, for the access log (as gunicorn does)
        if req is not None:
            self._log_access(req, client, addr, status, len(body), datetime.now() - started)
        try:
            util.write_nonblock(client, _http_response(status, body))
        except Exception:
            self.log.debug("Failed to send the problem document.")

    def problem_of(self, exc: BaseException) -> tuple[int, bytes] | None:
        """The status and problem document of a request gunicorn refused; None to leave it to gunicorn."""
        if isinstance(exc, errors.LimitRequestLine):
            limit = self.cfg.limit_request_line
            return _catalogued(
                "uri_too_long",
                f"The request line (method, URL and version) is longer than the {limit} bytes this server reads.",
            )
        if isinstance(exc, errors.LimitRequestHeaders):
            size, count = self.cfg.limit_request_field_size, self.cfg.limit_request_fields
            return _catalogued(
                "request_header_fields_too_large",
                f"The request's headers are more than this server reads: at most {count} headers, "
                f"each at most {size} bytes.",
            )
        if isinstance(exc, _NOT_HTTP) and not isinstance(exc, _THE_APPS):
            return _plain(HTTPStatus.BAD_REQUEST, "The request is not valid HTTP/1.1.")
        return None

    def _log_access(self, req: Any, client: Any, addr: Any, status: int, length: int, took: Any) -> None:
        environ = default_environ(req, client, self.cfg)
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = addr[0], str(addr[1])
        response = Response(req, client, self.cfg)
        response.status = f"{status} {HTTPStatus(status).phrase}"
        response.response_length = length
        self.log.access(response, req, environ, took)


def _catalogued(code: str, detail: str) -> tuple[int, bytes]:
    status, title = CATALOGUE[code]
    return status, _document(type_of(code), title, status, detail, code)


def _plain(status: HTTPStatus, detail: str) -> tuple[int, bytes]:
    code = status.phrase.lower().replace(" ", "_")
    return status.value, _document("about:blank", status.phrase, status.value, detail, code)


def _document(type_: str, title: str, status: int, detail: str, code: str) -> bytes:
    # The members of every problem of the API (gateway.problems.render), sorted as Flask writes them.
    body = {"type": type_, "title": title, "status": status, "detail": detail, "code": code}
    return json.dumps(body, sort_keys=True).encode()


def _http_response(status: int, body: bytes) -> bytes:
    # What the app sends with every answer (gateway.browser), these included.
    protections = "".join(f"{name}: {value}\r\n" for name, value in {**ALWAYS_SENT, CSP: NOT_A_PAGE}.items())
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {MEDIA_TYPE}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"{protections}"
        "\r\n"
    )
    return head.encode("latin-1") + body
