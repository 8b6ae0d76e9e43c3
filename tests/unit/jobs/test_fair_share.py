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
from jobs import controls, keys
from jobs.fair_share import fair_order, round_robin, tenant_of
from jobs.ids import new_job_id, tenant_tag
from jobs.records import Dispatch
from jobs.store import JobStore
from jobs.transitions.complete import COMPLETE
from tests.unit.jobs.test_repeated_calls import resend

A, B = "tenant-a", "tenant-b"


@pytest.fixture
def capped(new_kit):
    """A kit whose tenants may each have 2 children in flight."""
    kit = new_kit(tenant_max_inflight=2, release_batch=256)
    yield kit
    kit.assert_tenant_in_flight()


def in_flight(kit, tenant: str) -> int:
    return int(kit.r.get(keys.tenant_in_flight(tenant_tag(tenant))) or 0)


def line(kit, tenant: str) -> list[str]:
    return [m.decode() for m in kit.r.zrange(keys.tenant_waiting(tenant_tag(tenant)), 0, -1)]


def group_of(dispatches: list[Dispatch]) -> list[str]:
    return [keys.root_of(d.job_id) for d in dispatches]


def claim_all(kit, dispatches: list[Dispatch]) -> list:
    return [kit.claim(d.job_id) for d in dispatches]


def test_the_cap_holds_across_a_tenant_s_groups_and_holds_no_other_tenant(capped):
    kit = capped
    a1 = kit.group(5, 0, tenant=A)
    a2 = kit.group(4, 0, tenant=A)
    b = kit.group(3, 0, tenant=B)

    assert group_of(a1.dispatches) == [a1.job_id] * 2
    assert a2.dispatches == []
    assert group_of(b.dispatches) == [b.job_id] * 2
    assert in_flight(kit, A) == in_flight(kit, B) == 2
    # Held back by their tenant alone, they wait in its line, first come first...
    assert line(kit, A) == [a1.job_id, a2.job_id] and line(kit, B) == [b.job_id]
    # ...and are due for the sweep only after the requeue delay, as a safety net.
    now = kit.now_ms()
    assert kit.store.due_parents(now, 10) == []
    assert kit.store.due_parents(now + kit.store.requeue_ms, 10) == [a1.job_id, a2.job_id, b.job_id]


def test_the_slots_a_tenant_frees_go_to_its_groups_in_turn(capped):
    kit = capped
    a1 = kit.group(8, 0, tenant=A)
    a2 = kit.group(8, 0, tenant=A)
    running = claim_all(kit, a1.dispatches)
    served = []
    for _ in range(10):
        claim = running.pop(0)
        done = kit.store.complete(claim.job_id, claim.attempt, {})
        served += group_of(done.dispatches)
        running += claim_all(kit, done.dispatches)
        assert in_flight(kit, A) == 2

    # a1's own completions free every slot, yet the groups take turns.
    assert served == [a1.job_id, a2.job_id] * 5


