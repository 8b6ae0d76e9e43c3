"""Retention: an ended root and every key of its group are deleted once OCRGW_RESULT_TTL has passed.

The clock of the FakeRedis server is moved forward (``clock.advance``), so
the transitions read the later time and keys with a TTL of their own (call
records, Idempotency-Key records) lapse as they would in Redis.  Each test
ends on the whole keyspace: what a deletion leaves behind would show there,
but for the tenants' usage records, which outlive the jobs they count
(OCRGW_USAGE_RETENTION, jobs.usage).
"""

from __future__ import annotations

import pytest

from coordinator.sweep import Sweeper
from jobs import controls, webhooks
from jobs.ids import DEFAULT_TENANT
from jobs.records import GroupRules, Idempotency, NewJob
from tests.keyspace import keys
from tests.unit import fake_clock
from tests.unit.jobs.conftest import roots_of
from tests.unit.redis_spy import round_trips

TTL = 3600
HOOK = "https://receiver.example/hook"


@pytest.fixture
def kit(new_kit):
    return new_kit(result_ttl=TTL, idempotency_ttl=TTL // 2)


@pytest.fixture
def clock(monkeypatch) -> fake_clock.FakeClock:
    return fake_clock.install(monkeypatch)


def job_state(kit) -> dict:
    """Every key but the buckets' turns, which belong to the lanes rather than to any job (ready.lua), and the
    usage records, which outlive the jobs they count."""
    return {
        key: value for key, value in kit.snapshot().items() if not keys.is_turns(key) and not keys.is_usage_record(key)
    }


def sweep(kit):
    return Sweeper(kit.store, publish=len).sweep()


def doc(i: int, callback_url: str = "") -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=f"page {i}".encode(), callback_url=callback_url)


def answer_webhooks(kit, answers: dict[str, int]) -> None:
    """One delivery attempt of each due webhook, answered with the given status: each an event in the
    stream; a 2xx takes the job off the webhooks index, anything else leaves it due again."""
    claims = webhooks.claim_due(kit.store, kit.now_ms(), 100)
    assert {c.job_id for c in claims} == set(answers)
    for claim in claims:
        status = answers[claim.job_id]
        answer = webhooks.Answer(status) if status < 300 else webhooks.Answer(status, "http_error", "from the receiver")
        webhooks.record(kit.store, claim.job_id, claim.attempt, answer)


def finished_single(kit) -> str:
    job_id = kit.store.create_single(doc(0, HOOK), Idempotency("single-key", "fp")).job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {"text": "page 0"})
    answer_webhooks(kit, {job_id: 500})
    return job_id


def finished_group(kit) -> str:
    """A group whose children ended completed, failed and cancelled (held, and while running)."""
    rules = GroupRules(max_parallel=2, tolerated_failures=3, callback_url=HOOK)
    children = [doc(0, HOOK), doc(1), doc(2), doc(3)]
    parent = kit.store.create_group(children, rules, Idempotency("group-key", "fp")).job_id
    c = kit.child_ids(parent, 4)
    controls.cancel(kit.store, c[2])  # held: cancelled at once
    first = kit.claim(c[0])
    kit.store.complete(c[0], first.attempt, {"text": "page 0"})  # its slot goes to c[3]
    second = kit.claim(c[1])
    kit.store.fail(c[1], second.attempt, "invalid_document", "not a page")
    third = kit.claim(c[3])
    controls.cancel(kit.store, c[3])
    kit.store.end_cancelled(c[3], third.attempt)
    assert kit.statuses(parent, 4) == ["completed", "failed", "cancelled", "cancelled"]
    assert kit.status(parent) == "completed"
    answer_webhooks(kit, {parent: 200, c[0]: 500})  # the child's is due again after the backoff
    return parent


