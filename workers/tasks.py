"""The Celery task of the OCR hosts, and the per-process state it needs."""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
from collections.abc import Callable

from celery.signals import (
    task_prerun,
    task_received,
    task_rejected,
    task_revoked,
    worker_process_init,
    worker_shutting_down,
)
from celery.worker import state as worker_state

from jobs.pdf_outputs import DEFAULT_OUTPUT
from jobs.registry import is_interactive_queue
from jobs.store import JobStore
from workers.adapters import get_adapter
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
            interactive_waiting=_interactive_waiting_for(models) if settings.store_buckets > 1 else (lambda: False),
        )
        _runner_pid = os.getpid()
    return _runner


# Interactive messages this worker's consumer holds that no pool process has started yet: RabbitMQ
# delivers them to a busy worker at once (a prefetch per consumer), where the queue's count no longer
# shows them.  Made before the pool forks, so every pool process reads it.  The main process sets it
# from its reserved requests at each message it receives (so a count a lost connection left stale, its
# reserved requests dropped with no signal, is right again at the next message); a pool process takes
# one off as it starts one, as does a revoke or a reject.
_interactive_held = multiprocessing.Value(ctypes.c_int, 0)


def _is_interactive(delivery_info: dict | None) -> bool:
    return is_interactive_queue((delivery_info or {}).get("routing_key") or "")


def _held_by(change: int) -> None:
    with _interactive_held.get_lock():
        _interactive_held.value = max(_interactive_held.value + change, 0)


@task_received.connect
def _interactive_received(request, **_):
    # Reserved requests stay in the set while they run; the active ones have started.
    waiting = [r for r in list(worker_state.reserved_requests) if r not in worker_state.active_requests]
    held = sum(1 for r in waiting if r is not request and _is_interactive(r.delivery_info))
    held += 1 if _is_interactive(request.delivery_info) else 0
    with _interactive_held.get_lock():
        _interactive_held.value = held


@task_prerun.connect
def _interactive_started(task, **_):
    if _is_interactive(task.request.delivery_info):
        _held_by(-1)


@task_revoked.connect
def _interactive_revoked(request, **_):
    if _is_interactive(request.delivery_info):
        _held_by(-1)


@task_rejected.connect
def _interactive_rejected(message, **_):
    if _is_interactive(message.delivery_info):
        _held_by(-1)


def _interactive_waiting_for(models: tuple[str, ...]) -> Callable[[], bool]:
    """Whether an interactive job waits for this worker: its message held here, or still in the broker."""
    in_broker = InteractiveWaiting(app, models)
    return lambda: _interactive_held.value > 0 or in_broker()


@worker_shutting_down.connect
def _stop_keeping_slots(**_):
    """A worker told to stop finishes what it runs but takes no next job itself."""
    _shutting_down.value = True


@worker_process_init.connect
def _preload_engines(**_):
    """Loads the engines named in OCRGW_PRELOAD_MODELS so the first job does not pay for it."""
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
def build_pdf(job_id: str, variant: str = DEFAULT_OUTPUT.name) -> str:
    """A variant of a terminal job's searchable PDF, built once and kept in the store (``workers.pdf_build``)."""
    # Imported on the first build: pikepdf and fontTools stay out of the processes that never build one.
    from workers import pdf_build

    return pdf_build.build_pdf(runner().store, job_id, variant)
