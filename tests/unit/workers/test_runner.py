"""The runner, one attempt at a time, against fakeredis (which runs the real Lua).

The adapter is a fake whose behaviour each test scripts, and publishing is
recorded instead of sent, so every outcome of ``Runner.run`` is checked
from what the store holds afterwards: completed, failed (permanent error,
adapter bug, last attempt, timeout), retried, discarded (the lease was
lost to another attempt) and skipped (a duplicate message).
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

import fakeredis
import pytest
from celery.exceptions import SoftTimeLimitExceeded

from jobs import keys
from jobs.config import Settings
from jobs.errors import AdapterError, InvalidDocument
from jobs.records import Dispatch, NewJob
from jobs.store import JobStore
from workers import runner as runner_module
from workers.adapters.base import OcrResult, PageResult
from workers.runner import Runner

SETTINGS = Settings(max_attempts=3, lease_seconds=30.0, retry_backoff=2.0, requeue_seconds=60.0)


def text(value):
    return value.decode() if isinstance(value, bytes) else value


def result_of(text_: str) -> OcrResult:
    return OcrResult(pages=[PageResult(page=1, text=text_, lines=[])])


class FakeAdapter:
    """Runs ``behaviour(document, options, on_page)`` and wraps a returned str as a result."""

    name = "fake"

    def __init__(self):
        self.behaviour = lambda document, options, on_page: document.decode()
        self.calls = 0

    def run(self, document, content_type, options, on_page=None):
        self.calls += 1
        outcome = self.behaviour(document, options, on_page)
        return result_of(outcome) if isinstance(outcome, str) else outcome


class Harness:
    def __init__(self, settings: Settings, monkeypatch: pytest.MonkeyPatch):
        self.store = JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), settings)
        self.r = self.store.redis
        self.published: list[list[Dispatch]] = []
        self.adapter = FakeAdapter()
        monkeypatch.setattr(runner_module, "get_adapter", lambda model: self.adapter)
        self.runner = Runner(self.store, self._publish)

    def _publish(self, dispatches):
        self.published.append(list(dispatches))
        return len(dispatches)

    def single(self, payload: bytes = b"hello") -> str:
        job = NewJob(model="echo", content_type="text/plain", payload=payload)
        return self.store.create_single(job).job_id

    def group(self, n: int, max_parallel: int) -> tuple[str, list[Dispatch]]:
        jobs = [NewJob(model="echo", content_type="text/plain", payload=f"child {i}".encode()) for i in range(n)]
        created = self.store.create_group(jobs, max_parallel)
        return created.job_id, created.dispatches

    def job(self, job_id: str) -> dict[str, str]:
        return {text(k): text(v) for k, v in self.r.hgetall(keys.job(job_id)).items()}

    def events(self, job_id: str) -> list[dict[str, str]]:
        return [{text(k): text(v) for k, v in raw.items()}
                for _, raw in self.r.xrange(keys.events(job_id)) if raw[b"job_id"].decode() == job_id]

    def lease(self, job_id: str) -> float | None:
        return self.r.zscore(keys.LEASES, job_id)

    def queued_deadline(self, job_id: str) -> float | None:
        return self.r.zscore(keys.QUEUED, job_id)

    def snapshot(self) -> dict:
        return {key: self.r.dump(key) for key in sorted(self.r.keys("*"))}

    def take_over(self, job_id: str) -> int:
        """What the sweep and another worker do to a stalled attempt: reclaim, claim again."""
        self.r.zadd(keys.LEASES, {job_id: 1}, xx=True)
        assert self.store.reclaim([job_id]).requeued, self.job(job_id)
        claim = self.store.claim(job_id)
        assert claim is not None
        return claim.attempt


@pytest.fixture
def h(monkeypatch) -> Harness:
    return Harness(SETTINGS, monkeypatch)


def make(monkeypatch, **overrides) -> Harness:
    return Harness(replace(SETTINGS, **overrides), monkeypatch)


# -- completed ------------------------------------------------------------------------------


def test_a_successful_attempt_completes_the_job_with_its_result(h):
    job_id = h.single(b"hello")

    assert h.runner.run(job_id) == "completed"

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("completed", "1", "")
    assert h.store.result(job_id)["text"] == "hello"
    assert h.lease(job_id) is None and h.queued_deadline(job_id) is None
    assert [e["status"] for e in h.events(job_id)] == ["completed"]


def test_with_keep_slot_off_completing_a_child_publishes_the_child_released_into_its_slot(monkeypatch):
    h = make(monkeypatch, keep_slot_seconds=0.0)
    parent_id, first = h.group(3, max_parallel=1)
    assert [d.job_id for d in first] == [f"{parent_id}-0"]

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert h.published == [[Dispatch(f"{parent_id}-1", "echo")]]
    assert h.job(f"{parent_id}-1")["status"] == "queued"


# -- keeping the slot -----------------------------------------------------------------------


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def with_clock(h: Harness, **runner_args) -> FakeClock:
    clock = FakeClock()
    h.runner = Runner(h.store, h._publish, clock=clock, **runner_args)
    return clock


def test_a_worker_keeps_its_slot_and_runs_the_children_released_into_it_without_messages(h):
    parent_id, _ = h.group(3, max_parallel=1)
    children = [f"{parent_id}-{i}" for i in range(3)]

    assert h.runner.run(children[0]) == "completed"

    assert h.adapter.calls == 3
    assert [d for batch in h.published for d in batch] == []
    jobs = [h.job(c) for c in children]
    assert [(j["status"], j["attempts"]) for j in jobs] == [("completed", "1")] * 3
    assert [h.store.result(c)["text"] for c in children] == ["child 0", "child 1", "child 2"]
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

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert h.adapter.calls == 2  # child 0, then child 1 in the kept slot (0.6 s in)
    assert [d for batch in h.published for d in batch] == [Dispatch(f"{parent_id}-2", "echo")]
    assert h.job(f"{parent_id}-2")["status"] == "queued" and h.queued_deadline(f"{parent_id}-2") is not None
    assert h.job(f"{parent_id}-3")["status"] == "held"


def test_a_worker_that_is_shutting_down_keeps_no_slot(h):
    with_clock(h, draining=lambda: True)
    parent_id, _ = h.group(2, max_parallel=1)

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert h.adapter.calls == 1
    assert h.published == [[Dispatch(f"{parent_id}-1", "echo")]]


def test_only_a_child_of_the_same_model_runs_in_the_kept_slot(h):
    jobs = [NewJob(model="echo", content_type="text/plain", payload=b"a"),
            NewJob(model="tesseract", content_type="image/png", payload=b"b")]
    parent_id = h.store.create_group(jobs, max_parallel=1).job_id

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert h.adapter.calls == 1
    assert h.published == [[Dispatch(f"{parent_id}-1", "tesseract")]]
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
        raise AdapterError("engine went away", code="engine_crashed")

    h.adapter.behaviour = transient

    assert h.runner.run(f"{parent_id}-0") == "retried"

    assert h.adapter.calls == 1
    assert [h.job(f"{parent_id}-{i}")["status"] for i in range(2)] == ["queued", "held"]


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
    raise AdapterError("engine went away", code="engine_crashed")


def test_a_transient_error_gives_the_job_back_with_a_doubling_backoff(h):
    job_id = h.single()
    h.adapter.behaviour = transient

    for attempt, backoff_s in ((1, 2.0), (2, 4.0)):
        before = h.store.now_ms()
        assert h.runner.run(job_id) == "retried"
        after = h.store.now_ms()

        job = h.job(job_id)
        assert (job["status"], job["attempts"], job["stage"]) == ("queued", str(attempt), "retrying")
        assert (job["last_error_code"], job["last_error"]) == ("engine_crashed", "engine went away")
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
    assert h.store.result(job_id)["text"] == "third time lucky"
    assert len(h.events(job_id)) == 1


def test_a_transient_error_on_the_last_attempt_fails_the_job(h):
    job_id = h.single()
    h.adapter.behaviour = transient

    assert [h.runner.run(job_id) for _ in range(3)] == ["retried", "retried", "failed"]

    job = h.job(job_id)
    assert (job["status"], job["attempts"], job["error_code"]) == ("failed", "3", "engine_crashed")
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

    assert h.runner.run(f"{parent_id}-0") == "failed"

    child = h.job(f"{parent_id}-0")
    assert (child["status"], child["attempts"], child["error_code"]) == ("failed", "1", "timeout")
    assert child["error"] == "the job ran longer than 300 s"
    assert h.published == [[Dispatch(f"{parent_id}-1", "echo")]]


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
    assert h.store.result(job_id)["text"] == "made it"
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
    assert h.store.result(job_id) is None and h.events(job_id) == []
    assert h.lease(job_id) is not None  # attempt 2's lease, untouched

    h.store.complete(job_id, 2, {"text": "attempt 2"})
    assert h.store.result(job_id) == {"text": "attempt 2"}


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
    assert h.store.result(job_id) == {"text": "attempt 2"}
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
    assert h.store.result(job_id) is None


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


# -- the heartbeat --------------------------------------------------------------------------------------


def block_past_the_lease(h: Harness, job_id: str, seen: dict, seconds: float = 1.2) -> None:
    """Blocks four 0.3 s leases long; records whether the lease was renewed meanwhile
    and what a sweep would then find expired."""
    first = h.lease(job_id)
    time.sleep(seconds)
    seen["renewed"] = h.lease(job_id) > first
    seen["expired"] = h.store.expired_leases(h.store.now_ms(), 10)


def test_the_heartbeat_keeps_the_lease_while_the_adapter_blocks_past_it(monkeypatch):
    h = make(monkeypatch, lease_seconds=0.3)
    job_id = h.single(b"slow")
    seen = {}

    def slow(document, options, on_page):
        block_past_the_lease(h, job_id, seen)
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.run(job_id) == "completed"

    assert seen == {"renewed": True, "expired": []}
    job = h.job(job_id)
    assert (job["status"], job["attempts"]) == ("completed", "1")
    assert "last_error_code" not in job


def test_without_a_heartbeat_the_sweep_would_reclaim_a_job_that_blocks_past_its_lease(monkeypatch):
    """The control of the test above: the same wait with the heartbeat stopped loses the job."""
    h = make(monkeypatch, lease_seconds=0.3)
    monkeypatch.setattr(runner_module.Heartbeat, "_beat_once", lambda self, claim, lost: None)
    job_id = h.single()

    def slow(document, options, on_page):
        time.sleep(0.6)
        h.store.reclaim(h.store.expired_leases(h.store.now_ms(), 10))
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.run(job_id) == "discarded"
    assert h.job(job_id)["status"] == "queued"


def test_the_heartbeat_notices_a_lost_lease(monkeypatch):
    h = make(monkeypatch, lease_seconds=0.15)
    job_id = h.single()
    lost = {}

    def watched(document, options, on_page):
        h.take_over(job_id)
        time.sleep(0.3)  # several beats
        try:
            on_page(1, 1)
        except Exception as exc:  # noqa: BLE001 - what the runner sees
            lost["error"] = type(exc).__name__
        return "late"

    h.adapter.behaviour = watched

    assert h.runner.run(job_id) == "discarded"
    assert lost == {"error": "LeaseLost"}


def test_results_are_stored_as_json(h):
    job_id = h.single("ünïcode".encode())

    h.runner.run(job_id)

    raw = h.r.get(keys.result(job_id))
    assert json.loads(raw)["pages"][0]["text"] == "ünïcode"


# -- the heartbeat and kept slots -----------------------------------------------------------------------


def test_the_heartbeat_keeps_the_lease_of_a_child_run_in_a_kept_slot(monkeypatch, caplog):
    h = make(monkeypatch, lease_seconds=0.3)
    parent_id, _ = h.group(2, max_parallel=1)
    kept = f"{parent_id}-1"
    seen = {}

    def second_is_slow(document, options, on_page):
        if document == b"child 1":
            block_past_the_lease(h, kept, seen)
        return document.decode()

    h.adapter.behaviour = second_is_slow

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert seen == {"renewed": True, "expired": []}
    assert (h.job(kept)["status"], h.job(kept)["attempts"]) == ("completed", "1")
    assert "lease lost" not in caplog.text


def test_the_next_child_s_lease_is_kept_while_the_other_released_children_are_published(monkeypatch, caplog):
    """An uncapped group released two at a time: completing child 0 releases
    children 2 and 3, keeps the slot for 2 and publishes 3, slowly."""
    h = make(monkeypatch, lease_seconds=0.3, release_batch=2)
    parent_id, first = h.group(4, max_parallel=0)
    assert [d.job_id for d in first] == [f"{parent_id}-0", f"{parent_id}-1"]
    kept = f"{parent_id}-2"
    seen = {}

    def slow_publish(dispatches):
        if dispatches:
            before = h.lease(kept)
            time.sleep(1.2)  # a broker that takes four leases to answer
            seen["renewed"] = h.lease(kept) > before
            seen["expired"] = h.store.expired_leases(h.store.now_ms(), 10)
        h.published.append(list(dispatches))
        return len(dispatches)

    h.runner.publish = slow_publish

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert [d for batch in h.published for d in batch] == [Dispatch(f"{parent_id}-3", "echo")]
    assert seen == {"renewed": True, "expired": []}
    assert (h.job(kept)["status"], h.job(kept)["attempts"]) == ("completed", "1")
    assert "lease lost" not in caplog.text  # nor for child 0, finished before the publishing


def test_a_kept_child_that_hits_the_time_limit_fails_and_keeps_no_slot(h):
    parent_id, _ = h.group(3, max_parallel=1)

    def second_hangs(document, options, on_page):
        if document == b"child 1":
            raise SoftTimeLimitExceeded()
        return document.decode()

    h.adapter.behaviour = second_hangs

    assert h.runner.run(f"{parent_id}-0") == "completed"

    assert [h.job(f"{parent_id}-{i}")["status"] for i in range(3)] == ["completed", "failed", "queued"]
    assert h.job(f"{parent_id}-1")["error_code"] == "timeout"
    assert [d for batch in h.published for d in batch] == [Dispatch(f"{parent_id}-2", "echo")]


def test_one_heartbeat_keeps_the_leases_of_every_claim_a_process_holds(monkeypatch):
    """A thread pool runs several jobs in one process: each claim is beaten for until released."""
    h = make(monkeypatch, lease_seconds=0.3)
    claims = [h.store.claim(h.single(f"job {i}".encode())) for i in range(2)]
    heartbeat = runner_module.Heartbeat(h.store, 0.1)
    firsts = [h.lease(c.job_id) for c in claims]

    for claim in claims:
        heartbeat.hold(claim)
    time.sleep(0.6)
    heartbeat.release(claims[0])
    renewed = [h.lease(c.job_id) > first for c, first in zip(claims, firsts)]
    released_at = h.lease(claims[0].job_id)
    time.sleep(0.4)

    assert renewed == [True, True]
    assert h.lease(claims[0].job_id) == released_at  # no longer beaten for
    assert h.lease(claims[1].job_id) > released_at
    heartbeat.release(claims[1])


def test_a_heartbeat_thread_that_cannot_start_leaves_its_job_to_the_lease(monkeypatch):
    """The process could not start a thread: the job is left to its lease,
    and no later heartbeat renews it as an orphan."""
    h = make(monkeypatch, lease_seconds=0.3)
    stuck, later = h.single(b"stuck"), h.single(b"later")

    def no_thread(self):
        raise RuntimeError("can't start new thread")

    with monkeypatch.context() as m:
        m.setattr(runner_module.threading.Thread, "start", no_thread)
        with pytest.raises(RuntimeError):
            h.runner.run(stuck)
    seen = {}

    def slow(document, options, on_page):
        time.sleep(0.9)  # three leases, the heartbeat running
        seen["expired"] = h.store.expired_leases(h.store.now_ms(), 10)
        return document.decode()

    h.adapter.behaviour = slow

    assert h.runner.run(later) == "completed"
    assert seen["expired"] == [stuck]
