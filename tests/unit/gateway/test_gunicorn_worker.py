"""The gateway's gunicorn worker: what it answers for a request gunicorn refuses before the app sees it."""

from __future__ import annotations

import json
import socket
from types import SimpleNamespace
from unittest import mock

import pytest
from gunicorn.http import errors

import observability.gunicorn_config as gunicorn_config
from gateway.gunicorn_worker import WORKER_CLASS, ProblemWorker
from gateway.problems import CATALOGUE, PLAIN_HTTP_CODES
from tests.harness import GATEWAY_WORKER_CLASS


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
