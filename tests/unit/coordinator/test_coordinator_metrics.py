"""What the coordinator counts: each sweep (its duration, its repairs), the leases that ran out, webhook attempts."""

from __future__ import annotations

import fakeredis
import pytest

from coordinator import webhooks as delivery_task
from coordinator.sweep import Sweeper
from jobs.config import Settings
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from tests.keyspace import keys
from tests.unit.observability.support import Counts

ATTEMPTS, FINISHED = "ocrgw_job_attempts_total", "ocrgw_jobs_finished_total"


@pytest.fixture
def store() -> JobStore:
    return JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), Settings(max_attempts=2))


def running(store: JobStore, model: str = "echo", cancel: bool = False) -> str:
    """A single job whose worker stopped renewing its lease."""
    job_id = store.create_single(NewJob(model=model, content_type="text/plain", payload=b"x")).job_id
    assert store.claim(job_id) is not None
    if cancel:
        store.redis.hset(keys.job(job_id), "cancel_requested", "1")
    store.redis.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: 1}, xx=True)
    return job_id


def test_a_sweep_counts_its_duration_and_what_it_repaired(store):
    running(store)
    counts = Counts()

    report = Sweeper(store, publish=len).sweep()

    assert report.reclaimed == 1
    assert counts.delta("ocrgw_sweep_duration_seconds_count", outcome="swept") == 1
    assert counts.delta("ocrgw_sweep_repairs_total", action="reclaimed") == 1
    assert counts.delta(ATTEMPTS, model="echo", outcome="reclaimed") == 1
    assert counts.delta(FINISHED, model="echo", status="failed") == 0


def test_a_tick_that_finds_the_lock_taken_counts_as_skipped(store):
    # Every bucket's lock (one bucket's alone leaves the others to sweep).
    assert all(store.try_lock_sweep("another-tick", 10_000, bucket) for bucket in keys.buckets())
    counts = Counts()

    assert Sweeper(store, publish=len).sweep().skipped

    assert counts.delta("ocrgw_sweep_duration_seconds_count", outcome="skipped") == 1
    assert counts.delta("ocrgw_sweep_duration_seconds_count", outcome="swept") == 0


def test_a_lease_that_ran_out_on_the_last_attempt_fails_the_job_and_counts_it(store):
    job_id = running(store, model="tesseract")
    Sweeper(store, publish=len).sweep()
    assert store.claim(job_id) is not None
    store.redis.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: 1}, xx=True)
    counts = Counts()

    Sweeper(store, publish=len).sweep()

    assert store.queries.get(job_id)["error_code"] == "lease_expired"
    assert counts.delta(FINISHED, model="tesseract", status="failed") == 1
    assert counts.delta(ATTEMPTS, model="tesseract", outcome="lease_expired") == 1
    assert counts.delta("ocrgw_sweep_repairs_total", action="lease_expired") == 1


def test_a_job_a_client_cancelled_whose_lease_ran_out_counts_as_cancelled(store):
    running(store, cancel=True)
    counts = Counts()

    Sweeper(store, publish=len).sweep()

    assert counts.delta(FINISHED, model="echo", status="cancelled") == 1
    assert counts.delta(FINISHED, model="echo", status="failed") == 0


@pytest.mark.parametrize("outcome", ["delivered", "retrying", "stale", "gone"])
def test_each_webhook_attempt_counts_by_what_became_of_it(monkeypatch, outcome):
    class Deliverer:
        def deliver(self, job_id: str, attempt: int) -> str:
            return outcome

    monkeypatch.setattr(delivery_task, "deliverer", Deliverer)
    counts = Counts()

    assert delivery_task.deliver("0" * 32, 1) == outcome

    assert counts.delta("ocrgw_webhook_attempts_total", outcome=outcome) == 1


def test_the_held_children_a_lease_that_ran_out_cancels_count_as_cancelled(store):
    """A fail-fast group whose running child's lease ran out on its last attempt: it fails, and the sweep's
    reclaim cancels the held children, before they started; the coordinator counts them."""
    children = [NewJob(model="tesseract", content_type="image/png", payload=b"x") for _ in range(4)]
    parent_id = store.create_group(children, GroupRules(max_parallel=1, fail_fast=True)).job_id
    child_id = keys.child_id(parent_id, 0)
    for _ in range(2):  # max_attempts
        assert store.claim(child_id) is not None
        store.redis.zadd(keys.leases(keys.bucket_of(child_id)), {child_id: 1}, xx=True)
        counts = Counts()
        Sweeper(store, publish=len).sweep()

    assert store.queries.get(parent_id)["status"] == "failed"
    assert counts.delta(FINISHED, model="tesseract", status="failed") == 1
    assert counts.delta(FINISHED, model="tesseract", status="cancelled") == 3


def test_the_sweep_counts_the_children_it_released_not_their_wake_ups(store):
    doc = NewJob(model="echo", content_type="text/plain", payload=b"x")
    # Left on the due index with every child held, as a release cut short leaves a group.
    parent = store.create_group([doc] * 3, GroupRules(max_parallel=3), release=False).job_id
    # A wake-up on its way already counts for two of the children the sweep will release.
    store.redis.zadd(
        keys.wakeups(keys.bucket_of(parent), "echo", "batch"), {"on-its-way-1": 2**52, "on-its-way-2": 2**52}
    )
    counts = Counts()

    report = Sweeper(store, publish=len).sweep()

    assert report.released == 3 and report.published == 1
    assert counts.delta("ocrgw_sweep_repairs_total", action="released") == 3
