"""Metrics and logs in the Celery processes: the OCR workers, the coordinator, the webhook deliverer and beat.

``install`` connects to Celery's signals once (``workers.celery_app`` calls
it), so every process of the Procfile that runs Celery gets the same:

* logs: with ``OCRGW_LOG_FORMAT=json``, the handlers Celery sets up
  (``after_setup_logger``, ``after_setup_task_logger``) write JSON lines, so
  do Python's warnings, and a worker prints no startup banner (beat's,
  printed before logging is set up, is left out by the Procfile's
  ``--quiet``).  A task's records carry the id of its job (``task_prerun``
  binds it, ``task_postrun`` lets it go).
* metrics: a worker whose role has a port (``OCRGW_WORKER_METRICS_PORT``,
  ``OCRGW_COORDINATOR_METRICS_PORT``, ``OCRGW_WEBHOOKS_METRICS_PORT``) serves
  ``/metrics`` on it from its main process.  The role is told by the queues
  the worker consumes.  At ``worker_init``, before the pool forks, the
  process takes a fresh multiprocess directory, so its pool processes (the
  prefork pool's) write there and the one server sums them.
* traces (``observability.tracing``, when the environment asks for them):
  set up where the tasks run, in each prefork pool process after the fork
  (``worker_process_init``: an exporter's thread does not survive a fork),
  in the main process of a pool that does not fork (the coordinator's solo,
  the webhook deliverer's threads); flushed as the process ends.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from celery import Celery, signals

from jobs.config import Settings
from jobs.ids import is_job_id
from observability import logs, multiprocess, tracing

log = logging.getLogger(__name__)

COORDINATOR, WEBHOOKS, WORKER = "coordinator", "webhooks", "worker"
_state: dict[str, Any] = {}


def role_of(queues: set[str], coordinator_queue: str, webhook_queue: str) -> str:
    if coordinator_queue in queues:
        return COORDINATOR
    if webhook_queue in queues:
        return WEBHOOKS
    return WORKER


def metrics_port(settings: Settings, role: str) -> int:
    return {
        WORKER: settings.worker_metrics_port,
        COORDINATOR: settings.coordinator_metrics_port,
        WEBHOOKS: settings.webhooks_metrics_port,
    }[role]


def install(
    app: Celery, settings: Settings, *, coordinator_queue: str, webhook_queue: str, job_tasks: set[str]
) -> None:
    logs.JOB_TASKS.update(job_tasks)
    _state.update(settings=settings, queues=(coordinator_queue, webhook_queue))
    for signal, receiver in (
        (signals.celeryd_init, _json_from_the_start),
        (signals.after_setup_logger, _json_handlers),
        (signals.after_setup_task_logger, _json_handlers),
        (signals.celeryd_after_setup, _no_banner),
        (signals.worker_init, _serve_metrics),
        (signals.worker_ready, _say_where_metrics_are),
        (signals.worker_process_init, _close_inherited_server),
        (signals.worker_shutdown, _remove_metrics_directory),
        (signals.task_prerun, _bind_task_job),
        (signals.task_postrun, _unbind_task_job),
        (signals.worker_init, _trace_unforked_worker),
        (signals.worker_process_init, _trace_pool_process),
        (signals.worker_process_shutdown, _flush_traces),
        (signals.worker_shutdown, _flush_traces),
    ):
        signal.connect(receiver, weak=False, dispatch_uid=f"ocrgw.{receiver.__name__}")


def _json(settings: Settings) -> bool:
    return settings.log_format == "json"


def _json_from_the_start(**_: Any) -> None:
    # A worker warns (running as root, say) before Celery sets logging up: those lines go out as JSON
    # too, through a handler on the root logger, which Celery then keeps rather than adding its own.
    settings: Settings = _state["settings"]
    if _json(settings):
        logging.captureWarnings(True)
        root = logging.getLogger()
        if not root.handlers:
            root.addHandler(logging.StreamHandler())
        logs.use_json(root.handlers, logs.secrets_of(settings))


def _json_handlers(logger: logging.Logger | None = None, **_: Any) -> None:
    settings: Settings = _state["settings"]
    if logger is not None and _json(settings):
        logging.captureWarnings(True)
        logs.use_json(logger.handlers, logs.secrets_of(settings))


def _no_banner(instance: Any = None, **_: Any) -> None:
    # Sent just before the worker prints its banner: many lines that are not JSON.
    if instance is not None and _json(_state["settings"]):
        instance.quiet = True


def _serve_metrics(sender: Any = None, **_: Any) -> None:
    settings: Settings = _state["settings"]
    coordinator_queue, webhook_queue = _state["queues"]
    queues = set(sender.app.amqp.queues.consume_from or {}) if sender is not None else set()
    role = role_of(queues, coordinator_queue, webhook_queue)
    port = metrics_port(settings, role)
    if not port:
        return
    from prometheus_client import start_http_server

    directory = multiprocess.use_directory(role, settings)
    try:
        server, _thread = start_http_server(port, settings.metrics_address, multiprocess.exposition_registry())
    except OSError as error:
        # Logging is not set up yet: an error still reaches stderr.  The worker runs on without metrics.
        log.error("this %s serves no metrics: port %d on %s: %s", role, port, settings.metrics_address, error)
        return
    _state.update(server=server, server_pid=os.getpid())
    _state["serving"] = f"{role} metrics on http://{settings.metrics_address}:{port}/metrics (files in {directory})"


def _say_where_metrics_are(**_: Any) -> None:
    # Said once logging is set up, which it is not yet at worker_init.
    if "serving" in _state:
        log.info("%s", _state["serving"])


def _close_inherited_server(**_: Any) -> None:
    # A prefork pool process inherits the listening socket, not the thread serving it: it must not keep
    # the port open.  (The solo pool sends this signal in the main process itself, which keeps serving.)
    if _state.get("server") is not None and _state.get("server_pid") != os.getpid():
        _state.pop("server").socket.close()


def _remove_metrics_directory(**_: Any) -> None:
    multiprocess.remove_own_directory()


def _bind_task_job(task: Any = None, args: Any = None, **_: Any) -> None:
    if task is not None and task.name in logs.JOB_TASKS and args and is_job_id(str(args[0])):
        logs.bind_job(str(args[0]))


def _unbind_task_job(**_: Any) -> None:
    logs.bind_job(None)


def _trace_unforked_worker(sender: Any = None, **_: Any) -> None:
    """Keeps the worker's role for its pool processes; traces at once when the pool runs tasks here."""
    coordinator_queue, webhook_queue = _state["queues"]
    queues = set(sender.app.amqp.queues.consume_from or {}) if sender is not None else set()
    # The roles' names are the services' (ocrgw-worker, ocrgw-coordinator, ocrgw-webhooks).
    _state["trace_role"] = role_of(queues, coordinator_queue, webhook_queue)
    if sender is not None and not _forks(sender):
        tracing.configure(_state["trace_role"])


def _forks(worker: Any) -> bool:
    from celery.concurrency.prefork import TaskPool

    pool = getattr(worker, "pool_cls", None)
    return isinstance(pool, type) and issubclass(pool, TaskPool)


def _trace_pool_process(**_: Any) -> None:
    # A prefork pool process, after the fork (the solo pool sends this in the main process: configured already).
    tracing.configure(_state.get("trace_role", tracing.WORKER))


def _flush_traces(**_: Any) -> None:
    tracing.flush()
