"""A worker that finishes a job keeps its slot and runs the model's next ready job,
without a Celery message, within the keep-slot budget; past it, the ready job gets a wake-up.
"""

from __future__ import annotations

from celery.exceptions import SoftTimeLimitExceeded

from jobs.contract import ErrorCode
from jobs.errors import AdapterError, InvalidDocument
from jobs.records import Dispatch, GroupRules, NewJob
from jobs.transitions.spec import PULL
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.workers.runner_support import Harness, make
from workers.runner import Runner


def wake_up(model: str = "echo") -> Dispatch:
    return Dispatch("", model, PULL, "batch", PINNED_BUCKET)


def published(h: Harness) -> list[Dispatch]:
    return [d for batch in h.published for d in batch]


def test_with_keep_slot_off_completing_a_child_wakes_a_worker_for_the_child_released_into_its_slot(monkeypatch):
    h = make(monkeypatch, keep_slot_seconds=0.0)
    parent_id, first = h.group(3, max_parallel=1)
    assert first == [wake_up()]

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"  # the wake-up: child 0, the first ready job

    assert published(h) == [wake_up()]
    assert h.job(f"{parent_id}-1")["status"] == "queued"


def test_a_wake_up_that_finds_no_ready_job_is_skipped(h):
    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "skipped"
    assert h.adapter.calls == 0


# -- keeping the slot -----------------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def with_clock(h: Harness, **runner_args) -> FakeClock:
    clock = FakeClock()
    h.runner = Runner(h.store, h._publish, clock=clock, heartbeat_sleep=h.beats.sleep, **runner_args)
    return clock


def test_a_worker_keeps_its_slot_and_runs_the_children_released_into_it_without_messages(h):
    parent_id, _ = h.group(3, max_parallel=1)
    children = [f"{parent_id}-{i}" for i in range(3)]

    assert h.runner.run(children[0]) == "completed"

    assert h.adapter.calls == 3
    assert [d for batch in h.published for d in batch] == []
    jobs = [h.job(c) for c in children]
    assert [(j["status"], j["attempts"]) for j in jobs] == [("completed", "1")] * 3
    assert [h.store.queries.result(c)["text"] for c in children] == ["child 0", "child 1", "child 2"]
    # The slot passed straight on: each child started as its predecessor finished.
    assert jobs[1]["started_at"] == jobs[0]["finished_at"] and jobs[2]["started_at"] == jobs[1]["finished_at"]
    assert h.job(parent_id)["status"] == "completed"
    assert h.lease(children[2]) is None and h.queued_deadline(children[2]) is None
    assert [e["status"] for e in h.events(parent_id)] == ["completed"]
    assert all(len(h.events(c)) == 1 for c in children)


def test_past_the_keep_slot_budget_the_next_child_is_published_instead(h):
    clock = with_clock(h)
    parent_id, _ = h.group(4, max_parallel=1)

    def slow(document, options, on_page):
        clock.now += 0.6  # SETTINGS.keep_slot_seconds is 1.0
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"

    assert h.adapter.calls == 2  # child 0, then child 1 in the kept slot (0.6 s in)
    assert published(h) == [wake_up()]
    assert h.job(f"{parent_id}-2")["status"] == "queued" and h.queued_deadline(f"{parent_id}-2") is not None
    assert h.job(f"{parent_id}-3")["status"] == "held"


def test_a_worker_that_is_shutting_down_keeps_no_slot(h):
    with_clock(h, draining=lambda: True)
    parent_id, _ = h.group(2, max_parallel=1)

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"

    assert h.adapter.calls == 1
    assert published(h) == [wake_up()]


def test_while_an_interactive_job_waits_in_the_broker_a_worker_keeps_no_slot(h):
    """With more than one bucket, another bucket's interactive job is known only by its wake-up in the
    broker: the worker then ends its task, its next child gets a wake-up, and the broker's interactive
    queue comes first."""
    asked = []

    def waiting() -> bool:
        asked.append(True)
        return len(asked) > 1  # from the second hand-off on

    with_clock(h, interactive_waiting=waiting)
    parent_id, _ = h.group(3, max_parallel=1)

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"

    assert h.adapter.calls == 2  # child 0, child 1 in the kept slot; then the interactive job's turn
    assert published(h) == [wake_up()]
    assert h.job(f"{parent_id}-2")["status"] == "queued"


