"""A tenant's interactive allowance (jobs.interactive_share): places reserved in the tenant's own slot before
a creation in the interactive lane, across every bucket; given back once their root has ended, or when the
root never came and a minute has passed."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace

import pytest

from jobs import controls, ids, store
from jobs.errors import IdempotencyKeyReused, InteractiveLaneFull
from jobs.interactive_share import UNCLAIMED_MS
from jobs.records import GroupRules, Idempotency, Owner
from tests.keyspace import keys

from .conftest import Kit, make_kit

BUCKETS = 24
INTERACTIVE = "interactive"


@pytest.fixture
def kit(bucket_count, spread, monkeypatch) -> Iterator[Kit]:
    """24 buckets, each new root in the next one, so that a tenant's interactive jobs are in several."""
    keys.use_bucket_count(BUCKETS)
    next_bucket = itertools.count()
    monkeypatch.setattr(
        store,
        "new_job_id",
        lambda tenant=ids.DEFAULT_TENANT, bucket=None, count=None: ids.new_job_id(
            tenant, next(next_bucket) % BUCKETS if bucket is None else bucket, BUCKETS
        ),
    )
    yield make_kit()


def owner(limit: int, tenant: str = "acme") -> Owner:
    return Owner(tenant, interactive_max_inflight=limit)


def single(kit: Kit, limit: int, tenant: str = "acme", **kw) -> str:
    return kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE), owner=owner(limit, tenant), **kw).job_id


def places(kit: Kit, tenant: str = "acme") -> dict[str, int]:
    held = kit.r.hgetall(keys.tenant_interactive(ids.tenant_tag(tenant)))
    return {root.decode(): int(value.decode().partition("|")[0]) for root, value in held.items()}


def test_the_allowance_holds_across_buckets_and_stores_nothing_when_full(kit):
    jobs = [single(kit, 3) for _ in range(3)]
    assert len({keys.bucket_of(j) for j in jobs}) == 3
    before = kit.snapshot()

    with pytest.raises(InteractiveLaneFull) as refused:
        single(kit, 3)

    assert (refused.value.in_use, refused.value.limit) == (3, 3)
    assert kit.snapshot() == before
    # Another tenant's allowance is its own.
    single(kit, 3, tenant="globex")


def test_an_ended_root_gives_its_places_back_to_the_next_creation_that_finds_the_allowance_full(kit):
    first, second = single(kit, 2), single(kit, 2)
    controls.cancel(kit.store, first)
    assert set(places(kit)) == {first, second}  # nobody has looked yet

    third = single(kit, 2)

    assert set(places(kit)) == {second, third}


def test_a_group_takes_the_places_it_may_run_at_once(kit):
    docs = [replace(d, priority=INTERACTIVE) for d in kit.docs(5)]
    capped = kit.store.create_group(docs, GroupRules(max_parallel=2, priority=INTERACTIVE), owner=owner(8)).job_id
    uncapped = kit.store.create_group(docs, GroupRules(max_parallel=0, priority=INTERACTIVE), owner=owner(8)).job_id

    assert places(kit) == {capped: 2, uncapped: 5}
    with pytest.raises(InteractiveLaneFull):
        single(kit, 7)  # seven held, by a key that allows seven


def test_batch_work_and_an_owner_without_an_allowance_take_no_place(kit):
    kit.store.create_single(kit.doc(), owner=owner(0))
    kit.store.create_group(kit.docs(3), GroupRules(max_parallel=0), owner=owner(0))
    kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE), owner=Owner("acme"))

    assert places(kit) == {}


def test_a_root_not_in_the_store_holds_its_places_for_a_minute_only(kit):
    tag = ids.tenant_tag("acme")
    ghost = ids.new_job_id("acme")
    now_ms = int(kit.now_ms())
    kit.r.hset(keys.tenant_interactive(tag), ghost, f"1|{now_ms}")
    with pytest.raises(InteractiveLaneFull):
        single(kit, 1)  # its creation may still be on its way

    kit.r.hset(keys.tenant_interactive(tag), ghost, f"1|{now_ms - UNCLAIMED_MS - 1}")
    job = single(kit, 1)

    assert set(places(kit)) == {job}


def test_a_replayed_creation_keeps_one_reservation_and_a_reused_key_gives_its_places_back(kit):
    idem = Idempotency("k1", "fingerprint-1")
    job = single(kit, 2, idempotency=idem)
    assert single(kit, 2, idempotency=idem) == job
    assert places(kit) == {job: 1}

    with pytest.raises(IdempotencyKeyReused):
        single(kit, 2, idempotency=Idempotency("k1", "fingerprint-2"))

    assert places(kit) == {job: 1}


def test_a_retried_creation_is_replayed_while_its_job_fills_the_allowance(kit):
    idem = Idempotency("k1", "fingerprint-1")
    job = single(kit, 1, idempotency=idem)

    # Its job is queued and holds the one place: the retry is answered with it, not refused.
    assert single(kit, 1, idempotency=idem) == job
    with pytest.raises(IdempotencyKeyReused):
        single(kit, 1, idempotency=Idempotency("k1", "fingerprint-2"))
    assert places(kit) == {job: 1}


def interactive_group(kit: Kit, children: int, max_parallel: int, limit: int) -> str:
    docs = [replace(d, priority=INTERACTIVE) for d in kit.docs(children)]
    rules = GroupRules(max_parallel=max_parallel, priority=INTERACTIVE)
    return kit.store.create_group(docs, rules, owner=owner(limit)).job_id


def test_a_higher_cap_takes_its_places_first_and_is_refused_when_they_do_not_fit(kit):
    group = interactive_group(kit, 10, max_parallel=1, limit=4)

    with pytest.raises(InteractiveLaneFull):
        controls.set_cap(kit.store, group, 100, interactive_limit=4)
    assert places(kit) == {group: 1} and kit.job(group)["max_parallel"] == "1"
    assert kit.counts(group)["queued"] == 1

    controls.set_cap(kit.store, group, 3, interactive_limit=4)
    assert places(kit) == {group: 3} and kit.counts(group)["queued"] == 3
    # A lower cap keeps its places until the group ends.
    controls.set_cap(kit.store, group, 2, interactive_limit=4)
    assert places(kit) == {group: 3}


def test_a_redrive_of_an_ended_interactive_group_takes_places_again(kit):
    group = interactive_group(kit, 2, max_parallel=0, limit=2)
    for child in kit.child_ids(group, 2):
        claim = kit.claim(child)
        kit.store.fail(child, claim.attempt, "bad_document", "no")
    assert kit.status(group) == "failed"
    other = single(kit, 2)  # finds the allowance full: the ended group's places go back
    assert places(kit) == {other: 1}

    with pytest.raises(InteractiveLaneFull):
        controls.redrive(kit.store, group, idempotency=Idempotency("r1", "redrive"), interactive_limit=2)
    assert kit.job(group)["redrives"] == "0" and kit.status(group) == "failed"
    assert not kit.r.exists(keys.idempotency(ids.DEFAULT_TENANT, "r1"))  # the key is as unused

    controls.cancel(kit.store, other)
    redriven = controls.redrive(kit.store, group, idempotency=Idempotency("r1", "redrive"), interactive_limit=2)
    assert redriven.count == 2 and places(kit) == {group: 2}
