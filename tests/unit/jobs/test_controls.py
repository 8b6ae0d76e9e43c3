"""A client's controls against the real scripts: cancel, a new cap, redrive, failure tolerance."""

import pytest

from jobs import controls
from jobs.errors import (
    CancelRequested,
    GroupNotFinished,
    IdempotencyKeyReused,
    JobFinished,
    JobNotFound,
    LeaseLost,
    NotAGroup,
    NothingToRetry,
)
from jobs.records import GroupRules, Idempotency
from tests.keyspace import keys
from tests.unit.jobs.conftest import roots_of


def terminal_events(kit, root_id):
    return [(e["operation"], e["job_id"], e["status"]) for e in kit.events(root_id)]


# -- cancel --------------------------------------------------------------------------------------


def test_a_queued_single_job_is_cancelled_at_once_and_its_message_then_finds_nothing(kit):
    job_id = kit.single().job_id

    cancelled = controls.cancel(kit.store, job_id)

    assert cancelled.status == "cancelled" and kit.status(job_id) == "cancelled"
    assert terminal_events(kit, job_id) == [("job", job_id, "cancelled")]
    assert job_id not in kit.members(keys.queued)
    assert kit.members(roots_of("single", "cancelled")) == {job_id}
    assert kit.store.claim(job_id) is None


def test_a_running_job_is_asked_to_stop_and_ends_cancelled_at_its_next_page(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)

    assert controls.cancel(kit.store, job_id).status == "processing"
    assert kit.job(job_id)["stage"] == "cancelling"
    assert kit.store.heartbeat(job_id, claim.attempt) is True  # it still holds the job meanwhile
    with pytest.raises(CancelRequested):
        kit.store.report_progress(job_id, claim.attempt, "page 1/2", 0.5)
    kit.store.end_cancelled(job_id, claim.attempt)

    assert kit.status(job_id) == "cancelled"
    assert terminal_events(kit, job_id) == [("job", job_id, "cancelled")]
    assert job_id not in kit.members(keys.leases)


def test_a_job_that_finishes_its_last_page_after_a_cancel_keeps_its_result(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    controls.cancel(kit.store, job_id)

    kit.store.complete(job_id, claim.attempt, {"text": "read before the cancel was seen"})

    assert kit.status(job_id) == "completed"
    assert kit.store.queries.result(job_id) == {"text": "read before the cancel was seen"}
    assert terminal_events(kit, job_id) == [("job", job_id, "completed")]


def test_cancelling_a_terminal_job_is_refused_and_writes_nothing(kit):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {"text": "done"})
    before = kit.snapshot()

    with pytest.raises(JobFinished):
        controls.cancel(kit.store, job_id)
    with pytest.raises(JobNotFound):
        controls.cancel(kit.store, "f" * 32)
    assert kit.snapshot() == before


def test_cancelling_a_group_ends_what_has_not_started_and_stops_what_runs(kit):
    parent = kit.group(6, max_parallel=3).job_id
    c = kit.child_ids(parent, 6)
    done = kit.claim(c[0])
    kit.store.complete(c[0], done.attempt, {"text": "kept"}, take_next=None)  # releases c[3]
    running = kit.claim(c[1])

    cancelled = controls.cancel(kit.store, parent)

    assert cancelled.status == "processing"  # c[1] still runs
    assert kit.statuses(parent, 6) == ["completed", "processing", "cancelled", "cancelled", "cancelled", "cancelled"]
    assert kit.store.queries.result(c[0]) == {"text": "kept"}
    # The running child stops at its next page; its slot goes to nobody, and the parent ends once.
    with pytest.raises(CancelRequested):
        kit.store.report_progress(c[1], running.attempt, "page 1/2", 0.5)
    finished = kit.store.end_cancelled(c[1], running.attempt)
    assert finished.finalized and finished.dispatches == [] and finished.next_claim is None
    p = kit.job(parent)
    assert (p["status"], p["n_cancelled"], p["n_completed"]) == ("cancelled", "5", "1")
    parent_events = [e for e in terminal_events(kit, parent) if e[1] == parent]
    assert parent_events == [("job", parent, "cancelled")]
    assert len(kit.events(parent)) == 7  # one per job
    assert kit.members(roots_of("parent", "cancelled")) == {parent}
    assert kit.members(keys.queued) == set() and kit.members(keys.due_parents) == set()


def test_a_group_with_nothing_running_ends_cancelled_in_the_same_step(kit):
    parent = kit.group(3, max_parallel=1).job_id
    controls.cancel(kit.store, parent)
    assert kit.job(parent)["status"] == "cancelled"
    assert kit.statuses(parent, 3) == ["cancelled"] * 3


