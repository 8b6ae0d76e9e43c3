"""What a job made: GET /jobs/{id}/result (its JSON) and GET /jobs/{id}/result.pdf (its searchable PDF).

A completed single job or child has a result; a terminal parent has the
merged result of its completed children, in index order.  The searchable
PDF is made from what the store keeps: a completed job made from an image
or a PDF, or a terminal parent (the pages of its completed children, in
index order; a split's whole document, its failed children's pages without
text); each page is the original page with the recognized lines on it as
invisible text (``documents.searchable_pdf``), so a viewer can search and
copy it.  The store keeps a completed job's document beside its result for
this.

A worker builds it, once (``workers.pdf_build``): the first request asks for
the build and answers ``202`` with ``Retry-After``; once built, it is kept
as long as the result and every request answers it at once.  The gateway
never draws a PDF itself.

A job's PDF comes in variants (``jobs.pdf_outputs``): a plain PDF or a
PDF/A-2b, its images optimised at OCRmyPDF's levels 0, 1 or 2.  A request
gets the one the job's options ``output_type`` and ``optimize`` ask for (a
parent's: its first child's), unless its query names another; each variant
is built and kept on its own.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from flask import Response, jsonify

from documents.pages import PDF_TYPE
from gateway import views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.openapi import operation, problems
from gateway.problems import Problem, require_terminal
from gateway.publishing import publish_quietly
from gateway.responses import AnyResultSchema
from gateway.schemas import ResultPdfQuery
from gateway.services import services
from jobs import keys
from jobs.contract import DEFAULT_PRIORITY, Field, JobKind, JobStatus
from jobs.pdf_outputs import DEFAULT_OUTPUT, PdfOutput
from jobs.queries import JobQueries
from jobs.records import Dispatch
from jobs.registry import DOCUMENT_TYPES
from jobs.transitions.spec import BUILD_PDF

_PDF_SCHEMA = {"type": "string", "format": "binary"}


@blueprint.route("/jobs/<job_id>/result", methods=["GET"])
@operation("getResult", "results")
@blueprint.response(200, AnyResultSchema, description="A completed job's result, or a terminal parent's merged result.")
@problems(blueprint, "job_not_found", "result_not_ready", "no_result", *ALWAYS)
def job_result(job_id: str):
    """A job's result: a completed single job's or child's, a terminal parent's merged one"""
    record = record_of(job_id)
    queries = services().queries
    if record["kind"] == JobKind.PARENT.value:
        require_terminal(job_id, record["status"])
        return views.merged_result(queries, record)
    return views.with_tables(completed_result(queries, record))


#: How long past the job time limit (OCRGW_JOB_TIMEOUT, a build's too) a request waits before asking for a build
#: again: the build's message may have been lost, or its worker died.
PDF_ASK_MARGIN_SECONDS = 60
#: How soon a client polls again for a PDF being built.
PDF_RETRY_AFTER_SECONDS = 1
_BUILDING_SCHEMA = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "status": {"type": "string", "enum": ["building"]},
        "url": {"type": "string", "description": "Where to ask again: this URL."},
    },
    "required": ["id", "status", "url"],
}
_RETRY_AFTER = {"Retry-After": {"description": "Seconds to wait before asking again.", "schema": {"type": "string"}}}


@blueprint.route("/jobs/<job_id>/result.pdf", methods=["GET"])
@operation("getResultPdf", "results")
@blueprint.arguments(ResultPdfQuery, location="query", as_kwargs=True)
@blueprint.response(
    200,
    _PDF_SCHEMA,
    content_type=PDF_TYPE,
    description="The searchable PDF: each page the original page, the recognized text invisible on it.",
)
@blueprint.alt_response(
    202,
    schema=_BUILDING_SCHEMA,
    description="The PDF is being built (the first request asked for it): ask again after Retry-After.",
    headers=_RETRY_AFTER,
)
@problems(blueprint, "job_not_found", "result_not_ready", "no_result", "pdf_unavailable", "invalid_field", *ALWAYS)
def job_result_pdf(job_id: str, output_type: str | None = None, optimize: int | None = None):
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order"""
    record = record_of(job_id)  # another tenant's job is not found
    require_terminal(job_id, record["status"], "PDF")
    queries = services().queries
    variant = _variant(queries, record, output_type, optimize).name
    # What is kept answers first: the polls of a build, and every request after it, read no other child.
    stored = queries.stored_pdf(job_id, variant)
    if stored is not None and stored.error is not None:
        raise Problem(
            "pdf_unavailable", f"The searchable PDF ({variant}) of job {job_id} cannot be made: {stored.error}."
        )
    if stored is not None and stored.pdf is not None:
        disposition = f'inline; filename="{job_id}.pdf"'
        return Response(stored.pdf, mimetype=PDF_TYPE, headers={"Content-Disposition": disposition})
    model = _pdf_model(queries, record)
    # Asked again once a build could have ended, not before: the task's time limit, and a margin for its queue.
    if services().store.ask_pdf(job_id, round(services().settings.job_timeout) + PDF_ASK_MARGIN_SECONDS, variant):
        # In the job's lane: an interactive job's PDF is built ahead of batch work too.
        lane = record.get(Field.PRIORITY.value) or DEFAULT_PRIORITY.value
        default = variant == DEFAULT_OUTPUT.name
        build = Dispatch(job_id, model, BUILD_PDF, priority=lane, pdf_variant="" if default else variant)
        publish_quietly(services().publish, [build])
    chosen = {
        name: value for name, value in (("output_type", output_type), ("optimize", optimize)) if value is not None
    }
    url = f"/jobs/{job_id}/result.pdf" + (f"?{urlencode(chosen)}" if chosen else "")
    response = jsonify({"id": job_id, "status": "building", "url": url})
    response.status_code = 202
    response.headers["Retry-After"] = str(PDF_RETRY_AFTER_SECONDS)
    return response