def test_only_a_job_of_the_same_model_runs_in_the_kept_slot(h):
    jobs = [
        NewJob(model="echo", content_type="text/plain", payload=b"a"),
        NewJob(model="tesseract", content_type="image/png", payload=b"b"),
    ]
    parent_id = h.store.create_group(jobs, GroupRules(1)).job_id

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert h.adapter.calls == 1
    assert published(h) == [wake_up("tesseract")]
    assert h.job(f"{parent_id}-1")["status"] == "queued"


def test_a_failed_child_hands_its_kept_slot_on_too(h):
    parent_id, _ = h.group(2, max_parallel=1)

    def first_fails(document, options, on_page):
        if document == b"child 0":
            raise InvalidDocument("not a document")
        return document.decode()

    h.adapter.behaviour = first_fails

    assert h.runner.run(f"{parent_id}-0") == "failed"

    assert [h.job(f"{parent_id}-{i}")["status"] for i in range(2)] == ["failed", "completed"]
    assert h.job(parent_id)["status"] == "failed"
    assert [d for batch in h.published for d in batch] == []


def test_a_retried_child_keeps_its_slot_for_its_own_retry(h):
    parent_id, _ = h.group(2, max_parallel=1)

    def transient(document, options, on_page):
        raise AdapterError("engine went away", code=ErrorCode.ENGINE_UNAVAILABLE)

    h.adapter.behaviour = transient

    assert h.runner.run(f"{parent_id}-0") == "retried"

    assert h.adapter.calls == 1
    assert [h.job(f"{parent_id}-{i}")["status"] for i in range(2)] == ["queued", "held"]


def test_a_kept_child_that_hits_the_time_limit_fails_and_keeps_no_slot(h):
    parent_id, _ = h.group(3, max_parallel=1)

    def second_hangs(document, options, on_page):
        if document == b"child 1":
            raise SoftTimeLimitExceeded()
        return document.decode()

    h.adapter.behaviour = second_hangs

    assert h.runner.pull("echo", "batch", PINNED_BUCKET) == "completed"

    assert [h.job(f"{parent_id}-{i}")["status"] for i in range(3)] == ["completed", "failed", "queued"]
    assert h.job(f"{parent_id}-1")["error_code"] == "timeout"
    assert published(h) == [wake_up()]


def test_children_of_a_split_read_their_pages_of_the_parents_document_fetched_once(h, monkeypatch):
    source = b"page 1\fpage 2\fpage 3"
    children = [NewJob("echo", "text/plain", b"", source_pages=(n, n)) for n in (1, 2, 3)]
    parent_id = h.store.create_group(children, GroupRules(1), source=source).job_id
    reads: list[str] = []
    fetch = h.store.queries.source_document

    def counted_fetch(job_id: str):
        reads.append(job_id)
        return fetch(job_id)

    monkeypatch.setattr(h.store.queries, "source_document", counted_fetch)
    seen = []

    def behaviour(document, options, on_page):
        seen.append((document, h.adapter.pages))
        return "ok"

    h.adapter.behaviour = behaviour

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert seen == [(source, (1, 1)), (source, (2, 2)), (source, (3, 3))]
    assert reads == [f"{parent_id}-0"]  # the kept slots' children read the document this process kept


def test_a_split_child_whose_document_is_gone_fails_as_an_invalid_document(h):
    parent_id = h.store.create_group(
        [NewJob("echo", "text/plain", b"", source_pages=(1, 1))], GroupRules(0), source=b"x"
    ).job_id
    h.r.delete(keys.payload(parent_id))

    assert h.runner.run(f"{parent_id}-0") == "failed"
    assert h.job(f"{parent_id}-0")["error_code"] == "invalid_document"
