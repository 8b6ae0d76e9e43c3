"""The runner, one attempt at a time, against fakeredis (which runs the real Lua).

The adapter is a fake whose behaviour each test scripts, and publishing is
recorded instead of sent, so every outcome of ``Runner.run`` is checked
from what the store holds afterwards: completed, failed (permanent error,
adapter bug, last attempt, timeout), retried, discarded (the lease was
lost to another attempt) and skipped (a duplicate message).  Keeping a
slot is in ``test_runner_kept_slots.py``, the heartbeat in ``test_heartbeat.py``.
"""

from __future__ import annotations

import json

from celery.exceptions import SoftTimeLimitExceeded

from jobs.contract import ErrorCode
from jobs.errors import AdapterError, InvalidDocument
from jobs.records import Dispatch
from jobs.transitions.spec import PULL
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET

# -- completed ------------------------------------------------------------------------------


def test_a_successful_attempt_completes_the_job_with_its_result(h):
    job_id = h.single(b"hello")

    assert h.runner.run(job_id) == "completed"

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("completed", "1", "")
    assert h.store.queries.result(job_id)["text"] == "hello"
    assert h.lease(job_id) is None and h.queued_deadline(job_id) is None
    assert [e["status"] for e in h.events(job_id)] == ["completed"]


def test_results_are_stored_as_json(h):
    job_id = h.single("ünïcode".encode())

    h.runner.run(job_id)

    raw = h.r.get(keys.result(job_id))
    assert json.loads(raw)["pages"][0]["text"] == "ünïcode"


# -- failed ---------------------------------------------------------------------------------


def test_a_document_error_fails_at_once_though_attempts_remain(h):
    job_id = h.single()

    def bad(document, options, on_page):
        raise InvalidDocument("not a document")

    h.adapter.behaviour = bad

    assert h.runner.run(job_id) == "failed"

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("failed", "1", "invalid_document")
    assert h.queued_deadline(job_id) is None
    assert [e["error_code"] for e in h.events(job_id)] == ["invalid_document"]


def test_an_adapter_bug_fails_the_job_instead_of_the_worker(h):
    job_id = h.single()

    def bug(document, options, on_page):
        raise KeyError("oops")

    h.adapter.behaviour = bug

    assert h.runner.run(job_id) == "failed"

    job = h.job(job_id)
    assert (job["status"], job["error_code"]) == ("failed", "adapter_error")
    assert "KeyError" in job["error"]


def test_a_missing_payload_fails_as_an_invalid_document(h):
    job_id = h.single()
    h.r.delete(keys.payload(job_id))

    assert h.runner.run(job_id) == "failed"

    assert h.job(job_id)["error_code"] == "invalid_document"
    assert h.adapter.calls == 0


# -- retried ----------------------------------------------------------------------------------


def transient(document, options, on_page):
    raise AdapterError("engine went away", code=ErrorCode.ENGINE_UNAVAILABLE)


def test_a_transient_error_gives_the_job_back_with_a_doubling_backoff(h):
    job_id = h.single()
    h.adapter.behaviour = transient

    for attempt, backoff_s in ((1, 2.0), (2, 4.0)):
        before = h.store.now_ms()
        assert h.runner.run(job_id) == "retried"
        after = h.store.now_ms()

        job = h.job(job_id)
        assert (job["status"], job["attempts"], job["stage"]) == ("queued", str(attempt), "retrying")
        assert (job["last_error_code"], job["last_error"]) == ("engine_unavailable", "engine went away")
        assert h.lease(job_id) is None
        # The sweep re-publishes it once the backoff has passed, not before.
        due = h.queued_deadline(job_id)
        assert before + backoff_s * 1000 <= due <= after + backoff_s * 1000
        assert h.events(job_id) == []
    assert h.published == []


def test_a_retried_job_completes_on_a_later_attempt(h):
    job_id = h.single(b"third time lucky")
    h.adapter.behaviour = transient
    assert h.runner.run(job_id) == "retried"

    h.adapter.behaviour = lambda document, options, on_page: document.decode()
    assert h.runner.run(job_id) == "completed"

    job = h.job(job_id)
    assert (job["status"], job["attempts"]) == ("completed", "2")
    assert h.store.queries.result(job_id)["text"] == "third time lucky"
    assert len(h.events(job_id)) == 1


def test_a_transient_error_on_the_last_attempt_fails_the_job(h):
    job_id = h.single()
    h.adapter.behaviour = transient

    assert [h.runner.run(job_id) for _ in range(3)] == ["retried", "retried", "failed"]

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("failed", "3", "engine_unavailable")
    assert h.queued_deadline(job_id) is None
    assert [e["status"] for e in h.events(job_id)] == ["failed"]


def test_a_retried_child_keeps_its_slot(h):
    parent_id, _ = h.group(2, max_parallel=1)
    h.adapter.behaviour = transient

    assert h.runner.run(f"{parent_id}-0") == "retried"

    parent = h.job(parent_id)
    assert (parent["n_queued"], parent["n_processing"], parent["n_held"]) == ("1", "0", "1")
    assert h.published == []


