"""OpenTelemetry tracing: off unless the environment asks for it (docs/operating/tracing.md).

It is on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or ``..._TRACES_ENDPOINT``)
or ``OTEL_TRACES_EXPORTER`` is set, unless that exporter is ``none`` or
``OTEL_SDK_DISABLED`` is true.  The rest is the standard ``OTEL_*``
variables the SDK and the OTLP exporter read themselves (sampler, batch
processor, headers, resource attributes).  The service name is the
process's role, ``ocrgw-gateway``, ``-worker``, ``-coordinator`` or
``-webhooks``, unless ``OTEL_SERVICE_NAME`` (or ``service.name`` in
``OTEL_RESOURCE_ATTRIBUTES``) names one.

``configure`` sets it up once per process: the gateway's app factory
(``install_gateway``, which also instruments Flask), and each Celery
process where it runs its tasks (``observability.celery_hooks``: a prefork
pool process after the fork, so no exporter thread is lost to it).
Flask, Celery and redis-py are traced by their maintained instrumentations.

How a job's attempts join the trace of the request that created it: the
gateway keeps that request's ``traceparent`` with the job and its children
(``current_traceparent``), every claim answers it, and the runner's
``attempt_span`` takes it as its parent, however the job came (its own
message, a message the sweep sent, a slot kept by the previous child), with
a link to the Celery task span it runs in.

When tracing is off nothing here imports OpenTelemetry, and each call on a
hot path (an attempt, a log line) is one check of a module global.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from flask import Flask

    from jobs.records import Claim

log = logging.getLogger(__name__)

GATEWAY, WORKER, COORDINATOR, WEBHOOKS = "gateway", "worker", "coordinator", "webhooks"
TRACER = "ocrgw"
ATTEMPT_SPAN = "ocrgw.attempt"
# The attempt span's attributes.
JOB_ID, PARENT_ID, MODEL, PAGES = "ocrgw.job_id", "ocrgw.parent_id", "ocrgw.model", "ocrgw.pages"
OUTCOME, ERROR_CODE = "ocrgw.outcome", "ocrgw.error_code"
# How the attempt reached its worker (a message, a kept slot) and its try number.
PATH, TRY_NUMBER = "ocrgw.path", "ocrgw.try_number"
# The probes and the scrape, polled every few seconds: a trace of each says nothing.
EXCLUDED_URLS = "/healthz,/readyz,/metrics"
ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
OTLP_PROTOCOL = "http/protobuf"  # the one OTLP exporter installed with the `otel` extra
# A Redis pipeline's span is named after every command in it, its statement lists them all: a group's
# view reads each child, so a big group's would be kilobytes on every poll.  Both are cut short here,
# the statement unless OTEL_(SPAN_)ATTRIBUTE_VALUE_LENGTH_LIMIT says otherwise.
LONGEST_SPAN_NAME = 80
LONGEST_ATTRIBUTE = 1024

_provider: Any = None  # the process's TracerProvider, once configured
_attempt: ContextVar[Any] = ContextVar("ocrgw_attempt_span", default=None)


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = _exporter_names(environ)
    if exporters is not None:
        return any(name != "none" for name in exporters)
    return any(environ.get(name, "").strip() for name in ENDPOINTS)


def configured() -> bool:
    return _provider is not None


def configure(role: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Sets tracing up for this process (once), if the environment asks for it; True when it is on."""
    global _provider
    if _provider is not None:
        return True
    if not wanted(environ):
        return False
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import SpanLimits, TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from observability import tracing_sampler
    except ImportError as missing:
        # Asked for, not installed: the process runs on untraced rather than not at all.
        # pip first: Debian 12's own (23.0) may fail to resolve the extra where a current pip does.
        python = sys.executable
        log.warning(
            "tracing asked for but not installed "
            "(%s -m pip install --upgrade pip && %s -m pip install 'ocrgw[otel]'): %s",
            python,
            python,
            missing,
        )
        return False

    limits = SpanLimits()
    if limits.max_span_attribute_length is None:
        limits = SpanLimits(max_span_attribute_length=LONGEST_ATTRIBUTE)
    provider = TracerProvider(
        sampler=tracing_sampler.from_environment(),
        resource=Resource.create(_resource_attributes(role, environ)),
        span_limits=limits,
    )
    for exporter in _exporters(environ):
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _provider = provider
    _instrument()
    log.info("tracing on: %s", ", ".join(_exporter_names(environ) or ["otlp"]))
    return True


