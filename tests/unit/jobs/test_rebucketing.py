"""``jobs.migration.Rebucketing`` on a FakeRedis: a store moved from one bucket count to another reads as it
was (its jobs, listings, in-flight counts, usage records and their expiry, ready and backed-off entries),
its queued work is taken after the move in the same order per tenant, and a run cut short at any write is
finished by the next, on one Redis and with the cluster's order of writes (``on_cluster``).

The same on a real redis-server and a real Redis Cluster, with a stack that then runs the jobs to the end:
tests/integration/test_store_layout_live.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import fakeredis
import pytest

from jobs import controls, migration
from jobs.config import Settings
from jobs.connections import StoreClient
from jobs.records import GroupRules, Idempotency, NewJob, Owner
from jobs.store import JobStore
from jobs.usage import UsageQueries
from tests.keyspace import keys
from tests.unit.jobs.conftest import text

TENANTS = ("alpha", "beta")
KEY = Idempotency("again", "/jobs/x/retry|False")
#: How many roots ``fill`` makes per tenant; its first and fifth are the completed job and the redriven group.
PER_TENANT = 11
LANES = ("interactive", "batch")


class Cut(Exception):
    """Where a test cuts a run short."""


@pytest.fixture
def counting(bucket_count, spread) -> Iterator[None]:
    yield


def echo(text: str, priority: str = "batch") -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=text.encode(), priority=priority)


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
        group = store.create_group([echo(f"p{i}") for i in range(4)], GroupRules(2), owner=owner).job_id
        redriven = store.create_group([echo("again")], GroupRules(1), owner=owner).job_id
        claim = store.claim(keys.child_id(redriven, 0))
        assert claim is not None
        store.fail(claim.job_id, claim.attempt, "bad_document", "no")
        assert controls.redrive(store, redriven, idempotency=KEY, tenant=tenant).count == 1
        roots += [done, queued, running, group, redriven]
        # Queued work in both lanes, each job a turn of its tenant's in its bucket's ready index.
        roots += [store.create_single(echo(f"b{i}"), owner=owner).job_id for i in range(3)]
        roots += [store.create_single(echo("i0", "interactive"), owner=owner).job_id]
        # Retries waiting out their backoff: one for an hour, one that is over once the move is.
        for backoff in (3600, 0.001):
            retried = store.create_single(echo("retried"), owner=owner).job_id
            claim = store.claim(retried)
            assert claim is not None
            store.retry(retried, claim.attempt, backoff, "engine_busy", "busy")
            roots.append(retried)
    assert len(roots) == PER_TENANT * len(TENANTS)
    return roots


def tenant_tags(roots: list[str]) -> dict[str, str]:
    return {tenant: keys.tag_of(roots[i * PER_TENANT]) for i, tenant in enumerate(TENANTS)}


def ready_of(lane: str) -> Callable[[int], str]:
    """A bucket's ready index of ``echo`` in ``lane``."""
    return lambda bucket: keys.ready(bucket, "echo", lane)


def entries(r: StoreClient, index_of: Callable[[int], str]) -> dict[str, float | str]:
    """Every bucket's entries of an index, member -> score; a member outside its own bucket's index is named."""
    found: dict[str, float | str] = {}
    for bucket in keys.buckets():
        listed: list[Any] = list(r.zrange(index_of(bucket), 0, -1, withscores=True))
        for member, score in listed:
            job_id = text(member)
            found[job_id] = score if keys.bucket_of(job_id) == bucket else f"misplaced in bucket {bucket}"
    return found