def test_a_kept_slot_stays_within_the_tenant_cap_and_yields_to_the_tenant_s_line(new_kit):
    kit = new_kit(tenant_max_inflight=1)
    a1 = kit.group(3, 0, tenant=A)
    a2 = kit.group(3, 0, tenant=A)
    first = kit.claim(a1.dispatches[0].job_id)

    # a1 is first in line: the freed slot is its own, and its worker keeps it.
    done = kit.store.complete(first.job_id, first.attempt, {}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == keys.child_id(a1.job_id, 1)
    assert done.dispatches == [] and in_flight(kit, A) == 1

    # Now a2 is: the slot goes to a2's first child through a message, and nothing is kept.
    kept = done.next_claim
    done = kit.store.complete(kept.job_id, kept.attempt, {}, take_next="echo")
    assert done.next_claim is None
    assert done.dispatches == [Dispatch(keys.child_id(a2.job_id, 0), "echo")]
    assert in_flight(kit, A) == 1
    kit.assert_tenant_in_flight()


@pytest.mark.parametrize("other", ["another tenant's group", "another group of the tenant", "a single job"])
def test_a_kept_slot_gives_way_while_other_work_is_queued(kit, other):
    a = kit.group(3, 1, tenant=A)
    c = kit.child_ids(a.job_id, 3)
    first = kit.claim(c[0])
    if other == "a single job":
        waiting = kit.single().dispatches
    else:
        waiting = kit.group(2, 0, tenant=B if other.startswith("another tenant") else A).dispatches

    done = kit.store.complete(c[0], first.attempt, {}, take_next="echo")

    # The next child goes through a message, behind the work queued before it.
    assert done.next_claim is None and done.dispatches == [Dispatch(c[1], "echo")]

    # Once nothing else waits for a worker, the slot is kept again.
    claim_all(kit, waiting)
    second = kit.claim(c[1])
    done = kit.store.complete(c[1], second.attempt, {}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == c[2]


def test_the_group_s_own_queued_children_do_not_stop_a_kept_slot(kit):
    a = kit.group(4, 3, tenant=A)
    c = kit.child_ids(a.job_id, 4)
    first = kit.claim(c[0])  # c[1] and c[2] stay queued

    done = kit.store.complete(c[0], first.attempt, {}, take_next="echo")

    assert done.next_claim is not None and done.next_claim.job_id == c[3]


def test_cancelling_a_group_gives_its_tenant_slots_to_the_tenant_s_other_groups(capped):
    kit = capped
    a1 = kit.group(4, 0, tenant=A)
    a2 = kit.group(3, 0, tenant=A)

    cancelled = controls.cancel(kit.store, a1.job_id)

    assert cancelled.status == "cancelled"
    assert cancelled.dispatches == [Dispatch(keys.child_id(a2.job_id, i), "echo") for i in range(2)]
    assert in_flight(kit, A) == 2 and line(kit, A) == [a2.job_id]


def test_a_child_failed_by_reclaim_frees_its_tenant_slot(new_kit):
    kit = new_kit(tenant_max_inflight=1, max_attempts=1)
    a1 = kit.group(1, 0, tenant=A)
    a2 = kit.group(2, 0, tenant=A)
    child = a1.dispatches[0].job_id
    kit.claim(child)
    kit.expire_lease(child)

    reclaimed = kit.store.reclaim([child])

    assert reclaimed.failed == [child]
    assert reclaimed.dispatches == [Dispatch(keys.child_id(a2.job_id, 0), "echo")]
    assert in_flight(kit, A) == 1
    kit.assert_tenant_in_flight()


def test_a_higher_group_cap_and_a_redrive_release_only_what_the_tenant_has_room_for(capped):
    kit = capped
    a = kit.group(5, 1, tenant=A)
    assert in_flight(kit, A) == 1

    assert len(controls.set_cap(kit.store, a.job_id, 5)) == 1
    assert in_flight(kit, A) == 2 and line(kit, A) == [a.job_id]

    # Fail them all, then send them again: two at a time, as before.
    for _ in range(5):
        for d in kit.store.queries.children_page(a.job_id, 0, 5, status="queued").children:
            claim = kit.claim(d["id"])
            kit.store.fail(claim.job_id, claim.attempt, "echo_failed", "asked to fail")
    assert kit.job(a.job_id)["status"] == "failed" and in_flight(kit, A) == 0 and line(kit, A) == []
    redriven = controls.redrive(kit.store, a.job_id)
    assert redriven.count == 5 and len(redriven.dispatches) == 2 and in_flight(kit, A) == 2


def test_the_sweep_releases_a_held_back_group_once_the_cap_is_lifted(capped):
    kit = capped
    a = kit.group(4, 0, tenant=A)
    later = kit.now_ms() + kit.store.requeue_ms
    uncapped = JobStore(kit.r, replace(kit.store.settings, tenant_max_inflight=0))

    released = uncapped.release(uncapped.due_parents(later, 10))

    assert group_of(released) == [a.job_id] * 2
    assert in_flight(kit, A) == 4 and line(kit, A) == [] and kit.members(keys.DUE_PARENTS) == set()


def test_the_sweep_releases_and_publishes_with_tenants_taking_turns(kit):
    a = [kit.group(2, 0, tenant=A, release=False).job_id for _ in range(3)]
    b = kit.group(2, 0, tenant=B, release=False).job_id
    published: list[Dispatch] = []

    def publish(dispatches: list[Dispatch]) -> int:
        published.extend(dispatches)
        return len(dispatches)

    Sweeper(kit.store, publish=publish).sweep()

    ids = [d.job_id for d in published]
    assert [tenant_of(i) for i in ids[:4]] == [tenant_tag(A), tenant_tag(B)] * 2
    expected = [(a[0], 0), (b, 0), (a[1], 0), (b, 1), (a[2], 0), (a[0], 1), (a[1], 1), (a[2], 1)]
    assert ids == [keys.child_id(p, i) for p, i in expected]


def test_a_complete_sent_again_lists_the_children_it_released_into_another_group(new_kit):
    kit = new_kit(tenant_max_inflight=1)
    a1 = kit.group(2, 0, tenant=A)
    a2 = kit.group(2, 0, tenant=A)
    first = kit.claim(a1.dispatches[0].job_id)
    second = kit.claim(kit.store.complete(first.job_id, first.attempt, {}).dispatches[0].job_id)
    lost = resend(kit.store, "complete")

    done = kit.store.complete(second.job_id, second.attempt, {})

    other = [Dispatch(keys.child_id(a2.job_id, 0), "echo")]
    assert COMPLETE.decode(lost[0]).released == other
    assert done.dispatches == other
    kit.assert_tenant_in_flight()


def test_round_robin_takes_tenants_then_their_groups_in_turn():
    a1, a2, b1 = new_job_id(A), new_job_id(A), new_job_id(B)
    jobs = [f"{a1}-0", f"{a1}-1", f"{a1}-2", f"{a2}-0", f"{b1}-0", f"{b1}-1", a2]

    order = round_robin(jobs, lambda j: j)

    # Tenant a's groups interleave (a1, a2, a1, a2, a1), and tenant b's turns fall between.
    assert order == [f"{a1}-0", f"{b1}-0", f"{a2}-0", f"{b1}-1", f"{a1}-1", a2, f"{a1}-2"]
    assert fair_order([Dispatch(j, "echo") for j in jobs]) == [Dispatch(j, "echo") for j in order]
    assert round_robin([], lambda j: j) == []