# -- timeout ------------------------------------------------------------------------------------


def test_the_time_limit_fails_the_job_with_timeout_and_frees_its_slot(h):
    parent_id, _ = h.group(2, max_parallel=1)

    def hung(document, options, on_page):
        raise SoftTimeLimitExceeded()

    h.adapter.behaviour = hung

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "failed"

    child = h.job(f"{parent_id}-0")
    assert (child["status"], child["attempts"], child["error_code"]) == ("failed", "1", "timeout")
    assert child["error"] == "the job ran longer than 300 s"
    # No slot kept: the child released into it gets a wake-up.
    assert [d for batch in h.published for d in batch] == [Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]
    assert h.job(f"{parent_id}-1")["status"] == "queued"


def test_the_time_limit_striking_while_the_result_is_written_still_ends_the_job(h, monkeypatch):
    job_id = h.single()

    def complete(*args, **kwargs):
        raise SoftTimeLimitExceeded()  # before the script ran

    monkeypatch.setattr(h.store, "complete", complete)

    assert h.runner.run(job_id) == "failed"
    assert h.job(job_id)["error_code"] == "timeout"


def test_the_time_limit_striking_after_the_result_was_written_keeps_the_result(h, monkeypatch):
    job_id = h.single(b"made it")
    real_complete = h.store.complete

    def complete(*args, **kwargs):
        real_complete(*args, **kwargs)
        raise SoftTimeLimitExceeded()  # the reply was on its way

    monkeypatch.setattr(h.store, "complete", complete)

    assert h.runner.run(job_id) == "discarded"  # the timeout finds the job finished
    job = h.job(job_id)
    assert (job["status"], job["error_code"]) == ("completed", "")
    assert h.store.queries.result(job_id)["text"] == "made it"
    assert len(h.events(job_id)) == 1


# -- discarded: the lease went to another attempt ---------------------------------------------------


def test_an_attempt_that_lost_its_lease_writes_nothing_over_the_attempt_holding_the_job(h):
    job_id = h.single(b"payload")

    def stalled(document, options, on_page):
        h.take_over(job_id)  # meanwhile, the sweep reclaimed the job and attempt 2 claimed it
        return "stale result of attempt 1"

    h.adapter.behaviour = stalled

    assert h.runner.run(job_id) == "discarded"

    job = h.job(job_id)
    assert (job["status"], job["attempts"]) == ("processing", "2")
    assert h.store.queries.result(job_id) is None and h.events(job_id) == []
    assert h.lease(job_id) is not None  # attempt 2's lease, untouched

    h.store.complete(job_id, 2, {"text": "attempt 2"})
    assert h.store.queries.result(job_id) == {"text": "attempt 2"}


def test_an_attempt_reporting_after_its_successor_finished_is_discarded(h):
    job_id = h.single()

    def overtaken(document, options, on_page):
        attempt = h.take_over(job_id)
        h.store.complete(job_id, attempt, {"text": "attempt 2"})
        raise InvalidDocument("attempt 1 would have failed it")

    h.adapter.behaviour = overtaken

    assert h.runner.run(job_id) == "discarded"

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("completed", "2", "")
    assert h.store.queries.result(job_id) == {"text": "attempt 2"}
    assert [e["status"] for e in h.events(job_id)] == ["completed"]


def test_a_lost_lease_stops_a_multi_page_run_at_the_next_page(h):
    job_id = h.single()
    pages_done = []

    def multi_page(document, options, on_page):
        for page in (1, 2, 3):
            pages_done.append(page)
            if page == 2:
                h.take_over(job_id)
            on_page(page, 3)
        return "all pages"

    h.adapter.behaviour = multi_page

    assert h.runner.run(job_id) == "discarded"

    assert pages_done == [1, 2]
    job = h.job(job_id)
    assert (job["attempts"], job["stage"]) == ("2", "started")  # attempt 1's progress went nowhere


def test_an_attempt_whose_job_was_deleted_meanwhile_is_discarded(h):
    job_id = h.single()

    def deleted(document, options, on_page):
        h.r.delete(keys.job(job_id))
        return "nobody wants this"

    h.adapter.behaviour = deleted

    assert h.runner.run(job_id) == "discarded"
    assert h.store.queries.result(job_id) is None


# -- skipped: a duplicate message ----------------------------------------------------------------------


def test_a_duplicate_message_for_a_running_or_finished_job_is_a_no_op(h):
    job_id = h.single()
    assert h.store.claim(job_id) is not None
    before = h.snapshot()

    assert h.runner.run(job_id) == "skipped"
    assert h.snapshot() == before
    assert h.adapter.calls == 0

    h.store.complete(job_id, 1, {"text": "done"})
    finished = h.snapshot()
    assert h.runner.run(job_id) == "skipped"
    assert h.snapshot() == finished


def test_a_message_for_a_held_child_is_a_no_op(h):
    parent_id, _ = h.group(2, max_parallel=1)

    assert h.runner.run(f"{parent_id}-1") == "skipped"
    assert h.job(f"{parent_id}-1")["status"] == "held"
