"""A bare Celery app: the baselines that ocrgw's fan-out is compared with.

``celery -A bench.canvas_app worker -Q bench.canvas`` runs it, started by the
bench with the very command line of the Procfile's ocrgw worker (same pool,
concurrency and log level), on the same broker.  Its message settings are
copied from ocrgw's own Celery app (JSON, late acks, one message prefetched
per process, ...) so that the two differ only in what ocrgw adds; unlike
ocrgw it has a result backend, on the same redis-server, which the chord needs.

Tasks:

* ``bench.count`` — a no-op that INCRs a Redis counter and, as the last of
  its group, RPUSHes a marker the bench BLPOPs on: how the bench learns that
  a results-ignored group is done, for one extra Redis command per task.
* ``bench.noop`` — a no-op whose (None) result is stored: a chord's header.
* ``bench.chord_done`` — the chord's callback: RPUSHes a marker.
"""

from __future__ import annotations

import os

import redis
from celery import Celery

from jobs.config import Settings
from workers.celery_app import make_celery

QUEUE = "bench.canvas"
COUNT_TASK = "bench.count"
NOOP_TASK = "bench.noop"
CHORD_DONE_TASK = "bench.chord_done"

#: The message settings of ocrgw's app that this one shares.
SHARED_SETTINGS = (
    "task_serializer",
    "accept_content",
    "task_acks_late",
    "task_reject_on_worker_lost",
    "worker_prefetch_multiplier",
    "task_create_missing_queues",
    "broker_connection_retry_on_startup",
    "broker_transport_options",
    "worker_send_task_events",
    "worker_hijack_root_logger",
    "enable_utc",
)


def make_app(settings: Settings, result_backend: bool = True) -> Celery:
    """The app; a client that waits on no result may leave the backend out."""
    ocrgw_conf = make_celery(settings).conf
    app = Celery(
        "bench_canvas",
        broker=settings.broker_url,
        backend=settings.redis_url if result_backend else None,
        set_as_current=True,
    )
    app.conf.update({name: ocrgw_conf[name] for name in SHARED_SETTINGS})
    app.conf.update(
        task_default_queue=QUEUE,
        result_serializer="json",
        result_expires=3600,
    )
    return app


def chord_client(settings: Settings) -> Celery:
    """The client of the ``chord`` baseline: a result backend, which the chord
    needs, without subscribing to each task's result channel as it sends it.

    Celery's client SUBSCRIBEs to every task's channel by default, so that a
    caller could wait on its result.  The bench waits on no task's result
    (the chord itself needs no subscription), so the baseline skips those
    round trips: it is timed as fast as Celery can be made to go, not at its
    defaults.
    """
    client = make_app(settings)
    client.backend.result_consumer.consume_from = lambda task_id: None
    client.backend.result_consumer.cancel_for = lambda task_id: None
    return client


app = make_app(Settings.from_env())

_client: redis.Redis | None = None
_client_pid: int | None = None


def _redis() -> redis.Redis:
    """This process's client for the markers, made after the fork."""
    global _client, _client_pid
    if _client is None or _client_pid != os.getpid():
        _client = redis.Redis.from_url(app.conf.result_backend)
        _client_pid = os.getpid()
    return _client


@app.task(name=COUNT_TASK, ignore_result=True)
def count(counter_key: str, total: int) -> None:
    client = _redis()
    if client.incr(counter_key) == total:
        client.rpush(counter_key + ":done", 1)


@app.task(name=NOOP_TASK)
def noop() -> None:
    return None


@app.task(name=CHORD_DONE_TASK, ignore_result=True)
def chord_done(results: list, marker_key: str) -> None:
    _redis().rpush(marker_key, len(results))
