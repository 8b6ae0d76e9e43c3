"""Signed webhooks end to end: a real HTTP server in the test receives the view of a job that ended.

The deployment is this module's own (a gateway, a worker, the coordinator,
beat, and the webhook deliverer as the Procfile runs it), on a database of
its own, because it needs settings the shared stack does not have: private
addresses allowed (the receivers listen on 127.0.0.1), two tenants with API
keys and each its webhook secret, and a short backoff so that a retry comes
soon.  What is checked is what the receivers got (the view, the signatures,
verified with the tenant's secret alone, as the `standardwebhooks` library
does) and what the jobs' events recorded.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, echo_child, group_body, recorded_micros
from tests.integration.polling import wait_for_job
from tests.webhook_receiver import Receiver, SlowReceiver, verify

pytestmark = pytest.mark.integration

ALPHA_KEY, BETA_KEY = "alpha-webhooks-key-1f8e2c", "beta-webhooks-key-7d41aa"
ALPHA_SECRET = "whsec_" + base64.b64encode(b"alpha's webhook secret, 32 bytes").decode()
BETA_SECRET = "whsec_" + base64.b64encode(b"beta's webhook secret, 32 bytes!").decode()
BACKOFF_SECONDS = 0.5
TIMEOUT_SECONDS = 15  # a slow receiver holds an attempt this long, unless released
WAIT = 60.0  # bounds a hang; asserts no speed


def deployment_env(secrets_path) -> dict[str, str]:
    """The settings of a deployment whose tenants alpha and beta each sign with their own secret,
    written to ``secrets_path`` (a file name in a temporary directory)."""
    secrets_path.write_text(f"# each tenant's webhook secret\nalpha:{ALPHA_SECRET}\nbeta:{BETA_SECRET}\n")
    return {
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "OCRGW_API_KEYS": f"alpha:{ALPHA_KEY},beta:{BETA_KEY}",
        "OCRGW_WEBHOOK_SECRETS_FILE": str(secrets_path),
        "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",
        "OCRGW_WEBHOOK_BACKOFF": str(BACKOFF_SECONDS),
        "OCRGW_WEBHOOK_TIMEOUT": str(TIMEOUT_SECONDS),
        "OCRGW_WEBHOOK_TENANT_CONCURRENCY": "2",
    }


@pytest.fixture(scope="module")
def deployment(stack_factory, tmp_path_factory):
    """With the webhook deliverer as the Procfile runs it (``webhooks``, four threads here)."""
    env = deployment_env(tmp_path_factory.mktemp("webhooks") / "webhook-secrets")
    return stack_factory(env=env, concurrency=2, webhooks=True)


def as_tenant(current_deployment, key: str) -> Gateway:
    client = Gateway(current_deployment.web().base_url)
    client.http.headers["Authorization"] = f"Bearer {key}"
    return client


@pytest.fixture
def gateway(current_deployment) -> Iterator[Gateway]:
    """A client of the gateway as tenant alpha."""
    with as_tenant(current_deployment, ALPHA_KEY) as client:
        yield client


@pytest.fixture
def beta(current_deployment) -> Iterator[Gateway]:
    """A client of the gateway as tenant beta."""
    with as_tenant(current_deployment, BETA_KEY) as client:
        yield client


def webhook_events(gateway: Gateway, job_id: str, count: int) -> list[dict]:
    """The job's first ``count`` webhook events, once recorded."""

    def recorded():
        found = [e for e in gateway.events(job_id) if e["operation"] == "webhook" and e["job_id"] == job_id]
        return found if len(found) >= count else None

    return wait_until(recorded, WAIT, message=lambda: f"webhook events of {job_id}: {gateway.events(job_id)}")


def submitted(gateway: Gateway, body: dict) -> str:
    resp = gateway.post_json(body)
    assert resp.status_code == 202, resp.text
    return resp.json()["id"]


def test_a_single_job_s_view_arrives_signed_when_it_ends(gateway):
    with Receiver() as receiver:
        job_id = submitted(gateway, {**echo_child("hello webhook"), "callback_url": receiver.url("/single")})

        [got] = receiver.wait_for("/single", 1, WAIT)
        [event] = webhook_events(gateway, job_id, 1)

    assert verify(ALPHA_SECRET, got)
    assert Webhook(ALPHA_SECRET).verify(got.body, got.headers)["id"] == job_id
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


