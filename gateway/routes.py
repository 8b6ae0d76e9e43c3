"""The HTTP routes: submitting jobs, reading them (views, pages of children, listing, results,
events), the model registry, and the health probes.

Routes get their collaborators (settings, store, queries, publisher) from
the ``blueprint`` factory rather than globals, so that tests build an app
around a fake Redis and a recording publisher.  Each route documents its
query, its answer and its problems for the OpenAPI document; POST /jobs
documents its three request shapes by hand because it reads the body
itself (see ``gateway.submission``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from flask import jsonify, request, url_for
from redis.exceptions import RedisError

from gateway import controls, documents, drain, metrics, views
from gateway.auth import AUTH_PROBLEMS, current_principal
from gateway.bodies import read_body
from gateway.openapi import Blueprint, one_of, problems
from gateway.problems import RETRY_AFTER_SECONDS, Problem, require_terminal
from gateway.publishing import Publish, publish_quietly
from gateway.requests_doc import SUBMIT_DOC, SUBMIT_HEADERS
from gateway.responses import ChildrenPageSchema, EventsSchema, JobListSchema, ModelsSchema, StatusSchema
from gateway.schemas import ChildrenQuery, JobViewQuery, ListQuery
from gateway.submission import Parser, idempotency_key
from jobs.api_keys import ON_PREM_ONLY
from jobs.config import Settings
from jobs.contract import JobKind, JobStatus
from jobs.errors import IdempotencyKeyReused, NotReplicated, StoreError
from jobs.queries import ChildrenPage, InvalidCursor, JobQueries
from jobs.records import Idempotency
from jobs.store import JobStore

log = logging.getLogger(__name__)

# Every route but the probes wants an API key; every read may find Redis away; every route may hit a bug.
_ALWAYS = (*AUTH_PROBLEMS, "store_unavailable", "internal_error")
_JOB_VIEW = one_of("SingleJobView", "ParentView")


@dataclass(frozen=True)
class Services:
    settings: Settings
    store: JobStore
    queries: JobQueries
    publish: Publish
    models: dict[str, Any]  # the GET /models document, made once


def blueprint(services: Services) -> Blueprint:
    store, queries = services.store, services.queries
    parser = Parser(services.settings)
    bp = Blueprint("api", __name__, url_prefix="/", description="OCR jobs, fan-out groups and the models")

    def record_of(job_id: str) -> dict[str, str]:
        """The job, if it is the requesting tenant's: another tenant's is as absent as an unknown one."""
        record = queries.get(job_id, current_principal().tenant)  # also keeps unchecked ids away from the keys
        if record is None:
            raise Problem("job_not_found", f"There is no job {job_id!r}.", job_id=job_id)
        return record

    def job_view(record: dict[str, str], children: str = "page", offset: int = 0, limit: int = 20) -> dict:
        if record["kind"] != JobKind.PARENT.value:
            return views.single(queries, record)
        page = queries.children_page(record["id"], offset, limit) if children == "page" else None
        return views.parent(record, page)

    @bp.route("/jobs", methods=["POST"])
    @bp.doc(**SUBMIT_DOC)
    @bp.response(
        202, _JOB_VIEW, description="Accepted (or replayed): the job's view, at Location.", headers=SUBMIT_HEADERS
    )
    @problems(
        bp,
        "malformed_json",
        "invalid_base64",
        "invalid_idempotency_key",
        "payload_too_large",
        "missing_content_type",
        "unsupported_content_type",
        "content_type_mismatch",
        "invalid_field",
        "unknown_model",
        "empty_document",
        "invalid_document",
        "too_many_pages",
        "too_many_pixels",
        "no_children",
        "too_many_children",
        "idempotency_key_reused",
        "invalid_callback_url",
        "on_prem_required",
        "draining",
        *_ALWAYS,
    )
    def submit():
        """Submit a document, a JSON job or a fan-out group"""
        if drain.is_draining() or store.is_draining():
            raise Problem(
                "draining",
                "This gateway is shutting down and accepts no new jobs; retry on another replica.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            )
        key = idempotency_key(request.headers.getlist("Idempotency-Key"))
        principal = current_principal()
        if not request.mimetype:
            raise Problem("missing_content_type", "Send the document's type (or application/json) as Content-Type.")
        submission = parser.parse(
            path=request.path,
            content_type=request.mimetype,
            args=request.args.to_dict(flat=False),
            body=read_body(request, cache=False),
            # A request asks for on-prem itself (on_prem); a key with the on_prem_only policy forces it.
            require_on_prem=ON_PREM_ONLY in principal.policies,
        )
        idempotency = Idempotency(key, submission.fingerprint) if key else None
        try:
            if submission.group is not None:
                created = store.create_group(submission.jobs, submission.group, idempotency, owner=principal.owner)
            else:
                created = store.create_single(submission.jobs[0], idempotency, owner=principal.owner)
        except IdempotencyKeyReused:
            raise Problem(
                "idempotency_key_reused",
                "This Idempotency-Key was already used for a different request; use a new key.",
            ) from None
        except NotReplicated as error:
            # Not acknowledged, so not published either: a failover could still lose the job.  It is
            # kept, and a retry with the same Idempotency-Key replays it (and waits for the replicas again).
            log.warning("creation not confirmed by the replicas: %s", error)
            raise Problem(
                "store_unavailable",
                "The job store could not confirm that the job was replicated; retry with the same Idempotency-Key.",
                headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
            ) from None
        metrics.submitted(submission, created)
        publish_quietly(services.publish, created.dispatches)
        record = queries.get(created.job_id, principal.tenant)
        if record is None:
            raise StoreError(f"job {created.job_id} vanished right after it was created")
        response = jsonify(job_view(record))
        response.status_code = 202
        response.headers["Location"] = url_for(".job", job_id=created.job_id)
        if created.replayed:
            response.headers["Idempotent-Replayed"] = "true"
        return response

    @bp.route("/jobs", methods=["GET"])
    @bp.arguments(ListQuery, location="query", as_kwargs=True)
    @bp.response(200, JobListSchema)
    @problems(bp, "invalid_field", *_ALWAYS)
    def list_jobs(status=None, kind=None, limit=20, cursor=None):
        """List the tenant's single jobs and parents, newest first"""
        try:
            listing = queries.list_jobs(
                status=status, kind=kind, limit=limit, cursor=cursor, tenant=current_principal().tenant
            )
        except InvalidCursor as error:
            raise Problem("invalid_field", "Invalid field(s): cursor.", errors={"cursor": [str(error)]}) from None
        return jsonify(views.job_list(listing))

    @bp.route("/jobs/<job_id>", methods=["GET"])
    @bp.arguments(JobViewQuery, location="query", as_kwargs=True)
    @bp.response(200, _JOB_VIEW)
    @problems(bp, "job_not_found", "invalid_field", *_ALWAYS)
    def job(job_id: str, children: str, offset: int, limit: int):
        """A job's view: a single job or a child with its result; a parent with a page of children"""
        return jsonify(job_view(record_of(job_id), children, offset, limit))

    @bp.route("/jobs/<job_id>/children", methods=["GET"])
    @bp.arguments(ChildrenQuery, location="query", as_kwargs=True)
    @bp.response(200, ChildrenPageSchema)
    @problems(bp, "job_not_found", "invalid_field", *_ALWAYS)
    def job_children(job_id: str, offset: int, limit: int, status: str | None = None):
        """A page of a parent's children in index order, all or in one status (none for other jobs)"""
        record = record_of(job_id)
        if record["kind"] != JobKind.PARENT.value:
            return jsonify(views.children_page(job_id, _no_children(offset, limit), status))
        page = queries.children_page(job_id, offset, limit, status)
        return jsonify(views.children_page(job_id, page, status))

    @bp.route("/jobs/<job_id>/result", methods=["GET"])
    @bp.response(
        200,
        {"anyOf": [{"$ref": "#/components/schemas/Result"}, {"$ref": "#/components/schemas/MergedResult"}]},
        description="A completed job's result, or a terminal parent's merged result.",
    )
    @problems(bp, "job_not_found", "result_not_ready", "no_result", *_ALWAYS)
    def job_result(job_id: str):
        """A job's result: a completed single job's or child's, a terminal parent's merged one"""
        record = record_of(job_id)
        if record["kind"] == JobKind.PARENT.value:
            require_terminal(job_id, record["status"])
            return jsonify(views.merged_result(queries, record))
        status = record["status"]
        require_terminal(job_id, status)
        result = queries.result(job_id) if status == JobStatus.COMPLETED.value else None
        if result is None:
            raise Problem(
                "no_result",
                f"Job {job_id} ended {status} and has no result.",
                job_status=status,
                error_code=record.get("error_code") or None,
            )
        return jsonify(result)

    documents.register(bp, queries)

    @bp.route("/jobs/<job_id>/events", methods=["GET"])
    @bp.response(200, EventsSchema)
    @problems(bp, "job_not_found", *_ALWAYS)
    def job_events(job_id: str):
        """A job's audit events, oldest first (a parent's include its children's)"""
        record = record_of(job_id)
        return jsonify(views.events(queries.events(record["id"])))

    controls.register(bp, services, record_of, job_view)

    @bp.route("/models", methods=["GET"])
    @bp.response(200, ModelsSchema)
    @problems(bp, *AUTH_PROBLEMS, "internal_error")
    def models():
        """The models: engine, where it runs, the content types and options it takes"""
        return jsonify(services.models)

    @bp.route("/healthz", methods=["GET"])
    @bp.doc(security=[])  # open: no API key
    @bp.response(200, StatusSchema)
    @problems(bp, "internal_error")
    def healthz():
        """Liveness: the process answers.  Never touches Redis, so a Redis outage restarts nothing."""
        return jsonify(status="ok")

    @bp.route("/readyz", methods=["GET"])
    @bp.doc(security=[])  # open: no API key
    @bp.response(200, StatusSchema)
    @problems(bp, "draining", "store_unavailable", "internal_error")
    def readyz():
        """Readiness: out of rotation while this replica drains or cannot reach Redis"""
        if drain.is_draining():
            raise Problem("draining", "This gateway is shutting down.")
        try:
            store.ping()
            draining = store.is_draining()
        except (RedisError, OSError) as error:
            raise Problem("store_unavailable", f"Redis does not answer: {error}.") from None
        if draining:
            raise Problem("draining", "The gateways are draining.")
        return jsonify(status="ready")

    return bp


def _no_children(offset: int, limit: int) -> ChildrenPage:
    return ChildrenPage([], offset, limit, 0)