def state(store: JobStore, roots: list[str]) -> dict[str, object]:
    """What a reader sees: each job's status, each tenant's listing and in-flight count over the buckets."""
    seen: dict[str, object] = {}
    for root in roots:
        for job_id in [root, *(keys.child_id(root, i) for i in range(4))]:
            view = store.queries.get(job_id)
            if view is not None:
                seen[job_id] = view["status"]
    now = datetime.now(UTC)
    usage = UsageQueries(store.redis, keys)
    for tenant, tag in tenant_tags(roots).items():
        seen[tenant] = sorted(j["id"] or "" for j in store.queries.list_jobs(tenant=tenant, limit=50).jobs)
        seen[f"{tenant} in flight"] = sum(
            int(store.redis.get(keys.tenant_in_flight(tag, b)) or 0) for b in keys.buckets()
        )
        seen[f"{tenant} usage"] = usage.periods(tenant, now - timedelta(days=2), now + timedelta(days=1), "hour")
        records = [text(k) for k in store.redis.scan_iter(match=f"ocrgw:{{*}}:{keys.USAGE}{tag}:*")]
        seen[f"{tenant} usage kept until"] = max(int(store.redis.expiretime(k)) for k in records)
    for lane in LANES:
        ready = entries(store.redis, ready_of(lane))
        seen[f"ready {lane}"] = ready
        # Each tenant's next turn in a bucket is behind every turn of its own queued there (ready.lua).
        seen[f"turns behind the ready {lane}"] = [
            job_id for job_id, turn in ready.items() if not float(turn) < finish(store.redis, job_id, lane)
        ]
    seen["later"] = entries(store.redis, keys.later)
    return seen


def finish(r: StoreClient, job_id: str, lane: str) -> float:
    """Where the next turn of the job's tenant starts in its bucket's ``lane`` of ``echo``."""
    field = f"{keys.TURN_FINISH}echo:{lane}:{keys.tag_of(job_id)}"
    return float(r.hget(keys.turns(keys.bucket_of(job_id)), field) or "-inf")


def snapshot(r: fakeredis.FakeRedis) -> dict[bytes, tuple[bytes, int]]:
    """Every key's value and when it expires (ms since the epoch, -1 for never)."""
    dump: dict[bytes, tuple[bytes, int]] = {}
    for k in r.scan_iter():
        value = r.dump(k)
        assert isinstance(value, bytes)
        dump[k] = (value, int(r.pexpiretime(k)))
    return dump


def restored(dump: dict[bytes, tuple[bytes, int]]) -> fakeredis.FakeRedis:
    """A store of its own with the keys of ``snapshot``, expiring when they did."""
    r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    for k, (value, expires_at) in dump.items():
        r.restore(k, 0, value)
        if expires_at > 0:
            r.pexpireat(k, expires_at)
    return r


def take_all(store: JobStore) -> list[tuple[int, str]]:
    """Every job workers take, bucket by bucket in turn as long as any has one: (bucket, job id) in order."""
    taken: list[tuple[int, str]] = []
    while True:
        before = len(taken)
        for bucket in keys.buckets():
            claim, _ = store.claim_next("echo", bucket=bucket)
            if claim is not None:
                taken.append((bucket, claim.job_id))
        if len(taken) == before:
            return taken


def in_order(taken: list[tuple[int, str]]) -> dict[tuple[str, int], list[str]]:
    """Each tenant's jobs as one bucket gave them out."""
    order: dict[tuple[str, int], list[str]] = {}
    for bucket, job_id in taken:
        order.setdefault((keys.tag_of(job_id), bucket), []).append(job_id)
    return order


@pytest.mark.parametrize(("old", "new"), [(1, 24), (24, 1), (24, 6)])
def test_a_store_moved_between_counts_reads_as_it_was(counting, monkeypatch, old, new):
    monkeypatch.setattr(migration, "connected", lambda client: [])
    r = fakeredis.FakeRedis()
    roots = fill(store_over(r, old))
    before = state(store_over(r, old), roots)

    store_over(r, new)
    report = migration.Rebucketing(r, old, cap=20, keyspace=keys).run()

    after_store = store_over(r, new)
    assert state(after_store, roots) == before
    assert report.moved["job"] == sum(1 for k in r.scan_iter() if b":job:" in k)
    tags = {k.decode().partition("{")[2].partition("}")[0] for k in r.scan_iter(match="ocrgw:{b*")}
    assert tags <= set(keys.bucket_tags(new))
    assert not [k for k in r.scan_iter() if b"usage-moved" in k]
    for tenant, root in zip(TENANTS, roots[4::PER_TENANT], strict=True):
        assert controls.redrive(after_store, root, idempotency=KEY, tenant=tenant).replayed
    if new > 1:
        # Each tenant's ledger grants each bucket what it has in flight there.
        for tenant_root in roots[0::PER_TENANT]:
            tag = keys.tag_of(tenant_root)
            ledger = {text(k): int(v) for k, v in r.hgetall(keys.ledger(tag)).items()}
            grants = {field: n for field, n in ledger.items() if field.startswith("b")}
            in_flight = {f"b{b}": int(r.get(keys.tenant_in_flight(tag, b)) or 0) for b in keys.buckets()}
            assert grants == {b: n for b, n in in_flight.items() if n}


