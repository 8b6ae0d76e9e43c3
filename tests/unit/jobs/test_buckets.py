"""The store on many buckets (OCRGW_STORE_BUCKETS = 24 here, whatever the suite's count): every transition
touches one hash slot, a wake-up takes from its own bucket, the listing merges the buckets, and the
sweep goes bucket by bucket under each one's lock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import fakeredis
import pytest
from redis.commands.core import SortedSetCommands
from redis.crc import key_slot

from coordinator.sweep import Sweeper
from jobs import controls, store, webhooks
from jobs.config import InvalidSettings, Settings
from jobs.contract import Reply
from jobs.errors import GroupNotFinished, IdempotencyKeyReused
from jobs.ids import DEFAULT_TENANT, new_job_id, tenant_tag
from jobs.queries import JobQueries
from jobs.records import GroupRules, Idempotency, NewJob, Owner
from jobs.tenant_quota import TenantQuota
from jobs.transitions import TRANSITIONS, Scripts
from jobs.transitions.spec import PULL
from jobs.webhooks import Answer
from tests.keyspace import keys
from tests.unit.jobs.conftest import Kit, make_kit, text
from tests.unit.jobs.test_queries import write_root

BUCKETS = 24
URL = "https://receiver.example/hook"


@pytest.fixture
def kit(bucket_count, spread) -> Iterator[Kit]:
    """A kit over 24 buckets, its roots spread over them as outside the tests."""
    keys.use_bucket_count(BUCKETS)
    kit = make_kit()
    yield kit
    kit.assert_tenant_in_flight()


def in_bucket(monkeypatch: pytest.MonkeyPatch, bucket: int) -> None:
    """The roots created from now on (without an Idempotency-Key) go to ``bucket``."""
    monkeypatch.setattr(store, "new_job_id", lambda tenant, b=None, count=None: new_job_id(tenant, bucket, BUCKETS))


def doc(callback_url: str = "") -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=b"page", callback_url=callback_url)


def slot(key: str) -> int:
    return key_slot(key.encode())


# -- (a) every transition touches one slot ---------------------------------------------------------


class OneSlot:
    """Wraps the store's script runner: each call's declared keys must share a slot, and every key the
    script wrote, created or deleted must be in that slot too (read off the whole store before and after)."""

    def __init__(self, kit: Kit, monkeypatch: pytest.MonkeyPatch):
        self.ran: set[str] = set()
        self.slots: set[int] = set()
        real_run = Scripts.run

        def run(scripts, transition, keys, args):  # as Scripts.run names them (callers pass them by name)
            declared = {slot(k) for k in transition.pack(keys, args)[0]}
            assert len(declared) == 1, f"{transition.name}: declared keys in slots {declared}: {keys}"
            before = kit.snapshot()
            reply = real_run(scripts, transition, keys, args)
            after = kit.snapshot()
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            strays = {k for k in changed if slot(k) not in declared}
            assert not strays, f"{transition.name} touched keys of other slots: {strays}"
            self.ran.add(transition.name)
            self.slots |= declared
            return reply

        def run_all(scripts, transition, calls):
            # Pipelined calls one at a time, each checked as above.
            return [run(scripts, transition, call_keys, call_args) for call_keys, call_args in calls]

        monkeypatch.setattr(Scripts, "run", run)
        monkeypatch.setattr(Scripts, "run_all", run_all)


def test_every_transition_touches_one_slot(kit, monkeypatch):
    checked = OneSlot(kit, monkeypatch)
    s = kit.store

    single = s.create_single(doc(URL)).job_id
    key = Idempotency("order-1", "f1")
    group = s.create_group([doc() for _ in range(4)], GroupRules(max_parallel=2), idempotency=key)
    # The key's record and the root it made share a bucket, so one slot.
    assert keys.bucket_of(group.job_id) == keys.bucket_of_idempotency(DEFAULT_TENANT, "order-1")
    assert slot(keys.idempotency(DEFAULT_TENANT, "order-1")) == slot(keys.job(group.job_id))
    assert s.create_group([doc() for _ in range(4)], GroupRules(2), idempotency=key).replayed

    claim = kit.claim(single)
    assert s.heartbeat(single, claim.attempt)
    assert s.report_progress(single, claim.attempt, "ocr", 0.5)
    s.complete(single, claim.attempt, {"text": "x"})

    bucket = keys.bucket_of(group.job_id)
    assert {(d.task, d.bucket) for d in group.dispatches} == {(PULL, bucket)}
    first, _ = s.claim_next("echo", "batch", bucket)
    assert first is not None and keys.root_of(first.job_id) == group.job_id
    s.retry(first.job_id, first.attempt, 0, "transient", "try again")
    second = kit.claim(keys.child_id(group.job_id, 1))
    kit.expire_lease(second.job_id)
    assert s.reclaim(s.expired_leases(kit.now_ms(), 10)).requeued
    kit.make_stale(first.job_id)
    assert s.republish(s.stale_queued(kit.now_ms(), 10))
    controls.set_cap(s, group.job_id, 3)

    later = s.create_group([doc() for _ in range(2)], GroupRules(1), release=False).job_id
    # What it answers are wake-ups, none when those on their way count for its child already (its
    # bucket may be the group's): the child's status says it was released.
    s.release(s.due_parents(kit.now_ms(), 10))
    assert kit.status(keys.child_id(later, 0)) == "queued"
    controls.cancel(s, later)
    controls.cancel(s, group.job_id)

    failing = s.create_group([doc()], GroupRules(1)).job_id
    child = kit.claim(keys.child_id(failing, 0))
    s.fail(child.job_id, child.attempt, "bad_document", "no")
    assert controls.redrive(s, failing, idempotency=Idempotency("again", "f2")).count == 1

    [webhook] = webhooks.claim_due(s, kit.now_ms(), 10)
    webhooks.record(s, webhook.job_id, webhook.attempt, Answer(200))
    assert s.record_pdf(single, kit.job(single)["finished_at"], pdf=b"%PDF-1.7")
    s.expire([single])
    Sweeper(s, publish=len).sweep()

    # A tenant's interactive allowance (jobs.interactive_share): its own slot, then the root's for the creation.
    allowed = Owner(DEFAULT_TENANT, interactive_max_inflight=4)
    assert not s.create_single(replace(doc(), priority="interactive"), owner=allowed).replayed

    # A tenant's quota ledger (jobs.tenant_quota): its own slot, each bucket's quota in the bucket's.
    quota = TenantQuota(kit.r, s.scripts, cap=3, keyspace=keys)
    tag = tenant_tag("quota")  # a tenant with nothing else in the store, so that the rebalance forgets it
    quota.touch(tag)
    assert quota.grant(tag, bucket, 2) == 2
    assert quota.give_back(tag, bucket, 2) == 2
    assert quota.reconcile(tag)
    assert quota.rebalance(tag, touched=1)
    assert quota.tenants() == []

    assert checked.ran == {t.name for t in TRANSITIONS}
    assert len(checked.slots) > 1  # the roots were spread: more than one slot took part


# -- wake-ups and a finishing worker's next job stay in their bucket ----------------------------------


def test_a_wake_up_takes_from_its_own_bucket_and_a_finishing_worker_from_its_job_s(kit, monkeypatch):
    s = kit.store
    in_bucket(monkeypatch, 3)
    running, waiting_here = s.create_single(doc()), s.create_single(doc())
    in_bucket(monkeypatch, 17)
    elsewhere = s.create_single(doc())
    assert [d.bucket for d in running.dispatches + elsewhere.dispatches] == [3, 17]

    assert s.claim_next("echo", "batch", 5) == (None, [])  # nothing is ready in bucket 5
    claim, _ = s.claim_next("echo", "batch", 3)
    assert claim.job_id == running.job_id

    # The next job of the same model comes from the finishing job's bucket, though another is older elsewhere.
    completion = s.complete(claim.job_id, claim.attempt, {"text": "x"}, take_next="echo")
    assert completion.next_claim.job_id == waiting_here.job_id
    completion = s.complete(waiting_here.job_id, completion.next_claim.attempt, {"text": "x"}, take_next="echo")
    assert completion.next_claim is None
    assert kit.status(elsewhere.job_id) == "queued"
    assert kit.ready(bucket=17) == [elsewhere.job_id]


# -- a redrive's Idempotency-Key holds across buckets --------------------------------------------------


def failed_group(kit: Kit, monkeypatch: pytest.MonkeyPatch, bucket: int) -> str:
    """A group of one child in ``bucket``, ended failed."""
    in_bucket(monkeypatch, bucket)
    parent = kit.store.create_group([doc()], GroupRules(1)).job_id
    child = kit.claim(keys.child_id(parent, 0))
    kit.store.fail(child.job_id, child.attempt, "bad_document", "no")
    assert kit.status(parent) == "failed"
    return parent


def retry_request(parent: str, key: str = "retry-1") -> Idempotency:
    # As the gateway makes it: the fingerprint is of the request (its path and options), not of the key.
    return Idempotency(key, f"/jobs/{parent}/retry|False")


def test_two_groups_in_two_buckets_redriven_with_one_key_run_once(kit, monkeypatch):
    first, second = failed_group(kit, monkeypatch, 3), failed_group(kit, monkeypatch, 17)
    assert keys.slot_of(keys.bucket_tag(3)) != keys.slot_of(keys.bucket_tag(17))

    assert controls.redrive(kit.store, first, idempotency=retry_request(first)).count == 1
    with pytest.raises(IdempotencyKeyReused):
        controls.redrive(kit.store, second, idempotency=retry_request(second))

    assert kit.status(keys.child_id(second, 0)) == "failed" and kit.job(second)["redrives"] == "0"
    again = controls.redrive(kit.store, first, idempotency=retry_request(first))
    assert again.replayed and kit.job(first)["redrives"] == "1"
    # The key's record is in the key's bucket, as a creation's: settled, no longer pending.
    record = kit.r.hgetall(keys.idempotency(DEFAULT_TENANT, "retry-1"))
    assert record == {b"id": first.encode(), b"fingerprint": f"/jobs/{first}/retry|False".encode()}


def test_a_key_of_a_creation_is_refused_to_a_redrive_and_a_redrive_s_to_a_creation(kit, monkeypatch):
    parent = failed_group(kit, monkeypatch, 5)
    kit.store.create_single(doc(), idempotency=Idempotency("made-1", "creation"))
    with pytest.raises(IdempotencyKeyReused):
        controls.redrive(kit.store, parent, idempotency=retry_request(parent, "made-1"))
    controls.redrive(kit.store, parent, idempotency=retry_request(parent, "retry-2"))
    with pytest.raises(IdempotencyKeyReused):
        kit.store.create_single(doc(), idempotency=Idempotency("retry-2", "creation"))


def test_a_key_taken_by_a_caller_that_died_before_its_redrive_holds_and_its_request_finishes(kit, monkeypatch):
    first, second = failed_group(kit, monkeypatch, 2), failed_group(kit, monkeypatch, 20)
    # The caller took the key, then died: no redrive ran.
    controls._reserve_key(kit.store, "take", first, retry_request(first), DEFAULT_TENANT, "died")

    with pytest.raises(IdempotencyKeyReused):
        controls.redrive(kit.store, second, idempotency=retry_request(second))
    redriven = controls.redrive(kit.store, first, idempotency=retry_request(first))
    assert (redriven.count, redriven.replayed) == (1, False)
    assert controls.redrive(kit.store, first, idempotency=retry_request(first)).replayed


def test_a_refused_attempt_s_free_leaves_the_key_a_later_attempt_took_and_redrove_with(kit, monkeypatch):
    first, second = failed_group(kit, monkeypatch, 6), failed_group(kit, monkeypatch, 19)
    request = retry_request(first)
    # Attempt A takes the key (its redrive is then refused); the same request sent again (B) finds it pending.
    assert controls._reserve_key(kit.store, "take", first, request, DEFAULT_TENANT, "a").code == Reply.OK
    taken_again = controls._reserve_key(kit.store, "take", first, request, DEFAULT_TENANT, "b")
    assert (taken_again.code, taken_again.pending) == (Reply.REPLAYED, 1)

    # A's free lands before B, whose redrive ran, settles: it frees nothing of B's.
    assert controls._reserve_key(kit.store, "free", first, request, DEFAULT_TENANT, "a").code == Reply.NOTHING
    assert controls._reserve_key(kit.store, "settle", first, request, DEFAULT_TENANT, "b").code == Reply.OK

    with pytest.raises(IdempotencyKeyReused):
        controls.redrive(kit.store, second, idempotency=retry_request(second))
    assert kit.job(second)["redrives"] == "0"


def test_a_redrive_whose_caller_died_before_settling_its_key_is_replayed_not_run_again(kit, monkeypatch):
    parent = failed_group(kit, monkeypatch, 9)
    real = controls._reserve_key

    def dies_before_settling(store, action, *args):
        if action == "settle":
            raise ConnectionError("the caller died here")
        return real(store, action, *args)

    monkeypatch.setattr(controls, "_reserve_key", dies_before_settling)
    with pytest.raises(ConnectionError):
        controls.redrive(kit.store, parent, idempotency=retry_request(parent))
    monkeypatch.setattr(controls, "_reserve_key", real)
    # Ended failed again, so that a second run would send the child again.
    child = kit.claim(keys.child_id(parent, 0))
    kit.store.fail(child.job_id, child.attempt, "bad_document", "no")

    again = controls.redrive(kit.store, parent, idempotency=retry_request(parent))

    assert again.replayed and kit.job(parent)["redrives"] == "1" and kit.status(parent) == "failed"
    assert b"pending" not in kit.r.hgetall(keys.idempotency(DEFAULT_TENANT, "retry-1"))


def test_a_refused_redrive_leaves_its_key_unused(kit, monkeypatch):
    in_bucket(monkeypatch, 4)
    running = kit.store.create_group([doc()], GroupRules(1)).job_id
    with pytest.raises(GroupNotFinished):
        controls.redrive(kit.store, running, idempotency=retry_request(running))
    parent = failed_group(kit, monkeypatch, 14)
    assert controls.redrive(kit.store, parent, idempotency=retry_request(parent)).count == 1


# -- (c) the listing merges the buckets ----------------------------------------------------------------


def listing_of(count: int, roots: list[tuple[str, str, str, int]], limit: int, **filters) -> list[str | None]:
    keys.use_bucket_count(count)
    redis = fakeredis.FakeRedis()
    for job_id, kind, status, created_at in roots:
        write_root(redis, job_id, kind, status, created_at)
    queries, seen, cursor = JobQueries(redis, keys), list[str | None](), None
    while True:
        page = queries.list_jobs(limit=limit, cursor=cursor, **filters)
        assert len(page.jobs) <= limit
        seen += [j["id"] for j in page.jobs]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


@pytest.mark.parametrize("filters", [{}, {"status": "completed"}, {"kind": "parent"}])
def test_the_listing_over_24_buckets_pages_as_over_one(bucket_count, filters):
    tag = tenant_tag(DEFAULT_TENANT)
    roots = [
        # Few distinct times, so that the cursor's tie on the id is met across buckets too.
        (
            f"{tag}{n * 2749 % 65536:04x}{n:016x}",
            ("single", "parent")[n % 2],
            ("queued", "completed")[n % 3 // 2],
            n % 7,
        )
        for n in range(60)
    ]
    keys.use_bucket_count(BUCKETS)
    assert len({keys.bucket_of(r[0]) for r in roots}) == BUCKETS
    for limit in (1, 4, 25):
        assert listing_of(BUCKETS, roots, limit, **filters) == listing_of(1, roots, limit, **filters)


def test_a_listing_page_reads_limit_plus_one_of_each_set_of_each_bucket(bucket_count, monkeypatch):
    keys.use_bucket_count(BUCKETS)
    redis = fakeredis.FakeRedis()
    tag = tenant_tag(DEFAULT_TENANT)
    for n in range(500):
        write_root(redis, f"{tag}{n:04x}{n:016x}", "single", "completed", n)
    asked: list[int] = []
    real = SortedSetCommands.zrevrangebyscore

    def zrevrangebyscore(self, name, high, low, start=None, num=None, **kw):
        asked.append(num)
        return real(self, name, high, low, start=start, num=num, **kw)

    monkeypatch.setattr(SortedSetCommands, "zrevrangebyscore", zrevrangebyscore)
    page = JobQueries(redis, keys).list_jobs(kind="single", status="completed", limit=10)
    assert [j["created_at"] for j in page.jobs] == [str(n) for n in range(499, 489, -1)]
    assert asked == [11] * BUCKETS


# -- (d) sweepers share the buckets ---------------------------------------------------------------------


def stale_single(kit: Kit, monkeypatch: pytest.MonkeyPatch, bucket: int) -> str:
    in_bucket(monkeypatch, bucket)
    job_id = kit.store.create_single(doc()).job_id
    kit.make_stale(job_id)
    return job_id


def recorder(published: list) -> Callable[[list], int]:
    """A publisher that keeps what it is given."""

    def publish(dispatches: list) -> int:
        published.extend(dispatches)
        return len(dispatches)

    return publish


def republished_by(sweep: Callable[[], object], published: list) -> set[str]:
    published.clear()
    sweep()
    return {d.job_id for d in published}


def test_a_sweep_leaves_the_buckets_another_holds_and_sweeps_them_once_free(kit, monkeypatch):
    s = kit.store
    held, free = stale_single(kit, monkeypatch, 3), stale_single(kit, monkeypatch, 11)
    published: list = []
    sweeper = Sweeper(s, publish=recorder(published))

    assert s.try_lock_sweep("another coordinator", 60_000, 3)
    assert republished_by(sweeper.sweep, published) == {free}
    assert text(kit.r.get(keys.sweep_lock(3))) == "another coordinator"  # its lock is untouched
    assert not any(kit.r.exists(keys.sweep_lock(b)) for b in range(BUCKETS) if b != 3)  # the sweep's are gone

    s.unlock_sweep("another coordinator", 3)  # still stale: the sweep left it
    assert republished_by(sweeper.sweep, published) == {held}


def test_two_sweepers_on_different_buckets_do_no_double_work_and_report_their_own(kit, monkeypatch):
    s = kit.store
    jobs = {b: stale_single(kit, monkeypatch, b) for b in (2, 9)}
    a_published: list = []
    b_published: list = []
    a = Sweeper(s, publish=recorder(a_published))
    b = Sweeper(s, publish=recorder(b_published))

    # Each sweeps one bucket while the other holds it (as two coordinators' ticks overlapping).
    assert s.try_lock_sweep("b", 60_000, 9)
    report_a = a.sweep_bucket(2)
    assert a.sweep_bucket(9) is None
    s.unlock_sweep("b", 9)
    report_b = b.sweep_bucket(9)
    assert report_a is not None and report_b is not None

    assert {d.job_id for d in a_published} == {jobs[2]} and {d.job_id for d in b_published} == {jobs[9]}
    assert report_a.republished == report_b.republished == 1
    # Nothing is left due for anyone.
    assert a.sweep().republished == 0


def test_a_tick_that_finds_every_bucket_locked_is_skipped_and_the_report_sums_the_buckets(kit, monkeypatch):
    s = kit.store
    for b in (0, 5, 23):
        stale_single(kit, monkeypatch, b)
    report = Sweeper(s, publish=len).sweep()
    assert not report.skipped and report.republished == report.published == 3

    for b in range(BUCKETS):
        assert s.try_lock_sweep("other", 60_000, b)
    assert Sweeper(s, publish=len).sweep().skipped


# -- the setting ------------------------------------------------------------------------------------------

CLUSTER = {"OCRGW_REDIS_CLUSTER": "127.0.0.1:7000", "CELERY_BROKER_URL": "redis://127.0.0.1:6379/0"}


def test_the_bucket_count_defaults_to_1_or_24_on_a_cluster_and_is_bounded():
    assert Settings.from_env({}).store_buckets == 1
    assert Settings.from_env(CLUSTER).store_buckets == 24
    assert Settings.from_env({**CLUSTER, "OCRGW_STORE_BUCKETS": "6"}).store_buckets == 6
    for bad in ("0", "1025", "-1", "x"):
        with pytest.raises(InvalidSettings, match="OCRGW_STORE_BUCKETS: must be a whole number from 1 to 1024"):
            Settings.from_env({"OCRGW_STORE_BUCKETS": bad})


def test_the_tenant_cap_is_taken_with_any_bucket_count():
    """Across buckets a tenant's cap is dealt out by its quota ledger (jobs.tenant_quota)."""
    assert Settings.from_env({"OCRGW_TENANT_MAX_INFLIGHT": "5"}).tenant_max_inflight == 5
    assert Settings.from_env({**CLUSTER, "OCRGW_STORE_BUCKETS": "1", "OCRGW_TENANT_MAX_INFLIGHT": "5"})
    assert Settings.from_env({"OCRGW_STORE_BUCKETS": "4", "OCRGW_TENANT_MAX_INFLIGHT": "5"}).store_buckets == 4
    assert Settings.from_env({**CLUSTER, "OCRGW_TENANT_MAX_INFLIGHT": "5"}).tenant_max_inflight == 5
