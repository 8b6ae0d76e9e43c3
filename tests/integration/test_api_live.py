"""The HTTP API over a real gunicorn: error documents, idempotent replays, probes.

Every refused request must answer an RFC 9457 problem and leave the job
store exactly as it was (invariant 5: an invalid submission creates nothing).
"""

from __future__ import annotations

import pytest

from tests.integration.live import (
    ECHO_TIMEOUT,
    Api,
    accepted,
    assert_problem,
    b64,
    job_keys,
    ocrgw_keyspace,
)
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
UNKNOWN_ID = "0123456789abcdef0123456789abcdef"


def echo_job(text: str, **fields) -> dict:
    return {"model": "echo", "content_type": "text/plain", "payload": b64(text), **fields}


REJECTED = {
    "malformed-json": (
        lambda api: api.request(
            "POST", "/jobs", data=b'{"model": "echo", ', headers={"Content-Type": "application/json"}
        ),
        400,
        "malformed_json",
    ),
    "bad-base64": (lambda api: api.post_json(echo_job("x") | {"payload": "not base64!"}), 400, "invalid_base64"),
    "unsupported-raw-content-type": (
        lambda api: api.post_raw(b"PK\x03\x04zip", "application/zip", model="tesseract"),
        415,
        "unsupported_content_type",
    ),
    "model-refuses-content-type": (
        lambda api: api.post_raw(b"plain words", "text/plain", model="tesseract"),
        415,
        "unsupported_content_type",
    ),
    "missing-content-type": (
        lambda api: api.post_raw(PNG_SIGNATURE + b"rest", None, model="tesseract"),
        415,
        "missing_content_type",
    ),
    "unknown-model-raw": (
        lambda api: api.post_raw(PNG_SIGNATURE + b"rest", "image/png", model="no-such-model"),
        422,
        "unknown_model",
    ),
    "unknown-model-json": (lambda api: api.post_json(echo_job("x") | {"model": "no-such-model"}), 422, "unknown_model"),
    "negative-pages": (lambda api: api.post_json(echo_job("x", pages=-1)), 422, "invalid_field"),
    "options-not-an-object": (lambda api: api.post_json(echo_job("x", options="fast")), 422, "invalid_field"),
    "empty-document": (lambda api: api.post_raw(b"", "image/png", model="tesseract"), 422, "empty_document"),
    "invalid-idempotency-key": (
        lambda api: api.post_json(echo_job("x"), headers={"Idempotency-Key": "has spaces"}),
        400,
        "invalid_idempotency_key",
    ),
    "wrong-method": (lambda api: api.request("DELETE", "/jobs"), 405, "method_not_allowed"),
    "unknown-route": (lambda api: api.request("GET", "/no/such/route"), 404, "not_found"),
    "unknown-job": (lambda api: api.request("GET", f"/jobs/{UNKNOWN_ID}"), 404, "job_not_found"),
    "events-of-unknown-job": (lambda api: api.request("GET", f"/jobs/{UNKNOWN_ID}/events"), 404, "job_not_found"),
    "malformed-id": (lambda api: api.request("GET", "/jobs/not-a-job-id"), 404, "job_not_found"),
    "result-of-unknown-job": (lambda api: api.request("GET", f"/jobs/{UNKNOWN_ID}/result"), 404, "job_not_found"),
    "children-of-unknown-job": (lambda api: api.request("GET", f"/jobs/{UNKNOWN_ID}/children"), 404, "job_not_found"),
    "children-page-too-large": (
        lambda api: api.request("GET", f"/jobs/{UNKNOWN_ID}/children?limit=201"),
        422,
        "invalid_field",
    ),
    "listing-held-roots": (lambda api: api.request("GET", "/jobs?status=held"), 422, "invalid_field"),
    "listing-foreign-cursor": (lambda api: api.request("GET", "/jobs?cursor=not-ours"), 422, "invalid_field"),
    "tesseract-option-out-of-range": (
        lambda api: api.post_json(
            {
                "model": "tesseract",
                "content_type": "image/png",
                "payload": b64(PNG_SIGNATURE + b"rest"),
                "options": {"psm": 99},
            }
        ),
        422,
        "invalid_field",
    ),
}


@pytest.mark.parametrize("case", list(REJECTED))
def test_refused_request_answers_a_problem_and_stores_nothing(api, db, case):
    send, status, code = REJECTED[case]
    # Given the job store as it is (only ocrgw: keys: Celery's own _kombu.binding.*
    # and unacked* keys in the same database change without the gateway)
    before = ocrgw_keyspace(db)

    # When the gateway refuses the request
    response = send(api)

    # Then it says why in a problem document, and nothing was written
    assert_problem(response, status, code)
    assert ocrgw_keyspace(db) == before


def test_invalid_field_problem_names_the_fields(api):
    problem = assert_problem(api.post_json(echo_job("x", pages=-1, options=[1])), 422, "invalid_field")
    assert set(problem["errors"]) == {"pages", "options"}


def chunks(total: int, size: int = 500):
    """A body that requests sends chunked, with no Content-Length."""
    for start in range(0, total, size):
        yield b"x" * min(size, total - start)


