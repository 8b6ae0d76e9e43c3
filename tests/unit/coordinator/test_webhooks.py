"""The delivery task's work: the view it POSTs (what GET /jobs/{id} answers), signed; what it records;
stale claims; and the sweep handing due webhooks over."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import fakeredis
import pytest

from coordinator import webhooks as delivery_task
from coordinator.sweep import Sweeper
from coordinator.webhooks import Deliverer
from gateway import create_app
from jobs import keys, webhooks
from jobs.config import Settings
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from jobs.webhooks import WebhookClaim
from tests.unit.gateway.documented import Document
from tests.webhook_receiver import Receiver, SlowReceiver, verify
from workers.celery_app import WEBHOOK_QUEUE, WEBHOOK_TASK

ROOT = Path(__file__).resolve().parents[3]
SECRET = "unit-test-secret-0123456789"
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


def test_a_stale_claim_sends_nothing(store):
    with Receiver() as receiver:
        job_id = store.create_single(echo("x", receiver.url())).job_id
        complete(store, job_id, "x")
        first = claim_one(store)
        store.redis.zadd(keys.WEBHOOKS, {job_id: 1})  # the first claim ran out on the queue
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
    assert handed == [[WebhookClaim(job_id, 1)], []]


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
    assert sent[0][1]["expires"] == webhooks.claim_window_seconds(delivery_task.settings)


def test_hand_off_never_raises_when_the_broker_is_away(monkeypatch):
    def broken():
        raise ConnectionError("broker down")

    monkeypatch.setattr(delivery_task.app, "producer_or_acquire", broken)

    assert delivery_task.hand_off([WebhookClaim("a", 1)]) == 0


def test_a_bug_before_the_request_is_a_recorded_failed_attempt_so_it_is_retried_and_given_up_in_time(
    store, monkeypatch
):
    job_id = store.create_single(echo("x", "https://hooks.example/")).job_id
    complete(store, job_id, "x")

    def broken(self, record):
        raise KeyError("total")

    monkeypatch.setattr(Deliverer, "body", broken)

    outcome = Deliverer(store).deliver(job_id, claim_one(store).attempt)

    assert outcome == "retrying"
    [event] = [e for e in store.queries.events(job_id) if e["operation"] == "webhook"]
    assert (event["error_code"], event["error"]) == ("internal_error", "KeyError: 'total'")


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
