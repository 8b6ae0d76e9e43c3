"""Submitting jobs and reading them: POST /jobs, the listing, a job's view, a page of its children.

POST /jobs documents its three request shapes by hand (``gateway.requests_doc``)
because it reads the body itself (see ``gateway.submission``); every other
route reads its query through its schema.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from flask import request

from gateway import drain, metrics, views
from gateway.api.common import ALWAYS, JOB_VIEW, ORIGIN_CHECK, blueprint, job_view, links, record_of
from gateway.auth import current_principal
from gateway.bodies import read_body
from gateway.openapi import operation, problems
from gateway.problems import RETRY_AFTER_SECONDS, Problem
from gateway.publishing import publish_quietly
from gateway.requests_doc import SUBMIT_DOC, SUBMIT_HEADERS
from gateway.responses import ChildrenPageSchema, JobListSchema
from gateway.schemas import ChildrenQuery, JobViewQuery, ListQuery
from gateway.services import services
from gateway.submission import Submission, idempotency_key
from jobs import public_view
from jobs.api_keys import ON_PREM_ONLY
from jobs.contract import JobKind, Priority
from jobs.errors import IdempotencyKeyReused, InteractiveLaneFull, NotReplicated, StoreError
from jobs.queries import ChildrenPage, InvalidCursor
from jobs.records import Created, Idempotency, Owner
from observability import tracing

log = logging.getLogger(__name__)
# An interactive job is seconds long: a client refused for the allowance can try again soon.
INTERACTIVE_RETRY_AFTER_SECONDS = 1


@blueprint.route("/jobs", methods=["POST"])
@operation("createJob", "jobs")
@blueprint.doc(**SUBMIT_DOC)
@blueprint.response(
    202, JOB_VIEW, description="Accepted (or replayed): the job's view, at Location.", headers=SUBMIT_HEADERS
)
@problems(
    blueprint,
    "malformed_json",
    "invalid_base64",
    "invalid_idempotency_key",
    "payload_too_large",
    "inspection_budget_exceeded",
    "missing_content_type",
    "unsupported_content_type",
    "content_type_mismatch",
    "json_content_type_required",
    "invalid_field",
    "unknown_model",
    "empty_document",
    "invalid_document",
    "encrypted_document",
    "too_many_pages",
    "too_many_pixels",
    "no_children",
    "too_many_children",
    "idempotency_key_reused",
    "invalid_callback_url",
    "on_prem_required",
    "unsupported_language",
    "invalid_options",
    "interactive_not_allowed",
    "interactive_limit_reached",
    "draining",
    *ORIGIN_CHECK,
    *ALWAYS,
)
def submit():
    """Submit a document, a JSON job or a fan-out group"""
    if drain.is_draining() or services().store.is_draining():
        raise Problem(
            "draining",
            "This gateway is shutting down and accepts no new jobs; retry on another replica.",
            headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
        )
    key = idempotency_key(request.headers.getlist("Idempotency-Key"))
    if not request.mimetype:
        raise Problem("missing_content_type", "Send the document's type (or application/json) as Content-Type.")
    submission = services().parser.parse(
        path=request.path,
        content_type=request.mimetype,
        args=request.args.to_dict(flat=False),
        body=read_body(request, cache=False),
        # A request asks for on-prem itself (on_prem); a key with the on_prem_only policy forces it.
        require_on_prem=ON_PREM_ONLY in current_principal().policies,
        languages=services().languages.get(),
    )
    created = _create(submission, Idempotency(key, submission.fingerprint) if key else None)
    metrics.submitted(submission, created)
    publish_quietly(services().publish, created.dispatches)
    return _accepted(created)


def _owner(submission: Submission) -> Owner:
    """Who submits, with the interactive allowance of its key when the submission asks for the lane: a key
    allowed none is refused here, before anything is stored (docs/security/fair-share.md)."""
    principal = current_principal()
    lane = submission.group.priority if submission.group is not None else submission.jobs[0].priority
    if lane != Priority.INTERACTIVE.value:
        return replace(principal.owner, interactive_max_inflight=None)
    limit = interactive_limit()
    if limit == 0:
        raise Problem(
            "interactive_not_allowed",
            "This key may not use the interactive lane; submit without priority (the batch lane).",
        )
    return replace(principal.owner, interactive_max_inflight=limit)


def interactive_limit() -> int:
    """How many interactive places the requesting key's tenant may hold: its policy, or the default."""
    limit = current_principal().interactive_max_inflight
    return services().settings.interactive_max_inflight if limit is None else limit


