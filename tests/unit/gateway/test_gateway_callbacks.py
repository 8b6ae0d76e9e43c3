"""callback_url on POST /jobs: stored for a job, each child and a group's parent; refused by the policy,
with nothing stored; and the webhook attempts in GET /jobs/{id}/events."""

from __future__ import annotations

from dataclasses import replace

import pytest

from jobs import webhooks
from jobs.webhooks import Answer
from tests.keyspace import keys

from .support import assert_problem, echo_job, fanout

HOOK = "https://hooks.example/ocr?token=1"


def stored_callback(redis, job_id: str) -> str:
    return (redis.hget(keys.job(job_id), "callback_url") or b"").decode()


def test_a_json_job_s_callback_url_is_stored_with_it(client, redis):
    response = client.post("/jobs", json=echo_job(callback_url=HOOK))

    assert response.status_code == 202
    assert stored_callback(redis, response.get_json()["id"]) == HOOK


def test_a_raw_document_takes_its_callback_url_from_the_query(client, redis):
    response = client.post(
        "/jobs", query_string={"model": "echo", "callback_url": HOOK}, data=b"hi", content_type="text/plain"
    )

    assert response.status_code == 202
    assert stored_callback(redis, response.get_json()["id"]) == HOOK


def test_a_group_s_callback_url_is_the_parent_s_and_each_child_may_have_its_own(client, redis):
    body = fanout(echo_job("a", callback_url=HOOK + "&child=0"), echo_job("b"))
    body["fanout"]["callback_url"] = HOOK

    response = client.post("/jobs", json=body)

    assert response.status_code == 202
    parent = response.get_json()["id"]
    assert stored_callback(redis, parent) == HOOK
    assert stored_callback(redis, keys.child_id(parent, 0)) == HOOK + "&child=0"
    assert stored_callback(redis, keys.child_id(parent, 1)) == ""


def test_a_job_without_a_callback_url_has_none(client, redis):
    response = client.post("/jobs", json=echo_job())

    assert stored_callback(redis, response.get_json()["id"]) == ""


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hook",
        "http://localhost/hook",
        "http://10.0.0.7/h",
        "http://[::1]/h",
        "http://169.254.169.254/latest",
        "ftp://hooks.example/x",
        "http://user:pw@hooks.example/",
        "hooks.example",
    ],
)
def test_a_refused_callback_url_is_a_422_and_stores_nothing(client, keyspace, url):
    before = keyspace()

    single = client.post("/jobs", json=echo_job(callback_url=url))
    raw = client.post(
        "/jobs", query_string={"model": "echo", "callback_url": url}, data=b"hi", content_type="text/plain"
    )
    group = fanout(echo_job())
    group["fanout"]["callback_url"] = url
    parent = client.post("/jobs", json=group)

    for response in (single, raw, parent):
        assert_problem(response, 422, "invalid_callback_url")
    assert keyspace() == before


def test_a_child_s_refused_callback_url_names_the_child_and_refuses_the_whole_group(client, keyspace):
    before = keyspace()

    response = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b", callback_url="http://10.1.1.1/")))

    assert assert_problem(response, 422, "invalid_callback_url")["child_index"] == 1
    assert keyspace() == before


@pytest.mark.parametrize("value", [7, None, ["http://hooks.example"], {"url": "x"}])
def test_a_callback_url_that_is_not_a_string_is_an_invalid_field(client, value):
    body = assert_problem(client.post("/jobs", json=echo_job(callback_url=value)), 422, "invalid_field")

    assert "callback_url" in body["errors"]


def test_the_same_raw_document_with_another_callback_url_is_another_request(client):
    headers = {"Idempotency-Key": "k1"}
    first = client.post(
        "/jobs?model=echo&callback_url=https://a.example/", data=b"hi", content_type="text/plain", headers=headers
    )
    second = client.post(
        "/jobs?model=echo&callback_url=https://b.example/", data=b"hi", content_type="text/plain", headers=headers
    )

    assert first.status_code == 202
    assert_problem(second, 422, "idempotency_key_reused")


class TestWithPrivateAddressesAllowed:
    @pytest.fixture
    def settings(self, settings):
        return replace(settings, webhook_allow_private=1)

    def test_a_loopback_callback_url_is_taken(self, client, redis):
        response = client.post("/jobs", json=echo_job(callback_url="http://127.0.0.1:9/hook"))

        assert response.status_code == 202
        assert stored_callback(redis, response.get_json()["id"]) == "http://127.0.0.1:9/hook"

    def test_what_is_not_an_http_url_is_still_refused(self, client):
        assert_problem(
            client.post("/jobs", json=echo_job(callback_url="file:///etc/passwd")), 422, "invalid_callback_url"
        )


def test_webhook_attempts_are_listed_with_the_job_s_events(client, store):
    job_id = client.post("/jobs", json=echo_job(callback_url=HOOK)).get_json()["id"]
    store.complete(job_id, store.claim(job_id).attempt, {"text": "hello", "pages": []})
    [claim] = webhooks.claim_due(store, store.now_ms(), 10)
    webhooks.record(store, job_id, claim.attempt, Answer(500, "http_error", "answered 500"))
    store.redis.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})
    [claim] = webhooks.claim_due(store, store.now_ms(), 10)
    webhooks.record(store, job_id, claim.attempt, Answer(200))

    events = client.get(f"/jobs/{job_id}/events").get_json()["events"]  # checked against the OpenAPI document

    assert [(e["operation"], e["status"]) for e in events] == [
        ("job", "completed"),
        ("webhook", "completed"),
        ("webhook", "completed"),
    ]
    failed, delivered = events[1:]
    assert {k: failed[k] for k in ("attempt", "outcome", "response_status", "error_code", "error")} == {
        "attempt": 1,
        "outcome": "retrying",
        "response_status": 500,
        "error_code": "http_error",
        "error": "answered 500",
    }
    assert failed["retry_at"] is not None
    assert {k: delivered[k] for k in ("attempt", "outcome", "response_status", "error_code", "error", "retry_at")} == {
        "attempt": 2,
        "outcome": "delivered",
        "response_status": 200,
        "error_code": None,
        "error": None,
        "retry_at": None,
    }
    assert "attempt" not in events[0]  # a terminal audit event is as it was
