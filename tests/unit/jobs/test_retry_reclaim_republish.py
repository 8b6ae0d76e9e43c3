"""retry, reclaim and republish: how a job gets back on a queue, and when it stops trying."""

import pytest

from jobs.contract import Reply
from jobs.errors import JobNotFound, LeaseLost, NotProcessing
from jobs.records import Dispatch
from tests.keyspace import keys

SLACK_MS = 5_000
BACKOFF_SECONDS = 20.0


# -- retry ---------------------------------------------------------------------------


def test_retry_queues_the_job_again_after_the_backoff(kit, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    before = kit.now_ms()
    kit.store.retry(job_id, claim.attempt, BACKOFF_SECONDS, "engine_unavailable", "tesseract crashed")

    assert replies.last("retry").code == 1
    job = kit.job(job_id)
    assert (job["status"], job["stage"]) == ("queued", "retrying")
    assert (job["last_error_code"], job["last_error"]) == ("engine_unavailable", "tesseract crashed")
    assert job["error_code"] == ""  # not terminal: the job's own error stays empty
    assert job["attempts"] == "1"
    assert kit.members(keys.leases) == set()
    deadline = kit.score(keys.queued, job_id)
    backoff_ms = BACKOFF_SECONDS * 1000
    assert before + backoff_ms - SLACK_MS <= deadline <= kit.now_ms() + backoff_ms

    # Not due yet: the sweep leaves it alone.
    assert kit.store.stale_queued(kit.now_ms(), 10) == []
    assert kit.store.republish([job_id]) == []
    assert kit.score(keys.queued, job_id) == deadline

    # Once the backoff has passed it gets a new message, and the next claim is attempt 2.
    kit.make_stale(job_id)
    assert kit.store.stale_queued(kit.now_ms(), 10) == [job_id]
    assert kit.store.republish([job_id]) == [Dispatch(job_id, "echo")]
    assert kit.claim(job_id).attempt == 2


def test_a_retried_child_keeps_its_slot(kit):
    parent = kit.group(3, max_parallel=1).job_id
    c = kit.child_ids(parent, 3)
    claim = kit.claim(c[0])
    kit.store.retry(c[0], claim.attempt, BACKOFF_SECONDS, "engine_unavailable", "x")

    assert kit.statuses(parent, 3) == ["queued", "held", "held"]
    assert kit.counts(parent)["queued"] == 1
    assert kit.counts(parent)["processing"] == 0
    assert kit.store.release([parent]) == []  # the cap still holds
    assert kit.statuses(parent, 3) == ["queued", "held", "held"]


def test_retry_by_a_stale_attempt_raises_and_writes_nothing(kit, replies):
    job_id = kit.single().job_id
    old = kit.claim(job_id)
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])

    before = kit.snapshot()
    with pytest.raises(NotProcessing):  # queued again, nobody holds it
        kit.store.retry(job_id, old.attempt, 1.0, "x", "x")
    assert replies.last("retry").code == -2
    assert kit.snapshot() == before

    kit.claim(job_id)
    before = kit.snapshot()
    with pytest.raises(LeaseLost):
        kit.store.retry(job_id, old.attempt, 1.0, "x", "x")
    assert replies.last("retry").code == -3
    assert kit.snapshot() == before


def test_retry_of_an_unknown_job(kit, replies):
    with pytest.raises(JobNotFound):
        kit.store.retry("b" * 32, 1, 1.0, "x", "x")
    assert replies.last("retry").code == -1
    assert kit.r.dbsize() == 0


# -- reclaim -------------------------------------------------------------------------


def test_a_live_lease_is_not_reclaimed(kit, replies):
    job_id = kit.single().job_id
    kit.claim(job_id)
    assert kit.store.expired_leases(kit.now_ms(), 10) == []
    before = kit.snapshot()
    reclaimed = kit.store.reclaim([job_id])
    assert (reclaimed.requeued, reclaimed.failed, reclaimed.dispatches) == ([], [], [])
    assert replies.last("reclaim").code == 0
    assert kit.snapshot() == before