def test_a_finished_single_job_and_every_key_of_it_are_gone_once_its_retention_is_over(kit, clock):
    job_id = finished_single(kit)
    assert kit.members(keys.expiring) == {job_id}
    assert kit.score(keys.expiring, job_id) == int(kit.job(job_id)["finished_at"]) // 1000
    assert job_id in webhooks.pending(kit.store)

    clock.advance(TTL - 1)
    assert sweep(kit).expired == 0
    assert kit.job(job_id)["status"] == "completed"
    assert kit.members(roots_of("single", "completed")) == {job_id}
    answer_webhooks(kit, {job_id: 200})  # its second attempt: nothing is owed any more

    clock.advance(2)
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_a_finished_group_goes_whole_its_children_in_every_status_with_it(kit, clock):
    parent = finished_group(kit)
    c = kit.child_ids(parent, 4)
    before = set(kit.snapshot())
    # Everything a group leaves behind is there to be deleted: hashes, documents, results,
    # the events stream, the children sets, call records, the listing and the indexes.
    assert {keys.job(j) for j in [parent, *c]} | {keys.payload(j) for j in c} <= before
    assert {keys.result(c[0]), keys.events(parent), keys.idempotency(DEFAULT_TENANT, "group-key")} <= before
    assert {keys.children(parent, s) for s in ("completed", "failed", "cancelled")} <= before
    assert any(keys.is_call_record(k) for k in before)
    assert kit.members(roots_of("parent", "completed")) == {parent}
    assert webhooks.pending(kit.store).keys() == {c[0]}
    assert kit.members(keys.expiring) == {parent}  # the root only: its children go with it

    clock.advance(TTL - 1)
    assert sweep(kit).expired == 0
    assert kit.statuses(parent, 4) == ["completed", "failed", "cancelled", "cancelled"]
    answer_webhooks(kit, {c[0]: 200})

    clock.advance(2)
    report = sweep(kit)
    assert report.expired == 1
    assert job_state(kit) == {}


def test_a_root_whose_webhook_is_owed_is_kept_past_its_retention_until_the_webhook_is_delivered(kit, clock):
    # A deliverer that died holding an attempt leaves it claimed, unanswered, for the claim window:
    # deleting the root meanwhile would lose the webhook.
    job_id = finished_single(kit)
    clock.advance(TTL + 1)
    swept_after_ms = kit.now_ms()
    assert sweep(kit).expired == 0
    assert kit.job(job_id)["status"] == "completed"
    # Not tried again within the second.
    due_again_ms = kit.score(keys.expiring, job_id) + TTL * 1000
    assert swept_after_ms + 1000 <= due_again_ms <= kit.now_ms() + 1000
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 100)  # taken, never answered
    clock.advance(2)
    assert sweep(kit).expired == 0
    # Due again when the claim runs out, not at every sweep meanwhile.
    claim_ends = kit.score(keys.webhooks, job_id)
    assert kit.score(keys.expiring, job_id) == claim_ends - TTL * 1000

    clock.advance(webhooks.claim_window_seconds(kit.store.settings) + 1)
    answer_webhooks(kit, {job_id: 200})
    clock.advance(2)
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_a_root_kept_for_a_webhook_no_deliverer_attempts_goes_once_its_retry_window_and_a_claim_are_over(kit, clock):
    # No deliverer runs (scaled to 0, or every attempt hangs): nothing records an attempt, so nothing
    # gives the webhook up; the root must not be kept for ever.
    job_id = finished_single(kit)
    ended_ms = int(kit.job(job_id)["finished_at"]) // 1000
    clock.advance(TTL + 1)
    assert sweep(kit).expired == 0
    owed_until_ms = ended_ms + kit.store.settings.webhook_owed_ms
    clock.advance((owed_until_ms - kit.now_ms()) / 1000 - 2)
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 100)  # taken, never answered
    assert sweep(kit).expired == 0

    clock.advance(webhooks.claim_window_seconds(kit.store.settings) + 1)
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_a_group_is_kept_while_a_child_s_webhook_is_owed(kit, clock):
    parent = finished_group(kit)
    c = kit.child_ids(parent, 4)
    clock.advance(TTL + 1)
    assert sweep(kit).expired == 0
    assert kit.statuses(parent, 4) == ["completed", "failed", "cancelled", "cancelled"]
    answer_webhooks(kit, {c[0]: 200})
    clock.advance(2)
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_nothing_unfinished_expires_however_long_it_waits(kit, clock):
    finished = kit.single().job_id
    kit.store.complete(finished, kit.claim(finished).attempt, {"text": "done"})
    queued = kit.single().job_id
    running = kit.single().job_id
    kit.claim(running)
    parent = kit.group(3, max_parallel=2).job_id
    c = kit.child_ids(parent, 3)
    kit.store.complete(c[0], kit.claim(c[0]).attempt, {"text": "a child's end is not its group's"})
    kit.claim(c[1])
    assert kit.members(keys.expiring) == {finished}

    clock.advance(100 * TTL)
    assert kit.store.expire(kit.store.due_to_expire(kit.now_ms(), 100)) == 1
    assert kit.job(finished) == {}
    unfinished = kit.snapshot()
    assert kit.store.expire([queued, running, parent, *c]) == 0
    assert kit.snapshot() == unfinished
    assert [kit.status(j) for j in (queued, running, parent)] == ["queued", "processing", "processing"]
    assert kit.statuses(parent, 3) == ["completed", "processing", "queued"]
    assert kit.members(keys.expiring) == set()


