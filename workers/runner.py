"""One attempt at one job: claim, run the adapter, complete.

The outcome of every attempt is written by a transition that checks the
attempt token from the claim, so a worker that lost its lease (it stalled,
and the sweep handed the job to another worker) can never overwrite the
result of the attempt that replaced it.
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


class Heartbeat:
    """Extends the lease from a thread of its own while the adapter runs.

    The adapters release the GIL inside the engines (a Tesseract subprocess,
    ONNX Runtime), so the beat goes on however long a page takes.
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
                    self.lost.set()
                    return
            except Exception:  # Redis briefly away: the next beat tries again
                log.warning("heartbeat for %s failed", self._claim.job_id, exc_info=True)


@dataclass
class Runner:
    store: JobStore
    publish: Callable[[list[Dispatch]], int]

    def run(self, job_id: str) -> str:
        """Runs one attempt; returns what happened (for logs and tests)."""
        claim = self.store.claim(job_id)
        if claim is None:
            log.info("job %s is not claimable (duplicate or late message)", job_id)
            return "skipped"
        settings = self.store.settings
        with Heartbeat(self.store, claim, max(settings.lease_seconds / 3, 0.05)):
            outcome = self._attempt(claim)
        return outcome

    def _attempt(self, claim: Claim) -> str:
        settings = self.store.settings
        try:
            try:
                result = self._ocr(claim)
            except SoftTimeLimitExceeded:
                completion = self.store.fail(
                    claim.job_id, claim.attempt, "timeout",
                    f"the job ran longer than {settings.job_timeout:g} s")
                return self._done(completion, "failed")
            except AdapterError as exc:
                if exc.transient and claim.attempt < settings.max_attempts:
                    backoff = settings.retry_backoff * 2 ** (claim.attempt - 1)
                    self.store.retry(claim.job_id, claim.attempt, backoff, exc.code, exc.message)
                    log.warning("job %s attempt %d: %s (%s); retrying in %.1f s",
                                claim.job_id, claim.attempt, exc.code, exc.message, backoff)
                    return "retried"
                return self._done(self.store.fail(claim.job_id, claim.attempt, exc.code, exc.message), "failed")
            except Exception as exc:  # a bug in an adapter must not kill the worker
                log.exception("job %s: adapter raised", claim.job_id)
                completion = self.store.fail(
                    claim.job_id, claim.attempt, "adapter_error", f"{type(exc).__name__}: {exc}")
                return self._done(completion, "failed")
            return self._done(self.store.complete(claim.job_id, claim.attempt, result), "completed")
        except (LeaseLost, NotProcessing, JobNotFound) as exc:
            log.warning("job %s attempt %d: result discarded: %s", claim.job_id, claim.attempt, exc)
            return "discarded"

    def _ocr(self, claim: Claim) -> dict:
        if claim.payload is None:
            raise InvalidDocument("the job's document is missing from the store")
        adapter = get_adapter(claim.model)

        def on_page(done: int, total: int) -> None:
            self.store.report_progress(claim.job_id, claim.attempt, f"page {done}/{total}", done / total)

        return adapter.run(claim.payload, claim.content_type, claim.options, on_page).to_dict()

    def _done(self, completion: Completion, outcome: str) -> str:
        self.publish(completion.dispatches)
        return outcome
