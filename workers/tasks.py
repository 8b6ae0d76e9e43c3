"""The Celery task of the OCR hosts, and the per-process state it needs."""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os

from celery.signals import worker_process_init, worker_shutting_down

from jobs.store import JobStore
from workers.celery_app import BUILD_PDF_TASK, PULL_TASK, RUN_TASK, app, settings
from workers.dispatch import publisher
from workers.lanes import InteractiveWaiting, consumed_models
from workers.runner import Runner

log = logging.getLogger(__name__)
_runner: Runner | None = None
_runner_pid: int | None = None
# Set by the worker's main process when its warm shutdown begins; made before
# the pool forks, so every pool process reads the same flag.
_shutting_down = multiprocessing.RawValue(ctypes.c_bool, False)


def runner() -> Runner:
    """The process's runner; built after the fork so no Redis socket is shared between processes."""
    global _runner, _runner_pid
    if _runner is None or _runner_pid != os.getpid():
        store = JobStore.from_settings(settings)
        models = consumed_models(app)
        _runner = Runner(
            store,
            publisher(store),
            draining=lambda: _shutting_down.value,
            models=models,
            # With one bucket the ready index is every job's, and `complete` takes interactive work first.
            interactive_waiting=InteractiveWaiting(app, models) if settings.store_buckets > 1 else (lambda: False),
        )
        _runner_pid = os.getpid()
    return _runner


@worker_shutting_down.connect
def _stop_keeping_slots(**_):
    """A worker told to stop finishes what it runs but takes no next job itself."""
    _shutting_down.value = True


@worker_process_init.connect
def _preload_engines(**_):
    """Loads the engines named in OCRGW_PRELOAD_MODELS so the first job does not pay for it."""
    from workers.adapters import get_adapter

    for name in settings.preload_models:
        try:
            get_adapter(name)
        except Exception:
            log.exception("could not preload model %s", name)


@app.task(name=RUN_TASK, ignore_result=True)
def run_job(job_id: str) -> str:
    return runner().run(job_id)


@app.task(name=PULL_TASK, ignore_result=True)
def pull(model: str, lane: str, bucket: int = 0) -> str:
    """A wake-up: takes the model's next ready job of the bucket's, whichever it is, and goes on from job to job.

    ``bucket`` defaults to 0 for a wake-up published before buckets (with one bucket, the only one).
    """
    return runner().pull(model, lane, bucket)


@app.task(name=BUILD_PDF_TASK, ignore_result=True)
def build_pdf(job_id: str) -> str:
    """A terminal job's searchable PDF, built once and kept in the store (``workers.pdf_build``)."""
    # Imported on the first build: pikepdf and fontTools stay out of the processes that never build one.
    from workers import pdf_build

    return pdf_build.build_pdf(runner().store, job_id)
