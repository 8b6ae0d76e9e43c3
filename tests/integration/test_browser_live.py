"""What a browser is told and what it may send, on the real stack (gunicorn serving the gateway as the
Procfile does, a worker, the coordinator and beat): the security headers of every answer, hOCR sandboxed,
a JSON body only as JSON, the Host check (and the metrics outside it), a change from a page of another site,
and a repeated Idempotency-Key header as gunicorn passes it on.

Every refusal is a problem document and leaves the job store as it was.
"""

from __future__ import annotations

import http.client
import json
import socket
from urllib.parse import urlsplit

import pytest

from tests.integration.live import ECHO_TIMEOUT, accepted, assert_problem, b64, ocrgw_keyspace
from tests.integration.polling import wait_for_job
from tests.integration.test_manual import built_manual  # noqa: F401 - the fixture, used below

pytestmark = pytest.mark.integration


def echo_job(text: str) -> dict:
    return {"model": "echo", "content_type": "text/plain", "payload": b64(text)}


def directives(response_headers) -> dict[str, str]:
    policy = response_headers["Content-Security-Policy"]
    pairs = (part.strip().partition(" ") for part in policy.split(";") if part.strip())
    return {name: value for name, _, value in pairs}


def assert_protected(response_headers) -> dict[str, str]:
    assert response_headers["X-Content-Type-Options"] == "nosniff"
    assert response_headers["Referrer-Policy"] == "no-referrer"
    policy = directives(response_headers)
    assert policy["frame-ancestors"] == "'none'"
    return policy


