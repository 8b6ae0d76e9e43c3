"""``jobs.migration.Rebucketing`` on a FakeRedis: a store moved from one bucket count to another reads as it
was, and a run cut short at any write is finished by the next.

The same on a real redis-server and a real Redis Cluster, with a stack that then runs the jobs to the end:
tests/integration/test_store_layout_live.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest

from jobs import controls, keys, migration
from jobs.config import Settings
from jobs.records import Idempotency, NewJob, Owner
from jobs.store import JobStore
from tests.unit.jobs.conftest import text

TENANTS = ("alpha", "beta")
KEY = Idempotency("again", "/jobs/x/retry|False")


class Cut(Exception):
    """Where a test cuts a run short."""


@pytest.fixture
def counting(bucket_count, spread) -> Iterator[None]:
    yield


def echo(text: str) -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=text.encode())


def store_over(r: fakeredis.FakeRedis, buckets: int) -> JobStore:
    keys.use_bucket_count(buckets)
    return JobStore(r, Settings(store_buckets=buckets, tenant_max_inflight=20))


def fill(store: JobStore) -> list[str]:
    """Each tenant: a completed job, a queued one, a processing one, a group half held, a keyed redrive."""
    roots = []
    for tenant in TENANTS:
        owner = Owner(tenant)
        done = store.create_single(echo("done"), owner=owner).job_id
        claim = store.claim(done)
        assert claim is not None
        store.complete(done, claim.attempt, {"text": "done"})
        queued = store.create_single(echo("queued"), owner=owner).job_id
        running = store.create_single(echo("running"), owner=owner).job_id
        assert store.claim(running) is not None
        group = store.create_group([echo(f"p{i}") for i in range(4)], 2, owner=owner).job_id
        redriven = store.create_group([echo("again")], 1, owner=owner).job_id
        claim = store.claim(keys.child_id(redriven, 0))
        assert claim is not None
        store.fail(claim.job_id, claim.attempt, "bad_document", "no")
        assert controls.redrive(store, redriven, idempotency=KEY, tenant=tenant).count == 1
        roots += [done, queued, running, group, redriven]
    return roots


def state(store: JobStore, roots: list[str]) -> dict[str, object]:
    """What a reader sees: each job's status, each tenant's listing and in-flight count over the buckets."""
    seen: dict[str, object] = {}
    for root in roots:
        for job_id in [root, *(keys.child_id(root, i) for i in range(4))]:
            view = store.queries.get(job_id)
            if view is not None:
                seen[job_id] = view["status"]
    for tenant in TENANTS:
        seen[tenant] = sorted(j["id"] or "" for j in store.queries.list_jobs(tenant=tenant, limit=50).jobs)
        tag = keys.tag_of(roots[0] if tenant == TENANTS[0] else roots[5])
        seen[f"{tenant} in flight"] = sum(
            int(store.redis.get(keys.tenant_in_flight(tag, b)) or 0) for b in keys.buckets()
        )
    return seen


@pytest.mark.parametrize(("old", "new"), [(1, 24), (24, 1), (24, 6)])
def test_a_store_moved_between_counts_reads_as_it_was(counting, monkeypatch, old, new):
    monkeypatch.setattr(migration, "connected", lambda client: [])
    r = fakeredis.FakeRedis()
    roots = fill(store_over(r, old))
    before = state(store_over(r, old), roots)

    store_over(r, new)
    report = migration.Rebucketing(r, old, cap=20).run()

    after_store = store_over(r, new)
    assert state(after_store, roots) == before
    assert report.moved["job"] == sum(1 for k in r.scan_iter() if b":job:" in k)
    tags = {k.decode().partition("{")[2].partition("}")[0] for k in r.scan_iter(match="ocrgw:{b*")}
    assert tags <= set(keys.bucket_tags(new))
    for tenant, root in zip(TENANTS, roots[4::5], strict=True):
        assert controls.redrive(after_store, root, idempotency=KEY, tenant=tenant).replayed
    if new > 1:
        # Each tenant's ledger grants each bucket what it has in flight there.
        for tenant_root in roots[0::5]:
            tag = keys.tag_of(tenant_root)
            ledger = {text(k): int(v) for k, v in r.hgetall(keys.ledger(tag)).items()}
            grants = {field: n for field, n in ledger.items() if field.startswith("b")}
            in_flight = {f"b{b}": int(r.get(keys.tenant_in_flight(tag, b)) or 0) for b in keys.buckets()}
            assert grants == {b: n for b, n in in_flight.items() if n}


def test_a_run_cut_short_at_any_write_is_finished_by_the_next(counting, monkeypatch):
    monkeypatch.setattr(migration, "connected", lambda client: [])
    reference = fakeredis.FakeRedis()
    roots = fill(store_over(reference, 1))
    before = state(store_over(reference, 1), roots)
    dump: dict[bytes, tuple[bytes, int]] = {}
    for k in reference.scan_iter():
        value = reference.dump(k)
        assert isinstance(value, bytes)
        dump[k] = (value, int(reference.pttl(k)))

    cut_at = 1
    while True:
        r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
        for k, (value, ttl) in dump.items():
            r.restore(k, max(ttl, 0), value)
        steps = iter(range(1, cut_at + 1))

        def step(steps: Iterator[int] = steps, cut: int = cut_at) -> None:
            if next(steps, None) == cut:
                raise Cut

        store_over(r, 24)
        try:
            migration.Rebucketing(r, 1, cap=20, step=step, batch=3).run()
        except Cut:
            migration.Rebucketing(r, 1, cap=20).run()  # the next run, uncut
            assert state(store_over(r, 24), roots) == before, f"cut at write {cut_at}"
            cut_at += 1
            continue
        break
    print(f"cut at each of {cut_at - 1} writes")
    assert cut_at > 5, "the run was cut at several writes"
