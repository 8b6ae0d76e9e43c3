"""One attempt at one job: claim, run the adapter, complete.

The outcome of every attempt is written by a transition that checks the
attempt token from the claim, so a worker that lost its lease (it stalled,
and the sweep handed the job to another worker) can never overwrite the
result of the attempt that replaced it.

``Runner.run`` answers what became of the attempt:

============  ===========================================================
completed     the adapter's result is stored
failed        a permanent error, the last attempt's transient error, an
              adapter bug, or the job's time limit (``error_code: timeout``)
retried       a transient error with attempts left: the job is queued again
              and the sweep re-publishes it once the backoff has passed
discarded     this attempt no longer holds the job (its lease expired and
              the sweep gave the job to another attempt, or the job was
              deleted meanwhile): nothing written
skipped       the job was not claimable (a duplicate or late message)
============  ===========================================================
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Callable

from celery.exceptions import SoftTimeLimitExceeded

from jobs.errors import AdapterError, InvalidDocument, JobNotFound
from jobs.store import Claim, Completion, Dispatch, JobStore, LeaseLost, NotProcessing
from workers.adapters import get_adapter

log = logging.getLogger(__name__)

COMPLETED, FAILED, RETRIED, DISCARDED, SKIPPED = "completed", "failed", "retried", "discarded", "skipped"
TIMEOUT_CODE = "timeout"


class Heartbeat:
    """Extends the lease from a thread of its own while the adapter runs.

    The adapters release the GIL inside the engines (a Tesseract subprocess,
    ONNX Runtime, a sleep), so the beat goes on however long a page takes.
    ``lost`` is set once the store says this attempt no longer holds the job.
    """

    def __init__(self, store: JobStore, claim: Claim, every_seconds: float):
        self._store, self._claim, self._every = store, claim, every_seconds
        self._stop = threading.Event()
        self.lost = threading.Event()
        self._thread = threading.Thread(target=self._beat, name=f"heartbeat-{claim.job_id}", daemon=True)

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        while not self._stop.wait(self._every):
            try:
                if not self._store.heartbeat(self._claim.job_id, self._claim.attempt):
                    log.warning("job %s attempt %d: lease lost", self._claim.job_id, self._claim.attempt)
                    self.lost.set()
                    return
            except Exception:  # Redis briefly away: the next beat tries again
                log.warning("heartbeat for %s failed", self._claim.job_id, exc_info=True)


@dataclass
class Runner:
    store: JobStore
    publish: Callable[[list[Dispatch]], int]

    def run(self, job_id: str) -> str:
        """Runs one attempt; returns what happened (see the module's table)."""
        claim = self.store.claim(job_id)
        if claim is None:
            log.info("job %s is not claimable (duplicate or late message)", job_id)
            return SKIPPED
        settings = self.store.settings
        with Heartbeat(self.store, claim, max(settings.lease_seconds / 3, 0.05)) as heartbeat:
            return self._attempt(claim, heartbeat)

    def _attempt(self, claim: Claim, heartbeat: Heartbeat) -> str:
        try:
            try:
                return self._outcome(claim, heartbeat)
            except SoftTimeLimitExceeded:
                # The limit struck while the outcome was being written.  If
                # that write went through, this one finds the job finished
                # and is discarded; otherwise the job fails as timed out.
                return self._timed_out(claim)
        except (LeaseLost, NotProcessing, JobNotFound) as exc:
            log.warning("job %s attempt %d: result discarded: %s", claim.job_id, claim.attempt, exc)
            return DISCARDED

    def _outcome(self, claim: Claim, heartbeat: Heartbeat) -> str:
        settings = self.store.settings
        try:
            result = self._ocr(claim, heartbeat)
        except (LeaseLost, NotProcessing, JobNotFound):
            raise
        except SoftTimeLimitExceeded:
            return self._timed_out(claim)
        except AdapterError as exc:
            if exc.transient and claim.attempt < settings.max_attempts:
                backoff = settings.retry_backoff * 2 ** (claim.attempt - 1)
                self.store.retry(claim.job_id, claim.attempt, backoff, exc.code, exc.message)
                log.warning("job %s attempt %d: %s (%s); retrying in %.1f s",
                            claim.job_id, claim.attempt, exc.code, exc.message, backoff)
                return RETRIED
            return self._done(self.store.fail(claim.job_id, claim.attempt, exc.code, exc.message), FAILED)
        except Exception as exc:  # a bug in an adapter must not kill the worker
            log.exception("job %s: adapter raised", claim.job_id)
            completion = self.store.fail(
                claim.job_id, claim.attempt, "adapter_error", f"{type(exc).__name__}: {exc}")
            return self._done(completion, FAILED)
        return self._done(self.store.complete(claim.job_id, claim.attempt, result), COMPLETED)

    def _timed_out(self, claim: Claim) -> str:
        limit = self.store.settings.job_timeout
        log.warning("job %s attempt %d: ran longer than %g s", claim.job_id, claim.attempt, limit)
        completion = self.store.fail(claim.job_id, claim.attempt, TIMEOUT_CODE,
                                     f"the job ran longer than {limit:g} s")
        return self._done(completion, FAILED)

    def _ocr(self, claim: Claim, heartbeat: Heartbeat) -> dict:
        if claim.payload is None:
            raise InvalidDocument("the job's document is missing from the store")
        adapter = get_adapter(claim.model)

        def on_page(done: int, total: int) -> None:
            # Raising here stops a multi-page run early: once another attempt
            # holds the job, the pages left are wasted work.
            if heartbeat.lost.is_set() or not self.store.report_progress(
                    claim.job_id, claim.attempt, f"page {done}/{total}", done / total):
                raise LeaseLost(f"job {claim.job_id} attempt {claim.attempt} no longer holds the job")

        return adapter.run(claim.payload, claim.content_type, claim.options, on_page).to_dict()

    def _done(self, completion: Completion, outcome: str) -> str:
        self.publish(completion.dispatches)
        return outcome
