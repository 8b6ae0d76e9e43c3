"""A tenant's cap across buckets: its quota ledger (jobs/tenant_quota.py) and the release's keeping to
a bucket's quota, on fakeredis with Lua, with 4 buckets whatever the suite's count."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import fakeredis
import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from coordinator.sweep import Sweeper
from jobs.ids import tenant_tag
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from jobs.tenant_quota import BucketQuota, TenantQuota, field, shares
from jobs.transitions import Scripts
from tests.keyspace import keys
from tests.unit.conftest import TEST_BUCKETS
from tests.unit.jobs.conftest import SETTINGS

BUCKETS = 4
CAP = 3
TAG = tenant_tag("acme")


@pytest.fixture(autouse=True)
def four_buckets() -> Iterator[None]:
    keys.use_bucket_count(BUCKETS)
    yield
    keys.use_bucket_count(TEST_BUCKETS)


@pytest.fixture
def r() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis(server=fakeredis.FakeServer())


@pytest.fixture
def quota(r) -> TenantQuota:
    return TenantQuota(r, Scripts(r, keys), CAP, keyspace=keys)


def quotas(r, tag: str = TAG) -> list[int]:
    return [int(r.hget(keys.tenant_quota(tag, b), "quota") or 0) for b in range(BUCKETS)]


def grants(q: TenantQuota, tag: str = TAG) -> list[int]:
    ledger = q.ledger(tag)
    return [ledger.get(field(b), 0) for b in range(BUCKETS)]


# -- the scripts -----------------------------------------------------------------------------------


def test_a_grant_never_takes_the_ledger_above_the_cap(quota, r):
    assert quota.grant(TAG, 0, 2) == 2
    assert quota.grant(TAG, 1, 2) == 1  # one left of the cap
    assert quota.grant(TAG, 2, 1) == 0
    assert quotas(r) == [2, 1, 0, 0] and grants(quota) == [2, 1, 0, 0]


def test_a_return_gives_back_only_what_the_bucket_s_children_leave_unused(quota, r):
    quota.grant(TAG, 0, 3)
    r.set(keys.tenant_in_flight(TAG, 0), 2)
    assert quota.give_back(TAG, 0, 3) == 1
    assert quotas(r)[0] == 2 and grants(quota)[0] == 2
    assert quota.give_back(TAG, 0, 3) == 0


def test_a_ceiling_keeps_a_bucket_from_using_quota_the_sweep_takes_back(quota, r):
    quota.grant(TAG, 0, 3)
    r.set(keys.tenant_in_flight(TAG, 0), 3)
    assert quota.give_back(TAG, 0, 2, ceiling=1) == 0
    assert quota.bucket(TAG, 0) == BucketQuota(quota=3, in_flight=3, ceiling=1)
    r.set(keys.tenant_in_flight(TAG, 0), 1)  # two finished: given back at the next return
    assert quota.give_back(TAG, 0, 2, ceiling=1) == 2
    assert quotas(r)[0] == 1 and grants(quota)[0] == 1
    # A grant lifts the ceiling.
    assert quota.grant(TAG, 0, 1) == 1
    assert quota.bucket(TAG, 0).ceiling is None


def test_a_grant_a_reconcile_fenced_out_is_refused_by_the_bucket(quota, r):
    granted, epoch = quota.grant_ledger(TAG, 1, 2)  # ... and the granting process dies here
    assert granted == 2 and quotas(r) == [0, 0, 0, 0] and grants(quota)[1] == 2
    assert quota.grant(TAG, 0, 3) == 1  # the leak: the tenant runs below its cap
    assert quota.reconcile(TAG)
    assert grants(quota) == [1, 0, 0, 0]
    assert not quota.grant_bucket(TAG, 1, granted, epoch)  # too late: fenced
    assert quotas(r) == [1, 0, 0, 0]
    assert quota.grant(TAG, 1, 2) == 2


def test_a_return_the_reconcile_overtook_is_refused_by_the_ledger(quota, r):
    quota.grant(TAG, 0, 3)
    epoch = quota.epoch(TAG)
    assert quota.return_bucket(TAG, 0, 2, None) == 2  # ... and the returning process dies here
    assert grants(quota)[0] == 3 and quotas(r)[0] == 1
    assert quota.reconcile(TAG)
    assert grants(quota)[0] == 1
    assert not quota.return_ledger(TAG, 0, 2, epoch)
    assert grants(quota)[0] == 1


def test_a_reconcile_gives_up_when_the_ledger_moves_under_it(quota, r):
    from jobs.transitions.ledger_open import LEDGER_OPEN
    from jobs.transitions.ledger_settle import LEDGER_SETTLE

    opened = quota.scripts.run(LEDGER_OPEN, keys={"ledger": keys.ledger(TAG)}, args={})
    quota.grant(TAG, 2, 1)  # a grant of the reconcile's own epoch, after its reads
    settled = quota.scripts.run(
        LEDGER_SETTLE, keys={"ledger": keys.ledger(TAG)}, args={"epoch": opened.epoch, "seq": opened.seq, "grants": {}}
    )
    assert settled.code == 0
    assert grants(quota) == [0, 0, 1, 0] and quotas(r) == [0, 0, 1, 0]


def test_shares_go_to_the_buckets_where_groups_wait_in_proportion():
    state = [BucketQuota(3, 3, 2), BucketQuota(0, 0, 1), BucketQuota(0, 1, 0), BucketQuota()]
    assert shares(4, state) == [2, 1, 1, 0]  # 3 of the cap for the waiting buckets, 2:1
    assert shares(3, state[:2], turn=0) == [2, 1]
    assert shares(1, [BucketQuota(0, 0, 1), BucketQuota(0, 0, 1)], turn=0) == [1, 0]
    assert shares(1, [BucketQuota(0, 0, 1), BucketQuota(0, 0, 1)], turn=1) == [0, 1]
    assert shares(3, [BucketQuota(3, 2, 0), BucketQuota()]) == [2, 0]  # nobody waits: each keeps what it uses


# -- any interleaving, any crash --------------------------------------------------------------------

Step = Callable[[], None]


def grant_steps(q: TenantQuota, b: int, k: int) -> Iterator[None]:
    granted, epoch = q.grant_ledger(TAG, b, k)
    yield
    if granted:
        q.grant_bucket(TAG, b, granted, epoch)


def return_steps(q: TenantQuota, b: int, k: int) -> Iterator[None]:
    epoch = q.epoch(TAG)
    yield
    returned = q.return_bucket(TAG, b, k, None)
    yield
    if returned:
        q.return_ledger(TAG, b, returned, epoch)


def reconcile_steps(q: TenantQuota) -> Iterator[None]:
    from jobs.transitions.ledger_open import LEDGER_OPEN
    from jobs.transitions.ledger_settle import LEDGER_SETTLE
    from jobs.transitions.quota_fence import QUOTA_FENCE

    opened = q.scripts.run(LEDGER_OPEN, keys={"ledger": keys.ledger(TAG)}, args={})
    read = {}
    for b in range(BUCKETS):
        yield
        reply = q.scripts.run(QUOTA_FENCE, keys={"quota": keys.tenant_quota(TAG, b)}, args={"epoch": opened.epoch})
        if reply.quota:
            read[field(b)] = reply.quota
    yield
    settle = {"epoch": opened.epoch, "seq": opened.seq, "grants": read}
    q.scripts.run(LEDGER_SETTLE, keys={"ledger": keys.ledger(TAG)}, args=settle)


def use_steps(q: TenantQuota, r, b: int, finish: bool) -> Iterator[None]:
    """A release (one child in flight, if the bucket has room) or a completion: each one script in the bucket."""
    yield
    state = q.bucket(TAG, b)
    if finish:
        if state.in_flight:
            r.decr(keys.tenant_in_flight(TAG, b))
    elif state.in_flight < min(state.quota, state.ceiling if state.ceiling is not None else CAP):
        r.incr(keys.tenant_in_flight(TAG, b))


op = st.one_of(
    st.tuples(st.just("grant"), st.integers(0, BUCKETS - 1), st.integers(1, CAP)),
    st.tuples(st.just("return"), st.integers(0, BUCKETS - 1), st.integers(1, CAP)),
    st.tuples(st.just("reconcile"), st.just(0), st.just(0)),
    st.tuples(st.just("use"), st.integers(0, BUCKETS - 1), st.just(0)),
    st.tuples(st.just("finish"), st.integers(0, BUCKETS - 1), st.just(0)),
)


@hypothesis_settings(max_examples=100, deadline=None)
@given(ops=st.lists(op, min_size=1, max_size=25), data=st.data())
def test_no_interleaving_of_moves_and_crashes_takes_the_buckets_above_the_cap(ops, data):
    keys.use_bucket_count(BUCKETS)
    r = fakeredis.FakeRedis(server=fakeredis.FakeServer())
    q = TenantQuota(r, Scripts(r, keys), CAP, keyspace=keys)

    def start(kind: str, b: int, k: int) -> Iterator[None]:
        if kind == "grant":
            return grant_steps(q, b, k)
        if kind == "return":
            return return_steps(q, b, k)
        if kind == "reconcile":
            return reconcile_steps(q)
        return use_steps(q, r, b, kind == "finish")

    running = [start(*o) for o in ops]
    while running:
        i = data.draw(st.integers(0, len(running) - 1))
        if data.draw(st.integers(0, 9)) == 0:
            running.pop(i)  # the process dies: its remaining steps never run
        else:
            try:
                next(running[i])
            except StopIteration:
                running.pop(i)
        in_flight = [int(r.get(keys.tenant_in_flight(TAG, b)) or 0) for b in range(BUCKETS)]
        assert sum(quotas(r)) <= sum(grants(q)) <= CAP
        assert all(quota >= granted for quota, granted in zip(grants(q), quotas(r), strict=True))
        assert all(f <= quota for f, quota in zip(in_flight, quotas(r), strict=True))
        assert sum(in_flight) <= CAP
    # Whatever leaked, a reconcile with nothing moving puts the ledger back on the buckets.
    assert q.reconcile(TAG)
    assert grants(q) == quotas(r)


# -- the release, the create and the sweep ---------------------------------------------------------


def doc() -> NewJob:
    return NewJob(model="echo", payload=b"%PDF-1.4 x", content_type="application/pdf", pages=1, doc_hash="h")


@pytest.fixture
def store(r) -> JobStore:
    return JobStore(r, replace(SETTINGS, tenant_max_inflight=CAP, store_buckets=BUCKETS))


def in_flight_of(r, tag: str) -> list[int]:
    return [int(r.get(keys.tenant_in_flight(tag, b)) or 0) for b in range(BUCKETS)]


def group_in(store: JobStore, bucket: int, children: int, monkeypatch) -> str:
    """A group of the default tenant whose root is in ``bucket``."""
    from jobs import store as store_module
    from jobs.ids import new_job_id

    monkeypatch.setattr(
        store_module, "new_job_id", lambda tenant, b=None, count=None: new_job_id(tenant, bucket, BUCKETS)
    )
    return store.create_group([doc() for _ in range(children)], GroupRules(max_parallel=0)).job_id


def test_the_release_keeps_to_the_bucket_s_quota_and_the_sweep_moves_it_to_waiting_groups(store, r, monkeypatch):
    first = group_in(store, 0, 5, monkeypatch)
    tag = keys.tag_of(first)
    assert in_flight_of(r, tag) == [3, 0, 0, 0]  # the create took the whole cap for its bucket
    second = group_in(store, 2, 4, monkeypatch)
    assert keys.bucket_of(second) == 2
    assert in_flight_of(r, tag) == [3, 0, 0, 0]  # nothing left: it waits in its bucket
    assert r.zcard(keys.tenant_waiting(tag, 2)) == 1
    sweeper = Sweeper(store, publish=len)
    sweeper.sweep()
    # Both wait: the cap is shared 2:1 or 1:2; bucket 0 keeps its three until two of them finish.
    quota = store.tenant_quota
    assert sum(in_flight_of(r, tag)) <= CAP
    for child in range(3):
        claim = store.claim(keys.child_id(first, child))
        assert claim is not None
        store.complete(claim.job_id, claim.attempt, {"text": "x"})
        assert sum(in_flight_of(r, tag)) <= CAP
        sweeper.sweep()
        assert sum(in_flight_of(r, tag)) <= CAP
    assert in_flight_of(r, tag)[2] >= 1  # the second group runs too now
    assert sum(quotas(r, tag)) <= sum(grants(quota, tag)) <= CAP


def test_a_bucket_s_release_without_quota_releases_nothing(store, r, monkeypatch):
    monkeypatch.setattr(TenantQuota, "ensure_room", lambda *a: 0)  # no quota moved by the create
    group = group_in(store, 1, 2, monkeypatch)
    tag = keys.tag_of(group)
    assert in_flight_of(r, tag) == [0, 0, 0, 0]
    assert r.zcard(keys.tenant_waiting(tag, 1)) == 1
    Sweeper(store, publish=len).sweep()  # grants the bucket the cap, then releases its waiting group
    assert in_flight_of(r, tag) == [0, 2, 0, 0]


def test_with_one_bucket_no_ledger_is_kept(r, monkeypatch):
    keys.use_bucket_count(1)
    one = JobStore(r, replace(SETTINGS, tenant_max_inflight=CAP, store_buckets=1))
    group = one.create_group([doc() for _ in range(5)], GroupRules(max_parallel=0))
    Sweeper(one, publish=len).sweep()
    assert int(r.get(keys.tenant_in_flight(keys.tag_of(group.job_id), 0)) or 0) == CAP
    assert not [k for k in r.keys("*") if b"quota" in k or b"ledger" in k]
    assert one.release_args(group.job_id)["tenant_quota"] == 0


def test_the_sweep_forgets_an_idle_tenant_unless_a_creation_touched_it_since(quota, r):
    quota.touch(TAG)
    [(tag, touched)] = quota.tenants()
    quota.touch(TAG)  # a creation under way
    assert quota.rebalance(TAG, touched=touched)
    assert quota.tenants() == [(TAG, touched + 1)]
    quota.rebalance_all()
    assert quota.tenants() == []


def test_a_creation_grants_its_bucket_only_what_its_free_quota_lacks(quota, r):
    assert quota.ensure_room(TAG, 1, 2) == 2
    assert quota.ensure_room(TAG, 1, 2) == 0  # the bucket has room for it already
    r.set(keys.tenant_in_flight(TAG, 1), 2)
    assert quota.ensure_room(TAG, 1, 5) == 1  # the cap's worth at most, and what the cap has left
    assert quotas(r) == [0, 3, 0, 0]