def interactive_limit_reached(full: InteractiveLaneFull) -> Problem:
    return Problem(
        "interactive_limit_reached",
        f"{full}: retry once some have ended, or submit in the batch lane.",
        headers={"Retry-After": str(INTERACTIVE_RETRY_AFTER_SECONDS)},
        in_use=full.in_use,
        interactive_max_inflight=full.limit,
    )


def _create(submission: Submission, idempotency: Idempotency | None) -> Created:
    """The submission's jobs in the store, or the problem why not."""
    store, owner = services().store, _owner(submission)
    # With tracing on, the jobs keep this request's trace context: their attempts join its trace.
    traceparent = tracing.current_traceparent()
    try:
        if submission.group is not None:
            return store.create_group(
                submission.jobs,
                submission.group,
                idempotency,
                owner=owner,
                source=submission.source,
                traceparent=traceparent,
            )
        return store.create_single(submission.jobs[0], idempotency, owner=owner, traceparent=traceparent)
    except InteractiveLaneFull as full:
        raise interactive_limit_reached(full) from None
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


def _accepted(created: Created) -> tuple[dict[str, Any], int, dict[str, str]]:
    """``202`` with the new (or replayed) job's view, and where it is."""
    record = services().queries.get(created.job_id, current_principal().tenant)
    if record is None:
        raise StoreError(f"job {created.job_id} vanished right after it was created")
    headers = {"Location": links().job(created.job_id)}
    if created.replayed:
        headers["Idempotent-Replayed"] = "true"
    return job_view(record), 202, headers


@blueprint.route("/jobs", methods=["GET"])
@operation("listJobs", "jobs")
@blueprint.arguments(ListQuery, location="query", as_kwargs=True)
@blueprint.response(200, JobListSchema)
@problems(blueprint, "invalid_field", *ALWAYS)
def list_jobs(status=None, kind=None, limit=20, cursor=None):
    """List the tenant's single jobs and parents, newest first"""
    try:
        listing = services().queries.list_jobs(
            status=status, kind=kind, limit=limit, cursor=cursor, tenant=current_principal().tenant
        )
    except InvalidCursor as error:
        raise Problem("invalid_field", "Invalid field(s): cursor.", errors={"cursor": [str(error)]}) from None
    return views.job_list(listing, links())


@blueprint.route("/jobs/<job_id>", methods=["GET"])
@operation("getJob", "jobs")
@blueprint.arguments(JobViewQuery, location="query", as_kwargs=True)
@blueprint.response(200, JOB_VIEW)
@problems(blueprint, "job_not_found", "invalid_field", *ALWAYS)
def job(job_id: str, children: str, offset: int, limit: int):
    """A job's view: a single job or a child with its result; a parent with a page of children"""
    return job_view(record_of(job_id), children=children, offset=offset, limit=limit)


@blueprint.route("/jobs/<job_id>/children", methods=["GET"])
@operation("listChildren", "groups")
@blueprint.arguments(ChildrenQuery, location="query", as_kwargs=True)
@blueprint.response(200, ChildrenPageSchema)
@problems(blueprint, "job_not_found", "invalid_field", *ALWAYS)
def job_children(job_id: str, offset: int, limit: int, status: str | None = None):
    """A page of a parent's children in index order, all or in one status (none for other jobs)"""
    record = record_of(job_id)
    if record["kind"] != JobKind.PARENT.value:
        page = ChildrenPage([], offset, limit, 0)
    else:
        page = services().queries.children_page(job_id, offset, limit, status)
    return public_view.children_page(job_id, page, status, links())