def test_an_expired_lease_puts_the_job_back_while_attempts_remain(kit, settings, replies):
    parent = kit.group(2, max_parallel=1).job_id
    c0 = keys.child_id(parent, 0)
    kit.claim(c0)
    kit.expire_lease(c0)
    assert kit.store.expired_leases(kit.now_ms(), 10) == [c0]

    before = kit.now_ms()
    reclaimed = kit.store.reclaim([c0])
    reply = replies.last("reclaim")
    assert (reply.code, reply.requeued, reply.model) == (Reply.OK, True, "echo")
    assert reclaimed.requeued == [Dispatch(c0, "echo")]
    assert (reclaimed.failed, reclaimed.dispatches) == ([], [])
    job = kit.job(c0)
    assert (job["status"], job["stage"], job["last_error_code"]) == ("queued", "reclaimed", "lease_expired")
    assert job["attempts"] == "1"
    assert kit.members(keys.leases) == set()
    assert kit.score(keys.queued, c0) >= before + settings.requeue_seconds * 1000 - SLACK_MS
    assert kit.counts(parent)["queued"] == 1
    assert kit.counts(parent)["processing"] == 0
    assert kit.statuses(parent, 2) == ["queued", "held"]  # the slot stays taken
    assert kit.events(parent) == []

    assert kit.claim(c0).attempt == 2


def test_the_last_attempt_fails_with_lease_expired_and_releases_the_next_child(kit, settings, replies):
    assert settings.max_attempts == 2
    parent = kit.group(2, max_parallel=1).job_id
    c0, c1 = kit.child_ids(parent, 2)
    for _ in range(settings.max_attempts - 1):
        kit.claim(c0)
        kit.expire_lease(c0)
        kit.store.reclaim([c0])
    last = kit.claim(c0)
    assert last.attempt == settings.max_attempts
    kit.expire_lease(c0)

    reclaimed = kit.store.reclaim([c0])
    reply = replies.last("reclaim")
    assert (reply.code, reply.requeued, reply.finalized, reply.released) == (
        Reply.OK,
        False,
        False,
        [],  # the wake-up of the group's creation still counts for it
    )
    assert (reclaimed.requeued, reclaimed.failed) == ([], [c0])
    assert kit.ready() == [c1]
    job = kit.job(c0)
    assert (job["status"], job["error_code"]) == ("failed", "lease_expired")
    assert job["finished_at"] != ""
    assert kit.statuses(parent, 2) == ["failed", "queued"]
    assert kit.counts(parent)["failed"] == 1
    assert kit.members(keys.leases) == set()
    assert [
        (e["operation"], e["job_id"], e["parent_job_id"], e["status"], e["error_code"]) for e in kit.events(parent)
    ] == [("job_child", c0, parent, "failed", "lease_expired")]
    assert kit.r.exists(keys.payload(c0))  # a failed job keeps its payload


def test_a_last_child_failing_by_lease_finalizes_its_parent_once(kit, settings, replies):
    store = kit.store
    parent = kit.group(2, max_parallel=2).job_id
    c0, c1 = kit.child_ids(parent, 2)
    done = kit.claim(c1)
    store.complete(c1, done.attempt, {})
    for _ in range(settings.max_attempts):
        kit.claim(c0)
        kit.expire_lease(c0)
        store.reclaim([c0])
    reply = replies.last("reclaim")
    assert (reply.code, reply.requeued, reply.finalized, reply.released) == (Reply.OK, False, True, [])
    p = kit.job(parent)
    assert (p["status"], p["error_code"]) == ("failed", "child_failed")
    assert [e["operation"] for e in kit.events(parent)] == ["job_child", "job_child", "job"]
    assert kit.active_parents() == set()


def test_a_single_job_failing_by_lease_gets_a_job_event(kit, settings):
    job_id = kit.single().job_id
    for _ in range(settings.max_attempts):
        kit.claim(job_id)
        kit.expire_lease(job_id)
        kit.store.reclaim([job_id])
    assert kit.status(job_id) == "failed"
    assert [(e["operation"], e["status"], e["error_code"]) for e in kit.events(job_id)] == [
        ("job", "failed", "lease_expired")
    ]