def raw_exchange(base_url: str, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Sends ``request`` as it is (headers a client library would merge or refuse) and reads the answer."""
    where = urlsplit(base_url)
    with socket.create_connection((where.hostname, where.port), timeout=30) as connection:
        connection.sendall(request)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    headers = {name.strip().title(): value.strip() for name, _, value in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), headers, body


def test_every_answer_carries_the_browser_protections(api, built_manual):  # noqa: F811
    pages = {path: api.request("GET", path) for path in ("/ui", "/ui/new", "/docs", "/manual/")}
    others = [api.request("GET", path) for path in ("/models", "/openapi.json", "/healthz", "/jobs/nope", "/nowhere")]

    for path, page in pages.items():
        assert page.status_code == 200 and page.headers["Content-Type"].startswith("text/html"), path
        policy = assert_protected(page.headers)
        assert policy["default-src"] == "'self'" and "'unsafe-inline'" not in policy["script-src"], path
    assert directives(pages["/ui"].headers)["style-src"] == "'self'"
    for answer in others:
        assert directives(answer.headers)["default-src"] == "'none'", answer.url
        assert_protected(answer.headers)
    # A request gunicorn refuses itself, before the app sees it.
    status, headers, _ = raw_exchange(api.base_url, b"GET /jobs?x=" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status == 414
    assert assert_protected(headers)["default-src"] == "'none'"


def test_hocr_is_served_as_sandboxed_xhtml(api):
    job_id = accepted(api.post_json(echo_job("<script>alert(document.domain)</script> words")))
    assert wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)["status"] == "completed"

    hocr = api.request("GET", f"/jobs/{job_id}/result.hocr")

    assert hocr.status_code == 200
    assert hocr.headers["Content-Type"] == "application/xhtml+xml; charset=utf-8"
    policy = assert_protected(hocr.headers)
    assert "sandbox" in policy and policy["default-src"] == "'none'"
    assert "<script>" not in hocr.text


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_json_job_sent_as_a_type_any_page_may_send_is_415_and_stores_nothing(api, db, content_type):
    before = ocrgw_keyspace(db)

    for body in (echo_job("forged"), {"fanout": {"max_parallel": 1, "children": [echo_job("forged")]}}):
        response = api.post_raw(json.dumps(body).encode(), content_type, model="echo")
        assert_problem(response, 415, "json_content_type_required")
    assert ocrgw_keyspace(db) == before
    # The same JSON as JSON is a job.
    assert accepted(api.post_json(echo_job("asked for")))


def test_a_redrive_or_cap_change_sent_as_text_is_415_and_changes_nothing(api, db):
    group = {"fanout": {"max_parallel": 1, "children": [{**echo_job("x"), "options": {"fail": True}}]}}
    parent_id = accepted(api.post_json(group))
    assert wait_for_job(api.job, parent_id, timeout=ECHO_TIMEOUT)["status"] == "failed"
    before = ocrgw_keyspace(db)

    text = {"Content-Type": "text/plain"}
    retry = api.request("POST", f"/jobs/{parent_id}/retry", data=b'{"include_cancelled": true}', headers=text)
    empty = api.request("POST", f"/jobs/{parent_id}/retry", data=b"", headers=text)
    cap = api.request("PATCH", f"/jobs/{parent_id}", data=b'{"max_parallel": 5}', headers=text)

    for refused in (retry, empty, cap):
        assert_problem(refused, 415, "json_content_type_required")
    assert ocrgw_keyspace(db) == before


def test_a_request_under_another_host_is_refused_and_stores_nothing(api, db):
    before = ocrgw_keyspace(db)
    body = json.dumps(echo_job("rebound")).encode()

    def post(host: str) -> tuple[int, dict[str, str], bytes]:
        return raw_exchange(
            api.base_url,
            b"POST /jobs HTTP/1.1\r\nHost: " + host.encode() + b"\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body,
        )

    for host in ("rebound.example:8000", "localhost, rebound.example"):
        status, headers, answer = post(host)
        assert (status, headers["Content-Type"]) == (400, "application/problem+json"), answer
        assert json.loads(answer)["code"] == "host_not_allowed"
    assert ocrgw_keyspace(db) == before
    # The names of a local start are answered, and the probes whatever the Host.
    status, _, answer = post(f"localhost:{urlsplit(api.base_url).port}")
    assert status == 202, answer
    probe = raw_exchange(api.base_url, b"GET /healthz HTTP/1.1\r\nHost: pod.svc:8000\r\nConnection: close\r\n\r\n")
    assert probe[0] == 200


def test_prometheus_scrapes_the_metrics_by_a_name_of_its_own(api):
    # As deploy/prometheus names its targets: gw1:8000, which OCRGW_ALLOWED_HOSTS does not list.
    status, headers, body = raw_exchange(
        api.base_url, b"GET /metrics HTTP/1.1\r\nHost: gw1:8000\r\nConnection: close\r\n\r\n"
    )

    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain")
    assert b"# TYPE " in body
    # A route with a tenant's data is still refused under that name.
    refused = raw_exchange(api.base_url, b"GET /jobs HTTP/1.1\r\nHost: gw1:8000\r\nConnection: close\r\n\r\n")
    assert refused[0] == 400 and json.loads(refused[2])["code"] == "host_not_allowed"


ANOTHER_SITE = [{"Origin": "https://evil.example"}, {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"}]


@pytest.mark.parametrize("sent", ANOTHER_SITE, ids=["origin", "null-origin", "sec-fetch-site"])
def test_a_change_a_page_of_another_site_sends_is_403_and_changes_nothing(api, db, sent):
    group = {"fanout": {"max_parallel": 1, "children": [{**echo_job("x"), "options": {"fail": True}}]}}
    parent_id = accepted(api.post_json(group))
    assert wait_for_job(api.job, parent_id, timeout=ECHO_TIMEOUT)["status"] == "failed"
    before = ocrgw_keyspace(db)

    # What a page elsewhere can send without a preflight, or with one the gateway never grants.
    refused = [
        api.post_raw(b"a raw text document", "text/plain", model="echo", headers=sent),
        api.request("POST", f"/jobs/{parent_id}/retry", headers=sent),  # no body, no Content-Type
        api.request("PATCH", f"/jobs/{parent_id}", json={"max_parallel": 3}, headers=sent),
        api.request("DELETE", f"/jobs/{parent_id}", headers=sent),
        api.post_json(echo_job("forged"), headers=sent),
    ]

    for response in refused:
        assert_problem(response, 403, "cross_site_request")
        assert_protected(response.headers)
    assert ocrgw_keyspace(db) == before
    # The gateway's own pages send its origin, and a program sends none: both are answered.
    own = {"Origin": api.base_url.rstrip("/"), "Sec-Fetch-Site": "same-origin"}
    assert api.request("POST", f"/jobs/{parent_id}/retry", headers=own).status_code == 202
    assert accepted(api.post_raw(b"a raw text document", "text/plain", model="echo"))


def test_a_repeated_idempotency_key_header_is_400_and_stores_nothing(api, db):
    before = ocrgw_keyspace(db)
    where = urlsplit(api.base_url)
    body = json.dumps(echo_job("twice")).encode()

    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    try:
        connection.putrequest("POST", "/jobs")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Idempotency-Key", "k1")
        connection.putheader("Idempotency-Key", "k2")
        connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    finally:
        connection.close()

    assert (status, answer["code"]) == (400, "invalid_idempotency_key")
    assert_problem(
        api.post_json(echo_job("twice"), headers={"Idempotency-Key": "k1,k2"}), 400, "invalid_idempotency_key"
    )
    assert ocrgw_keyspace(db) == before
