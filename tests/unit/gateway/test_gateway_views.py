"""GET /jobs/{id} and /jobs/{id}/events, with jobs driven through the store's own transitions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from jobs.public_view import rfc3339

from .support import RFC3339_MICROS, assert_problem, echo_job, fanout


def page(number: int, text: str) -> dict:
    return {"page": number, "text": text, "lines": [{"text": text, "confidence": 0.9, "bbox": [0, 0, 1, 1]}]}


def result(*texts: str) -> dict:
    return {"text": "\n".join(texts), "pages": [page(i + 1, t) for i, t in enumerate(texts)]}


def run(store, job_id: str, outcome: dict | str) -> None:
    """Claims the job and completes it with ``outcome`` (a result), or fails it with that error code."""
    claim = store.claim(job_id)
    assert claim is not None, f"{job_id} is not queued"
    if isinstance(outcome, dict):
        store.complete(job_id, claim.attempt, outcome)
    else:
        store.fail(job_id, claim.attempt, outcome, f"{outcome} happened")


def submit_group(client, n: int, max_parallel: int) -> str:
    response = client.post("/jobs", json=fanout(*[echo_job(f"c{i}") for i in range(n)], max_parallel=max_parallel))
    assert response.status_code == 202
    return response.get_json()["id"]


# -- times ---------------------------------------------------------------------------


def test_times_are_rfc3339_utc_with_microseconds():
    expected = datetime(2026, 12, 2, 18, 37, 0, 123456, tzinfo=UTC)
    micros = str(int(expected.replace(microsecond=0).timestamp()) * 1_000_000 + 123456)

    assert rfc3339(micros) == "2026-12-02T18:37:00.123456Z"
    assert rfc3339("0") == "1970-01-01T00:00:00.000000Z"
    assert rfc3339("") is None


# -- single jobs ---------------------------------------------------------------------


def test_a_new_single_job(client):
    job_id = client.post("/jobs", json=echo_job(doc_hash="d", pages=1)).get_json()["id"]

    job = client.get(f"/jobs/{job_id}").get_json()

    assert job == {
        "id": job_id,
        "kind": "single",
        "status": "queued",
        "model": "echo",
        "doc_hash": "d",
        "pages": 1,
        "content_type": "text/plain",
        "stage": "accepted",
        "progress": 0.0,
        "attempts": 0,
        "created_at": job["created_at"],
        "started_at": None,
        "finished_at": None,
        "result": None,
        "error_code": None,
        "error": None,
        "idempotency_key": None,
        "cancel_requested": False,
        "runs": [],
        "usage": {"ocr_pages": 0, "text_layer_pages": 0, "engine_seconds": 0.0, "input_bytes": 0},
    }
    assert RFC3339_MICROS.match(job["created_at"])


def test_a_completed_single_job_carries_its_result(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    run(store, job_id, result("hello"))

    job = client.get(f"/jobs/{job_id}").get_json()

    assert job["status"] == "completed"
    assert job["result"] == result("hello")
    assert job["progress"] == 1.0
    assert job["attempts"] == 1
    assert RFC3339_MICROS.match(job["started_at"]) and RFC3339_MICROS.match(job["finished_at"])
    assert job["created_at"] <= job["started_at"] <= job["finished_at"]
    assert job["error_code"] is None and job["error"] is None


def test_a_failed_single_job_carries_its_error(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    run(store, job_id, "echo_failed")

    job = client.get(f"/jobs/{job_id}").get_json()

    assert (job["status"], job["error_code"], job["error"]) == ("failed", "echo_failed", "echo_failed happened")
    assert job["result"] is None


def test_a_retried_job_shows_why(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    claim = store.claim(job_id)
    store.retry(job_id, claim.attempt, 0, "engine_unavailable", "no engine")

    job = client.get(f"/jobs/{job_id}").get_json()

    assert job["status"] == "queued"
    assert (job["last_error_code"], job["last_error"]) == ("engine_unavailable", "no engine")
    assert job["error_code"] is None


def test_a_child_names_its_parent_and_index(client):
    parent_id = submit_group(client, 2, 1)

    child = client.get(f"/jobs/{parent_id}-1").get_json()

    assert (child["kind"], child["parent_id"], child["index"], child["status"]) == ("child", parent_id, 1, "held")


@pytest.mark.parametrize("job_id", ["0" * 32, "0" * 32 + "-0", "nothex", "..", "A" * 32, "0" * 32 + "-x"])
def test_unknown_or_malformed_ids_are_404(client, job_id):
    assert_problem(client.get(f"/jobs/{job_id}"), 404, "job_not_found")
    assert_problem(client.get(f"/jobs/{job_id}/events"), 404, "job_not_found")


def test_a_child_index_past_the_group_is_404(client):
    parent_id = submit_group(client, 2, 1)

    assert_problem(client.get(f"/jobs/{parent_id}-2"), 404, "job_not_found")


# -- parents ---------------------------------------------------------------------------


def test_a_new_parent_is_queued(client):
    parent_id = submit_group(client, 3, 2)

    parent = client.get(f"/jobs/{parent_id}").get_json()

    assert parent["status"] == "queued"
    assert parent["progress"] == 0.0
    assert parent["started_at"] is None and parent["finished_at"] is None
    assert parent["result_url"] is None and parent["error_code"] is None
    assert "result" not in parent  # a parent's merged result is only at its result_url
    assert [(c["id"], c["index"]) for c in parent["children"]] == [(f"{parent_id}-{i}", i) for i in range(3)]
    assert parent["children_page"] == {"offset": 0, "limit": 20, "total": 3, "next": None}
    assert set(parent["children"][0]) >= {
        "id",
        "index",
        "status",
        "doc_hash",
        "stage",
        "progress",
        "attempts",
        "started_at",
        "finished_at",
        "error_code",
    }


def test_a_parent_is_processing_once_a_child_started(client, store):
    parent_id = submit_group(client, 3, 2)
    store.claim(f"{parent_id}-0")

    parent = client.get(f"/jobs/{parent_id}").get_json()

    assert parent["status"] == "processing"
    assert RFC3339_MICROS.match(parent["started_at"])
    assert parent["counts"]["processing"] == 1
    assert parent["children"][0]["status"] == "processing"
    assert parent["children"][0]["attempts"] == 1


def test_a_failed_child_fails_the_parent_but_keeps_every_completed_result(client, store):
    parent_id = submit_group(client, 3, 2)
    run(store, f"{parent_id}-0", result("zero one", "zero two"))

    midway = client.get(f"/jobs/{parent_id}").get_json()
    run(store, f"{parent_id}-1", "echo_failed")
    run(store, f"{parent_id}-2", result("two"))  # released by the first completion
    parent = client.get(f"/jobs/{parent_id}").get_json()

    assert (midway["status"], midway["progress"], midway["result_url"]) == ("processing", pytest.approx(1 / 3), None)
    assert parent["status"] == "failed"
    assert parent["error_code"] == "child_failed"
    assert parent["progress"] == 1.0
    assert RFC3339_MICROS.match(parent["finished_at"])
    assert parent["counts"] == {"held": 0, "queued": 0, "processing": 0, "completed": 2, "failed": 1, "cancelled": 0}
    assert parent["result_url"] == f"/jobs/{parent_id}/result"
    merged = client.get(parent["result_url"]).get_json()
    assert merged["text"] == "zero one\nzero two\n\ntwo"
    assert [(p["page"], p["child_index"], p["text"]) for p in merged["pages"]] == [
        (1, 0, "zero one"),
        (2, 0, "zero two"),
        (3, 2, "two"),
    ]
    assert merged["pages"][0]["lines"] == page(1, "zero one")["lines"]
    assert merged["children"] == [
        {"index": 0, "id": f"{parent_id}-0", "status": "completed", "text": "zero one\nzero two", "error_code": None},
        {"index": 1, "id": f"{parent_id}-1", "status": "failed", "text": None, "error_code": "echo_failed"},
        {"index": 2, "id": f"{parent_id}-2", "status": "completed", "text": "two", "error_code": None},
    ]
    assert [c["error_code"] for c in parent["children"]] == [None, "echo_failed", None]


def test_a_parent_completes_when_every_child_completed(client, store):
    parent_id = submit_group(client, 2, 0)
    run(store, f"{parent_id}-1", result("b"))  # finishing order does not change the merge order
    run(store, f"{parent_id}-0", result("a"))

    parent = client.get(f"/jobs/{parent_id}").get_json()

    assert parent["status"] == "completed"
    assert parent["error_code"] is None
    merged = client.get(parent["result_url"]).get_json()
    assert merged["text"] == "a\n\nb"
    assert [(p["page"], p["child_index"]) for p in merged["pages"]] == [(1, 0), (2, 1)]


def test_a_parent_is_queued_until_a_child_starts_then_processing_then_what_its_children_made_it(client, store):
    parent_id = submit_group(client, 3, 3)
    assert client.get(f"/jobs/{parent_id}").get_json()["status"] == "queued"
    claim = store.claim(f"{parent_id}-0")
    assert client.get(f"/jobs/{parent_id}").get_json()["status"] == "processing"
    store.complete(claim.job_id, claim.attempt, result("a"))
    run(store, f"{parent_id}-1", "echo_failed")
    assert client.get(f"/jobs/{parent_id}").get_json()["status"] == "processing"
    run(store, f"{parent_id}-2", result("c"))
    view = client.get(f"/jobs/{parent_id}").get_json()
    assert (view["status"], view["error_code"], view["counts"]["failed"]) == ("failed", "child_failed", 1)


# -- events ------------------------------------------------------------------------------


def test_a_parent_lists_its_childrens_events_and_its_own_oldest_first(client, store):
    parent_id = submit_group(client, 2, 1)
    run(store, f"{parent_id}-0", "echo_failed")
    run(store, f"{parent_id}-1", result("b"))

    events = client.get(f"/jobs/{parent_id}/events").get_json()["events"]

    assert [(e["operation"], e["job_id"], e["parent_job_id"], e["status"], e["error_code"]) for e in events] == [
        ("job_child", f"{parent_id}-0", parent_id, "failed", "echo_failed"),
        ("job_child", f"{parent_id}-1", parent_id, "completed", None),
        ("job", parent_id, None, "failed", "child_failed"),
    ]
    for event in events:
        assert set(event) == {
            *("id", "time", "operation", "job_id", "parent_job_id", "status", "model", "error_code"),
            *("tenant", "key_id"),
        }
        assert (event["tenant"], event["key_id"]) == ("default", None)  # no API keys: the default tenant, no key
        assert event["model"] == "echo"
        assert RFC3339_MICROS.match(event["time"])
    assert [e["time"] for e in events] == sorted(e["time"] for e in events)


def test_a_child_lists_only_its_own_events(client, store):
    parent_id = submit_group(client, 2, 0)
    run(store, f"{parent_id}-0", result("a"))
    run(store, f"{parent_id}-1", result("b"))

    events = client.get(f"/jobs/{parent_id}-1/events").get_json()["events"]

    assert [(e["operation"], e["job_id"]) for e in events] == [("job_child", f"{parent_id}-1")]


def test_a_single_job_has_one_event_once_finished(client, store):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    before = client.get(f"/jobs/{job_id}/events").get_json()
    run(store, job_id, result("a"))

    events = client.get(f"/jobs/{job_id}/events").get_json()["events"]

    assert before == {"events": []}
    assert [(e["operation"], e["job_id"], e["parent_job_id"], e["status"]) for e in events] == [
        ("job", job_id, None, "completed"),
    ]
