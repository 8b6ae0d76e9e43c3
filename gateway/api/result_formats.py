"""A result as a document OCR tools read: GET /jobs/{id}/result.hocr (hOCR) and GET /jobs/{id}/result.alto (ALTO).

Both are drawn from the pages of what ``GET /jobs/{id}/result`` answers (a
completed single job's or child's result, a terminal parent's merged one,
its completed children's pages in document order), by ``documents.hocr``
and ``documents.alto``, with no engine; they answer the same problems.  A
terminal parent without a completed child has no pages, and so neither
document (``no_result``, as its searchable PDF).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response

from documents.alto import render_alto
from documents.hocr import render_hocr
from gateway import views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.api.results import completed_result
from gateway.openapi import operation, problems
from gateway.problems import Problem, require_terminal
from gateway.services import services
from jobs.contract import JobKind

#: hOCR is HTML (XHTML, which an HTML parser reads as well): served as HTML, a browser shows its text.
HOCR_TYPE = "text/html"
ALTO_TYPE = "application/xml"
_DOCUMENT_SCHEMA = {"type": "string"}
_PROBLEMS = ("job_not_found", "result_not_ready", "no_result", *ALWAYS)


@blueprint.route("/jobs/<job_id>/result.hocr", methods=["GET"])
@operation("getResultHocr", "results")
@blueprint.response(
    200,
    _DOCUMENT_SCHEMA,
    content_type=HOCR_TYPE,
    description="The result as hOCR 1.2: pages, lines and words with their boxes and confidences, in XHTML.",
)
@problems(blueprint, *_PROBLEMS)
def job_result_hocr(job_id: str):
    """A job's result as hOCR: a completed single job's or child's, a terminal parent's merged one"""
    return _document(job_id, lambda pages: render_hocr(pages, title=job_id), HOCR_TYPE, "hocr")


@blueprint.route("/jobs/<job_id>/result.alto", methods=["GET"])
@operation("getResultAlto", "results")
@blueprint.response(
    200,
    _DOCUMENT_SCHEMA,
    content_type=ALTO_TYPE,
    description="The result as ALTO v4 XML: pages, lines and words with their positions and confidences.",
)
@problems(blueprint, *_PROBLEMS)
def job_result_alto(job_id: str):
    """A job's result as ALTO v4: a completed single job's or child's, a terminal parent's merged one"""
    return _document(job_id, lambda pages: render_alto(pages, document_id=job_id), ALTO_TYPE, "xml")


def _document(job_id: str, render: Callable[[list[dict[str, Any]]], str], media_type: str, suffix: str) -> Response:
    pages = _pages(job_id)
    return Response(
        render(pages).encode(),
        content_type=f"{media_type}; charset=utf-8",
        headers={"Content-Disposition": f'inline; filename="{job_id}.{suffix}"'},
    )


def _pages(job_id: str) -> list[dict[str, Any]]:
    """The pages of the job's result, in document order; the problem why there are none."""
    record = record_of(job_id)  # another tenant's job is not found
    queries = services().queries
    status = record["status"]
    if record["kind"] == JobKind.PARENT.value:
        require_terminal(job_id, status)
        pages = views.merged_result(queries, record)["pages"]
    else:
        pages = completed_result(queries, record).get("pages", [])
    if not pages:  # a group without a completed child: neither document has anything to hold
        raise Problem("no_result", f"Job {job_id} ended {status} with no page in its result.", job_status=status)
    return list(pages)
