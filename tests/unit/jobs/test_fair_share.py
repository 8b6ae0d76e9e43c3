"""Fair share between tenants: the tenant cap, the tenant's waiting line, kept slots that give way, the sweep's order.

Tenants are made as the gateway makes them: a group's id starts with its
tenant's tag (``create_group(..., owner=Owner(tenant))``).  Every kit checks at the
end that each tenant's in-flight count equals its queued and processing
children.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from coordinator.sweep import Sweeper
from jobs import controls
from jobs.fair_share import fair_order, round_robin
from jobs.ids import new_job_id, tenant_tag
from jobs.records import Dispatch
from jobs.store import JobStore
from jobs.transitions.complete import COMPLETE
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.jobs.test_repeated_calls import resend

A, B = "tenant-a", "tenant-b"


@pytest.fixture
def capped(new_kit):
    """A kit whose tenants may each have 2 children in flight."""
    kit = new_kit(tenant_max_inflight=2, release_batch=256)
    yield kit
    kit.assert_tenant_in_flight()


def in_flight(kit, tenant: str) -> int:
    return int(kit.r.get(keys.tenant_in_flight(tenant_tag(tenant), PINNED_BUCKET)) or 0)


def line(kit, tenant: str) -> list[str]:
    return [m.decode() for m in kit.r.zrange(keys.tenant_waiting(tenant_tag(tenant), PINNED_BUCKET), 0, -1)]


def queued_now(kit) -> list[str]:
    """The jobs that entered the ready index since the last look, in the order a worker takes them."""
    seen = kit.__dict__.setdefault("seen_ready", set())
    ids = [j for lane in ("interactive", "batch") for j in kit.ready(lane=lane) if j not in seen]
    seen.update(ids)
    return ids


def group_of(job_ids: list[str]) -> list[str]:
    return [keys.root_of(j) for j in job_ids]


def claim_all(kit, job_ids: list[str]) -> list:
    return [kit.claim(j) for j in job_ids]


def test_the_cap_holds_across_a_tenant_s_groups_and_holds_no_other_tenant(capped):
    kit = capped
    a1 = kit.group(5, 0, tenant=A)
    assert group_of(queued_now(kit)) == [a1.job_id] * 2
    a2 = kit.group(4, 0, tenant=A)
    assert queued_now(kit) == []
    b = kit.group(3, 0, tenant=B)
    assert group_of(queued_now(kit)) == [b.job_id] * 2
    assert in_flight(kit, A) == in_flight(kit, B) == 2
    # Held back by their tenant alone, they wait in its line, first come first...
    assert line(kit, A) == [a1.job_id, a2.job_id] and line(kit, B) == [b.job_id]
    # ...and are due for the sweep only after the requeue delay, as a safety net.
    now = kit.now_ms()
    assert kit.store.due_parents(now, 10) == []
    assert kit.store.due_parents(now + kit.store.requeue_ms, 10) == [a1.job_id, a2.job_id, b.job_id]


def test_the_slots_a_tenant_frees_go_to_its_groups_in_turn(capped):
    kit = capped
    kit.group(8, 0, tenant=A)
    kit.group(8, 0, tenant=A)
    running = claim_all(kit, queued_now(kit))
    served = []
    for _ in range(10):
        claim = running.pop(0)
        kit.store.complete(claim.job_id, claim.attempt, {})
        released = queued_now(kit)
        served += group_of(released)
        running += claim_all(kit, released)
        assert in_flight(kit, A) == 2

    # a1's own completions free every slot, yet the groups take turns.
    a1, a2 = sorted(set(served), key=served.index)
    assert served == [a1, a2] * 5


def test_a_finishing_worker_stays_within_the_tenant_cap_and_takes_the_tenant_s_next_group_s_child(new_kit):
    kit = new_kit(tenant_max_inflight=1)
    a1 = kit.group(3, 0, tenant=A)
    a2 = kit.group(3, 0, tenant=A)
    first = kit.claim(keys.child_id(a1.job_id, 0))

    # a1 is first in line: the freed slot is its own, and the finishing worker takes that child.
    done = kit.store.complete(first.job_id, first.attempt, {}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == keys.child_id(a1.job_id, 1)
    assert done.dispatches == [] and in_flight(kit, A) == 1

    # Now a2 is: the slot goes to a2's first child, which the same worker takes, with no message.
    kept = done.next_claim
    done = kit.store.complete(kept.job_id, kept.attempt, {}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == keys.child_id(a2.job_id, 0)
    assert done.dispatches == [] and in_flight(kit, A) == 1
    kit.assert_tenant_in_flight()


@pytest.mark.parametrize("other", ["another tenant's group", "another group of the tenant", "a single job"])
def test_a_finishing_worker_takes_the_work_queued_before_its_group_s_next_child(kit, other):
    a = kit.group(3, 1, tenant=A)
    c = kit.child_ids(a.job_id, 3)
    first = kit.claim(c[0])
    queued_now(kit)
    if other == "a single job":
        kit.single()
    else:
        kit.group(2, 0, tenant=B if other.startswith("another tenant") else A)
    waiting = queued_now(kit)

    done = kit.store.complete(c[0], first.attempt, {}, take_next="echo")

    # The next child waits behind the work queued before it; the worker takes that work first.  Another
    # tenant's second child has the same turn as A's next child (each tenant's second): the ids order a tie.
    assert done.next_claim is not None and done.next_claim.job_id == waiting[0]
    after = [*waiting[1:], c[1]]
    if other == "another tenant's group":
        after = sorted(after)
    assert kit.ready() == after
    taken = done.next_claim
    for job_id in after:
        taken = kit.store.complete(taken.job_id, taken.attempt, {}, take_next="echo").next_claim
        assert taken is not None and taken.job_id == job_id


def test_a_finishing_worker_takes_its_group_s_queued_children_in_order(kit):
    a = kit.group(4, 3, tenant=A)
    c = kit.child_ids(a.job_id, 4)
    first = kit.claim(c[0])  # c[1] and c[2] stay queued

    done = kit.store.complete(c[0], first.attempt, {}, take_next="echo")

    assert done.next_claim is not None and done.next_claim.job_id == c[1]
    assert kit.ready() == [c[2], c[3]]


def test_cancelling_a_group_gives_its_tenant_slots_to_the_tenant_s_other_groups(capped):
    kit = capped
    a1 = kit.group(4, 0, tenant=A)
    a2 = kit.group(3, 0, tenant=A)
    queued_now(kit)

    cancelled = controls.cancel(kit.store, a1.job_id)

    assert cancelled.status == "cancelled"
    assert queued_now(kit) == [keys.child_id(a2.job_id, i) for i in range(2)]
    assert kit.ready() == [keys.child_id(a2.job_id, i) for i in range(2)]  # a1's left the index
    assert in_flight(kit, A) == 2 and line(kit, A) == [a2.job_id]


def test_a_child_failed_by_reclaim_frees_its_tenant_slot(new_kit):
    kit = new_kit(tenant_max_inflight=1, max_attempts=1)
    a1 = kit.group(1, 0, tenant=A)
    a2 = kit.group(2, 0, tenant=A)
    (child,) = queued_now(kit)
    assert child == keys.child_id(a1.job_id, 0)
    kit.claim(child)
    kit.expire_lease(child)

    reclaimed = kit.store.reclaim([child])

    assert reclaimed.failed == [child]
    assert queued_now(kit) == [keys.child_id(a2.job_id, 0)]
    assert in_flight(kit, A) == 1
    kit.assert_tenant_in_flight()


def test_a_higher_group_cap_and_a_redrive_release_only_what_the_tenant_has_room_for(capped):
    kit = capped
    a = kit.group(5, 1, tenant=A)
    assert in_flight(kit, A) == 1

    controls.set_cap(kit.store, a.job_id, 5)
    assert kit.counts(a.job_id)["queued"] == 2
    assert in_flight(kit, A) == 2 and line(kit, A) == [a.job_id]

    # Fail them all, then send them again: two at a time, as before.
    for _ in range(5):
        for d in kit.store.queries.children_page(a.job_id, 0, 5, status="queued").children:
            claim = kit.claim(d["id"])
            kit.store.fail(claim.job_id, claim.attempt, "echo_failed", "asked to fail")
    assert kit.job(a.job_id)["status"] == "failed" and in_flight(kit, A) == 0 and line(kit, A) == []
    redriven = controls.redrive(kit.store, a.job_id)
    assert redriven.count == 5 and kit.counts(a.job_id)["queued"] == 2 and in_flight(kit, A) == 2


def test_the_sweep_releases_a_held_back_group_once_the_cap_is_lifted(capped):
    kit = capped
    a = kit.group(4, 0, tenant=A)
    queued_now(kit)
    later = kit.now_ms() + kit.store.requeue_ms
    uncapped = JobStore(kit.r, replace(kit.store.settings, tenant_max_inflight=0))

    uncapped.release(uncapped.due_parents(later, 10))

    assert group_of(queued_now(kit)) == [a.job_id] * 2
    assert in_flight(kit, A) == 4 and line(kit, A) == [] and kit.members(keys.due_parents) == set()


def next_millisecond(kit) -> None:
    """Waits for Redis's clock to reach its next millisecond: the due index orders parents by the millisecond
    they became due, and two of the same millisecond by their ids."""
    now = kit.now_ms()
    while kit.now_ms() == now:
        pass


def test_the_sweep_releases_with_tenants_taking_turns(kit):
    a = []
    for _ in range(3):
        a.append(kit.group(2, 0, tenant=A, release=False).job_id)
        next_millisecond(kit)
    b = kit.group(2, 0, tenant=B, release=False).job_id
    published: list[Dispatch] = []

    def publish(dispatches: list[Dispatch]) -> int:
        published.extend(dispatches)
        return len(dispatches)

    Sweeper(kit.store, publish=publish).sweep()

    # Each tenant's children take its turns in the lane, one after the other: A's first and B's first share
    # the first turn (the job ids order a tie), then their second ones; then A's other groups, in order.
    turns = [[(a[0], 0), (b, 0)], [(a[0], 1), (b, 1)], [(a[1], 0)], [(a[1], 1)], [(a[2], 0)], [(a[2], 1)]]
    expected = [job for turn in turns for job in sorted(keys.child_id(p, i) for p, i in turn)]
    assert kit.ready() == expected
    assert published == kit.wake_ups(8)


def test_a_complete_sent_again_answers_the_wake_ups_its_lost_reply_asked_for(new_kit):
    kit = new_kit(tenant_max_inflight=1)
    a1 = kit.group(2, 0, tenant=A)
    a2 = kit.group(2, 0, tenant=A)
    first = kit.claim(keys.child_id(a1.job_id, 0))
    kit.store.complete(first.job_id, first.attempt, {})
    second = kit.claim(keys.child_id(a1.job_id, 1))
    kit.r.delete(keys.wakeups(PINNED_BUCKET, "echo", "batch"))  # as if the wake-ups of the creation had run out
    lost = resend(kit.store, "complete")

    done = kit.store.complete(second.job_id, second.attempt, {})

    assert COMPLETE.decode(lost[0], PINNED_BUCKET).released == kit.wake_ups(1)
    assert done.dispatches == kit.wake_ups(1)
    assert kit.ready() == [keys.child_id(a2.job_id, 0)]
    kit.assert_tenant_in_flight()


def test_round_robin_takes_tenants_then_their_groups_in_turn():
    a1, a2, b1 = new_job_id(A), new_job_id(A), new_job_id(B)
    jobs = [f"{a1}-0", f"{a1}-1", f"{a1}-2", f"{a2}-0", f"{b1}-0", f"{b1}-1", a2]

    order = round_robin(jobs, lambda j: j)

    # Tenant a's groups interleave (a1, a2, a1, a2, a1), and tenant b's turns fall between.
    assert order == [f"{a1}-0", f"{b1}-0", f"{a2}-0", f"{b1}-1", f"{a1}-1", a2, f"{a1}-2"]
    assert fair_order([Dispatch(j, "echo") for j in jobs]) == [Dispatch(j, "echo") for j in order]
    assert round_robin([], lambda j: j) == []
