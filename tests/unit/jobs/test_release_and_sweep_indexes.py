"""release on the sweep path, the indexes the sweep reads, and the sweep lock."""

from jobs.contract import Reply
from tests.keyspace import keys


def test_a_due_parent_is_released_up_to_its_cap_and_leaves_the_due_index(kit, replies):
    parent = kit.group(5, max_parallel=2, release=False).job_id
    c = kit.child_ids(parent, 5)
    assert kit.store.due_parents(kit.now_ms(), 10) == [parent]

    assert kit.store.release(kit.store.due_parents(kit.now_ms(), 10)) == kit.wake_ups(2)
    reply = replies.last("release")
    assert (reply.code, reply.finalized) == (Reply.OK, False)
    assert reply.released == kit.wake_ups(2)
    assert kit.ready() == c[:2]
    assert kit.statuses(parent, 5) == ["queued", "queued", "held", "held", "held"]
    assert kit.members(keys.children(parent, "held")) == set(c[2:])
    assert kit.members(keys.queued) == set(c[:2])
    assert kit.store.due_parents(kit.now_ms(), 10) == []

    # A second sweep finds no free slot and changes nothing.
    before = kit.snapshot()
    assert kit.store.release([parent]) == []
    assert kit.snapshot() == before


def test_an_uncapped_group_is_released_batch_by_batch(kit, settings):
    batch = settings.release_batch
    n = 2 * batch + 1
    parent = kit.group(n, max_parallel=0).job_id
    c = kit.child_ids(parent, n)
    assert kit.counts(parent)["queued"] == batch
    assert kit.members(keys.due_parents) == {parent}

    assert kit.store.release([parent]) == kit.wake_ups(batch)
    assert kit.ready() == c[: 2 * batch]
    assert kit.members(keys.due_parents) == {parent}
    assert kit.store.release([parent]) == kit.wake_ups(1)
    assert kit.ready() == c
    assert kit.members(keys.due_parents) == set()
    assert kit.counts(parent)["queued"] == n
    assert kit.store.release([parent]) == []


def test_a_capped_parent_left_due_by_the_batch_limit_leaves_it_once_its_cap_is_reached(new_kit):
    kit = new_kit(release_batch=1)
    parent = kit.group(4, max_parallel=2).job_id
    assert kit.counts(parent)["queued"] == 1
    assert kit.members(keys.due_parents) == {parent}
    assert kit.store.release([parent]) == kit.wake_ups(1)
    assert kit.ready() == kit.child_ids(parent, 2)
    assert kit.members(keys.due_parents) == set()


def test_an_all_terminal_parent_that_was_never_finalized_is_finalized_once(kit, r, replies):
    # As if the transition finishing its last child had stopped short of the
    # parent's own terminal step: the counts say done, the status does not.
    parent = kit.group(2, max_parallel=2, release=False).job_id
    r.hset(keys.job(parent), mapping={"n_held": 0, "n_completed": 1, "n_failed": 1})
    r.delete(keys.children(parent, "held"))
    r.zadd(keys.due_parents(keys.bucket_of(parent)), {parent: 1})

    assert kit.store.release([parent]) == []
    assert (replies.last("release").code, replies.last("release").finalized) == (Reply.OK, True)
    p = kit.job(parent)
    assert (p["status"], p["error_code"]) == ("failed", "child_failed")
    assert p["finished_at"] != ""
    assert [(e["operation"], e["job_id"], e["status"]) for e in kit.events(parent)] == [("job", parent, "failed")]
    assert kit.active_parents() == set()
    assert kit.members(keys.due_parents) == set()

    before = kit.snapshot()
    assert kit.store.release([parent]) == []
    assert (replies.last("release").finalized, replies.last("release").released) == (False, [])
    assert kit.snapshot() == before


def test_an_all_completed_parent_is_finalized_completed(kit, r):
    parent = kit.group(2, max_parallel=1, release=False).job_id
    r.hset(keys.job(parent), mapping={"n_held": 0, "n_completed": 2})
    r.delete(keys.children(parent, "held"))
    kit.store.release([parent])
    assert (kit.job(parent)["status"], kit.job(parent)["error_code"]) == ("completed", "")


def test_release_of_a_terminal_parent_only_clears_the_due_index(kit, r, replies):
    parent = kit.group(1, max_parallel=1).job_id
    claim = kit.claim(keys.child_id(parent, 0))
    kit.store.complete(claim.job_id, claim.attempt, {})
    r.zadd(keys.due_parents(keys.bucket_of(parent)), {parent: 1})
    events = kit.events(parent)
    assert kit.store.release([parent]) == []
    assert (replies.last("release").finalized, replies.last("release").released) == (False, [])
    assert kit.members(keys.due_parents) == set()
    assert kit.events(parent) == events


def test_release_of_an_id_that_names_no_parent_clears_the_due_index(kit, r, replies):
    single = kit.single().job_id
    for job_id in (single, "9" * 32):
        r.zadd(keys.due_parents(keys.bucket_of(job_id)), {job_id: 1})
    before = kit.job(single)
    assert kit.store.release([single, "9" * 32]) == []
    assert [r.code for r in replies["release"]] == [Reply.NOTHING, Reply.NOTHING]
    assert kit.members(keys.due_parents) == set()
    assert kit.job(single) == before
    assert kit.store.release([]) == []


def test_due_parents_honours_now_and_limit(kit, r):
    a = kit.group(1, max_parallel=1, release=False).job_id
    b = kit.group(1, max_parallel=1, release=False).job_id
    future = kit.group(1, max_parallel=1, release=False).job_id
    r.zadd(keys.due_parents(keys.bucket_of(future)), {future: kit.now_ms() + 60_000})
    now = kit.now_ms()
    assert set(kit.store.due_parents(now, 10)) == {a, b}
    assert len(kit.store.due_parents(now, 1)) == 1
    assert kit.store.active_parent_count() == 3


def test_a_single_job_is_never_on_the_parent_indexes(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {})
    assert kit.store.active_parent_count() == 0
    assert kit.members(keys.due_parents) == set()


# -- the sweep lock ------------------------------------------------------------------


def test_the_sweep_lock_is_exclusive_and_expires(kit, r):
    assert kit.store.try_lock_sweep("tick-1", 5_000) is True
    assert kit.store.try_lock_sweep("tick-2", 5_000) is False
    assert r.get(keys.sweep_lock(0)) == b"tick-1"
    assert 0 < r.pttl(keys.sweep_lock(0)) <= 5_000


def test_only_the_holder_unlocks_the_sweep(kit, r):
    assert kit.store.try_lock_sweep("tick-1", 5_000)
    kit.store.unlock_sweep("tick-2")
    assert r.get(keys.sweep_lock(0)) == b"tick-1"
    assert kit.store.try_lock_sweep("tick-2", 5_000) is False

    kit.store.unlock_sweep("tick-1")
    assert not r.exists(keys.sweep_lock(0))
    assert kit.store.try_lock_sweep("tick-2", 5_000) is True
    kit.store.unlock_sweep("tick-1")  # an overrun tick cannot free its successor's lock
    assert r.get(keys.sweep_lock(0)) == b"tick-2"


def test_draining_flag(kit):
    assert kit.store.is_draining() is False
    kit.store.set_draining(True)
    assert kit.store.is_draining() is True
    kit.store.set_draining(False)
    assert kit.store.is_draining() is False
