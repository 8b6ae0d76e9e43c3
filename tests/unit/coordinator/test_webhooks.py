"""The delivery task's work: the view it POSTs (what GET /jobs/{id} answers), signed; what it records;
stale claims; and the sweep handing due webhooks over."""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import fakeredis
import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from coordinator import delivery
from coordinator import webhooks as delivery_task
from coordinator.sweep import Sweeper
from coordinator.webhooks import Deliverer
from gateway import create_app
from jobs import controls, webhooks
from jobs.api_keys import ApiKey
from jobs.config import Settings
from jobs.records import GroupRules, NewJob, Owner
from jobs.store import JobStore
from jobs.webhooks import WebhookClaim
from tests.harness import wait_until
from tests.keyspace import keys
from tests.unit.gateway.documented import Document
from tests.unit.observability.support import Counts
from tests.webhook_receiver import Receiver, SlowReceiver, verify
from workers.celery_app import WEBHOOK_QUEUE, WEBHOOK_TASK

ROOT = Path(__file__).resolve().parents[3]
SECRET = "unit-test-secret-0123456789"
ALPHA = "whsec_" + base64.b64encode(b"alpha-secret-bytes-0123456789").decode()
BETA = "whsec_" + base64.b64encode(b"beta-secret-bytes-0123456789").decode()
SETTINGS = Settings(webhook_secret=SECRET, webhook_allow_private=1, webhook_timeout=5.0, webhook_backoff=10.0)


@pytest.fixture
def store() -> JobStore:
    return JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), SETTINGS)


@pytest.fixture
def gateway(store):
    """The gateway over the same store."""
    return create_app(replace(SETTINGS, drain_seconds=0), store, publish=lambda dispatches: 0)


@pytest.fixture
def api(gateway):
    """What GET /jobs/{id} answers."""
    return gateway.test_client()


@pytest.fixture
def document(gateway) -> Document:
    """The gateway's OpenAPI document: a webhook's body is what it documents for GET /jobs/{job_id}."""
    return Document(gateway)


def echo(text: str, callback_url: str = "") -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=text.encode(), callback_url=callback_url)


def complete(store: JobStore, job_id: str, text: str) -> None:
    claim = store.claim(job_id)
    assert claim is not None
    store.complete(job_id, claim.attempt, {"text": text, "pages": []})


def claim_one(store: JobStore) -> WebhookClaim:
    [claim] = webhooks.claim_due(store, store.now_ms(), 10)
    return claim


def test_a_single_job_s_webhook_is_its_view_signed_and_recorded_as_delivered(store, api, document):
    with Receiver() as receiver:
        job_id = store.create_single(echo("hello", receiver.url("/single"))).job_id
        complete(store, job_id, "hello")
        claim = claim_one(store)

        outcome = Deliverer(store).deliver(job_id, claim.attempt)

        [got] = receiver.received
    assert outcome == "delivered"
    assert json.loads(got.body) == api.get(f"/jobs/{job_id}").get_json()
    document.check_document("GET", "/jobs/{job_id}", 200, got.body)
    assert json.loads(got.body)["result"]["text"] == "hello"
    assert verify(SECRET, got)
    assert got.headers["X-Ocrgw-Attempt"] == "1"
    assert webhooks.pending(store) == {}
    events = api.get(f"/jobs/{job_id}/events").get_json()["events"]
    assert [(e["operation"], e.get("outcome"), e.get("response_status")) for e in events] == [
        ("job", None, None),
        ("webhook", "delivered", 200),
    ]


