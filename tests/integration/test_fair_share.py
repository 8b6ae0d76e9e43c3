"""Fair share between tenants, end to end: real redis-server, Celery worker, coordinator and beat.

Two tenants saturate the worker pool with slow children, each up to its
cap (OCRGW_TENANT_MAX_INFLIGHT); then a third tenant sends a small group.
Everything is measured from what the scripts recorded (every attempt's
start and end, Redis time), never from how long the test took.

Why the third tenant's wait is bounded, in hand-offs, on one bucket (the
store's keys in one slot, ``OCRGW_STORE_BUCKETS=1``):

* its children enter the model's ready index the moment its group is
  created, and a finishing worker takes the ready index's next job, in the
  order jobs were queued: every busy child released after that comes
  behind them;
* what is ahead of them is what the two busy tenants had queued then: at
  most their caps, 2 x TENANT_CAP;
* once its last child is taken, each other worker may start one more child
  while that last child runs (theirs sleep 0.3 s, it does not sleep): POOL,
  and POOL again as slack for a loaded machine.

Kept slots last a minute there, so only the ready index's order lets the
small group in before the busy tenants are done; and the busy groups have
no cap of their own, so only the tenant cap keeps their backlog out of the
way.  Without either, the small group waits for most of the 70 children of
the busy tenants (52 hand-offs with kept slots that take only their own
group's next child, 66 with no tenant cap, where this test measures 2).

On 24 buckets (a Redis Cluster's layout, here on one redis-server) a
finishing worker takes the next ready job of its own bucket only: a group in
another bucket is reached by its wake-ups, which a worker takes from the
broker once its kept-slot window (``OCRGW_KEEP_SLOT_SECONDS``, 1 s by
default, as here) has run out.  So each worker may start up to
ceil(window / 0.3 s) + 1 more busy children before it comes to them:
POOL x that, on top of the bound above.  With the window of a minute, the
small group waited 52 hand-offs there, as the busy groups' own buckets kept
every worker.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from jobs.fair_share import tenant_of
from jobs.ids import tenant_tag
from jobs.records import GroupRules, Idempotency, NewJob, Owner
from jobs.store import JobStore
from tests.harness import wait_until
from tests.integration.fanout_support import peak_overlap, recorded_micros, store_of
from tests.integration.polling import wait_for_job
from tests.keyspace import keys
from workers import dispatch

pytestmark = pytest.mark.integration

POOL = 4
TENANT_CAP = 3
SLOW_MS = 300
BUSY_A, BUSY_C, SMALL = "tenant-a", "tenant-c", "tenant-b"
WAIT = 180.0  # bounds a hang only


@dataclass(frozen=True)
class Layout:
    buckets: int
    keep_slot_seconds: int

    def bound(self) -> int:
        """The busy tenants' starts the small group may wait for (the module's docstring says why)."""
        bound = 2 * TENANT_CAP + 2 * POOL
        if self.buckets > 1:
            bound += POOL * (math.ceil(self.keep_slot_seconds * 1000 / SLOW_MS) + 1)
        return bound


def away_from(roots: list[str]) -> Idempotency | None:
    """An Idempotency-Key whose bucket (its root's) holds none of ``roots``: the small group in a bucket of
    its own, which the busy groups' workers do not see.  None on one bucket."""
    if keys.bucket_count == 1:
        return None
    taken = {keys.bucket_of(root) for root in roots}
    key = next(k for k in (f"small-{i}" for i in range(1000)) if keys.bucket_of_idempotency(SMALL, k) not in taken)
    return Idempotency(key, "fair-share")


@pytest.fixture(
    params=[Layout(buckets=1, keep_slot_seconds=60), Layout(buckets=24, keep_slot_seconds=1)],
    ids=["one bucket", "24 buckets"],
)
def fair_stack(request, procs, monkeypatch) -> Iterator[tuple[JobStore, Layout]]:
    layout: Layout = request.param
    env = {
        "OCRGW_TENANT_MAX_INFLIGHT": str(TENANT_CAP),
        "OCRGW_KEEP_SLOT_SECONDS": str(layout.keep_slot_seconds),
        "OCRGW_STORE_BUCKETS": str(layout.buckets),
        "OCRGW_SWEEP_INTERVAL": "0.2",
    }
    stack = procs.stack(db=procs.fresh_db(), concurrency=POOL, env=env)
    with store_of(stack, env, monkeypatch) as store:
        yield store, layout


def submit(store: JobStore, tenant: str, n: int, delay_ms: int, idempotency: Idempotency | None = None) -> str:
    options = {"delay_ms": delay_ms} if delay_ms else {}
    jobs = [NewJob("echo", "text/plain", f"{tenant} {i}".encode(), options=options) for i in range(n)]
    created = store.create_group(jobs, GroupRules(0), idempotency, owner=Owner(tenant))
    assert dispatch.publish(created.dispatches) == len(created.dispatches)
    return created.job_id


def runs(store: JobStore, parent_id: str) -> list[tuple[str, int, int]]:
    """(child, started µs, ended µs) of every attempt of every child, from the recorded intervals."""
    parent = store.queries.get(parent_id)
    assert parent is not None, f"group {parent_id} is not stored"
    out = []
    for child in store.queries.children_page(parent_id, 0, int(parent["total"])).children:
        assert child["status"] == "completed", child
        assert child["id"] is not None and child["intervals"] is not None, child
        for run in filter(None, child["intervals"].split(",")):
            _, started, ended, _ = run.split(":")
            out.append((child["id"], int(started), int(ended)))
    return out


def completed(view) -> bool:
    return view["status"] == "completed"


def test_a_small_group_waits_a_bounded_number_of_hand_offs_behind_tenants_that_saturate_the_pool(fair_stack, capsys):
    store, layout = fair_stack
    busy = [submit(store, BUSY_A, 40, SLOW_MS), submit(store, BUSY_C, 30, SLOW_MS)]

    def saturated():
        views = [store.queries.get(p) for p in busy]
        return sum(int(v["n_processing"]) for v in views) == POOL and any(int(v["n_queued"]) for v in views)

    wait_until(saturated, WAIT, message="the busy tenants never filled the pool")
    small = submit(store, SMALL, 3, 0, away_from(busy))
    if layout.buckets > 1:
        assert keys.bucket_of(small) not in {keys.bucket_of(p) for p in busy}, "the small group shares a bucket"
    wait_for_job(store.queries.get, small, completed, what="completed", timeout=WAIT)
    for parent in busy:
        wait_for_job(store.queries.get, parent, completed, what="completed", timeout=WAIT)

    # The hand-offs the small group waited: others' starts from its creation to its last end.
    submitted = recorded_micros(store.queries.get(small)["created_at"])
    small_runs = runs(store, small)
    last_end = max(end for _, _, end in small_runs)
    others = [run for parent in busy for run in runs(store, parent)]
    waited = sum(1 for _, started, _ in others if submitted < started <= last_end)
    bound = layout.bound()
    with capsys.disabled():
        print(
            f"\n[fair share, pool {POOL}, tenant cap {TENANT_CAP}, {layout.buckets} bucket(s), kept slots "
            f"{layout.keep_slot_seconds} s] the small group waited {waited} hand-offs of the busy tenants "
            f"(bound {bound}) out of {len(others)}"
        )
    assert waited <= bound, f"{waited} other children started while the small group waited (bound {bound})"
    assert any(started > last_end for _, started, _ in others), "the busy tenants were done before it: no test"

    # Each busy tenant held at most its cap (its group has none).
    for tenant in (BUSY_A, BUSY_C):
        spans = [(s, e) for child, s, e in others if tenant_of(child) == tenant_tag(tenant)]
        assert peak_overlap(spans) <= TENANT_CAP, f"{tenant} ran {peak_overlap(spans)} children at once"

    # Nothing is left in flight: every tenant's count is back to 0, no group waits in a line.
    for tenant in (BUSY_A, BUSY_C, SMALL):
        tag = tenant_tag(tenant)
        for b in keys.buckets():
            assert int(store.redis.get(keys.tenant_in_flight(tag, b)) or 0) == 0
            assert store.redis.zcard(keys.tenant_waiting(tag, b)) == 0
