"""The gateway served as the Procfile serves it (gunicorn, its config, its worker class), against what an
outsider can try: keys variables that name no key, a readiness probe asked while Redis is away, a request
line or headers larger than the server reads."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import requests

from tests.harness import ROOT, WebProc, _gunicorn_isolation_args, free_port

pytestmark = pytest.mark.integration

START_TIMEOUT = 120  # bounds a process that would wrongly go on running
PROBLEM = "application/problem+json"


def procfile_web_argv(port: int) -> list[str]:
    """The Procfile's web command: gunicorn with the gateway's config (and so its worker class)."""
    return [
        *(sys.executable, "-m", "gunicorn", "--config", "python:observability.gunicorn_config"),
        *("--bind", f"127.0.0.1:{port}", "--workers", "1", "--threads", "4", "--graceful-timeout", "30"),
        *_gunicorn_isolation_args(),
        "gateway:create_app()",
    ]


def procfile_web(procs, env: dict[str, str]) -> WebProc:
    port = free_port()
    web = procs.start("web", procfile_web_argv(port), env=env, proc_class=WebProc, port=port, wait=False)
    assert isinstance(web, WebProc)
    web.wait_ready(web.healthy, START_TIMEOUT)
    return web


def http() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # loopback: no proxy
    return session


# -- keys that name no key -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [("OCRGW_API_KEYS_FILE", "{empty file}"), ("OCRGW_API_KEYS_FILE", "{comments only}"), ("OCRGW_API_KEYS", " , ")],
)
def test_a_gateway_whose_keys_variable_names_no_key_stops_with_one_line(tmp_path, variable, value):
    (tmp_path / "empty").write_text("")
    (tmp_path / "comments").write_text("# acme's old key, rotated out\n# globex: coming Monday\n")
    value = value.replace("{empty file}", str(tmp_path / "empty")).replace(
        "{comments only}", str(tmp_path / "comments")
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OCRGW_API_KEYS")}
    env.update({"PYTHONUNBUFFERED": "1", "OCRGW_METRICS_DIR": str(tmp_path / "metrics"), variable: value})

    done = subprocess.run(
        procfile_web_argv(free_port()), cwd=ROOT, env=env, capture_output=True, text=True, timeout=START_TIMEOUT
    )

    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    said = [line for line in output.splitlines() if line.startswith("ocrgw: ")]
    assert len(said) == 1, output
    assert said[0].startswith(f"ocrgw: {variable}: must name at least one API key, got "), output
    assert "Traceback" not in output, output


# -- /readyz while Redis is away -----------------------------------------------------------------------


def test_readyz_without_redis_tells_nothing_of_it_and_logs_why(procs, tmp_path):
    dead_port = free_port()  # nothing listens there
    web = procfile_web(procs, {"REDIS_URL": f"redis://127.0.0.1:{dead_port}/0", "OCRGW_METRICS_DIR": str(tmp_path)})

    answer = http().get(f"{web.base_url}/readyz", timeout=30)

    assert answer.status_code == 503, answer.text
    assert answer.headers["Content-Type"] == PROBLEM
    body = answer.json()
    assert body["code"] == "store_unavailable"
    for internal in ("127.0.0.1", str(dead_port), "Connection refused", "Error", "redis://"):
        assert internal not in answer.text, answer.text
    assert str(dead_port) in web.log_text()  # the operator's log says which Redis, and why


# -- a request line or headers past gunicorn's limits --------------------------------------------------


def raw_request(web: WebProc, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Sends ``request`` as it is (no client would send such a line) and reads the answer to its end."""
    with socket.create_connection(("127.0.0.1", web.port), timeout=30) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), headers, body


@pytest.fixture(scope="module")
def served(module_procs, tmp_path_factory):
    env = {
        "REDIS_URL": module_procs.url(module_procs.fresh_db()),
        "OCRGW_METRICS_DIR": str(tmp_path_factory.mktemp("m")),
    }
    return procfile_web(module_procs, env)


def test_a_10_kb_url_is_a_414_problem(served):
    status, headers, body = raw_request(served, b"GET /jobs?x=" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")

    assert status == 414
    assert headers["content-type"] == PROBLEM
    assert int(headers["content-length"]) == len(body)
    problem = json.loads(body)
    assert problem["code"] == "uri_too_long" and problem["status"] == 414
    assert problem["type"] == "/manual/problems/uri_too_long/"
    assert "aaaa" not in problem["detail"]


def test_a_20_kb_header_is_a_431_problem(served):
    status, headers, body = raw_request(
        served, b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"b" * 20_000 + b"\r\n\r\n"
    )

    assert status == 431
    assert headers["content-type"] == PROBLEM
    problem = json.loads(body)
    assert problem["code"] == "request_header_fields_too_large" and problem["status"] == 431
    assert "bbbb" not in problem["detail"]


def test_too_many_headers_is_a_431_problem_too(served):
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(200))
    status, headers, body = raw_request(served, b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")

    assert (status, headers["content-type"], json.loads(body)["code"]) == (
        431,
        PROBLEM,
        "request_header_fields_too_large",
    )


def test_a_request_line_that_is_not_http_is_a_400_problem(served):
    status, headers, body = raw_request(served, b"GET\x01 / HTTP/1.1\r\nHost: x\r\n\r\n")

    assert (status, headers["content-type"]) == (400, PROBLEM)
    assert json.loads(body)["code"] == "bad_request"


def test_the_gateway_still_answers_after_them(served):
    assert http().get(f"{served.base_url}/healthz", timeout=30).json() == {"status": "ok"}