def install_gateway(app: Flask, untraced: Callable[[Mapping[str, Any]], bool] | None = None) -> None:
    """The gateway's tracing, with its Flask app's requests as server spans, but those whose WSGI environ
    ``untraced`` picks: those get no span of their own (what they do shows under the span that is current)."""
    if not configure(GATEWAY):
        return
    from opentelemetry.instrumentation.flask import FlaskInstrumentor

    excluded = os.environ.get("OTEL_PYTHON_FLASK_EXCLUDED_URLS", EXCLUDED_URLS)
    plain_wsgi_app = app.wsgi_app
    earlier_hooks = _request_hooks(app)
    FlaskInstrumentor.instrument_app(app, excluded_urls=excluded)
    if untraced is not None:
        _leave_out(app, untraced, plain_wsgi_app, earlier_hooks)


def _request_hooks(app: Flask) -> set[Any]:
    """The app-wide ``before_request`` and ``teardown_request`` functions."""
    return {*app.before_request_funcs.get(None, ()), *app.teardown_request_funcs.get(None, ())}


def _leave_out(
    app: Flask, untraced: Callable[[Mapping[str, Any]], bool], plain_wsgi_app: Any, earlier_hooks: set[Any]
) -> None:
    """The Flask instrumentation's WSGI wrapper and request hooks, skipped for the requests ``untraced`` picks.

    The instrumentation excludes requests by their URL alone, and the
    gateway's requests of itself have the URLs of the API's routes: so
    they go around its wrapper (its timing of the request, its response
    headers) to the app itself, and its hooks (the ones it added: they
    open and close the span) do nothing for them.
    """
    from flask import request

    instrumented_wsgi_app = app.wsgi_app

    def wsgi_app(environ: dict[str, Any], start_response: Any) -> Any:
        chosen = plain_wsgi_app if untraced(environ) else instrumented_wsgi_app
        return chosen(environ, start_response)

    def unless_untraced(hook: Callable[..., Any]) -> Callable[..., Any]:
        def hook_unless_untraced(*args: Any) -> Any:
            return None if untraced(request.environ) else hook(*args)

        return hook_unless_untraced

    app.wsgi_app = wsgi_app  # type: ignore[method-assign]
    hook_lists: tuple[list[Any], ...] = (
        app.before_request_funcs.setdefault(None, []),
        app.teardown_request_funcs.setdefault(None, []),
    )
    for hooks in hook_lists:
        hooks[:] = [hook if hook in earlier_hooks else unless_untraced(hook) for hook in hooks]


def flush() -> None:
    """Exports what is buffered (a pool process ends without running atexit)."""
    if _provider is not None:
        _provider.force_flush()


def _exporter_names(environ: Mapping[str, str]) -> list[str] | None:
    value = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    return [name.strip() for name in value.split(",") if name.strip()] if value else None