def test_a_cancelled_child_frees_its_slot_for_the_next(kit):
    parent = kit.group(3, max_parallel=1).job_id
    c = kit.child_ids(parent, 3)

    cancelled = controls.cancel(kit.store, c[0])  # queued: ends at once

    assert cancelled.dispatches == [] and kit.ready() == [c[1]]
    assert kit.statuses(parent, 3) == ["cancelled", "queued", "held"]
    assert controls.cancel(kit.store, c[2]).dispatches == []  # held: no slot to hand over
    claim = kit.claim(c[1])
    done = kit.store.complete(c[1], claim.attempt, {"text": "x"})
    # One child cancelled, none tolerated: the group fails, naming why.
    assert done.finalized
    assert (kit.job(parent)["status"], kit.job(parent)["error_code"]) == ("failed", "child_cancelled")


def test_a_reclaimed_job_that_was_asked_to_stop_ends_cancelled_instead_of_running_again(kit):
    job_id = kit.single().job_id
    kit.claim(job_id)
    controls.cancel(kit.store, job_id)
    kit.expire_lease(job_id)

    reclaimed = kit.store.reclaim([job_id])

    assert reclaimed.requeued == [] and reclaimed.failed == [job_id]
    assert kit.status(job_id) == "cancelled"


# -- the cap ---------------------------------------------------------------------------------------


def test_raising_the_cap_releases_at_once_and_lowering_it_waits_for_running_children(kit):
    parent = kit.group(6, max_parallel=1).job_id
    c = kit.child_ids(parent, 6)

    assert controls.set_cap(kit.store, parent, 3) == kit.wake_ups(2)
    assert kit.ready() == c[:3]
    claims = [kit.claim(c[i]) for i in range(3)]
    assert controls.set_cap(kit.store, parent, 1) == []
    assert kit.statuses(parent, 6)[:3] == ["processing"] * 3  # nobody is stopped
    # Two finish: no slot opens until fewer than one runs.
    assert kit.store.complete(c[0], claims[0].attempt, {}).dispatches == []
    assert kit.store.complete(c[1], claims[1].attempt, {}).dispatches == []
    assert kit.store.complete(c[2], claims[2].attempt, {}).dispatches == []  # the first wake-up counts for it
    assert kit.ready() == [c[3]]


def test_the_cap_of_a_single_job_or_a_finished_group_cannot_change(kit):
    with pytest.raises(NotAGroup):
        controls.set_cap(kit.store, kit.single().job_id, 2)
    parent = kit.group(1, max_parallel=1).job_id
    controls.cancel(kit.store, parent)
    with pytest.raises(JobFinished):
        controls.set_cap(kit.store, parent, 2)


# -- redrive -----------------------------------------------------------------------------------------


def finish_group(kit, parent, n, failing=()):
    for i in range(n):
        claim = kit.claim(keys.child_id(parent, i))
        if i in failing:
            kit.store.fail(claim.job_id, claim.attempt, "echo_failed", "asked to")
        else:
            kit.store.complete(claim.job_id, claim.attempt, {"text": f"t{i}"})


def test_a_redrive_runs_the_failed_children_again_and_the_parent_finalizes_again(kit):
    parent = kit.group(4, max_parallel=4).job_id
    c = kit.child_ids(parent, 4)
    finish_group(kit, parent, 4, failing={1, 3})
    assert kit.job(parent)["status"] == "failed"

    redriven = controls.redrive(kit.store, parent)

    assert (redriven.count, redriven.replayed) == (2, False)
    assert kit.ready() == [c[1], c[3]]
    assert kit.statuses(parent, 4) == ["completed", "queued", "completed", "queued"]
    assert kit.job(parent)["status"] == "processing"
    assert (kit.job(c[1])["attempts"], kit.job(c[1])["attempts_base"]) == ("1", "1")
    assert kit.store.queries.result(c[0]) == {"text": "t0"}  # completed children are not run again
    for i in (1, 3):
        claim = kit.claim(c[i])
        assert (claim.attempt, claim.try_number) == (2, 1)
        kit.store.complete(c[i], claim.attempt, {"text": f"again {i}"})
    assert kit.job(parent)["status"] == "completed" and kit.job(parent)["redrives"] == "1"
    parent_events = [e for e in terminal_events(kit, parent) if e[1] == parent]
    assert parent_events == [("job", parent, "failed"), ("job", parent, "completed")]
    assert kit.members(roots_of("parent", "completed")) == {parent}


