"""complete / fail: the terminal step of a job, the slot it frees, the parent it may finalize."""

import pytest

from jobs.contract import Reply
from jobs.errors import JobNotFound, LeaseLost, NotProcessing
from jobs.records import GroupRules
from tests.keyspace import keys


def event_fields(event):
    return {k: event[k] for k in ("operation", "job_id", "parent_job_id", "status", "model", "error_code")}


def test_complete_stores_the_result_keeps_the_payload_and_audits_once(kit, r, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    done = kit.store.complete(job_id, claim.attempt, {"text": "hello", "pages": 1})

    assert replies.last("complete").code == 1
    assert done.dispatches == []
    assert kit.store.queries.result(job_id) == {"text": "hello", "pages": 1}
    assert r.get(keys.payload(job_id)) == b"page 0"  # the searchable PDF is drawn from it
    job = kit.job(job_id)
    assert (job["status"], job["stage"], job["progress"], job["error_code"]) == ("completed", "completed", "1", "")
    assert int(job["finished_at"]) >= int(job["started_at"])
    assert kit.members(keys.leases) == set()
    events = kit.events(job_id)
    assert [event_fields(e) for e in events] == [
        {
            "operation": "job",
            "job_id": job_id,
            "parent_job_id": "",
            "status": "completed",
            "model": "echo",
            "error_code": "",
        }
    ]
    assert events[0]["time"] == job["finished_at"]


def test_fail_keeps_the_payload_and_records_the_error(kit, r):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.fail(job_id, claim.attempt, "invalid_document", "not a PNG")

    assert kit.store.queries.result(job_id) is None
    assert r.get(keys.payload(job_id)) == b"page 0"
    job = kit.job(job_id)
    assert (job["status"], job["error_code"], job["error"]) == ("failed", "invalid_document", "not a PNG")
    assert job["finished_at"] != ""
    assert kit.members(keys.leases) == set()
    assert [event_fields(e) for e in kit.events(job_id)] == [
        {"operation": "job", "job_id": job_id, "parent_job_id": "", "status": "failed", "model": "echo",
         "error_code": "invalid_document"}
    ]  # fmt: skip


def test_a_finished_child_hands_its_slot_to_the_next_held_child_in_the_same_call(kit):
    parent = kit.group(4, max_parallel=2).job_id
    c = kit.child_ids(parent, 4)
    claim = kit.claim(c[0])
    kit.claim(c[1])

    done = kit.store.complete(c[0], claim.attempt, {"text": "a"})
    assert done.finalized is False
    assert done.dispatches == [] and kit.ready() == [c[2]]
    assert kit.statuses(parent, 4) == ["completed", "processing", "queued", "held"]
    assert kit.members(keys.queued) == {c[2]}
    assert kit.members(keys.leases) == {c[1]}
    assert kit.counts(parent) == {
        "held": 1, "queued": 1, "processing": 1, "completed": 1, "failed": 0, "cancelled": 0,
    }  # fmt: skip
    assert [event_fields(e) for e in kit.events(parent)] == [
        {"operation": "job_child", "job_id": c[0], "parent_job_id": parent, "status": "completed", "model": "echo",
         "error_code": ""}
    ]  # fmt: skip
    # A child's own view of the stream holds its events only.
    assert [e["job_id"] for e in kit.store.queries.events(c[0])] == [c[0]]
    assert kit.store.queries.events(c[1]) == []


def test_a_finished_child_can_keep_its_slot_claiming_the_next_child_in_the_same_call(kit, r):
    parent = kit.group(4, max_parallel=2).job_id
    c = kit.child_ids(parent, 4)
    claim = kit.claim(c[0])
    kit.claim(c[1])

    done = kit.store.complete(c[0], claim.attempt, {"text": "a"}, take_next="echo")

    assert done.dispatches == []  # no message: the finishing worker runs it
    taken = done.next_claim
    assert (taken.job_id, taken.attempt, taken.model, taken.payload) == (c[2], 1, "echo", b"page 2")
    assert (taken.content_type, taken.options) == ("text/plain", {})
    assert kit.statuses(parent, 4) == ["completed", "processing", "processing", "held"]
    assert kit.members(keys.queued) == set()
    assert kit.members(keys.leases) == {c[1], c[2]}
    assert kit.counts(parent) == {
        "held": 1, "queued": 0, "processing": 2, "completed": 1, "failed": 0, "cancelled": 0,
    }  # fmt: skip
    # One clock: the next child started the moment the first one finished.
    assert kit.job(c[2])["started_at"] == kit.job(c[0])["finished_at"]
    # The kept slot is an ordinary attempt: it completes (and keeps the slot again) like any other.
    again = kit.store.complete(c[2], taken.attempt, {"text": "c"}, take_next="echo")
    assert again.next_claim.job_id == c[3] and again.dispatches == []


def test_a_kept_slot_takes_only_a_child_of_the_worker_s_model(kit):
    docs = kit.docs(1) + kit.docs(1, model="tesseract")
    parent = kit.store.create_group(docs, GroupRules(1)).job_id
    c = kit.child_ids(parent, 2)
    claim = kit.claim(c[0])

    done = kit.store.complete(c[0], claim.attempt, {}, take_next="echo")

    assert done.next_claim is None
    assert done.dispatches == kit.wake_ups(1, "tesseract") and kit.ready("tesseract") == [c[1]]
    assert kit.status(c[1]) == "queued"


def test_keeping_the_slot_of_the_last_child_finalizes_the_parent_and_takes_nothing(kit):
    parent = kit.group(1, max_parallel=1).job_id
    c = kit.child_ids(parent, 1)
    claim = kit.claim(c[0])

    done = kit.store.complete(c[0], claim.attempt, {}, take_next="echo")

    assert (done.finalized, done.next_claim, done.dispatches) == (True, None, [])
    assert kit.job(parent)["status"] == "completed"


def test_a_failed_child_frees_its_slot_too(kit):
    parent = kit.group(2, max_parallel=1).job_id
    c = kit.child_ids(parent, 2)
    claim = kit.claim(c[0])
    done = kit.store.fail(c[0], claim.attempt, "echo_failed", "asked to fail")
    assert done.dispatches == [] and kit.ready() == [c[1]]
    assert kit.counts(parent)["failed"] == 1


def run_all(kit, parent, n, fail=()):
    """Claims every child up front (max_parallel >= n), then ends them in order."""
    claims = [kit.claim(c) for c in kit.child_ids(parent, n)]
    finals = []
    for i, claim in enumerate(claims):
        if i in fail:
            finals.append(kit.store.fail(claim.job_id, claim.attempt, "echo_failed", "boom"))
        else:
            finals.append(kit.store.complete(claim.job_id, claim.attempt, {"i": i}))
    return finals


def test_the_last_child_finalizes_a_completed_parent_exactly_once(kit):
    parent = kit.group(3, max_parallel=3).job_id
    finals = run_all(kit, parent, 3)
    assert [f.finalized for f in finals] == [False, False, True]

    p = kit.job(parent)
    assert (p["status"], p["stage"], p["error_code"]) == ("completed", "completed", "")
    assert int(p["finished_at"]) >= int(p["started_at"])
    parent_events = [e for e in kit.events(parent) if e["operation"] == "job"]
    assert [event_fields(e) for e in parent_events] == [
        {"operation": "job", "job_id": parent, "parent_job_id": "", "status": "completed", "model": "echo",
         "error_code": ""}
    ]  # fmt: skip
    assert parent_events[0]["time"] == p["finished_at"]
    assert kit.active_parents() == set()
    assert kit.members(keys.due_parents) == set()
    # One job_child event per child, before the parent's.
    assert [e["operation"] for e in kit.events(parent)] == ["job_child"] * 3 + ["job"]

    # Nothing later adds a second parent event.
    kit.store.release([parent])
    assert len(kit.events(parent)) == 4


def test_collect_all_a_failed_child_does_not_stop_its_siblings(kit):
    parent = kit.group(3, max_parallel=3).job_id
    c = kit.child_ids(parent, 3)
    claims = [kit.claim(x) for x in c]

    first = kit.store.fail(c[0], claims[0].attempt, "echo_failed", "boom")
    assert first.finalized is False
    assert kit.statuses(parent, 3) == ["failed", "processing", "processing"]
    assert kit.job(parent)["status"] == "processing"
    assert kit.active_parents() == {parent}

    assert kit.store.complete(c[1], claims[1].attempt, {}).finalized is False
    assert kit.store.complete(c[2], claims[2].attempt, {}).finalized is True
    assert kit.statuses(parent, 3) == ["failed", "completed", "completed"]
    p = kit.job(parent)
    assert (p["status"], p["error_code"]) == ("failed", "child_failed")
    assert [(e["operation"], e["status"], e["error_code"]) for e in kit.events(parent)] == [
        ("job_child", "failed", "echo_failed"),
        ("job_child", "completed", ""),
        ("job_child", "completed", ""),
        ("job", "failed", "child_failed"),
    ]
    assert kit.active_parents() == set()


def test_a_group_whose_children_all_fail_fails(kit):
    parent = kit.group(2, max_parallel=0).job_id
    run_all(kit, parent, 2, fail={0, 1})
    assert (kit.job(parent)["status"], kit.job(parent)["error_code"]) == ("failed", "child_failed")


@pytest.mark.parametrize("state", ["queued", "held", "completed", "failed"])
def test_completing_a_job_that_is_not_processing_raises_and_writes_nothing(kit, replies, state):
    parent = kit.group(2, max_parallel=1).job_id
    c0, c1 = kit.child_ids(parent, 2)
    target, attempt = c0, 1
    if state == "held":
        target = c1
    elif state in ("completed", "failed"):
        claim = kit.claim(c0)
        if state == "completed":
            kit.store.complete(c0, claim.attempt, {"first": True})
        else:
            kit.store.fail(c0, claim.attempt, "echo_failed", "first")
    before = kit.snapshot()
    with pytest.raises(NotProcessing):
        kit.store.complete(target, attempt, {"second": True})
    assert replies.last("complete").code == Reply.WRONG_STATUS
    with pytest.raises(NotProcessing):
        kit.store.fail(target, attempt, "late", "late")
    assert kit.snapshot() == before


def test_completing_an_unknown_job_raises_job_not_found(kit, replies):
    before = kit.snapshot()
    with pytest.raises(JobNotFound):
        kit.store.complete("c" * 32, 1, {})
    assert replies.last("complete").code == -1
    assert kit.snapshot() == before


def test_a_stale_attempt_cannot_complete_and_the_newer_attempt_is_intact(kit, replies):
    parent = kit.group(2, max_parallel=1).job_id
    c0 = keys.child_id(parent, 0)
    old = kit.claim(c0)
    kit.expire_lease(c0)
    kit.store.reclaim([c0])
    new = kit.claim(c0)
    kit.store.report_progress(c0, new.attempt, "page 1/2", 0.5)

    before = kit.snapshot()
    with pytest.raises(LeaseLost):
        kit.store.complete(c0, old.attempt, {"from": "old"})
    assert replies.last("complete").code == Reply.LEASE_LOST
    with pytest.raises(LeaseLost):
        kit.store.fail(c0, old.attempt, "engine_unavailable", "old")
    assert kit.snapshot() == before

    done = kit.store.complete(c0, new.attempt, {"from": "new"})
    assert kit.store.queries.result(c0) == {"from": "new"}
    assert done.dispatches == [] and kit.ready() == [keys.child_id(parent, 1)]
    assert len(kit.events_of(c0)) == 1
