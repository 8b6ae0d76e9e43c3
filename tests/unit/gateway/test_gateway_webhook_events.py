"""webhook_events on POST /jobs: a group (or a split PDF) that asks for child.completed gets a webhook per
child as it ends, on the path every job's webhook takes; what is not a known event is refused, with nothing
stored.

Given a group that asks, each child carries the group's callback_url (unless it names its own), so the
transition that ends it (complete, a cancellation, a reclaim that gives up) puts it on its bucket's webhooks
index as it puts any job with a callback_url; the sweep claims it and the answer is recorded, once.
"""

from __future__ import annotations

import pytest

from jobs import controls, webhooks
from jobs.contract import WebhookOutcome
from jobs.webhooks import Answer
from tests.keyspace import keys

from .support import assert_problem, echo_job, fanout
from .test_gateway_split import SEVEN_PAGES, pdf_job

HOOK = "https://hooks.example/ocr?token=1"
BOTH = ["job.completed", "child.completed"]


def stored_callback(redis, job_id: str) -> str:
    return (redis.hget(keys.job(job_id), "callback_url") or b"").decode()


def group(*children, events=None, callback_url=HOOK, max_parallel=2) -> dict:
    body = fanout(*children, max_parallel=max_parallel)
    if callback_url is not None:
        body["fanout"]["callback_url"] = callback_url
    if events is not None:
        body["fanout"]["webhook_events"] = events
    return body


def submitted(client, body: dict) -> str:
    response = client.post("/jobs", json=body)
    assert response.status_code == 202, response.get_data(as_text=True)
    return response.get_json()["id"]


def test_a_group_asking_for_child_completed_gives_each_child_the_group_s_callback(client, redis):
    parent = submitted(client, group(echo_job("a"), echo_job("b"), echo_job("c"), events=BOTH))

    assert stored_callback(redis, parent) == HOOK
    assert [stored_callback(redis, keys.child_id(parent, i)) for i in range(3)] == [HOOK] * 3


def test_a_child_with_its_own_callback_url_keeps_it_and_gets_one_webhook_there(client, redis):
    own = HOOK + "&mine=1"
    parent = submitted(client, group(echo_job("a", callback_url=own), echo_job("b"), events=BOTH))

    assert [stored_callback(redis, keys.child_id(parent, i)) for i in range(2)] == [own, HOOK]


def test_child_completed_alone_sends_no_webhook_for_the_group_itself(client, redis):
    parent = submitted(client, group(echo_job("a"), echo_job("b"), events=["child.completed"]))

    assert stored_callback(redis, parent) == ""
    assert [stored_callback(redis, keys.child_id(parent, i)) for i in range(2)] == [HOOK] * 2


@pytest.mark.parametrize("events", [None, ["job.completed"]])
def test_by_default_only_the_group_s_end_is_sent(client, redis, events):
    parent = submitted(client, group(echo_job("a"), echo_job("b"), events=events))

    assert stored_callback(redis, parent) == HOOK
    assert [stored_callback(redis, keys.child_id(parent, i)) for i in range(2)] == ["", ""]


def test_a_split_pdf_asking_for_child_completed_sends_one_webhook_per_part(client, redis):
    parent = submitted(client, pdf_job(split_pages=3, callback_url=HOOK, webhook_events=["child.completed"]))

    assert stored_callback(redis, parent) == ""
    assert [stored_callback(redis, keys.child_id(parent, i)) for i in range(3)] == [HOOK] * 3


def test_a_raw_split_pdf_takes_webhook_events_from_the_query_separated_by_commas(client, redis):
    response = client.post(
        "/jobs",
        query_string={"split_pages": 4, "callback_url": HOOK, "webhook_events": "job.completed,child.completed"},
        data=SEVEN_PAGES,
        content_type="application/pdf",
    )

    assert response.status_code == 202, response.get_data(as_text=True)
    parent = response.get_json()["id"]
    assert [stored_callback(redis, job_id) for job_id in (parent, *(keys.child_id(parent, i) for i in range(2)))] == [
        HOOK
    ] * 3


def test_the_same_raw_document_asking_for_other_webhooks_is_another_request(client):
    headers = {"Idempotency-Key": "k-events"}
    url = f"/jobs?split_pages=4&callback_url={HOOK.replace('?', '%3F').replace('&', '%26')}"

    first = client.post(url, data=SEVEN_PAGES, content_type="application/pdf", headers=headers)
    second = client.post(
        url + "&webhook_events=child.completed", data=SEVEN_PAGES, content_type="application/pdf", headers=headers
    )

    assert first.status_code == 202, first.get_data(as_text=True)
    assert_problem(second, 422, "idempotency_key_reused")


