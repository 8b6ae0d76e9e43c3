"""The live API against its own OpenAPI document, with requests that schemathesis generates from it.

Every operation gets a bounded, derandomized number of generated requests,
valid and invalid ones; each answer must not be a server error and must be
documented: its status, its content type, its headers and its body.
POST /jobs is generated for the echo model and text/plain only, so that
the jobs it creates are small and need no OCR engine.
"""

from __future__ import annotations

import copy

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.integration

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]
EXAMPLES_PER_OPERATION = 15


def echo_only(spec: dict) -> dict:
    """The document with POST /jobs narrowed to small echo jobs that cannot hold a worker up.

    JSON jobs and groups of the echo model on text/plain, without options (a
    generated ``delay_ms`` could keep a worker of the shared stack asleep),
    and raw text/plain bodies, which the gateway under test gives the echo
    model by default: the raw query parameters are left out, since any of
    them makes a JSON submission an ``invalid_field``.
    """
    spec = copy.deepcopy(spec)
    post = spec["paths"]["/jobs"]["post"]
    body = post["requestBody"]["content"]
    for media_type in list(body):
        if media_type not in ("application/json", "text/plain"):
            del body[media_type]
    post["parameters"] = [p for p in post["parameters"] if p["in"] != "query"]
    job = spec["components"]["schemas"]["Job"]["properties"]
    job["model"]["enum"] = ["echo"]
    job["content_type"]["enum"] = ["text/plain"]
    del job["options"]
    return spec


@pytest.fixture
def base_url(stack, procs, redis_url) -> str:
    """A gateway of its own on the shared stack's database, whose raw documents default to echo."""
    return procs.web(env={**stack.env, "OCRGW_DEFAULT_MODEL": "echo"}).base_url


def failures_of(schema, base_url: str, http: requests.Session, call) -> list[str]:
    """Every operation's generated requests, valid and invalid, each sent with ``call(case)``;
    the failures, one line per operation and mode that failed."""
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):

            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                derandomize=True,
                deadline=None,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def each(case):
                # Requests past gunicorn's limits too: its worker answers them as documented problems.
                call(case)

            try:
                each()
            except Unsatisfiable:
                # No request can break this operation's document (a free-form path id, no query):
                # there is nothing invalid to send.
                assert mode is schemathesis.GenerationMode.NEGATIVE, operation.path
            except Exception as error:  # collect every operation's failure, not only the first
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {error}")
    return failures


def test_every_answer_is_documented(base_url):
    http = requests.Session()
    http.trust_env = False  # loopback: no proxy from the environment applies
    document = http.get(f"{base_url}/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_dict(echo_only(document))

    def answers_as_documented(case):
        case.call_and_validate(base_url=base_url, session=http, checks=CHECKS, timeout=30)

    failures = failures_of(schema, base_url, http, answers_as_documented)
    assert not failures, "\n\n".join(failures)


KEY = "schemathesis-key-9f2Kq"


def test_with_api_keys_every_answer_is_documented_and_no_refused_request_stores_anything(procs):
    """A gateway that wants keys, alone on its own database (no worker, so only requests change it):
    requests with the key, valid and invalid, answer as documented, and after every 4xx the keyspace
    is exactly what it was before the request; requests without a key are 401."""
    import redis

    db = procs.fresh_db()
    base_url = procs.web(db=db, env={"OCRGW_DEFAULT_MODEL": "echo", "OCRGW_API_KEYS": f"acme:{KEY}"}).base_url
    store = redis.Redis.from_url(procs.url(db))
    http = requests.Session()
    http.trust_env = False
    document = http.get(f"{base_url}/openapi.json", timeout=30).json()
    schema = schemathesis.openapi.from_dict(echo_only(document))
    auth = {"Authorization": f"Bearer {KEY}"}

    def keyspace() -> set[bytes | str]:
        return set(store.keys("*"))

    def answers_as_documented_and_refusals_store_nothing(case):
        case.headers = {**(case.headers or {}), **auth}
        before = keyspace()
        response = case.call_and_validate(base_url=base_url, session=http, checks=CHECKS, timeout=30)
        if 400 <= response.status_code < 500:
            assert keyspace() == before, f"{case.method} {case.formatted_path}: {response.status_code}"

    failures = failures_of(schema, base_url, http, answers_as_documented_and_refusals_store_nothing)
    assert not failures, "\n\n".join(failures)
    before = keyspace()
    for path in ("/jobs", "/models"):
        answer = http.get(f"{base_url}{path}", timeout=30)
        assert answer.status_code == 401 and answer.headers["WWW-Authenticate"].startswith("Bearer")
    refused = http.post(f"{base_url}/jobs", data=b"hello", headers={"Content-Type": "text/plain"}, timeout=30)
    assert refused.status_code == 401
    assert keyspace() == before