def test_after_a_redrive_a_report_of_an_earlier_attempt_is_refused(kit):
    parent = kit.group(1, max_parallel=1).job_id
    (child,) = kit.child_ids(parent, 1)
    first = kit.claim(child)
    kit.store.fail(child, first.attempt, "echo_failed", "asked to")
    controls.redrive(kit.store, parent)
    again = kit.claim(child)

    # The first attempt's worker, late, must not write over the second's run.
    with pytest.raises(LeaseLost):
        kit.store.complete(child, first.attempt, {"text": "stale"})
    assert kit.job(child)["status"] == "processing"
    kit.store.complete(child, again.attempt, {"text": "fresh"})
    assert kit.store.queries.result(child) == {"text": "fresh"}


def test_a_redriven_child_has_max_attempts_tries_again_before_a_lost_lease_fails_it(kit):
    parent = kit.group(1, max_parallel=1).job_id
    (child,) = kit.child_ids(parent, 1)
    for _ in range(kit.store.settings.max_attempts):
        kit.claim(child)
        kit.expire_lease(child)
        kit.store.reclaim([child])
    assert kit.job(child)["status"] == "failed"
    controls.redrive(kit.store, parent)

    for _ in range(kit.store.settings.max_attempts - 1):
        kit.claim(child)
        kit.expire_lease(child)
        kit.store.reclaim([child])
        assert kit.job(child)["status"] == "queued"
    kit.claim(child)
    kit.expire_lease(child)
    kit.store.reclaim([child])
    assert (kit.job(child)["status"], kit.job(child)["error_code"]) == ("failed", "lease_expired")


def test_a_redrive_keeps_the_cap(kit):
    parent = kit.group(3, max_parallel=1).job_id
    finish_group(kit, parent, 3, failing={0, 1, 2})
    controls.redrive(kit.store, parent)
    assert len(kit.ready()) == 1


def test_a_redrive_with_an_idempotency_key_runs_once(kit):
    parent = kit.group(2, max_parallel=2).job_id
    finish_group(kit, parent, 2, failing={0})
    key = Idempotency("retry-1", "fingerprint-a")

    assert controls.redrive(kit.store, parent, idempotency=key).count == 1
    assert controls.redrive(kit.store, parent, idempotency=key).replayed
    with pytest.raises(IdempotencyKeyReused):
        controls.redrive(kit.store, parent, idempotency=Idempotency("retry-1", "fingerprint-b"))


def test_a_redrive_needs_a_finished_group_with_something_to_retry(kit):
    parent = kit.group(2, max_parallel=1).job_id
    with pytest.raises(GroupNotFinished):
        controls.redrive(kit.store, parent)
    finish_group(kit, parent, 2)
    with pytest.raises(NothingToRetry):
        controls.redrive(kit.store, parent)
    with pytest.raises(NotAGroup):
        controls.redrive(kit.store, kit.single().job_id)


def test_cancelled_children_are_redriven_only_when_asked(kit):
    parent = kit.group(2, max_parallel=1).job_id
    controls.cancel(kit.store, parent)
    with pytest.raises(NothingToRetry):
        controls.redrive(kit.store, parent)
    assert controls.redrive(kit.store, parent, include_cancelled=True).count == 2
    assert kit.job(parent)["cancel_requested"] == ""


# -- failure tolerance -------------------------------------------------------------------------------


@pytest.mark.parametrize("failing, status", [({1}, "completed"), ({1, 2}, "failed")])
def test_a_group_completes_within_its_tolerance_and_fails_beyond_it(kit, failing, status):
    parent = kit.store.create_group(kit.docs(4), GroupRules(max_parallel=4, tolerated_failures=1)).job_id
    finish_group(kit, parent, 4, failing=failing)
    p = kit.job(parent)
    assert (p["status"], p["n_failed"]) == (status, str(len(failing)))


def test_fail_fast_cancels_the_held_children_once_past_the_tolerance(kit):
    rules = GroupRules(max_parallel=1, tolerated_failures=1, fail_fast=True)
    parent = kit.store.create_group(kit.docs(5), rules).job_id
    c = kit.child_ids(parent, 5)
    finish_group(kit, parent, 1, failing={0})  # within tolerance: c[1] is released
    assert kit.statuses(parent, 5) == ["failed", "queued", "held", "held", "held"]
    claim = kit.claim(c[1])

    done = kit.store.fail(c[1], claim.attempt, "echo_failed", "again")

    assert done.finalized and done.dispatches == []
    assert kit.statuses(parent, 5) == ["failed", "failed", "cancelled", "cancelled", "cancelled"]
    assert (kit.job(parent)["status"], kit.job(parent)["error_code"]) == ("failed", "child_failed")


def test_a_terminal_job_with_a_callback_is_due_for_its_webhook(kit):
    rules = GroupRules(max_parallel=1, callback_url="http://127.0.0.1:9/hook")
    parent = kit.store.create_group(kit.docs(1), rules).job_id
    finish_group(kit, parent, 1)
    assert kit.members(keys.webhooks) == {parent}