def _resource_attributes(role: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The service name of the role, unless the environment names one (the SDK reads that itself)."""
    if environ.get("OTEL_SERVICE_NAME", "").strip() or "service.name=" in environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        return {}
    return {"service.name": f"ocrgw-{role}"}


def _exporters(environ: Mapping[str, str]) -> Iterator[Any]:
    """One exporter per name of OTEL_TRACES_EXPORTER (``otlp`` when only an endpoint is set)."""
    for name in _exporter_names(environ) or ["otlp"]:
        if name == "none":
            continue
        if name == "otlp":
            yield _otlp_exporter(environ)
            continue
        # Any other: an exporter installed under the SDK's entry point group (``console`` is the SDK's own).
        from importlib.metadata import entry_points

        found = entry_points(group="opentelemetry_traces_exporter", name=name)
        if not found:
            log.warning("no trace exporter %r is installed: OTEL_TRACES_EXPORTER names it in vain", name)
            continue
        yield next(iter(found)).load()()


def _otlp_exporter(environ: Mapping[str, str]) -> Any:
    protocol = environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
    if protocol and protocol != OTLP_PROTOCOL:
        log.warning("OTLP over %s is not installed: traces go over %s", protocol, OTLP_PROTOCOL)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _instrument() -> None:
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.redis import RedisInstrumentor

    RedisInstrumentor().instrument(response_hook=_brief_pipeline_name)
    # Every role sends Celery messages (the gateway and the sweep publish jobs, workers their next
    # children); all but the gateway run tasks.
    CeleryInstrumentor().instrument()


def _brief_pipeline_name(span: Any, _client: Any, _response: Any) -> None:
    """A pipeline's span named after its first commands and their count, not all of them."""
    if not span.is_recording() or len(span.name) <= LONGEST_SPAN_NAME:
        return
    head = span.name[:LONGEST_SPAN_NAME].rsplit(" ", 1)[0]
    count = span.attributes.get("db.redis.pipeline_length")
    span.update_name(f"{head} ... ({count} commands)" if count else f"{head} ...")


# -- the trace context a job keeps --------------------------------------------------------


def current_traceparent() -> str:
    """The W3C traceparent of the current span, to keep with the jobs a request creates; '' when off."""
    if _provider is None:
        return ""
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return ""
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"


def log_ids() -> dict[str, str]:
    """``trace_id`` and ``span_id`` of the current span, for a log line; {} when there is none."""
    if _provider is None:
        return {}
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


# -- an attempt ---------------------------------------------------------------------------


def attempt_span(claim: Claim, path: str) -> AbstractContextManager[None]:
    """The span of one attempt at ``claim``'s job, current while it runs (a no-op when tracing is off).

    Its parent is the trace context the job kept from the request that
    created it; the Celery task span it runs in (the wake-up it started
    from, the job's own message, or the task of the job before it in a kept
    slot, each perhaps of another trace) is a link.  A job kept
    without one (created while tracing was off) runs under the task span.
    """
    if _provider is None:
        return contextlib.nullcontext()
    return _attempt_span(claim, path)


@contextlib.contextmanager
def _attempt_span(claim: Claim, path: str) -> Iterator[None]:
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    parent = None
    links = []
    if claim.traceparent:
        parent = TraceContextTextMapPropagator().extract({"traceparent": claim.traceparent})
        task = trace.get_current_span().get_span_context()
        if task.is_valid:
            links.append(trace.Link(task, {PATH: path}))
    attributes: dict[str, Any] = {JOB_ID: claim.job_id, MODEL: claim.model, PATH: path, TRY_NUMBER: claim.try_number}
    if claim.source_id != claim.job_id:
        attributes[PARENT_ID] = claim.source_id
    if claim.source_pages is not None:
        attributes[PAGES] = claim.source_pages[1] - claim.source_pages[0] + 1
    tracer = trace.get_tracer(TRACER)
    with tracer.start_as_current_span(ATTEMPT_SPAN, context=parent, links=links, attributes=attributes) as span:
        token = _attempt.set(span)
        try:
            yield
        finally:
            _attempt.reset(token)


def attempt_pages(pages: int) -> None:
    """The pages the current attempt read (its engine's count)."""
    span = _attempt.get() if _provider is not None else None
    if span is not None:
        span.set_attribute(PAGES, pages)


def attempt_error(code: str, message: str) -> None:
    """The current attempt failed (for good, or to be retried): its error code, and an ERROR status."""
    span = _attempt.get() if _provider is not None else None
    if span is None:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_attribute(ERROR_CODE, str(code))
    span.set_status(Status(StatusCode.ERROR, f"{code}: {message}"))


def attempt_outcome(outcome: str) -> None:
    """What became of the current attempt (``workers.runner``'s outcomes)."""
    span = _attempt.get() if _provider is not None else None
    if span is not None:
        span.set_attribute(OUTCOME, outcome)
