"""What a browser is told and what it may send: the security headers of every answer, the page policies,
``OCRGW_ALLOWED_HOSTS``, and a JSON body only under a JSON type (``gateway.browser``, ``gateway.bodies``)."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from dataclasses import replace

import pytest

from gateway import create_app
from gateway.browser import AllowedHosts, host_of, inline_script_hashes, is_own_origin, page_policy

from .keyed import keyed_settings
from .support import assert_problem, echo_job, fanout


def directives(response) -> dict[str, str]:
    policy = response.headers["Content-Security-Policy"]
    pairs = (part.strip().partition(" ") for part in policy.split(";") if part.strip())
    return {name: value for name, _, value in pairs}


def assert_protected(response) -> dict[str, str]:
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "no-referrer"
    policy = directives(response)
    assert policy["frame-ancestors"] == "'none'"
    return policy


def make_app(settings, store):
    return create_app(settings, store, lambda dispatches: len(dispatches))


# -- the headers -------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/models", "/jobs", "/jobs/nope", "/no/such/route", "/openapi.json", "/healthz"])
def test_every_answer_that_is_not_a_page_lets_nothing_load_or_run(client, path):
    policy = assert_protected(client.get(path))

    assert policy["default-src"] == "'none'"


def test_a_problem_answered_before_any_route_is_protected_too(client):
    response = client.post("/jobs", data=b"{}", content_type="text/plain")

    assert_problem(response, 415, "json_content_type_required")
    assert directives(response)["default-src"] == "'none'"


@pytest.mark.parametrize("path", ["/ui", "/ui/new", "/ui/workers", "/ui/jobs/nope"])
def test_the_dashboard_runs_only_its_own_files_no_inline_script_or_style(client, path):
    response = client.get(path)

    policy = assert_protected(response)
    assert response.mimetype == "text/html"
    assert policy["script-src"] == "'self'"
    assert policy["style-src"] == "'self'"
    assert "unsafe" not in response.headers["Content-Security-Policy"]


def test_swagger_ui_runs_its_one_inline_script_by_its_hash(client):
    response = client.get("/docs")

    policy = assert_protected(response)
    (script,) = re.findall(rb"<script>(.*?)</script>", response.data, re.DOTALL)
    digest = base64.b64encode(hashlib.sha256(script).digest()).decode()
    assert policy["script-src"] == f"'self' 'sha256-{digest}'"


def test_only_scripts_a_browser_runs_are_hashed_each_once():
    html = (
        b'<script>one()</script><script type="module">two()</script><script src="/x.js"></script>'
        b'<script type="application/json">{"data": 1}</script><script>one()</script>'
    )

    hashes = inline_script_hashes(html)

    expected = [base64.b64encode(hashlib.sha256(body).digest()).decode() for body in (b"one()", b"two()")]
    assert hashes == expected
    assert page_policy(b"<p>no script</p>").startswith("default-src 'self'; script-src 'self';")


# -- Host --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("localhost", "localhost"),
        ("LocalHost:8000", "localhost"),
        ("ocr.example.org.", "ocr.example.org"),
        ("127.0.0.1:8000", "127.0.0.1"),
        ("[::1]:8000", "::1"),
        ("[::1]", "::1"),
        ("a,b", None),
        ("localhost,evil.example", None),
        ("user@localhost", None),
        ("localhost:80x", None),
        ("[::1", None),
        ("::1", None),
        ("", None),
    ],
)
def test_a_host_header_names_one_host_or_none(header, host):
    assert host_of(header) == host


def test_allowed_hosts_match_names_domains_and_any_ip_address():
    allowed = AllowedHosts.of(["ocr.example.org", ".example.net"])

    assert [allowed.allow(h) for h in ("ocr.example.org", "example.net", "a.b.example.net", "10.0.0.7", "::1")] == [
        True
    ] * 5
    assert not [h for h in ("example.org", "badexample.net", "evil.example", "localhost") if allowed.allow(h)]
    assert AllowedHosts.of(["*"]).allow("anything.example")


def test_another_host_is_refused_before_the_key_is_asked_for_and_stores_nothing(settings, store, tmp_path, keyspace):
    client = make_app(keyed_settings(settings, tmp_path), store).test_client()
    before = keyspace()

    refused = client.post("/jobs", json=echo_job(), headers={"Host": "rebound.example:8000"})

    problem = assert_problem(refused, 400, "host_not_allowed")
    assert "OCRGW_ALLOWED_HOSTS" in problem["detail"]
    assert keyspace() == before
    assert_problem(client.get("/jobs", headers={"Host": "localhost:8000"}), 401, "missing_api_key")
    assert_problem(client.get("/ui", headers={"Host": "rebound.example"}), 400, "host_not_allowed")
    assert_problem(client.get("/manual/", headers={"Host": "rebound.example"}), 400, "host_not_allowed")


@pytest.mark.parametrize("host", ["localhost:8000", "app.localhost", "127.0.0.1:8000", "[::1]:8000", "10.1.2.3"])
def test_a_local_start_is_reached_by_its_local_names_and_any_address(client, host):
    assert client.get("/models", headers={"Host": host}).status_code == 200


def test_the_probes_and_the_metrics_answer_any_host(client):
    for path in ("/healthz", "/readyz", "/metrics"):
        assert client.get(path, headers={"Host": "pod-name.namespace.svc:8000"}).status_code == 200, path
    # Prometheus scrapes a target by the name it was given, as the deployment's rules test does.
    scraped = client.get("/metrics", headers={"Host": "gw1:8000"})
    assert scraped.status_code == 200 and scraped.mimetype == "text/plain"


def test_the_configured_hosts_replace_the_local_names(settings, store):
    client = make_app(replace(settings, allowed_hosts=(".example.org",)), store).test_client()

    assert client.get("/models", headers={"Host": "ocr.example.org"}).status_code == 200
    assert client.get("/models", headers={"Host": "192.0.2.1:8000"}).status_code == 200
    assert_problem(client.get("/models", headers={"Host": "localhost"}), 400, "host_not_allowed")
    anyone = make_app(replace(settings, allowed_hosts=("*",)), store).test_client()
    assert anyone.get("/models", headers={"Host": "whatever.example"}).status_code == 200


# -- a JSON body, only as JSON -----------------------------------------------------------------------

UNASKED = ["text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded"]


@pytest.mark.parametrize("content_type", UNASKED)
@pytest.mark.parametrize("body", [echo_job(), fanout(echo_job(), echo_job())], ids=["single", "group"])
def test_a_json_job_under_a_type_any_page_may_send_is_refused_and_stores_nothing(client, keyspace, content_type, body):
    before = keyspace()

    for query in ("", "?model=echo"):
        response = client.post(f"/jobs{query}", data=json.dumps(body), content_type=content_type)
        assert_problem(response, 415, "json_content_type_required")
    assert keyspace() == before


def test_a_text_document_that_is_not_a_json_object_is_still_a_document(client):
    for text in (b"hello", b"[1, 2]", b"{not json"):
        response = client.post("/jobs?model=echo", data=text, content_type="text/plain")
        assert response.status_code == 202, response.get_data(as_text=True)


def test_a_json_suffix_type_is_json(client):
    response = client.post("/jobs", data=json.dumps(echo_job()), content_type="application/vnd.ocrgw+json")

    assert response.status_code == 202, response.get_data(as_text=True)


def _failed_group(client, store) -> str:
    parent = client.post("/jobs", json=fanout(echo_job("a"), max_parallel=1)).get_json()["id"]
    claim = store.claim(f"{parent}-0")
    store.fail(f"{parent}-0", claim.attempt, "echo_failed", "asked to")
    return parent


@pytest.mark.parametrize(
    ("data", "content_type"),
    [(b'{"include_cancelled": true}', "text/plain"), (b"", "text/plain"), (b"{}", None)],
    ids=["json-as-text", "empty-text", "json-without-type"],
)
def test_a_control_refuses_a_body_or_type_that_is_not_json_and_changes_nothing(
    client, store, keyspace, data, content_type
):
    parent = _failed_group(client, store)
    before = keyspace()

    retry = client.post(f"/jobs/{parent}/retry", data=data, content_type=content_type)
    cap = client.patch(f"/jobs/{parent}", data=b'{"max_parallel": 3}', content_type=content_type)

    assert_problem(retry, 415, "json_content_type_required")
    assert_problem(cap, 415, "json_content_type_required")
    assert keyspace() == before
    assert client.post(f"/jobs/{parent}/retry", json={"include_cancelled": False}).status_code == 202


# -- a change only from the gateway's own pages --------------------------------------------------------

ANOTHER_SITE = [
    {"Origin": "https://evil.example"},
    {"Origin": "http://localhost:9999"},  # the same host, another port: another origin
    {"Origin": "null"},  # a sandboxed frame or a data: page
    {"Sec-Fetch-Site": "cross-site"},
    {"Origin": "http://localhost", "Sec-Fetch-Site": "cross-site"},
]


@pytest.mark.parametrize("sent", ANOTHER_SITE, ids=lambda sent: ",".join(f"{k}={v}" for k, v in sent.items()))
def test_a_change_sent_from_a_page_of_another_site_is_403_and_changes_nothing(client, store, keyspace, sent):
    parent = _failed_group(client, store)
    before = keyspace()

    refused = [
        client.post("/jobs?model=echo", data=b"a raw text document", content_type="text/plain", headers=sent),
        client.post("/jobs", json=echo_job(), headers=sent),
        client.post(f"/jobs/{parent}/retry", headers=sent),  # no body, no type: what a no-cors fetch sends
        client.patch(f"/jobs/{parent}", json={"max_parallel": 3}, headers=sent),
        client.delete(f"/jobs/{parent}", headers=sent),
    ]

    for response in refused:
        problem = assert_problem(response, 403, "cross_site_request")
        assert_protected(response)
        assert "another" in problem["detail"]
    assert keyspace() == before
    # Reading is not a change: a page elsewhere cannot read the answer anyway (no CORS headers).
    assert client.get(f"/jobs/{parent}", headers=sent).status_code == 200


@pytest.mark.parametrize(
    ("sent", "host"),
    [
        ({}, "localhost:8000"),  # curl, the CLI, a program: no Origin
        ({"Origin": "http://localhost:8000", "Sec-Fetch-Site": "same-origin"}, "localhost:8000"),  # the dashboard
        ({"Origin": "HTTP://LocalHost:8000"}, "localhost:8000"),
        ({"Origin": "https://ocr.localhost"}, "ocr.localhost"),  # a proxy in front ended TLS
        ({"Sec-Fetch-Site": "none"}, "localhost"),  # typed into the address bar
    ],
)
def test_a_change_from_the_gateway_s_own_pages_or_from_no_browser_is_taken(client, sent, host):
    response = client.post("/jobs", json=echo_job(), headers={**sent, "Host": host})

    assert response.status_code == 202, response.get_data(as_text=True)


def test_an_origin_matches_the_host_it_was_sent_to_only():
    assert is_own_origin("http://localhost:8000", "localhost:8000", "http")
    assert is_own_origin("https://ocr.example.org", "ocr.example.org", "https")
    assert is_own_origin("https://ocr.example.org", "ocr.example.org", "http")  # TLS ended in front
    assert not is_own_origin("http://ocr.example.org", "ocr.example.org", "https")  # a page without TLS
    assert not is_own_origin("http://ocr.example.org", "ocr.example.org:8000", "http")
    assert not is_own_origin("http://ocr.example.org.evil.example", "ocr.example.org", "http")
    assert not is_own_origin("http://localhost:8000", None, "http")
    assert not is_own_origin("null", "localhost", "http")
    assert not is_own_origin("localhost", "localhost", "http")
