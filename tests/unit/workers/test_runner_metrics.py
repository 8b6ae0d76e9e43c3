"""What the runner counts: each attempt's start and end, the jobs it ended, their pages, and the hand-offs."""

from __future__ import annotations

import logging

from jobs.contract import ErrorCode
from jobs.errors import AdapterError, EchoFailed
from jobs.records import GroupRules, NewJob
from observability import logs
from tests.unit.observability.support import Counts
from tests.unit.workers.runner_support import make

JOB_STARTS, ATTEMPTS, FINISHED = "ocrgw_job_starts_total", "ocrgw_job_attempts_total", "ocrgw_jobs_finished_total"


def one_page(document, options, on_page):
    on_page(1, 1)
    return document.decode()


def test_a_completed_single_job_counts_one_start_one_end_its_duration_and_its_page(h):
    h.adapter.behaviour = one_page
    job_id = h.single()
    counts = Counts()

    assert h.runner.run(job_id) == "completed"

    assert counts.delta(JOB_STARTS, model="echo", path="message") == 1
    assert counts.delta(ATTEMPTS, model="echo", outcome="completed") == 1
    assert counts.delta(FINISHED, model="echo", status="completed") == 1
    assert counts.delta("ocrgw_job_duration_seconds_count", model="echo", status="completed") == 1
    assert counts.delta("ocrgw_page_duration_seconds_count", model="echo") == 1
    # Not a child: no hand-off.
    assert counts.delta("ocrgw_handoff_latency_seconds_count", path="message") == 0


def test_every_page_is_timed(h):
    def three_pages(document, options, on_page):
        for page in (1, 2, 3):
            on_page(page, 3)
        return "text"

    h.adapter.behaviour = three_pages
    job_id = h.single()
    counts = Counts()

    h.runner.run(job_id)

    assert counts.delta("ocrgw_page_duration_seconds_count", model="echo") == 3


def test_a_failed_job_counts_as_failed_and_a_retried_attempt_only_as_an_attempt(monkeypatch):
    h = make(monkeypatch, max_attempts=2, keep_slot_seconds=0.0)  # one job per task
    failing, flaky = h.single(b"bad"), h.single(b"flaky")

    def behaviour(document, options, on_page):
        if document == b"bad":
            raise EchoFailed("unreadable")
        raise AdapterError("engine busy", code=ErrorCode.ENGINE_UNAVAILABLE)

    h.adapter.behaviour = behaviour
    counts = Counts()

    assert (h.runner.run(failing), h.runner.run(flaky)) == ("failed", "retried")

    assert counts.delta(FINISHED, model="echo", status="failed") == 1
    assert counts.delta(ATTEMPTS, model="echo", outcome="failed") == 1
    assert counts.delta(ATTEMPTS, model="echo", outcome="retried") == 1
    assert counts.delta("ocrgw_job_duration_seconds_count", model="echo", status="failed") == 1


def test_children_run_in_a_kept_slot_count_as_such_and_hand_over_in_no_time(h):
    parent_id, _ = h.group(3, max_parallel=1)
    counts = Counts()

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert counts.delta(JOB_STARTS, model="echo", path="message") == 1
    assert counts.delta(JOB_STARTS, model="echo", path="kept_slot") == 2
    assert counts.delta(FINISHED, model="echo", status="completed") == 3
    assert counts.delta("ocrgw_handoff_latency_seconds_count", path="kept_slot") == 2
    assert counts.delta("ocrgw_handoff_latency_seconds_sum", path="kept_slot") == 0
    # The first child was released with its group, not into a freed slot.
    assert counts.delta("ocrgw_handoff_latency_seconds_count", path="message") == 0


def test_a_child_whose_slot_came_through_a_message_records_the_gap_from_its_predecessor_s_end(monkeypatch):
    h = make(monkeypatch, keep_slot_seconds=0.0)
    parent_id, _ = h.group(2, max_parallel=1)
    h.runner.run(f"{parent_id}-0")
    counts = Counts()

    assert h.runner.run(f"{parent_id}-1") == "completed"

    gap = (int(h.job(f"{parent_id}-1")["started_at"]) - int(h.job(f"{parent_id}-0")["finished_at"])) / 1e6
    assert counts.delta("ocrgw_handoff_latency_seconds_count", path="message") == 1
    assert counts.delta("ocrgw_handoff_latency_seconds_sum", path="message") == gap


