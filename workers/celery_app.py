"""The one Celery app of ocrgw, configured explicitly.

Celery carries only "run job <id>" messages; the job store holds every
status and result, so there is no result backend.  Messages are JSON,
acknowledged after the task ends, one prefetched per process: a job waiting
behind a long OCR run stays on the queue where another worker can take it.

The app's queues are the models' (``jobs.registry.model_queues``), so
``celery -A workers worker`` without ``--queues`` consumes every model's,
a configured remote model's too; each model has an interactive queue beside
its own, consumed first (``workers.lanes``).  The coordinator and the webhook deliverer
share this app: they always name their queue.
"""

import os
from typing import Any

from celery import Celery, signals
from celery.app.amqp import Queues
from kombu import Queue

from jobs import connections, redis_access, store_layout
from jobs.config import Settings
from jobs.registry import MODELS, install_remote_models, model_queues
from jobs.store import JobStore
from observability import celery_hooks
from workers import process_limits
from workers.broker import guard_closed_redis_channels, is_rabbitmq, rabbitmq_settings
from workers.lanes import QUEUE_ORDER_STRATEGY, add_interactive_lanes
from workers.languages import LanguageReporter, installed_languages

RUN_TASK = "ocrgw.run"
# A terminal job's searchable PDF, built once and kept in the store; sent to the queue of the job's model
# (a parent's: its first completed child's), which every worker of that model consumes.
BUILD_PDF_TASK = "ocrgw.build_pdf"
# A wake-up: a worker of the model takes the model's next ready job, and goes on from job to job (workers.runner).
PULL_TASK = "ocrgw.pull"
SWEEP_TASK = "ocrgw.sweep"
COORDINATOR_QUEUE = "coordinator"
WEBHOOK_TASK = "ocrgw.webhook"
# Consumed by its own worker (the Procfile's `webhooks`), so a slow receiver never delays a sweep.
WEBHOOK_QUEUE = "webhooks"
# Time a hand-off to a kept slot may take (writing the outcome, publishing
# the other released children) without eating into the next job's time.
HANDOFF_ALLOWANCE_SECONDS = 5.0


def make_celery(settings: Settings) -> Celery:
    # A Redis channel used after its connection was lost fails as a lost connection (see workers.broker).
    guard_closed_redis_channels()
    soft_limit = settings.job_timeout + settings.keep_slot_seconds + HANDOFF_ALLOWANCE_SECONDS
    app = Celery("ocrgw", broker=settings.broker_url, set_as_current=True)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        result_backend=None,
        task_ignore_result=True,
        task_store_errors_even_if_ignored=False,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_create_missing_queues=True,
        task_default_queue=COORDINATOR_QUEUE,
        task_routes={SWEEP_TASK: {"queue": COORDINATOR_QUEUE}, WEBHOOK_TASK: {"queue": WEBHOOK_QUEUE}},
        # The soft limit raises SoftTimeLimitExceeded in the task, which fails
        # the job with `timeout` and keeps the process.  The hard limit only
        # strikes an engine deaf to that (stuck in native code): the process
        # is killed, and the job's lease, no longer renewed, brings it back.
        # A task may go on to children it keeps the slot for, the last of
        # them claimed up to keep_slot_seconds in and started once its
        # predecessor's outcome is written and published, so each job gets
        # at least job_timeout (unless a hand-off takes longer than the
        # allowance) and the first of a task at most the budget and the
        # allowance more.
        task_soft_time_limit=soft_limit,
        task_time_limit=soft_limit + 30,
        # A worker that loses its broker (a restart, a Sentinel failover) reconnects by itself, however
        # long that takes, instead of exiting after 100 tries: the store's indexes say what to re-publish
        # afterwards.  The same at start, so the processes may start before their Redis.
        broker_connection_retry=True,
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,
        # A broker blip must not kill OCR runs in progress: they report to
        # the store, not through the broker, and a late duplicate of their
        # message is a no-op for claim.
        worker_cancel_long_running_tasks_on_connection_loss=False,
        # An unacked message comes back after this long; claim makes the
        # late copy a no-op, and the lease (not this) is what reclaims work.
        # The order a worker's BRPOP names its queues in: interactive lanes first (workers.lanes).
        broker_transport_options={"visibility_timeout": 3600, "queue_order_strategy": QUEUE_ORDER_STRATEGY},
        # Task events (what Flower shows) are a publish per task state from the worker's main
        # loop, the loop that hands the next message to a pool process: off unless asked for.
        # Flower turns the workers' events on itself (its enable_events, every 5 s) while it runs.
        worker_send_task_events=settings.task_events,
        task_send_sent_event=settings.task_events,
        worker_hijack_root_logger=False,
        enable_utc=True,
    )
    if settings.broker_on_sentinels:
        # kombu's sentinel transport asks the sentinels for the master on every (re)connection,
        # so a worker, the coordinator and beat follow a failover as they ride out a restart.
        app.conf.broker_transport_options = {
            **app.conf.broker_transport_options,
            **connections.broker_sentinel_options(settings),
        }
    if is_rabbitmq(settings.broker_url):
        # Quorum queues and publisher confirms; the Redis-only options go (see workers.broker).
        app.conf.update(rabbitmq_settings(app.conf.broker_transport_options))
    # A worker started without --queues consumes every model's queue, remote models included; the
    # Procfile names queues only when OCRGW_WORKER_QUEUES narrows a host to some models.
    app.conf.task_queues = _declared(app, model_queues())
    return app