@pytest.mark.parametrize(("old", "new"), [(1, 24), (24, 6), (24, 1)])
def test_queued_work_is_taken_after_the_move_in_the_same_order_per_tenant(counting, monkeypatch, old, new):
    monkeypatch.setattr(migration, "connected", lambda client: [])
    r = fakeredis.FakeRedis()
    fill(store_over(r, old))
    ready_before = {j for lane in LANES for j in entries(r, ready_of(lane))}
    dump = snapshot(r)
    taken_before = take_all(store_over(restored(dump), old))

    store_over(r, new)
    migration.Rebucketing(r, old, cap=20, keyspace=keys).run()
    after = store_over(r, new)
    # Each tenant's jobs sent after the move go behind its own moved ones, in whichever bucket they land.
    late = [after.create_single(echo("late"), owner=Owner(t)).job_id for t in TENANTS for _ in range(6)]
    taken_after = take_all(after)

    moved = [job_id for _, job_id in taken_after if job_id not in late]
    assert sorted(moved) == sorted(job_id for _, job_id in taken_before)
    # Per tenant: four singles and one interactive, two children of the group, the redriven child, the retry due.
    assert len(moved) == len(TENANTS) * 9
    for (tag, _), old_order in in_order(taken_before).items():
        for (other_tag, _), new_order in in_order(taken_after).items():
            if tag == other_tag:
                both = set(old_order) & set(new_order)
                assert [j for j in old_order if j in both] == [j for j in new_order if j in both]
    for (_, bucket), order in in_order(taken_after).items():
        late_at = [i for i, j in enumerate(order) if j in late]
        moved_at = [i for i, j in enumerate(order) if j in ready_before]
        if late_at and moved_at:
            assert min(late_at) > max(moved_at), f"bucket {bucket}: {order}"
    # The retry whose backoff has an hour to run waits in its new bucket's index, as long as it did.
    waiting = entries(r, keys.later)
    assert len(waiting) == len(TENANTS)
    assert all(isinstance(score, float) for score in waiting.values())


@pytest.mark.parametrize("on_cluster", [False, True])
@pytest.mark.parametrize(("old", "new"), [(1, 24), (24, 6)])
def test_a_run_cut_short_at_any_write_is_finished_by_the_next(counting, monkeypatch, old, new, on_cluster):
    """On a cluster, where the old and new keys of a move are in different slots, the run orders its writes
    so that a cut leaves nothing lost or counted twice (``on_cluster``: that order, on one FakeRedis)."""
    monkeypatch.setattr(migration, "connected", lambda client: [])
    reference = fakeredis.FakeRedis()
    roots = fill(store_over(reference, old))
    before = state(store_over(reference, old), roots)
    dump = snapshot(reference)

    def rebucketing(r: fakeredis.FakeRedis, **options: Any) -> migration.Rebucketing:
        run = migration.Rebucketing(r, old, cap=20, **options, keyspace=keys)
        run.on_cluster = on_cluster
        return run

    cut_at = 1
    while True:
        r = restored(dump)
        steps = iter(range(1, cut_at + 1))

        def step(steps: Iterator[int] = steps, cut: int = cut_at) -> None:
            if next(steps, None) == cut:
                raise Cut

        store_over(r, new)
        try:
            rebucketing(r, step=step, batch=3).run()
        except Cut:
            rebucketing(r).run()  # the next run, uncut
            assert state(store_over(r, new), roots) == before, f"cut at write {cut_at}"
            assert not [k for k in r.scan_iter() if b"usage-moved" in k], f"cut at write {cut_at}"
            cut_at += 1
            continue
        break
    print(f"cut at each of {cut_at - 1} writes")
    assert cut_at > 5, "the run was cut at several writes"
