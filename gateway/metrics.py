"""``GET /metrics``: the Prometheus exposition of the gateway, and the submissions it counts.

What a gateway answers: the counts of its gunicorn family (every worker's,
summed through the multiprocess directory that ``observability.gunicorn_config``
sets up; this process's own when run without it), and the gauges of jobs
held, queued and processing per model, read from the store at scrape time
(``observability.collectors``).  The workers, the coordinator and the
webhook deliverer serve their own counts on their own ports.

The route sits outside the API blueprint: it is for Prometheus, not for
clients, so it is not in the OpenAPI document.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from flask import Flask, Response

from observability import logs, metrics, multiprocess
from observability.collectors import StoreCollector

if TYPE_CHECKING:
    from gateway.submission import Submission
    from jobs.records import Created
    from jobs.store import JobStore

ENDPOINT = "metrics"
log = logging.getLogger(__name__)


def install(app: Flask, store: JobStore) -> None:
    registry = multiprocess.exposition_registry([StoreCollector(store.redis)])

    def serve_metrics() -> Response:
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)

    app.add_url_rule("/metrics", ENDPOINT, serve_metrics, methods=["GET"])


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
