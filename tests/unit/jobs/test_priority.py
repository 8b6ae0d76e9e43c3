"""Priority lanes in the store: a job's lane is stored with it, a child has its group's, a queued job
enters its lane's ready index, and every message a transition asks for (a wake-up, a reclaim, a
republish) names it."""

from dataclasses import replace

import pytest

from jobs import controls
from jobs.contract import Priority
from jobs.records import Dispatch, GroupRules
from tests.keyspace import keys

INTERACTIVE = Priority.INTERACTIVE.value
BATCH = Priority.BATCH.value


def test_a_single_job_keeps_its_lane_and_its_wake_up_names_it(kit):
    created = kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE))

    assert created.dispatches == kit.wake_ups(1, lane=INTERACTIVE)
    assert kit.ready(lane=INTERACTIVE) == [created.job_id]
    assert kit.job(created.job_id)["priority"] == INTERACTIVE


def test_a_job_is_batch_unless_it_says_otherwise(kit):
    created = kit.single()

    assert created.dispatches == kit.wake_ups(1, lane=BATCH)
    assert "priority" not in kit.job(created.job_id)  # no field is batch: a batch job spends no bytes on it


def test_the_children_of_a_group_take_its_lane_whatever_they_say(kit):
    docs = [replace(d, priority=BATCH) for d in kit.docs(3)]
    created = kit.store.create_group(docs, GroupRules(max_parallel=2, priority=INTERACTIVE))

    children = kit.child_ids(created.job_id, 3)
    assert created.dispatches == kit.wake_ups(2, lane=INTERACTIVE)
    assert kit.ready(lane=INTERACTIVE) == children[:2]
    assert [kit.job(j)["priority"] for j in [created.job_id, *children]] == [INTERACTIVE] * 4


def test_a_child_released_into_a_freed_slot_goes_to_its_groups_lane(kit):
    created = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=1, priority=INTERACTIVE))
    first, second = kit.child_ids(created.job_id, 2)

    done = kit.store.complete(first, kit.claim(first).attempt, {"text": "x", "pages": []})

    assert done.dispatches == []  # the wake-up of its creation still counts for it
    assert kit.ready(lane=INTERACTIVE) == [second]


def test_a_child_handed_over_in_a_kept_slot_is_claimed_whatever_its_lane(kit):
    created = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=1, priority=INTERACTIVE))
    first, second = kit.child_ids(created.job_id, 2)

    done = kit.store.complete(first, kit.claim(first).attempt, {"text": "x", "pages": []}, take_next="echo")

    assert done.dispatches == [] and done.next_claim is not None and done.next_claim.job_id == second


def test_a_waiting_interactive_job_is_taken_before_the_batch_group_s_next_child(kit):
    created = kit.group(2, max_parallel=1)
    first, second = kit.child_ids(created.job_id, 2)
    attempt = kit.claim(first).attempt
    interactive = kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE)).job_id

    done = kit.store.complete(first, attempt, {"text": "x", "pages": []}, take_next="echo")

    assert done.next_claim.job_id == interactive  # the batch child waits behind the interactive job
    assert kit.status(second) == "queued" and kit.ready(lane=BATCH) == [second]


def test_a_reclaimed_job_goes_back_to_its_lane(kit):
    job_id = kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE)).job_id
    kit.claim(job_id)
    kit.expire_lease(job_id)

    reclaimed = kit.store.reclaim([job_id])

    assert reclaimed.requeued == [Dispatch(job_id, "echo", priority=INTERACTIVE)]


def test_a_republished_job_goes_to_its_lane(kit):
    job_id = kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE)).job_id
    kit.make_stale(job_id)

    assert kit.store.republish([job_id]) == [Dispatch(job_id, "echo", priority=INTERACTIVE)]


@pytest.mark.parametrize("stored", [None, "batch", ""])
def test_a_job_not_marked_interactive_is_batch(kit, r, stored):
    job_id = kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE)).job_id
    if stored is None:
        r.hdel(keys.job(job_id), "priority")  # as every job stored before lanes existed
    else:
        r.hset(keys.job(job_id), "priority", stored)
    kit.make_stale(job_id)

    assert kit.store.republish([job_id]) == [Dispatch(job_id, "echo", priority=BATCH)]


def test_the_sweeps_release_of_a_group_names_its_lane(kit):
    created = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=0, priority=INTERACTIVE), release=False)

    released = kit.store.release([created.job_id])

    assert released == kit.wake_ups(2, lane=INTERACTIVE)
    assert kit.ready(lane=INTERACTIVE) == kit.child_ids(created.job_id, 2)


def test_a_redriven_child_goes_back_to_its_groups_lane(kit):
    created = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=0, priority=INTERACTIVE))
    first, second = kit.child_ids(created.job_id, 2)
    kit.store.fail(first, kit.claim(first).attempt, "echo_failed", "asked to")
    kit.store.complete(second, kit.claim(second).attempt, {"text": "x", "pages": []})

    controls.redrive(kit.store, created.job_id)

    assert kit.ready(lane=INTERACTIVE) == [first]


def test_a_raised_cap_releases_into_the_groups_lane(kit):
    created = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=1, priority=INTERACTIVE))

    released = controls.set_cap(kit.store, created.job_id, 2)

    assert released == kit.wake_ups(1, lane=INTERACTIVE)
    assert kit.ready(lane=INTERACTIVE) == kit.child_ids(created.job_id, 2)
