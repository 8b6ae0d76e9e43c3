"""The heartbeat: the leases of the jobs a process runs are extended while they run.

No test waits for a lease to run out.  A test lets a lease lapse in the
store (its deadline put in the past, what a long page does to a lease
nobody extends) and then lets the heartbeat thread run one round
(``h.beats.beat()``); what the leases index holds afterwards is the outcome.
"""

from __future__ import annotations

import pytest

from jobs.records import Dispatch
from jobs.transitions.spec import PULL
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.workers.runner_support import Harness, make
from workers import runner as runner_module


def lapse_then_beat(h: Harness, *job_ids: str) -> dict[str, object]:
    """Lets the leases of ``job_ids`` lapse, then one heartbeat round happen.

    Answers whether each lease now ends a full lease length after the round
    began, and what a sweep would then find expired.
    """
    for job_id in job_ids:
        h.lapse_lease(job_id)
    assert sorted(h.expired_leases()) == sorted(job_ids)
    round_began = h.store.now_ms()
    h.beats.beat()
    extended = [(h.lease(job_id) or 0) >= round_began + h.store.settings.lease_ms for job_id in job_ids]
    return {"extended": extended, "expired": h.expired_leases()}


def test_the_heartbeat_extends_the_lease_while_the_adapter_runs(h):
    job_id = h.single(b"slow")
    seen = {}

    def slow(document, options, on_page):
        seen.update(lapse_then_beat(h, job_id))
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.run(job_id) == "completed"

    assert seen == {"extended": [True], "expired": []}
    job = h.job(job_id)
    assert (job["status"], job["attempts"]) == ("completed", "1")
    assert "last_error_code" not in job


def test_a_lease_no_heartbeat_extended_is_reclaimed_and_the_attempt_discarded(h):
    """The control of the test above: the same lapse, and no round, loses the job to the sweep."""
    job_id = h.single()

    def stalled(document, options, on_page):
        h.lapse_lease(job_id)
        h.store.reclaim(h.expired_leases())
        return document.decode()

    h.adapter.behaviour = stalled

    assert h.runner.run(job_id) == "discarded"
    assert h.job(job_id)["status"] == "queued"


def test_the_heartbeat_notices_a_lost_lease_and_the_next_page_stops_the_run(h):
    job_id = h.single()
    lost = {}

    def watched(document, options, on_page):
        h.take_over(job_id)
        h.beats.beat()
        try:
            on_page(1, 1)
        except Exception as exc:  # noqa: BLE001 - what the runner sees
            lost["error"] = type(exc).__name__
        return "late"

    h.adapter.behaviour = watched

    assert h.runner.run(job_id) == "discarded"
    assert lost == {"error": "LeaseLost"}


def test_the_heartbeat_extends_the_lease_of_a_child_run_in_a_kept_slot(h, caplog):
    parent_id, _ = h.group(2, max_parallel=1)
    kept = f"{parent_id}-1"
    seen = {}

    def second_is_slow(document, options, on_page):
        if document == b"child 1":
            seen.update(lapse_then_beat(h, kept))
        return document.decode()

    h.adapter.behaviour = second_is_slow

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert seen == {"extended": [True], "expired": []}
    assert (h.job(kept)["status"], h.job(kept)["attempts"]) == ("completed", "1")
    assert "lease lost" not in caplog.text


def test_the_next_job_s_lease_is_extended_while_the_wake_ups_are_published(monkeypatch, caplog):
    """An uncapped group released two at a time: completing child 0 releases
    children 2 and 3, keeps the slot for child 1 (queued first) and publishes a wake-up, slowly."""
    h = make(monkeypatch, release_batch=2)
    parent_id, first = h.group(4, max_parallel=0)
    assert [(d.job_id, d.task) for d in first] == [("", PULL)] * 2
    kept = f"{parent_id}-1"
    seen = {}

    def slow_publish(dispatches):
        if dispatches:
            seen.update(lapse_then_beat(h, kept))  # a broker that takes longer than a lease to answer
        h.published.append(list(dispatches))
        return len(dispatches)

    h.runner.publish = slow_publish

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"

    # One wake-up of the creation was taken by this worker, the other still counts: one more is asked for.
    assert [d for batch in h.published for d in batch] == [Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]
    assert seen == {"extended": [True], "expired": []}
    assert (h.job(kept)["status"], h.job(kept)["attempts"]) == ("completed", "1")
    assert "lease lost" not in caplog.text  # nor for child 0, finished before the publishing


def test_one_heartbeat_extends_the_leases_of_every_claim_a_process_holds(h):
    """A thread pool runs several jobs in one process: each claim is beaten for until released."""
    claims = [h.store.claim(h.single(f"job {i}".encode())) for i in range(2)]
    heartbeat = runner_module.Heartbeat(h.store, h.store.settings.lease_seconds / 3, h.beats.sleep)
    job_ids = [claim.job_id for claim in claims]

    for claim in claims:
        heartbeat.hold(claim)
    both_held = lapse_then_beat(h, *job_ids)
    heartbeat.release(claims[0])
    one_released = lapse_then_beat(h, *job_ids)
    heartbeat.release(claims[1])

    assert both_held == {"extended": [True, True], "expired": []}
    assert one_released == {"extended": [False, True], "expired": [job_ids[0]]}


def test_a_heartbeat_thread_that_cannot_start_leaves_its_job_to_the_lease(h, monkeypatch):
    """The process could not start a thread: the job is left to its lease,
    and no later heartbeat extends it as an orphan."""
    stuck, later = h.single(b"stuck"), h.single(b"later")

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as m:
        m.setattr(runner_module.threading.Thread, "start", no_thread)
        with pytest.raises(RuntimeError):
            h.runner.run(stuck)
    seen = {}

    def slow(document, options, on_page):
        seen.update(lapse_then_beat(h, stuck, later))
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.run(later) == "completed"
    assert seen == {"extended": [False, True], "expired": [stuck]}