def test_a_parent_s_webhook_is_its_default_view_with_the_first_page_of_children(store, api, document):
    with Receiver() as receiver:
        children = [echo(f"c{i}") for i in range(25)]
        parent = store.create_group(children, GroupRules(max_parallel=0, callback_url=receiver.url("/p"))).job_id
        for i in range(25):
            complete(store, keys.child_id(parent, i), f"c{i}")

        Deliverer(store).deliver(parent, claim_one(store).attempt)

        [got] = receiver.received
    view = json.loads(got.body)
    assert view == api.get(f"/jobs/{parent}").get_json()
    document.check_document("GET", "/jobs/{job_id}", 200, got.body)
    assert (view["status"], view["result_url"]) == ("completed", f"/jobs/{parent}/result")
    assert len(view["children"]) == 20
    assert view["children_page"]["next"] == f"/jobs/{parent}/children?offset=20&limit=20"


def test_a_failed_delivery_is_recorded_and_due_again(store):
    with Receiver([500]) as receiver:
        job_id = store.create_single(echo("x", receiver.url())).job_id
        complete(store, job_id, "x")

        outcome = Deliverer(store).deliver(job_id, claim_one(store).attempt)

    assert outcome == "retrying"
    assert job_id in webhooks.pending(store)


def test_a_delivery_records_its_lag_from_the_job_s_end_and_a_failed_attempt_none(store):
    lag = "ocrgw_webhook_delivery_lag_seconds_count"
    counts = Counts()
    with Receiver([500, 200]) as receiver:
        job_id = store.create_single(echo("x", receiver.url())).job_id
        complete(store, job_id, "x")

        assert Deliverer(store).deliver(job_id, claim_one(store).attempt) == "retrying"
        assert counts.delta(lag) == 0
        store.redis.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 0})  # due again at once, its backoff skipped
        assert Deliverer(store).deliver(job_id, claim_one(store).attempt) == "delivered"

    assert counts.delta(lag) == 1
    assert counts.delta("ocrgw_webhook_delivery_lag_seconds_sum") > 0


def test_a_stale_claim_sends_nothing(store):
    with Receiver() as receiver:
        job_id = store.create_single(echo("x", receiver.url())).job_id
        complete(store, job_id, "x")
        first = claim_one(store)
        store.redis.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})  # the first claim ran out on the queue
        claim_one(store)

        outcome = Deliverer(store).deliver(job_id, first.attempt)

        assert receiver.received == []
    assert outcome == "stale"


def test_without_a_secret_the_deliverer_warns_and_sends_unsigned(store, caplog):
    unsigned = JobStore(store.redis, replace(SETTINGS, webhook_secret=""))
    with Receiver() as receiver:
        job_id = unsigned.create_single(echo("x", receiver.url())).job_id
        complete(unsigned, job_id, "x")

        Deliverer(unsigned).deliver(job_id, claim_one(unsigned).attempt)

        [got] = receiver.received
    assert "X-Ocrgw-Signature" not in got.headers
    assert "OCRGW_WEBHOOK_SECRET is not set" in caplog.text


def test_a_slow_loris_receiver_holds_an_attempt_no_longer_than_its_deadline(store):
    # One byte every half second never lets a single read wait its timeout: only a deadline on the whole
    # attempt ends it.  The whole answer would take 40 s.
    deadline_store = JobStore(store.redis, replace(SETTINGS, webhook_timeout=1.5))
    with SlowReceiver(interval=0.5) as receiver:
        job_id = deadline_store.create_single(echo("x", receiver.url("/slow"))).job_id
        complete(deadline_store, job_id, "x")

        outcome = Deliverer(deadline_store).deliver(job_id, claim_one(deadline_store).attempt)

        [connection] = receiver.wait_for(1, 60, ended=True)
    assert outcome == "retrying"
    [event] = [e for e in deadline_store.queries.events(job_id) if e["operation"] == "webhook"]
    assert (event["error_code"], event["error"], event["response_status"]) == (
        "timeout",
        "no complete answer within 1.5 s",
        "",
    )
    # The client hung up with most of the answer unsent, and the attempt was recorded long before the
    # answer could have ended (its times are the receiver's record and the store's).
    assert connection.hung_up_at is not None and connection.sent < len(receiver.answer) // 2
    full_answer_seconds = len(receiver.answer) * receiver.interval
    assert int(event["time"]) / 1_000_000 - connection.accepted_at < full_answer_seconds / 4


