"""The coordinator's tasks, on its own queue so OCR load never starves them, and their beat entries.

The sweep also claims due webhooks and hands them to the delivery task
(``coordinator.webhooks``), which runs in a worker of its own.  The count
of the job gauges (``jobs.observed.record_sample``) is a task of its own,
on its own interval (``OCRGW_GAUGE_INTERVAL``): it reads every group in
flight, which a sweep, bounded by its batches, does not.
"""

from __future__ import annotations

import os

from coordinator import webhooks
from coordinator.sweep import Sweeper
from jobs import observed
from jobs.store import JobStore
from workers.celery_app import COORDINATOR_QUEUE, SWEEP_TASK, app, settings
from workers.dispatch import publisher

GAUGES_TASK = "ocrgw.sample_gauges"

_sweeper: Sweeper | None = None
_sweeper_pid: int | None = None


def sweeper() -> Sweeper:
    global _sweeper, _sweeper_pid
    if _sweeper is None or _sweeper_pid != os.getpid():
        store = JobStore.from_settings(settings)
        _sweeper = Sweeper(store, publisher(store), webhooks.hand_off)
        _sweeper_pid = os.getpid()
    return _sweeper


@app.task(name=SWEEP_TASK, ignore_result=True, acks_late=False)
def sweep() -> dict:
    # acks_late off: a sweep that dies mid-pass is simply replaced by the next tick.
    return sweeper().sweep().__dict__


@app.task(name=GAUGES_TASK, ignore_result=True, acks_late=False)
def sample_gauges() -> None:
    # A count lost with its process is replaced by the next tick's.
    store = sweeper().store
    observed.record_sample(store.redis, store.keyspace)


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
    },
    "ocrgw-gauges": {
        "task": GAUGES_TASK,
        "schedule": settings.gauge_interval,
        # A count that waited past its interval is stale before it starts: the next one replaces it.
        "options": {"queue": COORDINATOR_QUEUE, "expires": max(settings.gauge_interval, 1.0)},
    },
}
