"""Every metric of ocrgw, defined once, and the calls that record them.

Each ``Metric`` is a name, its labels and its meaning; the table of
docs/operating/observability.md lists the same (a unit test compares the two).  Counters and histograms
count events where they happen (a transition's reply, an attempt's end, a
sweep, a webhook attempt) in the process that saw them; the gauges of
``STORE_GAUGES`` are counted by the coordinator once an interval and read
from the store at scrape time (``observability.collectors``), so every
gateway reports the same values.

prometheus_client decides, when it is first imported, whether values live
in this process's memory or in files shared by a family of processes
(multiprocess mode, ``PROMETHEUS_MULTIPROC_DIR``).  So nothing here imports
it before a metric is first recorded: by then the process has made its
choice (``observability.multiprocess.use_directory``).  Recording never
raises: a metric that cannot be written must not fail a job.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from jobs.contract import TERMINAL, JobStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Metric:
    kind: str  # counter, histogram or gauge
    name: str  # as exposed (a counter's ends in _total)
    help: str
    labels: tuple[str, ...]
    buckets: tuple[float, ...] = ()


# -- counted where the events happen ---------------------------------------------------------------

SUBMISSIONS = Metric(
    "counter",
    "ocrgw_submissions_total",
    "Submissions that created jobs (an idempotent replay creates none), by shape (single, group, split) and "
    "model (a group's children's, or mixed).",
    ("shape", "model"),
)
DOCUMENT_CHECKS = Metric(
    "counter",
    "ocrgw_document_checks_total",
    "Documents of submissions checked before anything is stored, by outcome: checked (opened or its headers "
    "read), reused (the same bytes were checked earlier in the same request), over_budget (the request was "
    "refused: its checks took their time or count).",
    ("outcome",),
)
JOBS_FINISHED = Metric(
    "counter",
    "ocrgw_jobs_finished_total",
    "Single jobs and children that ended, by model and status (completed, failed, cancelled), counted by the "
    "process that ended them: a worker, the sweep, or a gateway's cancel of jobs that had not started.",
    ("model", "status"),
)
JOB_ATTEMPTS = Metric(
    "counter",
    "ocrgw_job_attempts_total",
    "Attempts at jobs by model and what became of them: completed, failed, cancelled, retried (a transient "
    "error), discarded (the attempt had lost the job), reclaimed (its lease ran out; the job runs again), "
    "lease_expired (its lease ran out on the last attempt: the job failed).",
    ("model", "outcome"),
)
JOB_STARTS = Metric(
    "counter",
    "ocrgw_job_starts_total",
    "Attempts started, by model and how the worker got the job: message (a Celery message naming it), pulled "
    "(the model's next ready job, taken on a wake-up) or kept_slot (claimed for it as its previous job ended).",
    ("model", "path"),
)
JOB_DURATION = Metric(
    "histogram",
    "ocrgw_job_duration_seconds",
    "Seconds from an attempt's claim to its end being written, for attempts that ended the job, by model and status.",
    ("model", "status"),
    (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
)
PAGE_DURATION = Metric(
    "histogram",
    "ocrgw_page_duration_seconds",
    "Seconds an engine took for one page (the first page includes opening the document), by model.",
    ("model",),
    (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
HANDOFF_LATENCY = Metric(
    "histogram",
    "ocrgw_handoff_latency_seconds",
    "Seconds from a child's release into a freed slot (the finished_at of the child before it, Redis time) "
    "to its started_at, by path: kept_slot, pulled or message.",
    ("path",),
    (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
SWEEP_DURATION = Metric(
    "histogram",
    "ocrgw_sweep_duration_seconds",
    "Seconds a sweep tick took, by outcome: swept, or skipped (another tick held the lock).",
    ("outcome",),
    (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
SWEEP_REPAIRS = Metric(
    "counter",
    "ocrgw_sweep_repairs_total",
    "What sweeps repaired, by action: reclaimed, lease_expired, republished, released, webhooks_claimed.",
    ("action",),
)
WEBHOOK_ATTEMPTS = Metric(
    "counter",
    "ocrgw_webhook_attempts_total",
    "Webhook deliveries by outcome: delivered, retrying, given_up, superseded, or stale and gone (not sent).",
    ("outcome",),
)
HTTP_REQUESTS = Metric(
    "counter",
    "ocrgw_http_requests_total",
    "Requests a gateway answered, by method, route (the route's template, such as /jobs/<job_id>; unmatched "
    "for a path no route has) and status.",
    ("method", "route", "status"),
)
HTTP_DURATION = Metric(
    "histogram",
    "ocrgw_http_request_duration_seconds",
    "Seconds from a request's arrival in the app to its answer being ready (its body streams after), "
    "by method and route.",
    ("method", "route"),
    (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
QUEUE_WAIT = Metric(
    "histogram",
    "ocrgw_queue_wait_seconds",
    "Seconds from a job's creation to the start of its first attempt (its created_at and started_at, Redis "
    "time), by model; a child's includes its wait for a slot of its group.",
    ("model",),
    (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600),
)
WEBHOOK_LAG = Metric(
    "histogram",
    "ocrgw_webhook_delivery_lag_seconds",
    "Seconds from a job's finished_at to its webhook's delivery being recorded (Redis time), retries included.",
    (),
    (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400),
)
USAGE_PAGES = Metric(
    "counter",
    "ocrgw_usage_pages_total",
    "Pages of completed jobs, by model and source: ocr (read by the model's engine) or text_layer (answered from "
    "the PDF's own text layer), counted by the worker that completed them; GET /usage has them per tenant.",
    ("model", "source"),
)
USAGE_ENGINE_SECONDS = Metric(
    "counter",
    "ocrgw_usage_engine_seconds_total",
    "Seconds of attempts that ended in a worker (completed, failed, cancelled, retried), by model, on the "
    "worker's clock; an attempt killed with its worker is in GET /usage only.",
    ("model",),
)
USAGE_INPUT_BYTES = Metric(
    "counter",
    "ocrgw_usage_input_bytes_total",
    "Bytes of the documents of completed jobs (a split PDF's once, with its first pages), by model.",
    ("model",),
)
EVENT_METRICS = (
    HTTP_REQUESTS,
    HTTP_DURATION,
    QUEUE_WAIT,
    WEBHOOK_LAG,
    SUBMISSIONS,
    DOCUMENT_CHECKS,
    JOBS_FINISHED,
    JOB_ATTEMPTS,
    JOB_STARTS,
    JOB_DURATION,
    PAGE_DURATION,
    HANDOFF_LATENCY,
    SWEEP_DURATION,
    SWEEP_REPAIRS,
    WEBHOOK_ATTEMPTS,
    USAGE_PAGES,
    USAGE_ENGINE_SECONDS,
    USAGE_INPUT_BYTES,
)

# -- counted by the coordinator once an interval, read from the store at scrape time (the gateway's /metrics) --

JOBS_HELD = Metric("gauge", "ocrgw_jobs_held", "Children waiting for a slot of their group, by model.", ("model",))
JOBS_QUEUED = Metric(
    "gauge",
    "ocrgw_jobs_queued",
    "The queue depth: jobs released and waiting for a worker (a retry's backoff included), by model.",
    ("model",),
)
JOBS_PROCESSING = Metric("gauge", "ocrgw_jobs_processing", "Jobs a worker holds a lease on, by model.", ("model",))
JOBS_IN_FLIGHT = Metric(
    "gauge",
    "ocrgw_jobs_in_flight",
    "Jobs queued or processing, what a group's max_parallel bounds, by model.",
    ("model",),
)
JOBS_SAMPLE_TIME = Metric(
    "gauge",
    "ocrgw_jobs_sample_timestamp_seconds",
    "When the coordinator last counted the job gauges (Unix time, the store's clock): their age is time() minus it.",
    (),
)
JOBS_SAMPLE_STALE = Metric(
    "gauge",
    "ocrgw_jobs_sample_stale",
    "1 if the job gauges' last count is too old to serve (3 intervals, at least 10 s), and they are left out; else 0.",
    (),
)
STORE_UP = Metric("gauge", "ocrgw_store_up", "1 if the store answered this scrape's read, else 0.", ())
WORKERS = Metric(
    "gauge",
    "ocrgw_workers",
    "OCR workers that report to the store (those consuming Tesseract's queue), by state: live (their report "
    "renewed within its lifetime) or lapsed (it ran out unrenewed and unwithdrawn: killed, hung or cut off).",
    ("state",),
)
STORE_GAUGES = (
    JOBS_HELD,
    JOBS_QUEUED,
    JOBS_PROCESSING,
    JOBS_IN_FLIGHT,
    WORKERS,
    JOBS_SAMPLE_TIME,
    JOBS_SAMPLE_STALE,
    STORE_UP,
)
ALL = EVENT_METRICS + STORE_GAUGES

# -- the live metrics, made on first use -------------------------------------------------------

_live: dict[str, Any] = {}
_lock = threading.Lock()
_registry: Any = None
_failed: set[str] = set()  # metrics whose recording failed once already: logged once


def registry() -> Any:
    """The registry of this process's own metrics (what a process outside multiprocess mode exposes)."""
    global _registry
    if _registry is None:
        from prometheus_client import CollectorRegistry

        _registry = CollectorRegistry(auto_describe=True)
    return _registry


