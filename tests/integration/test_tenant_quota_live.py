"""A tenant's cap across buckets, end to end: real redis-server with 24 buckets on it, Celery workers,
coordinator and beat.

One tenant sends several groups whose roots fall in different buckets; the
pool is twice its cap.  Its peak concurrency, measured from what the
scripts recorded (every attempt's start and end, Redis time), never exceeds
the cap, and everything completes: with the stack left alone, with a worker
SIGKILLed mid-run, and with the coordinator SIGKILLed and a return of
quota cut in half (the bucket's step done, the ledger's never: what a
SIGKILL between the two steps leaves), which its successor's reconcile
repairs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from jobs.ids import tenant_tag
from jobs.records import GroupRules, NewJob, Owner
from jobs.store import JobStore
from jobs.tenant_quota import field
from tests.harness import wait_until
from tests.integration.fanout_support import peak_overlap, store_of
from tests.integration.polling import wait_for_job
from tests.integration.test_fair_share import runs
from tests.keyspace import keys
from workers import dispatch

pytestmark = pytest.mark.integration

BUCKETS = 24
CAP = 3
POOL = 6
GROUPS = 6
CHILDREN = 5
SLOW_MS = 200
TENANT = "tenant-q"
WAIT = 180.0  # bounds a hang only
ENV = {
    "OCRGW_STORE_BUCKETS": str(BUCKETS),
    "OCRGW_TENANT_MAX_INFLIGHT": str(CAP),
    "OCRGW_SWEEP_INTERVAL": "0.2",
    "OCRGW_LEASE_SECONDS": "2",
    "OCRGW_REQUEUE_SECONDS": "3",
}


@pytest.fixture
def quota_stack(procs, monkeypatch) -> Iterator[tuple[object, JobStore]]:
    stack = procs.stack(db=procs.fresh_db(), concurrency=POOL, env=ENV)
    with store_of(stack, ENV, monkeypatch) as store:
        yield stack, store


def submit(store: JobStore, n: int) -> str:
    jobs = [NewJob("echo", "text/plain", f"{TENANT} {i}".encode(), options={"delay_ms": SLOW_MS}) for i in range(n)]
    created = store.create_group(jobs, GroupRules(0), owner=Owner(TENANT))
    assert dispatch.publish(created.dispatches) == len(created.dispatches)
    return created.job_id


def submit_all(store: JobStore) -> list[str]:
    groups = [submit(store, CHILDREN) for _ in range(GROUPS)]
    assert len({keys.bucket_of(g) for g in groups}) > 1, "the roots all fell in one bucket: no test"
    return groups


def finish_and_check(store: JobStore, groups: list[str], capsys, what: str) -> None:
    for group in groups:
        wait_for_job(store.queries.get, group, lambda v: v["status"] == "completed", what="completed", timeout=WAIT)
    spans = [(started, ended) for g in groups for _, started, ended in runs(store, g)]
    peak = peak_overlap(spans)
    with capsys.disabled():
        print(f"\n[tenant cap {CAP} over {BUCKETS} buckets, {what}] peak {peak} of {len(spans)} attempts")
    assert peak <= CAP, f"the tenant ran {peak} children at once (cap {CAP})"
    assert peak == CAP, "the tenant never reached its cap: the quota did not follow its groups"
    tag = tenant_tag(TENANT)
    for b in keys.buckets():
        assert int(store.redis.get(keys.tenant_in_flight(tag, b)) or 0) == 0
        assert store.redis.zcard(keys.tenant_waiting(tag, b)) == 0

    def settled() -> bool:
        # The sweep takes every unused quota back, and the ledger agrees with the buckets (nothing leaked).
        ledger = store.tenant_quota.ledger(tag)
        quotas = store.tenant_quota.buckets(tag)
        return all(q.quota == 0 and ledger.get(field(b), 0) == 0 for b, q in enumerate(quotas))

    wait_until(settled, 30, message="the tenant's quota was not all taken back to its ledger")


def test_the_cap_holds_across_buckets(quota_stack, capsys):
    _, store = quota_stack
    finish_and_check(store, submit_all(store), capsys, "undisturbed")


def test_the_cap_holds_when_a_worker_is_sigkilled_mid_run(quota_stack, procs, capsys):
    stack, store = quota_stack
    groups = submit_all(store)
    wait_until(lambda: sum(int(store.queries.get(g)["n_completed"]) for g in groups) >= 4, WAIT)
    stack.worker.kill()  # its attempts' leases run out; the sweep requeues them
    procs.worker(concurrency=POOL, db=stack.db, env=ENV)
    finish_and_check(store, groups, capsys, "worker SIGKILLed")


def test_the_cap_holds_when_the_coordinator_dies_between_the_two_steps_of_a_move(quota_stack, procs, capsys):
    stack, store = quota_stack
    tag = tenant_tag(TENANT)
    # SIGKILLed before the groups come, so that its death leaves no move or release of its own half done
    # (killed mid-sweep, it could leave every unit of quota granted in the ledger and in no bucket, or a
    # released child with no wake-up: states its next sweep repairs, but no bucket with unused quota).
    stack.coordinator.kill()
    groups = submit_all(store)

    # With no coordinator, quota moves only at creations: the buckets that got some run their groups to
    # the end, and then hold it unused.
    def unused() -> int | None:
        return next((b for b, q in enumerate(store.tenant_quota.buckets(tag)) if q.quota > q.in_flight), None)

    wait_until(lambda: unused() is not None, WAIT, message="no bucket was left with unused quota")
    bucket = unused()
    assert bucket is not None
    assert any(int(store.queries.get(g)["n_completed"]) == 0 for g in groups), "no group waited for quota"
    # What a coordinator SIGKILLed between a return's two steps leaves: the bucket's step done, the
    # ledger's never.  The ledger keeps that quota: the tenant runs below its cap until a reconcile.
    given = store.tenant_quota.return_bucket(tag, bucket, CAP, None)
    assert given > 0
    granted = sum(v for k, v in store.tenant_quota.ledger(tag).items() if k.startswith("b"))
    assert granted > sum(q.quota for q in store.tenant_quota.buckets(tag))
    procs.coordinator(db=stack.db, env=ENV)
    finish_and_check(store, groups, capsys, f"coordinator SIGKILLed, {given} left in the ledger")


@pytest.mark.cluster
def test_the_cap_holds_across_buckets_on_a_redis_cluster(empty_cluster, procs, capsys):
    """The whole stack on a real Redis Cluster (24 buckets over three primaries, each tenant's ledger in a
    slot of its own), groups sent through the gateway: the default tenant's peak stays at its cap."""
    from tests.integration.fanout_support import Gateway, echo_children, intervals, submit_group

    db = procs.fresh_db()
    env = {
        **empty_cluster.env(),
        "CELERY_BROKER_URL": procs.url(db),
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "OCRGW_TENANT_MAX_INFLIGHT": str(CAP),
    }
    stack = procs.stack(db=db, env=env, concurrency=POOL, web=True)
    with Gateway(stack.web().base_url) as gateway:
        parents = [submit_group(gateway, echo_children(CHILDREN, delay_ms=SLOW_MS), 0).json()["id"] for _ in range(4)]
        views = [wait_for_job(gateway.job, p, timeout=WAIT) for p in parents]
    assert all(v["status"] == "completed" for v in views), [v["counts"] for v in views]
    keys.use_bucket_count(24)
    try:
        assert len({keys.bucket_of(p) for p in parents}) > 1, "the roots all fell in one bucket: no test"
    finally:
        keys.use_bucket_count(None)
    peak = peak_overlap([span for v in views for span in intervals(v["children"])])
    with capsys.disabled():
        print(f"\n[tenant cap {CAP} on a Redis Cluster, 24 buckets] peak {peak}")
    assert peak == CAP, f"the tenant ran {peak} children at once at most (cap {CAP})"