def test_a_tenant_s_webhook_verifies_with_its_own_secret_only(gateway, beta):
    # Beta points a job whose body it chose at alpha's receiver: alpha's check must refuse it.
    with Receiver() as receiver:
        forged = submitted(
            beta,
            {**echo_child('{"id": "an alpha job", "status": "completed"}'), "callback_url": receiver.url("/alpha")},
        )
        genuine = submitted(gateway, {**echo_child("alpha's own"), "callback_url": receiver.url("/alpha")})

        received = receiver.wait_for("/alpha", 2, WAIT)
    [from_beta] = [r for r in received if json.loads(r.body)["id"] == forged]
    [from_alpha] = [r for r in received if json.loads(r.body)["id"] == genuine]

    with pytest.raises(WebhookVerificationError):
        Webhook(ALPHA_SECRET).verify(from_beta.body, from_beta.headers)
    assert not verify(ALPHA_SECRET, from_beta)
    Webhook(BETA_SECRET).verify(from_beta.body, from_beta.headers)
    Webhook(ALPHA_SECRET).verify(from_alpha.body, from_alpha.headers)
    assert verify(ALPHA_SECRET, from_alpha)


def test_a_group_s_parent_and_a_child_with_its_own_callback_each_get_theirs(gateway):
    with Receiver() as receiver:
        children = [echo_child("first", callback_url=receiver.url("/child")), echo_child("second")]
        body = group_body(children, max_parallel=1)
        body["fanout"]["callback_url"] = receiver.url("/parent")
        parent_id = submitted(gateway, body)

        [parent_hook] = receiver.wait_for("/parent", 1, WAIT)
        [child_hook] = receiver.wait_for("/child", 1, WAIT)
        webhook_events(gateway, parent_id, 1)
        webhook_events(gateway, f"{parent_id}-0", 1)
        unsigned_or_extra = [r for r in receiver.received if r.path not in ("/parent", "/child")]

    assert verify(ALPHA_SECRET, parent_hook) and verify(ALPHA_SECRET, child_hook)
    Webhook(ALPHA_SECRET).verify(child_hook.body, child_hook.headers)  # a child's is its root's tenant's
    assert parent_hook.headers["webhook-id"] != child_hook.headers["webhook-id"]
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


def test_a_group_asking_for_child_completed_sends_each_child_once_and_itself_once_signed(gateway, beta):
    # Alpha's group of eight (one fails) asks for every child's end and its own; beta's group, at the same
    # time, asks for its own alone.  Each receiver counts what it got.
    with Receiver() as receiver:
        children = [echo_child(f"page {i}", fail=i == 3) for i in range(8)]
        alpha_body = group_body(children, max_parallel=3)
        alpha_body["fanout"].update(
            callback_url=receiver.url("/alpha"), webhook_events=["child.completed", "job.completed"]
        )
        alpha_parent = submitted(gateway, alpha_body)
        beta_body = group_body([echo_child(f"beta {i}") for i in range(3)], max_parallel=3)
        beta_body["fanout"]["callback_url"] = receiver.url("/beta")
        beta_parent = submitted(beta, beta_body)

        alpha_jobs = [alpha_parent, *(f"{alpha_parent}-{i}" for i in range(8))]
        for job_id in alpha_jobs:
            wait_until(delivered_check(gateway, job_id), WAIT, message=f"the webhook of {job_id} not delivered")
        wait_until(delivered_check(beta, beta_parent), WAIT, message="beta's group's webhook not delivered")
        to_alpha, to_beta = receiver.to("/alpha"), receiver.to("/beta")

    views = [json.loads(r.body) for r in to_alpha]
    assert sorted(v["id"] for v in views) == sorted(alpha_jobs)  # each child once, the group once
    assert len({r.headers["webhook-id"] for r in to_alpha}) == len(alpha_jobs)
    for request in to_alpha:
        Webhook(ALPHA_SECRET).verify(request.body, request.headers)
        assert verify(ALPHA_SECRET, request)
    by_id = {v["id"]: v for v in views}
    assert [by_id[f"{alpha_parent}-{i}"]["status"] for i in range(8)] == ["completed"] * 3 + ["failed"] + [
        "completed"
    ] * 4
    assert all(by_id[f"{alpha_parent}-{i}"]["parent_id"] == alpha_parent for i in range(8))
    assert (by_id[alpha_parent]["kind"], by_id[alpha_parent]["status"]) == ("parent", "failed")
    # Each child's view is the one its own GET answers.
    assert by_id[f"{alpha_parent}-5"] == gateway.get(f"/jobs/{alpha_parent}-5")
    # Beta did not ask: its group's end alone.
    assert [json.loads(r.body)["id"] for r in to_beta] == [beta_parent]
    Webhook(BETA_SECRET).verify(to_beta[0].body, to_beta[0].headers)
    # One delivered attempt per job, each an event of the group.
    webhook_events_seen = [e for e in gateway.events(alpha_parent) if e["operation"] == "webhook"]
    assert sorted(e["job_id"] for e in webhook_events_seen if e["outcome"] == "delivered") == sorted(alpha_jobs)


