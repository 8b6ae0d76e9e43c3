"""The gateway's gunicorn worker: what it answers for a request gunicorn refuses before the app sees it."""

from __future__ import annotations

import contextlib
import json
import socket
from types import SimpleNamespace
from unittest import mock

import pytest
from gunicorn.http import errors, wsgi

import observability.gunicorn_config as gunicorn_config
from gateway import streaming
from gateway.gunicorn_worker import WORKER_CLASS, ProblemWorker
from gateway.problems import CATALOGUE, PLAIN_HTTP_CODES
from jobs import watching
from tests.harness import GATEWAY_WORKER_CLASS
from tests.keyspace import keys


def worker() -> ProblemWorker:
    # Only what handle_error reads: gunicorn's limits (its defaults) and a log.
    made = ProblemWorker.__new__(ProblemWorker)
    made.cfg = SimpleNamespace(limit_request_line=4094, limit_request_field_size=8190, limit_request_fields=100)
    made.log = mock.Mock()
    return made


def answer_to(exc: BaseException) -> tuple[bytes, dict]:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        worker().handle_error(None, ours, ("192.0.2.7", 4321), exc)
        ours.close()
        received = b""
        while chunk := theirs.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    return head, json.loads(body)


@pytest.mark.parametrize(
    ("exc", "status", "code"),
    [
        (errors.LimitRequestLine(10_012, 4094), 414, "uri_too_long"),
        (errors.LimitRequestHeaders("Request Header Fields Too Large"), 431, "request_header_fields_too_large"),
        (errors.LimitRequestHeaders("limit request headers fields"), 431, "request_header_fields_too_large"),
        (errors.InvalidRequestLine("GET\x01 /"), 400, "bad_request"),
        (errors.InvalidHeaderName("X\x01"), 400, "bad_request"),
    ],
)
def test_a_request_gunicorn_refuses_is_a_problem_document(exc, status, code):
    head, problem = answer_to(exc)

    assert head.startswith(f"HTTP/1.1 {status} ".encode())
    assert b"\r\nContent-Type: application/problem+json\r\n" in head
    assert b"\r\nConnection: close\r\n" in head
    assert problem["status"] == status and problem["code"] == code
    assert set(problem) == {"type", "title", "status", "detail", "code"}
    assert (CATALOGUE.get(code) or (PLAIN_HTTP_CODES[code],))[0] == status


def test_the_limits_it_names_are_the_servers():
    _, problem = answer_to(errors.LimitRequestLine(10_012, 4094))

    assert "4094 bytes" in problem["detail"] and problem["title"] == CATALOGUE["uri_too_long"][1]


def test_an_error_of_the_app_is_left_to_gunicorn():
    made = worker()
    assert made.problem_of(errors.InvalidResponseHeaderName("X\x01")) is None
    assert made.problem_of(RuntimeError("a bug")) is None


def test_the_procfiles_config_and_the_tests_serve_the_gateway_with_it():
    assert gunicorn_config.worker_class == WORKER_CLASS == GATEWAY_WORKER_CLASS


# -- handing a stream's connection to the hub ----------------------------------------------------


class Hub:
    """Stands for the process's hub: records what it is handed, or refuses it."""

    def __init__(self, refuse: bool = False):
        self.refuse = refuse
        self.adopted: list[socket.socket] = []

    def adopt(self, sock, session) -> None:
        self.adopted.append(sock)
        if self.refuse:
            raise RuntimeError("no hub thread")


def serve_a_stream(headers: dict[str, str], hub: Hub) -> tuple[dict, streaming.Ticket]:
    """The worker's wrapping of an app that asks for a hand-off, for one plain HTTP/1.1 request; its environ."""
    made = worker()
    made.cfg = SimpleNamespace(is_ssl=False, threads=4)
    made._handed_off = set()
    ticket = streaming.OpenStreams(10, 10).admit("t")
    session = streaming.Session("a" * 32, watching.START, ticket, 0.0, 10.0, 60.0)

    def app(environ, start_response):
        if environ.get(streaming.CAN_HAND_OFF):
            environ[streaming.HANDED_OFF] = streaming.HandOff(session, mock.Mock(), keys, 0.5)
        start_response("200 OK", [("Content-Type", streaming.EVENT_STREAM)])
        return iter(())

    ours, theirs = socket.socketpair()
    with ours, theirs:
        request = SimpleNamespace(version=(1, 1), method="GET", should_close=lambda: False)
        response = wsgi.Response(request, ours, made.cfg)
        environ = {"gunicorn.socket": ours, **{f"HTTP_{k.upper()}": v for k, v in headers.items()}}
        # A refusing hub's error goes on to gunicorn, which closes the connection.
        with mock.patch.object(streaming, "hub_for", lambda hand_off: hub), contextlib.suppress(RuntimeError):
            made._handing_off(app)(environ, response.start_response)
    return environ, ticket


def test_a_version_2_header_is_handed_off_like_any_other_http_1_1_request():
    hub = Hub()

    environ, ticket = serve_a_stream({"Version": "2"}, hub)

    assert environ[streaming.CAN_HAND_OFF] is True
    assert len(hub.adopted) == 1 and not ticket.released
    hub.adopted[0].close()


def test_the_connection_s_duplicate_is_closed_when_the_hub_cannot_take_it():
    hub = Hub(refuse=True)

    environ, ticket = serve_a_stream({}, hub)

    assert len(hub.adopted) == 1 and hub.adopted[0].fileno() == -1
    assert ticket.released


def test_the_worker_tells_the_view_how_many_request_threads_it_has():
    hub = Hub()
    environ, _ = serve_a_stream({}, hub)
    hub.adopted[0].close()
    assert environ[streaming.REQUEST_THREADS] == 4
