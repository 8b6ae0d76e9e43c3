"""Signed webhooks end to end: a real HTTP server in the test receives the view of a job that ended.

The deployment is this module's own (a gateway, a worker, the coordinator,
beat, and the webhook deliverer as the Procfile runs it), on a database of
its own, because it needs settings the shared stack does not have: private
addresses allowed (the receiver listens on 127.0.0.1), a secret, and a
short backoff so that a retry comes soon.  What is checked is what the
receiver got (the view, the signature, verified with the secret alone) and
what the job's events recorded.
"""

from __future__ import annotations

import json

import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, echo_child, group_body, recorded_micros
from tests.integration.polling import wait_for_job
from tests.webhook_receiver import Receiver, verify

pytestmark = pytest.mark.integration

SECRET = "integration-test-webhook-secret"
BACKOFF_SECONDS = 0.5
ENV = {
    "OCRGW_SWEEP_INTERVAL": "0.2",
    "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",
    "OCRGW_WEBHOOK_SECRET": SECRET,
    "OCRGW_WEBHOOK_BACKOFF": str(BACKOFF_SECONDS),
    "OCRGW_WEBHOOK_TIMEOUT": "5",
}
WAIT = 60.0  # bounds a hang; asserts no speed


@pytest.fixture(scope="module")
def deployment(stack_factory):
    """With the webhook deliverer as the Procfile runs it (``webhooks``)."""
    return stack_factory(env=ENV, concurrency=2, webhooks=True)


def webhook_events(gateway: Gateway, job_id: str, count: int) -> list[dict]:
    """The job's first ``count`` webhook events, once recorded."""

    def recorded():
        found = [e for e in gateway.events(job_id) if e["operation"] == "webhook" and e["job_id"] == job_id]
        return found if len(found) >= count else None

    return wait_until(recorded, WAIT, message=lambda: f"webhook events of {job_id}: {gateway.events(job_id)}")


def test_a_single_job_s_view_arrives_signed_when_it_ends(gateway):
    with Receiver() as receiver:
        resp = gateway.post_json({**echo_child("hello webhook"), "callback_url": receiver.url("/single")})
        assert resp.status_code == 202, resp.text
        job_id = resp.json()["id"]

        [got] = receiver.wait_for("/single", 1, WAIT)
        [event] = webhook_events(gateway, job_id, 1)

    assert verify(SECRET, got)
    assert got.headers["X-Ocrgw-Attempt"] == "1"
    view = json.loads(got.body)
    assert view == gateway.get(f"/jobs/{job_id}")
    assert (view["status"], view["result"]["text"]) == ("completed", "hello webhook")
    assert (event["attempt"], event["outcome"], event["response_status"], event["error_code"]) == (
        1,
        "delivered",
        200,
        None,
    )


def test_a_group_s_parent_and_a_child_with_its_own_callback_each_get_theirs(gateway):
    with Receiver() as receiver:
        children = [echo_child("first", callback_url=receiver.url("/child")), echo_child("second")]
        body = group_body(children, max_parallel=1)
        body["fanout"]["callback_url"] = receiver.url("/parent")
        resp = gateway.post_json(body)
        assert resp.status_code == 202, resp.text
        parent_id = resp.json()["id"]

        [parent_hook] = receiver.wait_for("/parent", 1, WAIT)
        [child_hook] = receiver.wait_for("/child", 1, WAIT)
        webhook_events(gateway, parent_id, 1)
        webhook_events(gateway, f"{parent_id}-0", 1)
        unsigned_or_extra = [r for r in receiver.received if r.path not in ("/parent", "/child")]

    assert verify(SECRET, parent_hook) and verify(SECRET, child_hook)
    parent = json.loads(parent_hook.body)
    assert parent == gateway.get(f"/jobs/{parent_id}")
    assert (parent["kind"], parent["status"], parent["counts"]["completed"]) == ("parent", "completed", 2)
    assert [c["index"] for c in parent["children"]] == [0, 1]
    child = json.loads(child_hook.body)
    assert (child["id"], child["kind"], child["parent_id"], child["result"]["text"]) == (
        f"{parent_id}-0",
        "child",
        parent_id,
        "first",
    )
    assert unsigned_or_extra == []  # the second child has no callback_url of its own
    # The parent's events hold one terminal event per job and one webhook event per delivered webhook.
    events = gateway.events(parent_id)
    assert sorted((e["operation"], e["job_id"]) for e in events) == sorted(
        [
            ("job", parent_id),
            ("job_child", f"{parent_id}-0"),
            ("job_child", f"{parent_id}-1"),
            ("webhook", parent_id),
            ("webhook", f"{parent_id}-0"),
        ]
    )


def test_a_webhook_answered_500_is_retried_after_the_backoff_and_both_attempts_are_events(gateway):
    with Receiver([500]) as receiver:
        resp = gateway.post_json({**echo_child("retry me"), "callback_url": receiver.url("/flaky")})
        assert resp.status_code == 202, resp.text
        job_id = resp.json()["id"]

        first, second = receiver.wait_for("/flaky", 2, WAIT)
        failed, delivered = webhook_events(gateway, job_id, 2)

    assert verify(SECRET, first) and verify(SECRET, second)
    assert (first.headers["X-Ocrgw-Attempt"], second.headers["X-Ocrgw-Attempt"]) == ("1", "2")
    assert json.loads(second.body) == json.loads(first.body) == gateway.get(f"/jobs/{job_id}")
    assert (failed["attempt"], failed["outcome"], failed["response_status"], failed["error_code"]) == (
        1,
        "retrying",
        500,
        "http_error",
    )
    assert (delivered["attempt"], delivered["outcome"], delivered["response_status"]) == (2, "delivered", 200)
    # The retry waited for its backoff: it arrived no earlier than the time the failed attempt set.
    assert recorded_micros(failed["retry_at"]) - recorded_micros(failed["time"]) >= BACKOFF_SECONDS * 1_000_000 - 1000
    assert second.at * 1_000_000 >= recorded_micros(failed["retry_at"])
    view = wait_for_job(gateway.job, job_id, timeout=60)
    assert view["status"] == "completed"