def test_a_webhook_answered_500_is_retried_after_the_backoff_with_the_same_id_and_both_attempts_are_events(
    gateway,
):
    with Receiver([500]) as receiver:
        job_id = submitted(gateway, {**echo_child("retry me"), "callback_url": receiver.url("/flaky")})

        first, second = receiver.wait_for("/flaky", 2, WAIT)
        failed, delivered = webhook_events(gateway, job_id, 2)

    assert verify(ALPHA_SECRET, first) and verify(ALPHA_SECRET, second)
    Webhook(ALPHA_SECRET).verify(first.body, first.headers)
    Webhook(ALPHA_SECRET).verify(second.body, second.headers)
    # One ending of the job, one id: a receiver that got the first can drop the second.
    assert first.headers["webhook-id"] == second.headers["webhook-id"]
    assert first.headers["webhook-timestamp"] <= second.headers["webhook-timestamp"]
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


def test_a_tenant_s_slow_receivers_hold_two_deliverers_and_another_tenant_s_webhook_goes_meanwhile(gateway, beta):
    # Six of alpha's webhooks go to a receiver that answers a byte a second until released; the
    # deliverer has four threads.  Alpha may hold two of them: beta's webhook must not wait.
    with SlowReceiver(interval=1.0) as slow, Receiver() as fast:
        slow_jobs = [submitted(gateway, {**echo_child(f"slow {i}"), "callback_url": slow.url()}) for i in range(6)]
        slow.wait_for(2, WAIT)
        beta_job = submitted(beta, {**echo_child("beta's"), "callback_url": fast.url("/beta")})

        fast.wait_for("/beta", 1, WAIT)
        [beta_event] = webhook_events(beta, beta_job, 1)
        alpha_events_then = [e for job_id in slow_jobs for e in gateway.events(job_id) if e["operation"] == "webhook"]
        slow.release()
        for job_id in slow_jobs:
            wait_until(delivered_check(gateway, job_id), WAIT, message=f"alpha's webhook of {job_id} not delivered")
        connections = slow.wait_for(len(slow.connections), WAIT, ended=True)

    assert beta_event["outcome"] == "delivered"
    # Beta's went while every one of alpha's was still undelivered (recorded times, not sleeps).
    delivered_at = recorded_micros(beta_event["time"])
    assert not [e for e in alpha_events_then if e["outcome"] == "delivered"]
    assert all(
        recorded_micros(e["time"]) > delivered_at
        for e in gateway_webhook_events(gateway, slow_jobs)
        if e["outcome"] == "delivered"
    )
    # Alpha never held more than two connections at once (the receiver's record of each).
    assert max_overlap(connections) <= 2
    assert len(connections) >= 6


def delivered_check(gateway: Gateway, job_id: str) -> Callable[[], bool]:
    """Whether the job's webhook was delivered, asked each time the result is called."""
    return lambda: any(e["outcome"] == "delivered" for e in webhook_events(gateway, job_id, 1))


def gateway_webhook_events(gateway: Gateway, job_ids: list[str]) -> list[dict]:
    return [e for job_id in job_ids for e in gateway.events(job_id) if e["operation"] == "webhook"]


def max_overlap(connections) -> int:
    """The most connections open at one moment, from when each was taken and ended."""
    moments = sorted([(c.accepted_at, 1) for c in connections] + [(c.ended_at, -1) for c in connections])
    most = open_now = 0
    for _, change in moments:
        open_now += change
        most = max(most, open_now)
    return most
