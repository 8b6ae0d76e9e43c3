"""The HTTP routes: submitting jobs, polling them, and the health probes.

Views get their collaborators (settings, store, publisher) through
``as_view`` arguments rather than globals, so that tests build an app
around a fake Redis and a recording publisher.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

from flask import Blueprint, jsonify, request, url_for
from flask.views import MethodView
from redis.exceptions import RedisError
from werkzeug.exceptions import RequestEntityTooLarge

from gateway import drain, views
from gateway.problems import RETRY_AFTER_SECONDS, Problem
from gateway.submission import Parser, idempotency_key
from jobs.config import Settings
from jobs.errors import IdempotencyKeyReused, StoreError
from jobs.store import Dispatch, Idempotency, JobStore

log = logging.getLogger(__name__)

Publish = Callable[[list[Dispatch]], int]


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: JobStore
    publish: Publish


class JobsView(MethodView):
    init_every_request = False

    def __init__(self, services: Services):
        self.store = services.store
        self.publish = services.publish
        self.parser = Parser(services.settings)

    def post(self):
        if drain.is_draining() or self.store.is_draining():
            raise Problem(
                "draining",
                "This gateway is shutting down and accepts no new jobs; retry on another replica.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        key = idempotency_key(request.headers.getlist("Idempotency-Key"))
        if not request.mimetype:
            raise Problem("missing_content_type", "Send the document's type (or application/json) as Content-Type.")
        submission = self.parser.parse(
            path=request.path,
            content_type=request.mimetype,
            args=request.args.to_dict(flat=False),
            body=_read_body(),
        )
        idempotency = Idempotency(key, submission.fingerprint) if key else None
        try:
            if submission.is_group:
                created = self.store.create_group(submission.jobs, submission.max_parallel, idempotency)
            else:
                created = self.store.create_single(submission.jobs[0], idempotency)
        except IdempotencyKeyReused:
            raise Problem(
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different request; use a new key.",
            ) from None
        if created.dispatches:
            self._publish(created.dispatches)
        record = self.store.get(created.job_id)
        if record is None:
            raise StoreError(f"job {created.job_id} vanished right after it was created")
        response = jsonify(views.job(self.store, record))
        response.status_code = 202
        response.headers["Location"] = url_for(".job", job_id=created.job_id)
        if created.replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return response

    def _publish(self, dispatches: list[Dispatch]) -> None:
        # The jobs are durable already and the sweep re-publishes queued jobs
        # that nobody claims, so a publishing failure must not fail the request.
        try:
            self.publish(dispatches)
        except Exception:
            log.exception("publishing %d job messages failed; the sweep will re-publish them", len(dispatches))


class JobView(MethodView):
    init_every_request = False

    def __init__(self, services: Services):
        self.store = services.store

    def get(self, job_id: str):
        return jsonify(views.job(self.store, _record(self.store, job_id)))


class JobEventsView(MethodView):
    init_every_request = False

    def __init__(self, services: Services):
        self.store = services.store

    def get(self, job_id: str):
        record = _record(self.store, job_id)  # also keeps unchecked ids away from the store's keys
        return jsonify(views.events(self.store.events(record["id"])))


def _read_body() -> bytes:
    """The request body, refused past MAX_CONTENT_LENGTH however it is framed.

    werkzeug refuses a too-long Content-Length up front, but cuts a chunked
    body at the limit without a word; one byte past the cut tells the two
    apart.
    """
    body = request.get_data(cache=False)
    limit = request.max_content_length
    if request.content_length is None and limit is not None and len(body) >= limit:
        if request.environ["wsgi.input"].read(1):
            raise RequestEntityTooLarge()
    return body


def _record(store: JobStore, job_id: str) -> dict[str, str]:
    record = store.get(job_id)
    if record is None:
        raise Problem("job_not_found", f"There is no job {job_id!r}.", job_id=job_id)
    return record


class HealthView(MethodView):
    """Liveness: the process answers.  Never touches Redis, so a Redis outage restarts nothing."""

    def get(self):
        return jsonify(status="ok")


class ReadyView(MethodView):
    """Readiness: out of rotation while this replica drains or cannot reach Redis."""

    init_every_request = False

    def __init__(self, services: Services):
        self.store = services.store

    def get(self):
        if drain.is_draining():
            raise Problem("draining", "This gateway is shutting down.")
        try:
            self.store.ping()
            draining = self.store.is_draining()
        except (RedisError, OSError) as error:
            raise Problem("store_unavailable", f"Redis does not answer: {error}.") from None
        if draining:
            raise Problem("draining", "The gateways are draining.")
        return jsonify(status="ready")


def blueprint(services: Services) -> Blueprint:
    bp = Blueprint("api", __name__)
    bp.add_url_rule("/jobs", view_func=JobsView.as_view("jobs", services))
    bp.add_url_rule("/jobs/<job_id>", view_func=JobView.as_view("job", services))
    bp.add_url_rule("/jobs/<job_id>/events", view_func=JobEventsView.as_view("job_events", services))
    bp.add_url_rule("/healthz", view_func=HealthView.as_view("healthz"))
    bp.add_url_rule("/readyz", view_func=ReadyView.as_view("readyz", services))
    return bp