def created() -> bool:
    """True once a metric exists in this process: too late to choose multiprocess mode."""
    return bool(_live)


def live(metric: Metric) -> Any:
    """The prometheus_client object of ``metric``, made on first use."""
    found = _live.get(metric.name)
    if found is not None:
        return found
    with _lock:
        if metric.name not in _live:
            import prometheus_client

            make = {"counter": prometheus_client.Counter, "histogram": prometheus_client.Histogram}[metric.kind]
            extra = {"buckets": metric.buckets} if metric.buckets else {}
            _live[metric.name] = make(metric.name, metric.help, metric.labels, registry=registry(), **extra)
        return _live[metric.name]


# The labelled children already asked for, with the live metric each belongs to.  A worker records about
# ten values per job, always for the same few models, lanes and outcomes: prometheus_client's ``labels()``
# checks and joins the values under a lock at every call, which was a tenth of a no-op job's time in the
# worker.  Kept with their metric so that a metric made again (or swapped by a test) is asked afresh.
_labelled: dict[tuple[str, tuple[str, ...]], tuple[Any, Any]] = {}


def _child(metric: Metric, labels: tuple[str, ...]) -> Any:
    """The value of ``metric`` for ``labels`` (the metric itself when it has none)."""
    parent = live(metric)
    if not labels:
        return parent
    key = (metric.name, labels)
    found = _labelled.get(key)
    if found is not None and found[0] is parent:
        return found[1]
    child = parent.labels(*labels)
    _labelled[key] = (parent, child)
    return child