def test_a_redrive_cancels_the_expiry_and_the_next_ending_starts_it_again(kit, clock):
    parent = kit.group(2, max_parallel=2).job_id
    c = kit.child_ids(parent, 2)
    kit.store.complete(c[0], kit.claim(c[0]).attempt, {"text": "kept"})
    kit.store.fail(c[1], kit.claim(c[1]).attempt, "engine_error", "try again")
    assert kit.status(parent) == "failed" and kit.members(keys.expiring) == {parent}

    controls.redrive(kit.store, parent)
    assert kit.members(keys.expiring) == set()

    clock.advance(TTL + 1)
    assert sweep(kit).expired == 0
    assert kit.status(parent) == "processing" and kit.status(c[0]) == "completed"

    kit.store.complete(c[1], kit.claim(c[1]).attempt, {"text": "second time lucky"})
    assert kit.status(parent) == "completed"
    assert kit.score(keys.expiring, parent) == int(kit.job(parent)["finished_at"]) // 1000
    clock.advance(TTL - 1)  # past the first ending's retention, not the second's
    assert sweep(kit).expired == 0 and kit.status(parent) == "completed"

    clock.advance(2)
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_a_root_running_again_leaves_the_expiring_index_untouched_and_a_vanished_one_leaves_every_index(kit, r):
    # Neither happens through the transitions; both entries are dropped rather than tried every sweep.
    parent = kit.group(2, max_parallel=1).job_id
    r.zadd(keys.expiring(keys.bucket_of(parent)), {parent: 1})
    state = kit.snapshot()
    assert kit.store.expire([parent]) == 0
    state.pop(keys.expiring(keys.bucket_of(parent)))
    assert kit.snapshot() == state

    gone = "0" * 32
    r.zadd(keys.expiring(keys.bucket_of(gone)), {gone: 1})
    r.zadd(keys.roots("single", "completed", keys.tag_of(gone), keys.bucket_of(gone)), {gone: 1})
    r.zadd(keys.webhooks(keys.bucket_of(gone)), {gone: 1})
    assert kit.store.expire([gone]) == 0
    assert kit.snapshot() == state


def test_idempotency_records_lapse_after_their_own_retention_and_the_key_is_free_again(kit, clock):
    first = kit.store.create_single(doc(0), Idempotency("k", "fp"))
    assert kit.store.create_single(doc(0), Idempotency("k", "fp")).replayed
    assert kit.r.ttl(keys.idempotency(DEFAULT_TENANT, "k")) == TTL // 2

    clock.advance(TTL // 2 + 1)
    assert not kit.r.exists(keys.idempotency(DEFAULT_TENANT, "k"))
    assert kit.status(first.job_id) == "queued"
    again = kit.store.create_single(doc(0), Idempotency("k", "fp"))
    assert not again.replayed and again.job_id != first.job_id


def test_expiry_runs_in_batches_of_the_sweep_batch_longest_ended_first(new_kit, clock):
    kit = new_kit(result_ttl=TTL, sweep_batch=2)
    ended = []
    for _ in range(3):
        job_id = kit.single().job_id
        kit.store.complete(job_id, kit.claim(job_id).attempt, {"text": "x"})
        ended.append(job_id)
        clock.advance(1)
    clock.advance(TTL)

    assert sweep(kit).expired == 2
    assert kit.members(keys.expiring) == {ended[2]} and kit.status(ended[2]) == "completed"
    assert sweep(kit).expired == 1
    assert job_state(kit) == {}


def test_with_nothing_due_the_expiry_pass_is_one_read(kit, monkeypatch):
    job_id = kit.single().job_id
    kit.store.complete(job_id, kit.claim(job_id).attempt, {"text": "x"})

    with round_trips(monkeypatch) as trips:
        due = kit.store.due_to_expire(kit.now_ms(), 500)
        assert kit.store.expire(due) == 0
    assert due == [] and trips == [["TIME"], ["ZRANGEBYSCORE"] * keys.bucket_count]  # one read per bucket
