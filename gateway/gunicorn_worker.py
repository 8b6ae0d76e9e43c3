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

``observability.gunicorn_config`` selects it: ``worker_class``.
"""

from __future__ import annotations

import json
from datetime import datetime
from http import HTTPStatus
from typing import Any

from gunicorn import util
from gunicorn.http import errors
from gunicorn.http.wsgi import Response, default_environ
from gunicorn.workers.gthread import ThreadWorker

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