def _declared(app: Celery, names: list[str]) -> list[Queue]:
    """The queues ``names``, declared as a publish declares a queue it has not met (quorum on
    RabbitMQ): RabbitMQ refuses a queue declared a second time with other arguments."""
    conf = app.conf
    declare = Queues(
        create_missing_queue_type=conf.task_create_missing_queue_type,
        create_missing_queue_exchange_type=conf.task_create_missing_queue_exchange_type,
    ).new_missing
    return [declare(name) for name in names]


settings = Settings.from_env()
# Workers run remote models and consume their queues, the coordinator publishes to them: both need
# them in the registry before the app is made.
install_remote_models(settings.remotes)
app = make_celery(settings)


@signals.celeryd_after_setup.connect
def _consume_interactive_lanes(sender: object = None, instance: Any = None, **_: object) -> None:
    """``--queues ocr.echo`` means the echo model's work: its interactive queue too (``workers.lanes``)."""
    if instance is not None:
        add_interactive_lanes(instance.app)


@signals.worker_init.connect
@signals.beat_init.connect
def _stop_if_redis_refuses(**_: object) -> None:
    """A worker (OCR, coordinator, webhooks) or beat that Redis refuses (a wrong password, TLS
    that cannot be set up) stops at start with one line, instead of retrying its broker for ever; so does
    one whose OCRGW_STORE_BUCKETS is not the store's (jobs.store_layout)."""
    redis_access.exit_if_refused(settings)
    store_layout.exit_if_mismatched(settings)


@signals.worker_process_init.connect
def _limit_pool_process(**_):
    """Each pool process gets its memory limit and temporary directory before it runs a job.

    Connected here, before ``workers.tasks`` connects the engines' preload,
    so that the engines load under the limit too.  Only pool processes
    (prefork) get them: the worker's main process runs no job.
    """
    process_limits.apply(settings.worker_memory_limit_mb)


# The main process's report of the Tesseract languages it has (``workers.languages``), once it is ready.
_reporters: list[LanguageReporter] = []


@signals.worker_ready.connect
def _report_languages(sender: object = None, **_: object) -> None:
    """A worker that consumes Tesseract's queue reports its languages, and keeps the report alive.

    ``worker_ready`` comes in the main process once the pool has forked, so
    no pool process inherits the thread; the coordinator and the webhook
    deliverer consume no model's queue and report nothing.
    """
    consumer: Any = sender
    queues = set(consumer.app.amqp.queues.consume_from or {}) if consumer is not None else set()
    if MODELS["tesseract"].queue not in queues:
        return
    name = f"{consumer.hostname}:{os.getpid()}"
    reports = JobStore.from_settings(settings).workers
    _reporters.append(LanguageReporter(reports, name, installed_languages(), settings).start())


@signals.worker_shutdown.connect
def _withdraw_languages(**_: object) -> None:
    """A clean shutdown withdraws the report at once: the gateways stop counting on this worker."""
    while _reporters:
        _reporters.pop().stop()


celery_hooks.install(
    app,
    settings,
    coordinator_queue=COORDINATOR_QUEUE,
    webhook_queue=WEBHOOK_QUEUE,
    job_tasks={RUN_TASK, BUILD_PDF_TASK, WEBHOOK_TASK},
)
