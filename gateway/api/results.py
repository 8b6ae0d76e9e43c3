"""What a job made: GET /jobs/{id}/result (its JSON) and GET /jobs/{id}/result.pdf (its searchable PDF).

A completed single job or child has a result; a terminal parent has the
merged result of its completed children, in index order.  The searchable
PDF is made on request from what the store keeps: a completed job made from
an image or a PDF, or a terminal parent (the pages of its completed
children, in index order); each page is the original page image with the
recognized lines on it as invisible text (``documents.searchable_pdf``), so
a viewer can search and copy it.  The store keeps a completed job's
document beside its result for this.  The PDF is built by the gateway, with
no engine, in the time it takes to render the pages again.
"""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify

from documents.pages import PDF_TYPE
from documents.searchable_pdf import SourceDocument, searchable_pdf
from gateway import views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.openapi import problems
from gateway.problems import Problem, require_terminal
from gateway.services import services
from jobs.contract import JobKind, JobStatus
from jobs.errors import InvalidDocument
from jobs.queries import JobQueries
from jobs.registry import DOCUMENT_TYPES

_RESULT_SCHEMA = {"anyOf": [{"$ref": "#/components/schemas/Result"}, {"$ref": "#/components/schemas/MergedResult"}]}
_PDF_SCHEMA = {"type": "string", "format": "binary"}


@blueprint.route("/jobs/<job_id>/result", methods=["GET"])
@blueprint.response(200, _RESULT_SCHEMA, description="A completed job's result, or a terminal parent's merged result.")
@problems(blueprint, "job_not_found", "result_not_ready", "no_result", *ALWAYS)
def job_result(job_id: str):
    """A job's result: a completed single job's or child's, a terminal parent's merged one"""
    record = record_of(job_id)
    queries = services().queries
    if record["kind"] == JobKind.PARENT.value:
        require_terminal(job_id, record["status"])
        return jsonify(views.merged_result(queries, record))
    return jsonify(_result(queries, record))


@blueprint.route("/jobs/<job_id>/result.pdf", methods=["GET"])
@blueprint.response(
    200,
    _PDF_SCHEMA,
    content_type=PDF_TYPE,
    description="The searchable PDF: each page the original page image, the recognized text invisible on it.",
)
@problems(blueprint, "job_not_found", "result_not_ready", "no_result", "pdf_unavailable", *ALWAYS)
def job_result_pdf(job_id: str):
    """A completed job's searchable PDF; a terminal parent's holds its completed children's pages in order"""
    record = record_of(job_id)  # another tenant's job is not found
    queries = services().queries
    if record["kind"] == JobKind.PARENT.value:
        sources = _parent_sources(queries, record)
    else:
        sources = [_job_source(queries, record)]
    try:
        pdf = searchable_pdf(sources)
    except InvalidDocument as error:  # a stored document that no longer decodes
        raise Problem("pdf_unavailable", f"The document of job {job_id} cannot be read: {error}.") from None
    return Response(pdf, mimetype=PDF_TYPE, headers={"Content-Disposition": f'inline; filename="{job_id}.pdf"'})


def _result(queries: JobQueries, record: dict[str, str], what: str = "result") -> dict[str, Any]:
    """A single job's or child's result, once it has ended completed; else the problem why there is none."""
    job_id, status = record["id"], record["status"]
    require_terminal(job_id, status, what)
    result = queries.result(job_id) if status == JobStatus.COMPLETED.value else None
    if result is None:
        raise Problem(
            "no_result",
            f"Job {job_id} ended {status} and has no result.",
            job_status=status,
            error_code=record.get("error_code") or None,
        )
    return result


def _job_source(queries: JobQueries, record: dict[str, str]) -> SourceDocument:
    job_id = record["id"]
    result = _result(queries, record, "PDF")
    _require_document_type(job_id, record["content_type"])
    (document,) = queries.payloads([job_id])
    if document is None:
        raise _document_gone(job_id)
    return SourceDocument(document, record["content_type"], _pages_by_index(result))


def _parent_sources(queries: JobQueries, record: dict[str, Any]) -> list[SourceDocument]:
    parent_id = record["id"]
    status = record["status"]
    require_terminal(parent_id, status, "PDF")
    completed = [
        (child, result)
        for child, result in queries.children_with_results(parent_id, int(record["total"]))
        if child["status"] == JobStatus.COMPLETED.value and result is not None
    ]
    if not completed:
        raise Problem("no_result", f"Job {parent_id} ended {status} with no completed child.", job_status=status)
    for child, _ in completed:
        _require_document_type(str(child["id"]), str(child["content_type"]))
    documents = queries.payloads([str(child["id"]) for child, _ in completed])
    sources = []
    for (child, result), document in zip(completed, documents, strict=True):
        if document is None:
            raise _document_gone(str(child["id"]))
        sources.append(SourceDocument(document, str(child["content_type"]), _pages_by_index(result)))
    return sources


def _pages_by_index(result: dict[str, Any]) -> dict[int, dict]:
    """A result's pages by index in the job's document: it holds one page per page of its document, in order."""
    return dict(enumerate(result.get("pages", [])))


def _require_document_type(job_id: str, content_type: str) -> None:
    if content_type not in DOCUMENT_TYPES:
        raise Problem(
            "pdf_unavailable",
            f"Job {job_id} read a {content_type} document: only images and PDFs make a searchable PDF.",
        )


def _document_gone(job_id: str) -> Problem:
    return Problem("pdf_unavailable", f"The document of job {job_id} is no longer stored.")
