"""``GET /metrics``: the Prometheus exposition of the gateway, and the submissions it counts.

What a gateway answers: the counts of its gunicorn family (every worker's,
summed through the multiprocess directory that ``observability.gunicorn_config``
sets up; this process's own when run without it), and the gauges of jobs
held, queued and processing per model as the coordinator last counted
them, read from the store in one command (``observability.collectors``),
and every request it answered, by route and status (``gateway.http_metrics``).
The workers, the coordinator and the webhook deliverer serve their own
counts on their own ports.

The route sits outside the API blueprint: it is for Prometheus, not for
clients, so it is not in the OpenAPI document, and asks for no API key.
With ``OCRGW_METRICS_TOKEN`` set it asks for that token instead
(``Authorization: Bearer <token>``, compared in constant time), so that a
gateway on a network it shares with its clients need not show them its
counts.
"""

from __future__ import annotations

import hmac
import logging
from typing import TYPE_CHECKING

from flask import Flask, Response, request

from gateway import http_metrics
from gateway.auth import bearer_credentials
from gateway.problems import Problem
from observability import logs, metrics, multiprocess
from observability.collectors import StoreCollector

if TYPE_CHECKING:
    from gateway.submission import Submission
    from jobs.records import Created
    from jobs.store import JobStore

ENDPOINT = "metrics"
_REALM = 'Bearer realm="ocrgw-metrics"'
log = logging.getLogger(__name__)


def install(app: Flask, store: JobStore, token_text: str = "") -> None:
    """Serves ``/metrics``; ``token_text`` (``OCRGW_METRICS_TOKEN``): the bearer token it asks for, if any."""
    registry = multiprocess.exposition_registry([StoreCollector(store.redis, store.settings.gauge_interval)])
    token = token_text.encode("ascii")

    def serve_metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        if token:
            check_token(request.headers.get("Authorization"), token)
        return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)

    app.add_url_rule("/metrics", ENDPOINT, serve_metrics, methods=["GET"])
    http_metrics.install(app)


def check_token(authorization: str | None, token: bytes) -> None:
    """Raises ``401`` unless ``authorization`` is ``Bearer <token>`` (compared in constant time)."""
    presented = bearer_credentials(authorization)
    if presented is None:
        raise Problem(
            "missing_metrics_token",
            "Send the metrics token as Authorization: Bearer <token>.",
            headers={"WWW-Authenticate": _REALM},
        )
    if not hmac.compare_digest(presented, token):
        raise Problem(
            "invalid_metrics_token",
            "The metrics token is not valid.",
            headers={"WWW-Authenticate": f'{_REALM}, error="invalid_token"'},
        )


def submitted(submission: Submission, created: Created) -> None:
    """Logs a submission, and counts it if it created its jobs (a replay created none)."""
    models = {job.model for job in submission.jobs}
    model = models.pop() if len(models) == 1 else "mixed"
    log.info(
        "%s %s: %s, %d job(s)",
        "replayed" if created.replayed else "accepted",
        created.job_id,
        submission.shape,
        len(submission.jobs),
        extra=logs.ids_of(created.job_id),
    )
    if not created.replayed:
        metrics.submitted(submission.shape, model)
