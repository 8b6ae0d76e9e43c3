"""The API's one blueprint, what its operations document alike, and how a route finds a job.

Every route of the API is a view function of a module of this package,
registered on ``blueprint`` when the module is imported; one blueprint keeps
every endpoint named ``api.<view>``.  Each operation names itself and its tag
with ``gateway.openapi.operation`` (the tags are ``gateway.openapi.TAGS``).
"""

from __future__ import annotations

from typing import Any

from flask import request

from gateway.auth import AUTH_PROBLEMS, current_principal
from gateway.openapi import Blueprint
from gateway.problems import Problem
from gateway.services import services
from jobs import public_view
from jobs.links import Links

blueprint = Blueprint("api", __name__, url_prefix="/", description="OCR jobs, fan-out groups and the models")

# -- what operations document ----------------------------------------------------------------------

#: A request line or headers past what gunicorn reads: answered before any route runs (gateway.gunicorn_worker).
SERVER_LIMITS = ("uri_too_long", "request_header_fields_too_large")
#: A Host the gateway does not answer to: refused before any route but the probes runs (gateway.browser).
HOST_CHECK = ("host_not_allowed",)
#: A change sent by a page of another site: refused before any route runs (gateway.browser).
ORIGIN_CHECK = ("cross_site_request",)
#: Every route but the probes wants an API key; every read may find Redis away; every route may hit a bug.
ALWAYS = (*AUTH_PROBLEMS, "store_unavailable", "internal_error", *SERVER_LIMITS, *HOST_CHECK)
#: A body past OCRGW_MAX_BODY_BYTES, refused before it is read.
WITH_A_BODY = ("payload_too_large",)
#: A job's view (``SingleJobView`` or ``ParentView``), and a parent's, each dumped through its schema.
JOB_VIEW = public_view.JOB_VIEW
PARENT_VIEW = public_view.ParentViewSchema


# -- finding a job ---------------------------------------------------------------------------------


def record_of(job_id: str) -> dict[str, str]:
    """The job, if it is the requesting tenant's: another tenant's is as absent as an unknown one."""
    record = services().queries.get(job_id, current_principal().tenant)  # also keeps unchecked ids away from the keys
    if record is None:
        raise Problem("job_not_found", f"There is no job {job_id!r}.", job_id=job_id)
    return record


def links() -> Links:
    """The URLs of the views, under the mount point of the request being served."""
    return Links(request.root_path)


def job_view(record: dict[str, str], **page: Any) -> dict[str, Any]:
    """The job's view as ``GET /jobs/{id}`` answers it, for the route's ``JOB_VIEW`` to dump; ``page``: its
    query (children, offset, limit)."""
    return public_view.job_view(services().queries, record, links(), **page)