def test_a_name_resolving_to_a_private_address_is_recorded_as_refused_without_the_address(store, monkeypatch):
    public_only = JobStore(store.redis, replace(SETTINGS, webhook_allow_private=0))
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host == "billing.internal.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    job_id = public_only.create_single(echo("x", "https://billing.internal.example/hook")).job_id
    complete(public_only, job_id, "x")

    Deliverer(public_only).deliver(job_id, claim_one(public_only).attempt)

    [event] = [e for e in public_only.queries.events(job_id) if e["operation"] == "webhook"]
    assert (event["error_code"], event["error"]) == (
        "private_address",
        "callback address refused: not a public address",
    )
    assert "10.20.30.40" not in json.dumps(public_only.queries.events(job_id))


def tenants_store(store: JobStore, **changes) -> JobStore:
    """The store with alpha's and beta's secrets in the secrets file's setting."""
    return JobStore(store.redis, replace(SETTINGS, webhook_secrets=(("alpha", ALPHA), ("beta", BETA)), **changes))


def test_each_tenant_s_webhook_is_signed_with_its_own_secret_only(store):
    signed = tenants_store(store)
    with Receiver() as receiver:
        alpha_job = signed.create_single(echo("a", receiver.url("/a")), owner=Owner("alpha")).job_id
        beta_job = signed.create_single(echo("b", receiver.url("/b")), owner=Owner("beta")).job_id
        for job_id in (alpha_job, beta_job):
            complete(signed, job_id, "x")
        for claim in webhooks.claim_due(signed, signed.now_ms(), 10):
            Deliverer(signed).deliver(claim.job_id, claim.attempt)

        [to_alpha], [to_beta] = receiver.to("/a"), receiver.to("/b")
    assert Webhook(ALPHA).verify(to_alpha.body, to_alpha.headers)["id"] == alpha_job
    assert Webhook(BETA).verify(to_beta.body, to_beta.headers)["id"] == beta_job
    # Beta's webhook, whatever its body, is no webhook of alpha's: neither signature verifies with alpha's secret.
    with pytest.raises(WebhookVerificationError):
        Webhook(ALPHA).verify(to_beta.body, to_beta.headers)
    assert not verify(ALPHA, to_beta) and verify(ALPHA, to_alpha) and verify(BETA, to_beta)
    assert not verify(SECRET, to_alpha)  # the single secret is the default tenant's only


def test_a_child_s_webhook_is_signed_with_its_root_s_tenant_s_secret(store):
    signed = tenants_store(store)
    with Receiver() as receiver:
        children = [echo("c0", receiver.url("/child")), echo("c1")]
        parent = signed.create_group(children, GroupRules(max_parallel=0), owner=Owner("beta")).job_id
        complete(signed, keys.child_id(parent, 0), "c0")

        Deliverer(signed).deliver(keys.child_id(parent, 0), claim_one(signed).attempt)

        [got] = receiver.received
    Webhook(BETA).verify(got.body, got.headers)


def test_with_secrets_configured_a_tenant_without_one_gets_unsigned_webhooks_and_a_warning(store, caplog):
    signed = tenants_store(store, plain_api_keys=(ApiKey("gamma", "0" * 64), ApiKey("alpha", "1" * 64)))
    with Receiver() as receiver:
        job_id = signed.create_single(echo("g", receiver.url()), owner=Owner("gamma")).job_id
        complete(signed, job_id, "g")

        Deliverer(signed).deliver(job_id, claim_one(signed).attempt)

        [got] = receiver.received
    assert not {"X-Ocrgw-Signature", "webhook-signature"} & set(got.headers)
    assert got.headers["webhook-id"]
    assert "webhooks of gamma go out unsigned" in caplog.text
    assert "alpha" not in caplog.text