def test_body_over_the_limit_is_refused_with_413(procs, db, redis_url):
    # Given a gateway with a 1000-byte body limit on the same database
    small = Api(procs.web(env={"OCRGW_MAX_BODY_BYTES": "1000"}).base_url)
    before = ocrgw_keyspace(db)

    # When larger bodies come, with a Content-Length and chunked
    sized = small.post_raw(PNG_SIGNATURE + bytes(2000), "image/png", model="tesseract")
    chunked = small.request("POST", "/jobs?model=echo", data=chunks(2500), headers={"Content-Type": "text/plain"})

    # Then both are refused with the limit in the problem, and nothing was stored
    for response in (sized, chunked):
        assert assert_problem(response, 413, "payload_too_large")["max_body_bytes"] == 1000
    assert ocrgw_keyspace(db) == before
    # while a chunked body within the limit is accepted whole
    within = accepted(
        small.request("POST", "/jobs?model=echo", data=chunks(1000), headers={"Content-Type": "text/plain"})
    )
    assert wait_for_job(small.job, within, timeout=ECHO_TIMEOUT)["result"]["text"] == "x" * 1000


def test_idempotent_replay_returns_the_same_job(api, db):
    # Given a job submitted with an Idempotency-Key
    key = {"Idempotency-Key": "replay-me-1"}
    first = api.post_raw(b"only once", "text/plain", model="echo", headers=key)
    job_id = accepted(first)
    assert "Idempotent-Replayed" not in first.headers

    # When exactly the same request comes again
    again = api.post_raw(b"only once", "text/plain", model="echo", headers=key)

    # Then it answers the same job, marked as a replay, and the store holds one job
    assert accepted(again) == job_id
    assert again.headers["Idempotent-Replayed"] == "true"
    assert job_keys(db) == [keys.job(job_id).encode()]
    job = wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)
    assert job["status"] == "completed" and job["idempotency_key"] == "replay-me-1"
    assert len(api.events(job_id)) == 1


def test_idempotency_key_reused_for_another_body_is_refused(api, db):
    # Given a finished job submitted with an Idempotency-Key
    key = {"Idempotency-Key": "reuse-me-1"}
    job_id = accepted(api.post_json(echo_job("original"), headers=key))
    wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)
    before = ocrgw_keyspace(db)
    assert before  # the job, its payload, result, events and idempotency record

    # When the key comes back with a different body
    response = api.post_json(echo_job("something else"), headers=key)

    # Then it is refused and nothing new is stored, nor anything changed
    assert_problem(response, 422, "idempotency_key_reused")
    assert ocrgw_keyspace(db) == before
    assert api.job(job_id)["result"]["text"] == "original"


def test_health_and_readiness_probes(api):
    health = api.request("GET", "/healthz")
    ready = api.request("GET", "/readyz")

    assert (health.status_code, health.json()) == (200, {"status": "ok"})
    assert (ready.status_code, ready.json()) == (200, {"status": "ready"})


def test_a_group_is_read_by_pages_its_result_and_the_listing(api):
    # Given a finished group of 25 children and a single job submitted after it
    children = [echo_job(f"child-{i}") for i in range(25)]
    parent_id = accepted(api.post_json({"fanout": {"max_parallel": 5, "children": children}}))
    view = wait_for_job(api.job, parent_id, timeout=ECHO_TIMEOUT)
    single_id = accepted(api.post_json(echo_job("after the group")))

    # Then its view shows the first page of children, and the next page the rest
    assert (view["status"], view["total"]) == ("completed", 25)
    assert [c["index"] for c in view["children"]] == list(range(20))
    assert view["children_page"]["total"] == 25
    rest = api.get(view["children_page"]["next"])
    assert [c["index"] for c in rest["children"]] == list(range(20, 25))
    assert rest["children_page"]["next"] is None
    # and its merged result is at result_url, not in the view
    assert "result" not in view
    merged = api.get(view["result_url"])
    assert merged["text"] == "\n\n".join(f"child-{i}" for i in range(25))
    assert [c["status"] for c in merged["children"]] == ["completed"] * 25
    # and the listing shows both roots newest first, never a child
    listed = api.get("/jobs")["jobs"]
    assert [j["id"] for j in listed] == [single_id, parent_id]
    assert api.get("/jobs", {"kind": "parent", "status": "completed"})["jobs"][0]["id"] == parent_id


def test_a_result_before_the_end_is_refused_then_served(api):
    # 3 s, so the job is still unfinished when the early GET comes on a slow machine.
    job_id = accepted(api.post_json(echo_job("slow", options={"delay_ms": 3000})))

    early = api.request("GET", f"/jobs/{job_id}/result")
    wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)

    assert assert_problem(early, 409, "result_not_ready")["job_status"] in ("queued", "processing")
    assert api.result(job_id)["text"] == "slow"


def test_the_document_swagger_ui_and_models_are_served(api):
    spec = api.get("/openapi.json")
    docs = api.request("GET", "/docs")
    models = api.get("/models")["models"]

    assert {
        "/jobs",
        "/jobs/{job_id}",
        "/jobs/{job_id}/children",
        "/jobs/{job_id}/result",
        "/jobs/{job_id}/result.pdf",
        "/jobs/{job_id}/result.hocr",
        "/jobs/{job_id}/result.alto",
        "/jobs/{job_id}/result.md",
        "/jobs/{job_id}/tables/{number}.csv",
        "/jobs/{job_id}/events",
        "/jobs/{job_id}/retry",
        "/usage",
        "/models",
        "/healthz",
        "/readyz",
    } == set(spec["paths"])
    assert docs.status_code == 200 and "swagger-ui-bundle.js" in docs.text
    assert api.request("GET", "/docs/static/swagger-ui-bundle.js").status_code == 200
    assert {m["name"] for m in models} == {"tesseract", "paddleocr", "echo"}