def _variant(queries: JobQueries, record: dict[str, str], output_type: str | None, optimize: int | None) -> PdfOutput:
    """The variant asked for: the query's choices over the job's options (a parent's: its first child's)."""
    if output_type is not None and optimize is not None:  # the query says it all: no child to read
        return PdfOutput(output_type, optimize)
    options_of = record if record["kind"] != JobKind.PARENT.value else queries.get(keys.child_id(record["id"], 0))
    try:
        options = json.loads((options_of or {}).get(Field.OPTIONS.value) or "{}")
        return PdfOutput.of_options(
            options if isinstance(options, dict) else {}, output_type=output_type, optimize=optimize
        )
    except ValueError:  # options no schema of ours checked (a remote model's): the query's choices alone
        return PdfOutput.of_options({}, output_type=output_type, optimize=optimize)


def completed_result(queries: JobQueries, record: dict[str, str], what: str = "result") -> dict[str, Any]:
    """A single job's or child's result, once it has ended completed; else the problem why there is none."""
    job_id, status = record["id"], record["status"]
    require_terminal(job_id, status, what)
    result = queries.result(job_id) if status == JobStatus.COMPLETED.value else None
    if result is None:
        raise _no_result(record)
    return result


def _no_result(record: dict[str, str]) -> Problem:
    return Problem(
        "no_result",
        f"Job {record['id']} ended {record['status']} and has no result.",
        job_status=record["status"],
        error_code=record.get("error_code") or None,
    )


def _pdf_model(queries: JobQueries, record: dict[str, str]) -> str:
    """The model whose workers build the job's PDF (a parent's: its first completed child's), once the job has
    a result of a document a PDF can be made of; else the problem why there is no PDF."""
    if record["kind"] != JobKind.PARENT.value:
        if record["status"] != JobStatus.COMPLETED.value:  # a terminal job has a result exactly when completed
            raise _no_result(record)
        _require_document_type(record["id"], record["content_type"])
        return record["model"]
    parent_id, status = record["id"], record["status"]
    completed = [
        child
        for child, result in queries.children_with_results(parent_id, int(record["total"]))
        if child["status"] == JobStatus.COMPLETED.value and result is not None
    ]
    if not completed:
        raise Problem("no_result", f"Job {parent_id} ended {status} with no completed child.", job_status=status)
    for child in completed:
        _require_document_type(str(child["id"]), str(child["content_type"]))
    return str(completed[0]["model"])


def _require_document_type(job_id: str, content_type: str) -> None:
    if content_type not in DOCUMENT_TYPES:
        raise Problem(
            "pdf_unavailable",
            f"Job {job_id} read a {content_type} document: only images and PDFs make a searchable PDF.",
        )