def test_without_api_keys_a_secrets_file_without_default_leaves_the_default_tenant_unsigned_and_says_so(store, caplog):
    Deliverer(JobStore(store.redis, replace(SETTINGS, webhook_secret="", webhook_secrets=(("alpha", ALPHA),))))

    assert "webhooks of default go out unsigned" in caplog.text


def test_the_webhook_id_is_the_same_on_every_retry_and_new_when_a_redriven_group_ends_again(store):
    signed = tenants_store(store, webhook_backoff=0.001, webhook_backoff_max=0.001)
    with Receiver([500]) as receiver:
        parent = signed.create_group(
            [echo("c0")], GroupRules(max_parallel=0, callback_url=receiver.url("/p")), owner=Owner("alpha")
        ).job_id
        child = keys.child_id(parent, 0)
        claim = signed.claim(child)
        assert claim is not None
        signed.fail(child, claim.attempt, "engine_error", "broken")
        first_id = deliver_until_delivered(signed, parent)
        controls.redrive(signed, parent, tenant="alpha")
        complete(signed, child, "c0")
        second_id = deliver_until_delivered(signed, parent)

        ids = [r.headers["webhook-id"] for r in receiver.to("/p")]
    assert ids == [first_id, first_id, second_id]  # a 500, its retry, then the second ending's
    assert first_id != second_id


def test_a_child_that_runs_again_after_a_redrive_sends_its_new_ending_with_a_new_webhook_id(store):
    # What a group with webhook_events ["child.completed"] stores: each child carries the group's URL, the
    # parent none.
    signed = tenants_store(store, webhook_backoff=0.001, webhook_backoff_max=0.001)
    with Receiver() as receiver:
        url = receiver.url("/pages")
        parent = signed.create_group(
            [echo("c0", url), echo("c1", url)], GroupRules(max_parallel=0, callback_url=""), owner=Owner("alpha")
        ).job_id
        first, second = keys.child_id(parent, 0), keys.child_id(parent, 1)
        complete(signed, first, "c0")
        claim = signed.claim(second)
        assert claim is not None
        signed.fail(second, claim.attempt, "engine_timeout", "too slow")
        ids = {job_id: deliver_until_delivered(signed, job_id) for job_id in (first, second)}
        controls.redrive(signed, parent, tenant="alpha")
        complete(signed, second, "c1")
        again = deliver_until_delivered(signed, second)

        got = receiver.to("/pages")
    assert [json.loads(r.body)["id"] for r in got] == [first, second, second]
    assert [json.loads(r.body)["status"] for r in got] == ["completed", "failed", "completed"]
    assert [r.headers["webhook-id"] for r in got] == [ids[first], ids[second], again]
    assert again != ids[second]
    for request in got:
        Webhook(ALPHA).verify(request.body, request.headers)  # each child's, its root's tenant's secret
    assert webhooks.pending(signed) == {}  # the parent asked for nothing


def deliver_until_delivered(store: JobStore, job_id: str) -> str:
    """Delivers the job's webhook, attempt after attempt, until one is delivered; returns its webhook-id."""
    deliverer = Deliverer(store)
    for _ in range(5):
        wait_until(lambda: webhooks.pending(store).get(job_id, 1 << 62) <= store.now_ms(), 10, message="not due")
        [claim] = webhooks.claim(store, [job_id])
        if deliverer.deliver(job_id, claim.attempt) == "delivered":
            record = store.queries.get(job_id)
            assert record is not None
            return webhooks.message_id(job_id, record)
    raise AssertionError("not delivered")


def test_the_sweep_claims_due_webhooks_and_hands_them_over_once(store):
    job_id = store.create_single(echo("x", "https://hooks.example/")).job_id
    complete(store, job_id, "x")
    handed: list[list[WebhookClaim]] = []

    def hand_off(claims: list[WebhookClaim]) -> int:
        handed.append(claims)
        return len(claims)

    sweeper = Sweeper(store, publish=len, hand_off_webhooks=hand_off)

    first, second = sweeper.sweep(), sweeper.sweep()

    assert (first.webhooks, second.webhooks) == (1, 0)
    # Handed over bucket by bucket: the one claim once, and nothing else.
    assert [claims for claims in handed if claims] == [[WebhookClaim(job_id, 1)]]


