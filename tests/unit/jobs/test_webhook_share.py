"""A tenant's webhook share across buckets: with more than one, its claims are counted in its own slot."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest

from jobs import ids, store, webhooks
from jobs.errors import JobNotFound
from jobs.ids import tenant_tag
from jobs.webhooks import Answer, WebhookClaim
from tests.keyspace import keys

from .conftest import Kit, make_kit
from .test_webhooks import next_tick, tenant_single

BUCKETS = 24
# A claim window of a fifth of a second, so that a test can wait for one to run out.
WINDOW = {"webhook_timeout": 0.1, "webhook_claim_margin": 0.1}


@pytest.fixture
def kit(bucket_count, spread, monkeypatch) -> Iterator[Kit]:
    """24 buckets, each new root in the next one; a tenant may have two webhooks in flight.

    Round robin rather than random, so that any two roots are in different buckets.
    """
    keys.use_bucket_count(BUCKETS)
    next_bucket = itertools.count()
    monkeypatch.setattr(
        store,
        "new_job_id",
        lambda tenant=ids.DEFAULT_TENANT, bucket=None, count=None: ids.new_job_id(
            tenant, next(next_bucket) % BUCKETS, BUCKETS
        ),
    )
    yield make_kit(webhook_backoff=10.0, webhook_tenant_concurrency=2, **WINDOW)


def owed(kit: Kit, tenant: str, n: int) -> list[str]:
    """``n`` of the tenant's webhooks due, in more than one bucket."""
    job_ids = [tenant_single(kit, tenant) for _ in range(n)]
    assert len({keys.bucket_of(j) for j in job_ids}) > 1
    return job_ids


def held(kit: Kit, tenant: str) -> dict[str, float]:
    return {
        m.decode(): s for m, s in kit.r.zrange(keys.tenant_webhook_claims(tenant_tag(tenant)), 0, -1, withscores=True)
    }


def test_a_tenant_s_share_holds_across_buckets(kit):
    alpha = owed(kit, "alpha", 6)
    beta = owed(kit, "beta", 3)

    claimed = webhooks.claim_due(kit.store, kit.now_ms(), 20)

    mine = [c.job_id for c in claimed if c.job_id in alpha]
    assert len(mine) == 2 and len([c for c in claimed if c.job_id in beta]) == 2
    assert set(held(kit, "alpha")) == set(mine)
    # The claim in the bucket and the reservation end at the same time.
    for job_id in mine:
        assert kit.r.zscore(keys.webhooks(keys.bucket_of(job_id)), job_id) == held(kit, "alpha")[job_id]
    # The others were held back, due again a sweep later; nothing is claimed meanwhile.
    assert webhooks.claim_due(kit.store, kit.now_ms(), 20) == []
    assert not any(kit.r.exists(keys.tenant_webhooks(tenant_tag("alpha"), b)) for b in keys.buckets())


def test_recording_a_delivery_frees_its_slot(kit):
    alpha = owed(kit, "alpha", 4)
    first, second = (c.job_id for c in webhooks.claim_due(kit.store, kit.now_ms(), 10))
    waiting = [j for j in alpha if j not in (first, second)]

    webhooks.record(kit.store, first, 1, Answer(200))
    assert set(held(kit, "alpha")) == {second}
    for job_id in waiting:
        next_tick(kit, job_id)
    [third] = webhooks.claim(kit.store, waiting)
    assert third.attempt == 1
    # A failed attempt's record frees it too (it is due again after its backoff).
    webhooks.record(kit.store, second, 1, Answer(500, "http_error", "answered 500"))
    assert set(held(kit, "alpha")) == {third.job_id}


def test_a_superseded_record_does_not_free_the_current_claim_s_slot(kit):
    [first, _] = owed(kit, "alpha", 2)
    webhooks.claim(kit.store, [first])
    next_tick(kit, first)  # its claim ran out in the bucket (say) and the sweep claims it again
    assert webhooks.claim(kit.store, [first]) == [WebhookClaim(first, 2)]

    webhooks.record(kit.store, first, 1, Answer(200))

    assert set(held(kit, "alpha")) == {first}
    webhooks.record(kit.store, first, 2, Answer(200))
    assert held(kit, "alpha") == {}


def test_a_reservation_whose_bucket_claim_fails_is_released(kit):
    [job_id, other] = owed(kit, "alpha", 2)
    [claim] = webhooks.claim(kit.store, [job_id])
    webhooks.record(kit.store, job_id, claim.attempt, Answer(200))  # delivered: not due any more

    assert webhooks.claim(kit.store, [job_id]) == []

    assert held(kit, "alpha") == {}
    assert webhooks.claim(kit.store, [other]) == [WebhookClaim(other, 1)]


def test_a_claim_not_due_any_more_keeps_the_live_claim_s_slot(kit):
    [job_id, _] = owed(kit, "alpha", 2)
    webhooks.claim(kit.store, [job_id])
    before = held(kit, "alpha")

    assert webhooks.claim(kit.store, [job_id]) == []  # claimed already: not due

    assert set(held(kit, "alpha")) == {job_id} and held(kit, "alpha")[job_id] >= before[job_id]


def test_a_reservation_left_by_a_crash_holds_its_slot_only_until_its_deadline(kit):
    alpha = owed(kit, "alpha", 3)
    window = int(webhooks.claim_window_seconds(kit.store.settings) * 1000)
    # Two reservations whose bucket step never ran (the sweep died between the steps).
    before = kit.now_ms()
    reserved, fresh = webhooks.reserve(kit.store, alpha[:2], window)
    assert fresh == set(alpha[:2])
    for job_id in alpha[:2]:
        assert before + window <= reserved[job_id] <= kit.now_ms() + window

    # The share is full meanwhile: the third is held back in its bucket.
    assert webhooks.claim(kit.store, [alpha[2]]) == []
    key = keys.tenant_webhook_claims(tenant_tag("alpha"))
    assert kit.r.pexpiretime(key) == max(reserved.values())  # nothing is left behind past the deadline

    time.sleep(window / 1000 + 0.05)
    next_tick(kit, alpha[2])
    assert webhooks.claim(kit.store, [alpha[2]]) == [WebhookClaim(alpha[2], 1)]
    assert set(held(kit, "alpha")) == {alpha[2]}
    # And the two left behind are claimed as usual, their own step 1 again.
    assert [c.job_id for c in webhooks.claim(kit.store, alpha[:2])] == alpha[:1]


def test_a_job_gone_before_its_record_frees_its_slot(kit):
    [job_id] = [tenant_single(kit, "alpha")]
    webhooks.claim(kit.store, [job_id])
    kit.r.delete(keys.job(job_id))
    with pytest.raises(JobNotFound):
        webhooks.record(kit.store, job_id, 1, Answer(200))
    assert held(kit, "alpha") == {}
