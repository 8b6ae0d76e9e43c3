"""Attempts at jobs: claim, run the adapter, complete.

The outcome of every attempt is written by a transition that checks the
attempt token from the claim, so a worker that lost its lease (it stalled,
and the sweep handed the job to another worker) can never overwrite the
result of the attempt that replaced it.

A worker that finishes a job keeps going: ``complete`` claims the model's
next ready job for it, whichever group or single job is next in the order
jobs were queued (interactive first), and the worker runs it at once, with
no Celery message (``OCRGW_KEEP_SLOT_SECONDS``; see ``Runner.run``).  Idle
workers come through wake-ups (``Runner.pull``): a message per ready job no
worker is on its way to, not one per job.

``Runner.run`` answers what became of the attempt at the job it was given:

============  ===========================================================
completed     the adapter's result is stored
failed        a permanent error, the last attempt's transient error, an
              adapter bug (``adapter_error``), the job's time limit
              (``timeout``), or its memory (``resource_limit``)
retried       a transient error (one the catalogue, ``jobs.contract.ErrorCode``,
              retries) with attempts left: the job is queued again
              and the sweep re-publishes it once the backoff has passed
discarded     this attempt no longer holds the job (its lease expired and
              the sweep gave the job to another attempt, or the job was
              deleted meanwhile): nothing written
cancelled     a client cancelled the job while it ran: it stopped at the
              next page and ended cancelled
skipped       the job was not claimable (a duplicate or late message), or a
              wake-up found no job ready
============  ===========================================================
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from celery.exceptions import SoftTimeLimitExceeded

from jobs.contract import ErrorCode, Field, JobStatus
from jobs.errors import AdapterError, CancelRequested, InvalidDocument, JobNotFound, LeaseLost, NotProcessing
from jobs.records import Claim, Completion, Dispatch
from jobs.registry import MODELS, Location
from jobs.store import JobStore
from jobs.usage import JobUnits, input_bytes_of
from observability import logs, metrics, tracing
from workers.adapters import get_adapter

log = logging.getLogger(__name__)

# What became of an attempt: one that ended its job is named by the status it left.
COMPLETED, FAILED, CANCELLED = JobStatus.COMPLETED.value, JobStatus.FAILED.value, JobStatus.CANCELLED.value
RETRIED, DISCARDED, SKIPPED = "retried", "discarded", "skipped"
# How an attempt came to this worker: a Celery message naming it, a wake-up (the model's next ready job),
# or taken as the previous job ended (a kept slot).
MESSAGE, PULLED, KEPT_SLOT = "message", "pulled", "kept_slot"


class Heartbeat:
    """Extends the leases of the jobs this process runs, from a thread of its own.

    One thread per process, started with the first job, beats for every
    claim held (one with the prefork and solo pools, one per thread with a
    thread pool): starting and joining a thread per job cost more than a
    no-op job itself.  The adapters release the GIL inside the engines (a
    Tesseract subprocess, ONNX Runtime, a sleep), so the beat goes on however
    long a page takes.  A claim's ``lost`` event is set once the store says
    that attempt no longer holds its job.
    """

    def __init__(self, store: JobStore, every_seconds: float, sleep: Callable[[float], None] = time.sleep):
        self._store, self._every, self._sleep = store, every_seconds, sleep
        self._lock = threading.Lock()
        self._held: dict[int, tuple[Claim, threading.Event]] = {}  # by id() of the claim
        self._thread: threading.Thread | None = None

    def hold(self, claim: Claim) -> threading.Event:
        """Beats for ``claim`` from now until ``release(claim)``; returns its ``lost`` event."""
        lost = threading.Event()
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                thread = threading.Thread(target=self._beat, name="heartbeat", daemon=True)
                thread.start()  # first: a claim must never be held by a thread that never ran
                self._thread = thread
            self._held[id(claim)] = (claim, lost)
        return lost

    def release(self, claim: Claim) -> None:
        with self._lock:
            self._held.pop(id(claim), None)

    def _beat(self) -> None:
        while True:
            self._sleep(self._every)
            with self._lock:
                held = list(self._held.values())
            for claim, lost in held:
                self._beat_once(claim, lost)

    def _beat_once(self, claim: Claim, lost: threading.Event) -> None:
        try:
            kept = self._store.heartbeat(claim.job_id, claim.attempt)
        except Exception:  # Redis briefly away: the next beat tries again
            log.warning("heartbeat for %s failed", claim.job_id, exc_info=True)
            return
        with self._lock:
            still_held = self._held.get(id(claim), (None,))[0] is claim
        if not kept and still_held:  # a job that just ended is not news
            log.warning("job %s attempt %d: lease lost", claim.job_id, claim.attempt)
            lost.set()


def _record_queue_wait(claim: Claim) -> None:
    """The job's wait from its creation to this start, once per job: at its first attempt (a retry or a
    redrive counts its attempts on).  The claim carries it (Redis times): no read of the store."""
    if claim.attempt == 1 and claim.queue_wait_seconds is not None:
        metrics.queue_waited(claim.model, claim.queue_wait_seconds)


@dataclass
class Runner:
    store: JobStore
    publish: Callable[[list[Dispatch]], int]
    # True once the worker is shutting down: it then finishes what it runs
    # and takes no next job, which another worker's wake-up brings it to.
    draining: Callable[[], bool] = lambda: False
    # The models whose queues this worker consumes: as a job ends, an interactive job of any of them is
    # taken before the next batch job of the model that ran (one model's batch work must not hold a
    # worker while another's interactive job waits).
    models: tuple[str, ...] = ()
    # Whether an interactive job of another bucket waits for a worker (its wake-up in the broker): the
    # store's ready index tells only of the finishing job's bucket.  Asked only with more than one bucket.
    interactive_waiting: Callable[[], bool] = lambda: False
    clock: Callable[[], float] = time.monotonic
    # What the heartbeat thread waits with between rounds; a test steps it by hand.
    heartbeat_sleep: Callable[[float], None] = time.sleep

    def __post_init__(self):
        every = max(self.store.settings.lease_seconds / 3, 0.05)
        self.heartbeat = Heartbeat(self.store, every, self.heartbeat_sleep)
        # The last split document read (its root's id, its bytes): the next children of the same group,
        # in kept slots most of all, read their pages of it without fetching it again.  One document (the
        # engine that read it also remembers the last PDF it inspected: PageAdapter._inspect_once).
        self._source: tuple[str, bytes] | None = None

    def run(self, job_id: str) -> str:
        """Runs an attempt at ``job_id``; returns what became of it (see the module's table).

        While less than ``keep_slot_seconds`` have passed since the start,
        each finished job's slot is kept: the model's next ready job, claimed
        by ``complete``, runs here at once.  Past that, the worker takes its
        next task from the broker (a wake-up), so a long task never holds a
        worker.  The task's time limits allow for that budget (see
        ``workers.celery_app``).
        """
        claim = self.store.claim(job_id)
        if claim is None:
            log.info("job %s is not claimable (duplicate or late message)", job_id)
            return SKIPPED
        return self._run_from(claim, MESSAGE)

    def pull(self, model: str, lane: str, bucket: int = 0) -> str:
        """A wake-up: runs the model's next ready job of ``bucket``, and goes on as ``run`` does; SKIPPED when none
        is ready."""
        claim, wake_ups = self.store.claim_next(model, lane, bucket)
        self.publish(wake_ups)
        if claim is None:
            return SKIPPED
        return self._run_from(claim, PULLED)

    def _run_from(self, first_claim: Claim, path: str) -> str:
        claim: Claim | None = first_claim
        keep_until = self.clock() + self.store.settings.keep_slot_seconds
        first: str | None = None  # what became of the first job: the answer
        started: list[tuple[Claim, str]] = []  # with their paths: the hand-offs, recorded at the end
        logged_as = logs.bound()  # the task's job, bound by Celery: its lines after the run are about it again
        try:
            lost = self.heartbeat.hold(first_claim)
            while claim is not None:
                logs.bind_job(claim.job_id)
                metrics.attempt_started(claim.model, path)
                _record_queue_wait(claim)
                started.append((claim, path))
                began = time.perf_counter()
                with tracing.attempt_span(claim, path):
                    outcome, completion = self._attempt(claim, lost, keep_until)
                    tracing.attempt_outcome(outcome)
                ran = time.perf_counter() - began
                metrics.attempt_ended(claim.model, outcome, ran)
                metrics.attempt_used(claim.model, outcome, ran)
                # The task's own lines name no job (a wake-up's names a model), so each attempt says what it did.
                log.info("job %s attempt %d (%s): %s", claim.job_id, claim.attempt, path, outcome)
                if first is None:
                    first = outcome
                # The next job's lease is renewed from the moment it is
                # claimed, while the other released children are published.
                self.heartbeat.release(claim)
                claim = completion.next_claim if completion else None
                path = KEPT_SLOT
                if claim is not None:
                    lost = self.heartbeat.hold(claim)
                if completion is not None:
                    metrics.cancelled_unstarted(completion.cancelled_unstarted)
                    self.publish(completion.dispatches)
        finally:
            if claim is not None:
                self.heartbeat.release(claim)
            logs.restore(logged_as)
        self._record_handoffs(started)
        assert first is not None  # the loop ran at least once
        return first

    def _record_handoffs(self, started: list[tuple[Claim, str]]) -> None:
        """The hand-off latency of the children this task started on their first try.

        The claims carry it (Redis times, from the script that claimed): no
        read of the store between this task and the next one.
        """
        for claim, path in started:
            if claim.try_number == 1 and claim.waited_seconds is not None:
                metrics.handed_off(path, claim.waited_seconds)

    def _attempt(self, claim: Claim, lost: threading.Event, keep_until: float) -> tuple[str, Completion | None]:
        """Runs the adapter and writes the outcome; the caller publishes what the write released."""
        try:
            try:
                return self._outcome(claim, lost, keep_until)
            except SoftTimeLimitExceeded:
                # The limit struck while the outcome was being written.  If
                # that write went through, this one finds the job finished
                # and is discarded; otherwise the job fails as timed out.
                return self._timed_out(claim)
        except (LeaseLost, NotProcessing, JobNotFound) as exc:
            log.warning("job %s attempt %d: result discarded: %s", claim.job_id, claim.attempt, exc)
            return DISCARDED, None

    def _outcome(self, claim: Claim, lost: threading.Event, keep_until: float) -> tuple[str, Completion | None]:
        settings = self.store.settings
        try:
            result = self._ocr(claim, lost)
        except (LeaseLost, NotProcessing, JobNotFound):
            raise
        except CancelRequested:
            return self._cancelled(claim)
        except SoftTimeLimitExceeded:
            return self._timed_out(claim)
        except AdapterError as exc:
            tracing.attempt_error(exc.code, exc.message)
            if exc.transient and claim.try_number < settings.max_attempts:
                backoff = settings.retry_backoff * 2 ** (claim.try_number - 1)
                try:
                    self.store.retry(claim.job_id, claim.attempt, backoff, exc.code, exc.message)
                except CancelRequested:
                    return self._cancelled(claim)
                log.warning(
                    "job %s attempt %d: %s (%s); retrying in %.1f s",
                    claim.job_id,
                    claim.attempt,
                    exc.code,
                    exc.message,
                    backoff,
                )
                return RETRIED, None
            return FAILED, self.store.fail(
                claim.job_id,
                claim.attempt,
                exc.code,
                exc.message,
                self._take_next(claim, keep_until),
                interactive_first=self.models,
            )
        except MemoryError:
            # Past the pool process's address-space limit (OCRGW_WORKER_MEMORY_LIMIT_MB): what the job
            # allocated is unwound with the exception, and the process goes on with the next job.
            gc.collect()
            log.error("job %s attempt %d: out of memory", claim.job_id, claim.attempt)
            tracing.attempt_error(ErrorCode.RESOURCE_LIMIT, "the job needed more memory than a worker process may use")
            return FAILED, self.store.fail(
                claim.job_id,
                claim.attempt,
                ErrorCode.RESOURCE_LIMIT,
                "the job needed more memory than a worker process may use",
                self._take_next(claim, keep_until),
                interactive_first=self.models,
            )
        except Exception as exc:  # a bug in an adapter must not kill the worker, nor be retried
            log.exception("job %s: adapter raised", claim.job_id)
            tracing.attempt_error(ErrorCode.ADAPTER_ERROR, f"{type(exc).__name__}: {exc}")
            return FAILED, self.store.fail(
                claim.job_id,
                claim.attempt,
                ErrorCode.ADAPTER_ERROR,
                f"{type(exc).__name__}: {exc}",
                self._take_next(claim, keep_until),
                interactive_first=self.models,
            )
        tracing.attempt_pages(len(result.get("pages") or ()))
        units = JobUnits.of(result, input_bytes_of(len(self._document(claim)), claim.source_pages))
        completion = self.store.complete(
            claim.job_id,
            claim.attempt,
            result,
            self._take_next(claim, keep_until),
            interactive_first=self.models,
            units=units,
        )
        metrics.job_used(claim.model, units.ocr_pages, units.text_layer_pages, units.input_bytes)
        return COMPLETED, completion

    def _take_next(self, claim: Claim, keep_until: float) -> str | None:
        """The model whose next ready job to take as this one ends, or None to take none: past the kept-slot
        window, while shutting down, or while an interactive job waits in the broker, which the worker then
        takes (the broker's consumer serves interactive queues first)."""
        if self.clock() < keep_until and not self.draining() and not self.interactive_waiting():
            return claim.model
        return None

    def _cancelled(self, claim: Claim) -> tuple[str, Completion]:
        # A client cancelled the job between two pages: it ends here, and no slot is kept.
        log.info("job %s attempt %d: cancelled by a client", claim.job_id, claim.attempt)
        return CANCELLED, self.store.end_cancelled(claim.job_id, claim.attempt)

    def _timed_out(self, claim: Claim) -> tuple[str, Completion]:
        # The task's time is up: no next job is taken here; a wake-up brings another worker to it.
        limit = self.store.settings.job_timeout
        log.warning("job %s attempt %d: ran longer than %g s", claim.job_id, claim.attempt, limit)
        tracing.attempt_error(ErrorCode.TIMEOUT, f"the job ran longer than {limit:g} s")
        return FAILED, self.store.fail(
            claim.job_id, claim.attempt, ErrorCode.TIMEOUT, f"the job ran longer than {limit:g} s"
        )

    def _check_on_prem(self, claim: Claim) -> None:
        """Refuses, before any byte leaves, a document that must stay on premises and a model that would send it.

        The gateway refuses such a job already; this holds whatever created
        the job, and whatever the gateways' registry said.  Only a cloud
        model pays for the read; a job gone meanwhile counts as marked.
        """
        model = MODELS.get(claim.model)
        if model is None or model.location is not Location.CLOUD:
            return
        record = self.store.queries.get(claim.job_id)
        if record is None or record.get(Field.ON_PREM.value) == "1":
            raise AdapterError(
                f"the document must stay on premises and model {model.name} runs in the cloud; nothing was sent",
                code=ErrorCode.ON_PREM_REQUIRED,
            )

    def _document(self, claim: Claim) -> bytes:
        """The claim's document: its own payload, or for a split's child its parent's (kept for the next)."""
        if claim.source_pages is None:
            if claim.payload is None:
                raise InvalidDocument("the job's document is missing from the store")
            return claim.payload
        root = claim.source_id
        if self._source is None or self._source[0] != root:
            self._source = None  # one document at a time: the last one goes before the next is read
            source = self.store.queries.source_document(claim.job_id)
            if source is None:
                raise InvalidDocument("the split document is missing from the store")
            self._source = (root, source)
        return self._source[1]

    def _ocr(self, claim: Claim, lost: threading.Event) -> dict:
        document = self._document(claim)
        self._check_on_prem(claim)
        adapter = get_adapter(claim.model)
        page_began = time.perf_counter()

        def on_page(done: int, total: int) -> None:
            nonlocal page_began
            page_ended = time.perf_counter()
            metrics.page_done(claim.model, page_ended - page_began)
            page_began = page_ended
            # Raising here stops a multi-page run early: once another attempt
            # holds the job, the pages left are wasted work.
            if lost.is_set():
                raise LeaseLost(f"job {claim.job_id} attempt {claim.attempt} no longer holds the job")
            if done == total:
                return  # complete writes the last page's stage and progress
            if not self.store.report_progress(claim.job_id, claim.attempt, f"page {done}/{total}", done / total):
                raise LeaseLost(f"job {claim.job_id} attempt {claim.attempt} no longer holds the job")

        return adapter.run(document, claim.content_type, claim.options, on_page, pages=claim.source_pages).to_dict()