def _inc(metric: Metric, *labels: str, amount: float = 1) -> None:
    try:
        _child(metric, labels).inc(amount)
    except Exception:
        _failed_once(metric)


def _observe(metric: Metric, value: float, *labels: str) -> None:
    try:
        _child(metric, labels).observe(value)
    except Exception:
        _failed_once(metric)


def _failed_once(metric: Metric) -> None:
    if metric.name not in _failed:
        _failed.add(metric.name)
        log.warning("could not record %s; it is left as it is", metric.name, exc_info=True)


# -- what the processes record -----------------------------------------------------------------

#: The attempt outcomes that end a job, as the runner names them, and the status each leaves.
ENDING = {status.value: status.value for status in sorted(TERMINAL)}


def submitted(shape: str, model: str) -> None:
    _inc(SUBMISSIONS, shape, model)


def document_checked(outcome: str) -> None:
    _inc(DOCUMENT_CHECKS, outcome)


def attempt_started(model: str, path: str) -> None:
    _inc(JOB_STARTS, model, path)


def attempt_ended(model: str, outcome: str, seconds: float) -> None:
    """An attempt the runner saw to its end; one that ended the job also counts as a finished job."""
    _inc(JOB_ATTEMPTS, model, outcome)
    status = ENDING.get(outcome)
    if status is not None:
        _inc(JOBS_FINISHED, model, status)
        _observe(JOB_DURATION, seconds, model, status)


#: The attempt outcomes whose seconds count as engine time: every attempt that ran and ended in its worker.
ENGINE_TIME = {*ENDING, "retried"}


def attempt_used(model: str, outcome: str, seconds: float) -> None:
    """An attempt's engine time, once it ended in the worker (a discarded one's end was not written)."""
    if outcome in ENGINE_TIME:
        _inc(USAGE_ENGINE_SECONDS, model, amount=seconds)


def job_used(model: str, ocr_pages: int, text_layer_pages: int, input_bytes: int) -> None:
    """A completed job's pages and bytes, as its completion recorded them in the store."""
    if ocr_pages:
        _inc(USAGE_PAGES, model, "ocr", amount=ocr_pages)
    if text_layer_pages:
        _inc(USAGE_PAGES, model, "text_layer", amount=text_layer_pages)
    if input_bytes:
        _inc(USAGE_INPUT_BYTES, model, amount=input_bytes)


def lease_ran_out(model: str, ended_as: str | None) -> None:
    """The sweep's reclaim of an expired lease: the job runs again (``ended_as`` None), or it ended so."""
    if ended_as is None:
        _inc(JOB_ATTEMPTS, model, "reclaimed")
        return
    _inc(JOB_ATTEMPTS, model, "lease_expired" if ended_as == JobStatus.FAILED else ended_as)
    _inc(JOBS_FINISHED, model, ended_as)


def cancelled_unstarted(counts: Mapping[str, int]) -> None:
    """Jobs a transition ended ``cancelled`` before they started (held, queued), by model: finished,
    though no attempt saw them end (one that was running ends in its attempt, counted there)."""
    for model, count in counts.items():
        if count:
            _inc(JOBS_FINISHED, model, JobStatus.CANCELLED.value, amount=count)


def page_done(model: str, seconds: float) -> None:
    _observe(PAGE_DURATION, seconds, model)


def handed_off(path: str, seconds: float) -> None:
    _observe(HANDOFF_LATENCY, seconds, path)


def swept(skipped: bool, seconds: float, repairs: dict[str, int]) -> None:
    _observe(SWEEP_DURATION, seconds, "skipped" if skipped else "swept")
    for action, count in repairs.items():
        if count:
            _inc(SWEEP_REPAIRS, action, amount=count)


def webhook_attempted(outcome: str) -> None:
    _inc(WEBHOOK_ATTEMPTS, outcome)


def http_answered(method: str, route: str, status: int, seconds: float | None) -> None:
    """A request the gateway answered: ``route`` is its rule's template, never the raw path; ``seconds``
    None when its start was not seen (counted, not timed)."""
    _inc(HTTP_REQUESTS, method, route, str(status))
    if seconds is not None:
        _observe(HTTP_DURATION, seconds, method, route)


def queue_waited(model: str, seconds: float) -> None:
    """A job's first attempt started ``seconds`` after the job was created."""
    _observe(QUEUE_WAIT, seconds, model)


def webhook_delivered(seconds_after_finish: float) -> None:
    _observe(WEBHOOK_LAG, seconds_after_finish)
