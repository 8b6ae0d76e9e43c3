"""A result as a document other tools read: GET /jobs/{id}/result.hocr (hOCR), GET /jobs/{id}/result.alto (ALTO),
GET /jobs/{id}/result.md (Markdown), and GET /jobs/{id}/tables/{n}.csv (a table of it as CSV).

Each is drawn from the pages of what ``GET /jobs/{id}/result`` answers (a
completed single job's or child's result, a terminal parent's merged one,
its completed children's pages in document order), by ``documents.hocr``,
``documents.alto``, ``documents.markdown`` and ``documents.table_csv``,
with no engine; they answer the same problems.  A terminal parent without a
completed child has no pages, and so no document (``no_result``, as its
searchable PDF).

A table is numbered from 1 over the whole document, as the result's
``tables`` lists them (a parent's over its children's pages in document
order); a number the result has no table for is ``404 table_not_found``,
and so is any number for a result read without layout.

hOCR is XHTML: a browser that opened it as a page on the gateway's origin
would run any script in it beside the dashboard, which keeps the user's API
key there.  It is served as ``application/xhtml+xml`` (what it is, read by
an XML parser, not guessed at by an HTML one) with ``Content-Security-Policy:
sandbox`` and nothing allowed (``gateway.browser.SANDBOXED_DOCUMENT``): a
browser shows it, on an opaque origin of its own, and runs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response

from documents.alto import render_alto
from documents.hocr import render_hocr
from documents.markdown import render_markdown
from documents.structure import tables_of
from documents.table_csv import table_csv
from documents.table_export import table_block
from gateway import views
from gateway.api.common import ALWAYS, blueprint, record_of
from gateway.api.results import completed_result
from gateway.browser import CSP, SANDBOXED_DOCUMENT
from gateway.openapi import operation, problems
from gateway.problems import Problem, require_terminal
from gateway.services import services
from jobs.contract import JobKind

#: hOCR is XHTML: served as such, and sandboxed (see above).
HOCR_TYPE = "application/xhtml+xml"
ALTO_TYPE = "application/xml"
MARKDOWN_TYPE = "text/markdown"
CSV_TYPE = "text/csv"
_DOCUMENT_SCHEMA = {"type": "string"}
_PROBLEMS = ("job_not_found", "result_not_ready", "no_result", *ALWAYS)


@blueprint.route("/jobs/<job_id>/result.hocr", methods=["GET"])
@operation("getResultHocr", "results")
@blueprint.response(
    200,
    _DOCUMENT_SCHEMA,
    content_type=HOCR_TYPE,
    description="The result as hOCR 1.2: pages, lines and words with their boxes and confidences, in XHTML; "
    "sent with `Content-Security-Policy: sandbox`, so a browser that shows it runs nothing in it.",
)
@problems(blueprint, *_PROBLEMS)
def job_result_hocr(job_id: str):
    """A job's result as hOCR: a completed single job's or child's, a terminal parent's merged one"""
    document = _document(job_id, lambda pages: render_hocr(pages, title=job_id), HOCR_TYPE, "hocr")
    document.headers[CSP] = SANDBOXED_DOCUMENT
    return document


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


@blueprint.route("/jobs/<job_id>/result.md", methods=["GET"])
@operation("getResultMarkdown", "results")
@blueprint.response(
    200,
    _DOCUMENT_SCHEMA,
    content_type=MARKDOWN_TYPE,
    description="The result as Markdown: each page's headings, paragraphs, lists, tables and captions in reading "
    "order (with options.layout; a page without layout gives its lines), a `<!-- page N -->` comment at each "
    "page's start, no running headers or footers.",
)
@problems(blueprint, *_PROBLEMS)
def job_result_markdown(job_id: str):
    """A job's result as Markdown: a completed single job's or child's, a terminal parent's merged one"""
    return _document(job_id, render_markdown, MARKDOWN_TYPE, "md")


@blueprint.route("/jobs/<job_id>/tables/<number>.csv", methods=["GET"])
@operation("getResultTableCsv", "results")
# Taken as any path segment and read here: a number that is no table's, or no number at all, is table_not_found,
# not the router's bare not_found.
@blueprint.doc(
    parameters=[
        {
            "in": "path",
            "name": "number",
            "required": True,
            "description": "The table's number, from 1, over the whole document.",
            "schema": {"type": "integer", "minimum": 1},
        }
    ]
)
@blueprint.response(
    200,
    _DOCUMENT_SCHEMA,
    content_type=CSV_TYPE,
    description="Table `number` of the result (from 1, over the whole document, as the result's `tables` lists "
    "them) as CSV: a row per row of the table, a spanning cell's text at its first row and column.",
)
@problems(blueprint, "table_not_found", *_PROBLEMS)
def job_result_table_csv(job_id: str, number: str):
    """A table of a job's result as CSV (options.layout): a completed single job's or child's, a terminal
    parent's merged one"""
    pages = _pages(job_id)
    block = table_block(pages, int(number)) if number.isascii() and number.isdigit() and len(number) < 10 else None
    if block is None:
        count = len(tables_of(pages))
        raise Problem(
            "table_not_found",
            f"The result of job {job_id} has {count} table{'' if count == 1 else 's'}; there is no table {number}.",
            tables=count,
        )
    return Response(
        table_csv(block["table"]).encode(),
        content_type=f"{CSV_TYPE}; charset=utf-8",
        headers={"Content-Disposition": f'inline; filename="{job_id}-table-{number}.csv"'},
    )


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