def test_a_late_completion_of_a_reclaimed_attempt_is_refused(kit, settings):
    job_id = kit.single().job_id
    dead = kit.claim(job_id)
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])

    before = kit.snapshot()
    with pytest.raises(NotProcessing):
        kit.store.complete(job_id, dead.attempt, {"from": "dead"})
    assert kit.snapshot() == before

    alive = kit.claim(job_id)
    before = kit.snapshot()
    with pytest.raises(LeaseLost):
        kit.store.complete(job_id, dead.attempt, {"from": "dead"})
    assert kit.snapshot() == before

    # The last attempt dies too: a late completion cannot revive the failed job.
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])
    assert kit.status(job_id) == "failed"
    before = kit.snapshot()
    for attempt in (dead.attempt, alive.attempt):
        with pytest.raises(NotProcessing):
            kit.store.complete(job_id, attempt, {"from": "late"})
    assert kit.snapshot() == before
    assert kit.store.queries.result(job_id) is None


def test_reclaim_drops_a_lease_left_on_a_job_that_is_no_longer_processing(kit, r, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {})
    r.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: 1})
    reclaimed = kit.store.reclaim([job_id])
    assert replies.last("reclaim").code == 0
    assert reclaimed.requeued == reclaimed.failed == []
    assert kit.members(keys.leases) == set()
    assert kit.status(job_id) == "completed"


def test_reclaim_of_a_job_without_a_lease_does_nothing(kit, replies):
    job_id = kit.single().job_id
    before = kit.snapshot()
    kit.store.reclaim([job_id, "a" * 32])
    assert [r.code for r in replies["reclaim"]] == [Reply.NOTHING, Reply.NOTHING]
    assert kit.snapshot() == before
    assert kit.store.reclaim([]).requeued == []


def test_reclaim_acts_on_each_job_of_a_batch(kit):
    a, b, c = (kit.single().job_id for _ in range(3))
    for job_id in (a, b, c):
        kit.claim(job_id)
    kit.expire_lease(a)
    kit.expire_lease(c)
    assert set(kit.store.expired_leases(kit.now_ms(), 10)) == {a, c}
    assert len(kit.store.expired_leases(kit.now_ms(), 1)) == 1
    reclaimed = kit.store.reclaim([a, b, c])
    assert {d.job_id for d in reclaimed.requeued} == {a, c}
    assert kit.status(b) == "processing"


# -- republish -----------------------------------------------------------------------


def test_a_stale_queued_job_is_published_again_and_its_deadline_pushed_on(kit, settings, replies):
    job_id = kit.single().job_id
    kit.make_stale(job_id)
    assert kit.store.stale_queued(kit.now_ms(), 10) == [job_id]
    before = kit.now_ms()
    assert kit.store.republish([job_id]) == [Dispatch(job_id, "echo")]
    assert (replies.last("republish").code, replies.last("republish").model) == (Reply.OK, "echo")
    assert kit.score(keys.queued, job_id) >= before + settings.requeue_seconds * 1000 - SLACK_MS
    assert kit.store.stale_queued(kit.now_ms(), 10) == []
    assert kit.status(job_id) == "queued"


def test_a_queued_job_not_yet_due_is_left_alone(kit, replies):
    job_id = kit.single().job_id
    before = kit.snapshot()
    assert kit.store.republish([job_id]) == []
    assert replies.last("republish").code == 0
    assert kit.snapshot() == before


def test_a_claimed_job_is_not_republished_and_leaves_the_index(kit, r, replies):
    job_id = kit.single().job_id
    kit.claim(job_id)
    r.zadd(keys.queued(keys.bucket_of(job_id)), {job_id: 1})  # as read by a sweep just before the claim
    assert kit.store.republish([job_id]) == []
    assert replies.last("republish").code == 0
    assert kit.members(keys.queued) == set()
    assert kit.status(job_id) == "processing"


def test_held_and_unknown_jobs_are_not_republished(kit, r):
    parent = kit.group(2, max_parallel=1).job_id
    held = keys.child_id(parent, 1)
    for job_id in (held, "a" * 32):
        r.zadd(keys.queued(keys.bucket_of(job_id)), {job_id: 1})
    assert kit.store.republish([held, "a" * 32]) == []
    assert kit.members(keys.queued) == {keys.child_id(parent, 0)}
    assert kit.status(held) == "held"
    assert kit.store.republish([]) == []
