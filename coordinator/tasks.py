"""The sweep task, on the coordinator's own queue so OCR load never starves it, and its beat entry.

The sweep also claims due webhooks and hands them to the delivery task
(``coordinator.webhooks``), which runs in a worker of its own.
"""

from __future__ import annotations

import os

from coordinator import webhooks
from coordinator.sweep import Sweeper
from jobs.store import JobStore
from workers.celery_app import COORDINATOR_QUEUE, SWEEP_TASK, app, settings
from workers.dispatch import publish

_sweeper: Sweeper | None = None
_sweeper_pid: int | None = None


def sweeper() -> Sweeper:
    global _sweeper, _sweeper_pid
    if _sweeper is None or _sweeper_pid != os.getpid():
        _sweeper = Sweeper(JobStore.from_settings(settings), publish, webhooks.hand_off)
        _sweeper_pid = os.getpid()
    return _sweeper


@app.task(name=SWEEP_TASK, ignore_result=True, acks_late=False)
def sweep() -> dict:
    # acks_late off: a sweep that dies mid-pass is simply replaced by the next tick.
    return sweeper().sweep().__dict__


app.conf.beat_schedule = {
    "ocrgw-sweep": {
        "task": SWEEP_TASK,
        "schedule": settings.sweep_interval,
        "options": {
            "queue": COORDINATOR_QUEUE,
            # Ticks that waited longer than a few intervals (coordinator down)
            # are dropped rather than run back to back on its return.
            "expires": max(settings.sweep_interval * 5, 2.0),
        },
    }
}
