"""API keys over HTTP: 401 without a valid key on every protected operation, the open endpoints,
the constant-time comparison, and the single default tenant when no key is configured."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from gateway import auth, create_app
from gateway.openapi import PROBLEM_CODES_EXTENSION
from jobs.api_keys import ApiKey

from .keyed import ACME_KEY, ACME_ROTATED_KEY, GLOBEX_KEY, bearer, key_id, keyed_settings
from .support import assert_problem, echo_job

OPEN_PATHS = {"/healthz", "/readyz"}


@pytest.fixture
def settings(settings, tmp_path):
    return keyed_settings(settings, tmp_path)


@pytest.fixture
def spec(client) -> dict:
    return client.get("/openapi.json").get_json()


def protected_requests(spec: dict, job_id: str):
    """(method, path, JSON body) of every documented operation that asks for a key."""
    for template, item in spec["paths"].items():
        for method in item:
            if method in ("get", "post", "patch", "delete") and template not in OPEN_PATHS:
                body = {"max_parallel": 2} if method == "patch" else echo_job() if method == "post" else None
                yield method.upper(), template.replace("{job_id}", job_id), body


def test_every_protected_operation_refuses_a_missing_key_with_a_bearer_challenge(client, spec, keyspace):
    job_id = client.post("/jobs", json=echo_job(), headers=bearer(ACME_KEY)).get_json()["id"]
    before = keyspace()
    requests = list(protected_requests(spec, job_id))

    for method, path, body in requests:
        for headers in ({}, {"Authorization": f"Basic {ACME_KEY}"}, {"Authorization": "Bearer "}):
            response = client.open(path, method=method, json=body, headers=headers)
            assert_problem(response, 401, "missing_api_key")
            assert response.headers["WWW-Authenticate"] == 'Bearer realm="ocrgw"', (method, path)

    assert len(requests) == 16
    assert keyspace() == before  # nothing was stored for any of them


def test_every_protected_operation_refuses_a_wrong_key(client, spec, keyspace):
    job_id = client.post("/jobs", json=echo_job(), headers=bearer(ACME_KEY)).get_json()["id"]
    before = keyspace()

    for method, path, body in protected_requests(spec, job_id):
        for wrong in (ACME_KEY + "x", ACME_KEY[:-1], hashlib.sha256(ACME_KEY.encode()).hexdigest(), "ünïcode"):
            response = client.open(path, method=method, json=body, headers=bearer(wrong))
            body_of = assert_problem(response, 401, "invalid_api_key")
            assert wrong not in body_of["detail"]
            assert response.headers["WWW-Authenticate"] == 'Bearer realm="ocrgw", error="invalid_token"'

    assert keyspace() == before


def test_any_configured_key_is_taken_and_the_scheme_is_case_insensitive(client):
    for headers in (
        bearer(ACME_KEY),
        bearer(ACME_ROTATED_KEY),
        bearer(GLOBEX_KEY),
        {"Authorization": f"bearer  {GLOBEX_KEY} "},
    ):
        assert client.get("/jobs", headers=headers).status_code == 200


def test_the_probes_and_the_api_document_need_no_key(client):
    for path in ("/healthz", "/readyz", "/openapi.json", "/docs"):
        assert client.get(path).status_code == 200, path
    html = client.get("/docs").get_data(as_text=True)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert len(assets) == 3
    for asset in assets:
        with client.get(asset) as response:
            assert response.status_code == 200, asset


def test_the_document_names_the_bearer_scheme_and_the_401_of_every_protected_operation(spec):
    assert spec["components"]["securitySchemes"]["bearerAuth"] == {
        "type": "http",
        "scheme": "bearer",
        "description": spec["components"]["securitySchemes"]["bearerAuth"]["description"],
    }
    assert spec["security"] == [{"bearerAuth": []}]
    for template, item in spec["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "patch", "delete"):
                continue
            if template in OPEN_PATHS:
                assert operation["security"] == [] and "401" not in operation["responses"]
                continue
            assert "security" not in operation, (method, template)  # the document's: bearerAuth
            unauthorized = operation["responses"]["401"]
            codes = unauthorized[PROBLEM_CODES_EXTENSION]
            assert unauthorized["content"]["application/problem+json"]["schema"] == {
                "$ref": "#/components/schemas/Problem"
            }
            assert set(codes) == {"missing_api_key", "invalid_api_key"}, (method, template)
            assert "WWW-Authenticate" in unauthorized["headers"]


def test_a_key_is_checked_against_every_entry_in_constant_time(settings, monkeypatch):
    table = auth.KeyTable(settings.api_keys)
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", spy)

    for presented in (ACME_KEY, GLOBEX_KEY, "nobody's key"):
        compared.clear()
        table.principal_of(presented.encode())

        # One comparison per configured key, whichever matched (the first, the last or none): no early exit.
        assert len(compared) == len(settings.api_keys) == 3
        digest = hashlib.sha256(presented.encode()).digest()
        assert all(a == digest and len(b) == 32 for a, b in compared)  # digests, never the key itself


def test_a_principal_is_the_keys_tenant_key_id_and_policies(settings):
    table = auth.KeyTable(settings.api_keys)

    assert table.authenticate(f"Bearer {ACME_KEY}") == auth.Principal("acme", key_id(ACME_KEY), frozenset())
    rotated = table.authenticate(f"Bearer {ACME_ROTATED_KEY}")
    assert rotated == auth.Principal("acme", key_id(ACME_ROTATED_KEY), frozenset({"on_prem_only"}))
    assert table.authenticate(f"Bearer {GLOBEX_KEY}").tenant == "globex"
    assert auth.KeyTable([ApiKey("x", "00" * 32)]).principal_of(b"") is None


def test_a_job_records_the_tenant_and_key_id_of_the_key_that_submitted_it(client, store):
    response = client.post("/jobs", json=echo_job(), headers=bearer(ACME_ROTATED_KEY))

    record = store.queries.get(response.get_json()["id"])
    assert (record["tenant"], record["key_id"]) == ("acme", key_id(ACME_ROTATED_KEY))


def test_with_no_keys_anyone_is_the_default_tenant_and_a_warning_says_so(store, caplog):
    from jobs.config import Settings

    app = create_app(Settings(), store, lambda dispatches: 0)

    assert "no API keys configured" in caplog.text
    response = app.test_client().post("/jobs", json=echo_job(), headers=bearer("anything at all"))
    assert response.status_code == 202
    record = store.queries.get(response.get_json()["id"])
    assert (record["tenant"], record["key_id"]) == ("default", "")