REFUSED = {
    "an unknown event": group(echo_job(), events=["child.failed"]),
    "a misspelt event": group(echo_job(), events=["job.complete"]),
    "an event twice": group(echo_job(), events=["child.completed", "child.completed"]),
    "no event": group(echo_job(), events=[]),
    "not a list": group(echo_job(), events="child.completed"),
    "not a string": group(echo_job(), events=[7]),
    "no callback_url": group(echo_job(), events=BOTH, callback_url=None),
    "events on a child": group(echo_job(webhook_events=["child.completed"]), events=BOTH),
    "child.completed on a job without children": echo_job(callback_url=HOOK, webhook_events=["child.completed"]),
    "a job's events without a callback_url": echo_job(webhook_events=["job.completed"]),
}


@pytest.mark.parametrize("body", REFUSED.values(), ids=REFUSED.keys())
def test_what_is_not_a_known_event_where_it_applies_is_an_invalid_field_and_stores_nothing(client, keyspace, body):
    before = keyspace()

    problem = assert_problem(client.post("/jobs", json=body), 422, "invalid_field")

    assert "webhook_events" in str(problem["errors"])
    assert keyspace() == before


@pytest.mark.parametrize("events", ["child.failed", "job.completed,", "child.completed,child.completed"])
def test_a_raw_document_s_unknown_or_repeated_event_is_an_invalid_field(client, keyspace, events):
    before = keyspace()

    response = client.post(
        "/jobs",
        query_string={"split_pages": 2, "callback_url": HOOK, "webhook_events": events},
        data=SEVEN_PAGES,
        content_type="application/pdf",
    )

    assert "webhook_events" in assert_problem(response, 422, "invalid_field")["errors"]
    assert keyspace() == before


# -- the store's path: every child's end is due once, claimed once, recorded once ----------------------


def test_each_child_s_end_is_due_once_whatever_ends_it_and_the_group_s_once(client, store):
    # Three children, one at a time: the first completes, the second fails, and the group is cancelled while
    # the third is still held, which ends it too.  Each of the four jobs is due once.
    parent = submitted(client, group(echo_job("a"), echo_job("b"), echo_job("c"), events=BOTH, max_parallel=1))
    first, second, third = (keys.child_id(parent, i) for i in range(3))
    store.complete(first, store.claim(first).attempt, {"text": "a", "pages": []})
    store.fail(second, store.claim(second).attempt, "engine_timeout", "it took too long")
    # The third is released once the second ended; cancelling ends it without a worker.
    controls.cancel(store, parent)
    running = store.claim(third)
    if running is not None:  # released and queued: the cancel marks it, its attempt ends it
        store.end_cancelled(third, running.attempt)

    assert set(webhooks.pending(store)) == {first, second, third, parent}
    claimed: list[str] = []
    while webhooks.pending(store):
        # Sweeps one after another; those the tenant's share held back are made due again at once.
        for job_id in webhooks.pending(store):
            store.redis.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})
        claims = webhooks.claim_due(store, store.now_ms(), 10)
        assert 0 < len(claims) <= store.settings.webhook_tenant_concurrency
        for claim in claims:
            claimed.append(claim.job_id)
            recorded = webhooks.record(store, claim.job_id, claim.attempt, Answer(200))
            assert recorded.outcome is WebhookOutcome.DELIVERED
    assert sorted(claimed) == sorted([first, second, third, parent])  # each once
    statuses = {store.queries.get(j)["status"] for j in (first, second, third)}
    assert statuses == {"completed", "failed", "cancelled"}
    events = client.get(f"/jobs/{parent}/events").get_json()["events"]
    delivered = sorted(e["job_id"] for e in events if e["operation"] == "webhook" and e["outcome"] == "delivered")
    assert delivered == sorted([first, second, third, parent])


def test_a_group_that_did_not_ask_puts_no_child_on_the_webhooks_index(client, store):
    parent = submitted(client, group(echo_job("a"), echo_job("b")))
    for index in range(2):
        child = keys.child_id(parent, index)
        store.complete(child, store.claim(child).attempt, {"text": "x", "pages": []})

    assert set(webhooks.pending(store)) == {parent}
