"""The Celery task of the OCR hosts, and the per-process state it needs."""

from __future__ import annotations

import logging
import os

from celery.signals import worker_process_init

from jobs.store import JobStore
from workers.celery_app import RUN_TASK, app, settings
from workers.dispatch import publish
from workers.runner import Runner

log = logging.getLogger(__name__)
_runner: Runner | None = None
_runner_pid: int | None = None


def runner() -> Runner:
    """The process's runner; built after the fork so no Redis socket is shared between processes."""
    global _runner, _runner_pid
    if _runner is None or _runner_pid != os.getpid():
        _runner = Runner(JobStore.from_settings(settings), publish)
        _runner_pid = os.getpid()
    return _runner


@worker_process_init.connect
def _preload_engines(**_):
    """Loads the engines named in OCRGW_PRELOAD_MODELS so the first job does not pay for it."""
    from workers.adapters import get_adapter

    for name in filter(None, os.environ.get("OCRGW_PRELOAD_MODELS", "").split(",")):
        try:
            get_adapter(name.strip())
        except Exception:
            log.exception("could not preload model %s", name)


@app.task(name=RUN_TASK, ignore_result=True)
def run_job(job_id: str) -> str:
    return runner().run(job_id)