def test_the_runner_s_lines_are_about_the_job_it_runs(h, caplog):
    parent_id, _ = h.group(2, max_parallel=1)
    seen = []

    def behaviour(document, options, on_page):
        logging.getLogger("workers.adapters.fake").warning("reading %s", document.decode())
        return "text"

    h.adapter.behaviour = behaviour

    class Recording(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            # JobContext sets the ids as attributes that LogRecord does not declare.
            seen.append((record.getMessage(), vars(record)["job_id"], vars(record)["parent_id"]))

    handler = Recording()
    handler.addFilter(logs.JobContext())
    logging.getLogger("workers.adapters.fake").addHandler(handler)
    try:
        h.runner.run(f"{parent_id}-0")
    finally:
        logging.getLogger("workers.adapters.fake").removeHandler(handler)

    assert seen == [
        ("reading child 0", f"{parent_id}-0", parent_id),
        ("reading child 1", f"{parent_id}-1", parent_id),
    ]
    assert logs.bound() is None  # what was bound before the run (nothing here) is bound again


def test_the_held_children_a_failing_fail_fast_child_cancels_count_as_cancelled_once_each(h):
    jobs = [NewJob(model="echo", content_type="text/plain", payload=f"child {i}".encode()) for i in range(5)]
    parent_id = h.store.create_group(jobs, GroupRules(max_parallel=1, fail_fast=True)).job_id

    def fail(document, options, on_page):
        raise EchoFailed("unreadable")

    h.adapter.behaviour = fail
    counts = Counts()

    assert h.runner.run(f"{parent_id}-0") == "failed"

    assert h.job(parent_id)["status"] == "failed"
    # The child that ran, and the four held ones its failure cancelled before they started.
    assert counts.delta(FINISHED, model="echo", status="failed") == 1
    assert counts.delta(FINISHED, model="echo", status="cancelled") == 4
    assert counts.delta(ATTEMPTS, model="echo", outcome="cancelled") == 0


QUEUE_WAIT = "ocrgw_queue_wait_seconds"


def test_a_job_s_queue_wait_is_recorded_once_at_its_first_attempt_from_the_claim_s_redis_times(monkeypatch):
    h = make(monkeypatch, max_attempts=2)
    flaky = h.single(b"flaky")
    tries = []

    def transient_once(document, options, on_page):
        tries.append(document)
        if len(tries) == 1:
            raise AdapterError("engine busy", code=ErrorCode.ENGINE_UNAVAILABLE)
        return "text"

    h.adapter.behaviour = transient_once
    counts = Counts()

    assert h.runner.run(flaky) == "retried"
    assert h.runner.run(flaky) == "completed"

    assert counts.delta(f"{QUEUE_WAIT}_count", model="echo") == 1


def test_children_in_kept_slots_record_their_queue_wait_too(h):
    parent_id, _ = h.group(3, max_parallel=1)
    counts = Counts()

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert counts.delta(f"{QUEUE_WAIT}_count", model="echo") == 3
    # Each from its own created_at to its own first started_at (µs, Redis time).
    children = [h.job(f"{parent_id}-{i}") for i in range(3)]
    waited = sum(int(c["started_at"]) - int(c["created_at"]) for c in children) / 1_000_000
    assert abs(counts.delta(f"{QUEUE_WAIT}_sum", model="echo") - waited) < 1e-9


def test_a_completed_job_counts_its_pages_and_bytes_and_every_attempt_its_engine_time(monkeypatch):
    h = make(monkeypatch, max_attempts=2, keep_slot_seconds=0.0)
    flaky, done = h.single(b"flaky"), h.single(b"twelve bytes")

    def behaviour(document, options, on_page):
        if document == b"flaky":
            raise AdapterError("engine busy", code=ErrorCode.ENGINE_UNAVAILABLE)
        on_page(1, 1)
        return document.decode()

    h.adapter.behaviour = behaviour
    counts = Counts()

    assert (h.runner.run(flaky), h.runner.run(done)) == ("retried", "completed")

    assert counts.delta("ocrgw_usage_pages_total", model="echo", source="ocr") == 1
    assert counts.delta("ocrgw_usage_pages_total", model="echo", source="text_layer") == 0
    assert counts.delta("ocrgw_usage_input_bytes_total", model="echo") == len(b"twelve bytes")
    # The time of the attempts that ended here (the retried one too) is counted, on the worker's clock.
    assert counts.delta("ocrgw_usage_engine_seconds_total", model="echo") > 0
    stored = h.store.queries.get(done)
    assert stored is not None and (stored["ocr_pages"], stored["input_bytes"]) == ("1", str(len(b"twelve bytes")))