def test_a_sweeper_without_a_hand_off_leaves_webhooks_alone(store):
    job_id = store.create_single(echo("x", "https://hooks.example/")).job_id
    complete(store, job_id, "x")

    Sweeper(store, publish=len).sweep()

    assert webhooks.pending(store)[job_id] <= store.now_ms()


def test_hand_off_sends_one_message_per_claim_to_the_webhooks_queue(monkeypatch):
    sent = []

    @contextlib.contextmanager
    def producer():
        yield "producer"

    monkeypatch.setattr(delivery_task.app, "producer_or_acquire", producer)
    monkeypatch.setattr(delivery_task.app, "send_task", lambda name, **kw: sent.append((name, kw)))

    assert delivery_task.hand_off([WebhookClaim("a", 1), WebhookClaim("b", 3)]) == 2
    assert [(name, kw["args"], kw["queue"]) for name, kw in sent] == [
        (WEBHOOK_TASK, ["a", 1], WEBHOOK_QUEUE),
        (WEBHOOK_TASK, ["b", 3], WEBHOOK_QUEUE),
    ]
    # A message that starts running before it expires still has its whole timeout inside its claim.
    settings = delivery_task.settings
    assert sent[0][1]["expires"] == settings.webhook_claim_margin
    assert sent[0][1]["expires"] + settings.webhook_timeout <= webhooks.claim_window_seconds(settings)


def test_hand_off_never_raises_when_the_broker_is_away(monkeypatch):
    def broken():
        raise ConnectionError("broker down")

    monkeypatch.setattr(delivery_task.app, "producer_or_acquire", broken)

    assert delivery_task.hand_off([WebhookClaim("a", 1)]) == 0


def test_a_bug_before_the_request_is_a_recorded_failed_attempt_so_it_is_retried_and_given_up_in_time(
    store, monkeypatch, caplog
):
    job_id = store.create_single(echo("x", "https://hooks.example/")).job_id
    complete(store, job_id, "x")

    def broken(self, record):
        raise ConnectionError("Error 111 connecting to redis-primary.internal.example:6379. Connection refused.")

    monkeypatch.setattr(Deliverer, "body", broken)

    outcome = Deliverer(store).deliver(job_id, claim_one(store).attempt)

    assert outcome == "retrying"
    [event] = [e for e in store.queries.events(job_id) if e["operation"] == "webhook"]
    # The job's events are the tenant's to read: they get a fixed text, and the log the exception.
    assert (event["error_code"], event["error"]) == ("internal_error", delivery.INTERNAL_ERROR)
    assert "internal.example" not in json.dumps(store.queries.events(job_id))
    [logged] = [r for r in caplog.records if r.exc_info]
    assert "redis-primary.internal.example" in str(logged.exc_info[1])


def test_the_deliverer_renders_a_view_without_the_gateway_s_app():
    code = (
        "import sys, fakeredis\n"
        "from coordinator.webhooks import Deliverer\n"
        "from jobs.config import Settings\n"
        "from jobs.records import GroupRules, NewJob\n"
        "from jobs.store import JobStore\n"
        "store = JobStore(fakeredis.FakeRedis(), Settings())\n"
        "job = NewJob(model='echo', content_type='text/plain', payload=b'x')\n"
        "parent = store.create_group([job] * 3, GroupRules(max_parallel=1)).job_id\n"
        "view = Deliverer(store).view(store.queries.get(parent))\n"
        "assert view['children_page']['total'] == 3, view\n"
        "loaded = sorted(m for m in sys.modules if m in ('flask_smorest', 'gateway.api', 'gateway.services'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)
