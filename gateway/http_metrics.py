"""The gateway's HTTP metrics: every request it answers, counted by method, route template and status, and timed.

The route label is the matched rule's template (``/jobs/<job_id>``), never
the raw path, so a scrape holds one series per route whatever ids clients
send; a path no rule matches (a ``404`` or ``405`` from routing) is
counted under ``UNMATCHED``, and a method outside HTTP's usual ones under
``OTHER_METHOD``, for the same reason.  Every request is counted,
``/metrics``, the probes and the dashboard included: filter them out in
queries (``route!="/metrics"``) where they are noise.  The one exception is
a request the gateway makes of itself (``gateway.internal``: a dashboard
page's API reads): it is a part of the page, which is counted once, under
its own route, with their time in its own.

The clock starts on Flask's ``request_started`` signal, before any
``before_request`` hook (the API key check among them: a ``401`` is
timed too), and stops in an ``after_request`` hook, which Flask runs for
every answer, problems and unhandled errors included.  So the time is the
app's, to the answer being ready; a body streamed after it (a result
PDF) is not in it, nor is a request gunicorn refuses before the app sees
it.  Under gunicorn the counts live in the family's multiprocess directory
(``observability.multiprocess``), so any worker's ``/metrics`` serves all of
them.
"""

from __future__ import annotations

import time
from typing import Any

from flask import Flask, Response, request, request_started

from gateway import internal
from observability import metrics

UNMATCHED = "unmatched"
OTHER_METHOD = "other"
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_STARTED = "ocrgw.request_started"  # the environ key of the request's start (perf_counter)


def install(app: Flask) -> None:
    """Times and counts every request ``app`` answers."""
    request_started.connect(_start_clock, app, weak=False)
    app.after_request(_count)


def _start_clock(sender: Any, **_: Any) -> None:
    request.environ[_STARTED] = time.perf_counter()


def _count(response: Response) -> Response:
    if internal.is_internal(request.environ):
        return response
    started = request.environ.get(_STARTED)
    seconds = time.perf_counter() - started if started is not None else None
    metrics.http_answered(method_label(request.method), route_label(), response.status_code, seconds)
    return response


def route_label() -> str:
    """The matched rule's template, or ``UNMATCHED`` when routing found none."""
    rule = request.url_rule
    return rule.rule if rule is not None else UNMATCHED


def method_label(method: str) -> str:
    return method if method in METHODS else OTHER_METHOD
