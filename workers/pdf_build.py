"""A terminal job's searchable PDF, built once on a worker and kept in the store beside its result.

The gateway asks for it (``ocrgw.build_pdf``, on the queue of the job's
model) the first time a client wants it, and answers from the store from
then on.  Each variant (``jobs.pdf_outputs``: a plain PDF or a PDF/A, its
images optimised or not) is built and kept on its own, from the same
sources.  The PDF is drawn from what the store keeps, with no engine:

=======================  ================================================
a single job             its document, every page
a child                  its own document; a split's child: its pages of
                         its parent's document
a non-split parent       one document per completed child, in index order
a split parent           the one document, every page, with the completed
                         children's result pages (a failed child's pages go
                         in without text)
=======================  ================================================

The drawing runs in a forked child under bounds (``documents.isolation``):
a document that makes a decoder abort fails the build, not the worker.  A
build that cannot be made (``InvalidDocument``) is kept as such, so the
gateway answers ``pdf_unavailable`` instead of waiting for it; so is one that
runs past the job time limit or out of the process's memory, which would
again.  One that fails otherwise (the store away for a moment) leaves
nothing: a request after the gateway's mark lapses asks for it again.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded

from documents.isolation import run_isolated
from documents.searchable_pdf import SourceDocument, searchable_pdf
from jobs.contract import TERMINAL, Field, JobKind, JobStatus
from jobs.errors import InvalidDocument
from jobs.pdf_outputs import DEFAULT_OUTPUT, PdfOutput
from jobs.queries import JobQueries
from jobs.records import parse_pages
from jobs.store import JobStore

log = logging.getLogger(__name__)

BUILT, FAILED, SKIPPED = "built", "failed", "skipped"


def build_pdf(store: JobStore, job_id: str, variant: str = DEFAULT_OUTPUT.name) -> str:
    """Builds and keeps a variant of the job's searchable PDF (``jobs.pdf_outputs``): BUILT, FAILED (the reason
    kept), or SKIPPED (nothing to do)."""
    try:
        output = PdfOutput.named(variant)
    except ValueError:
        log.warning("job %s: no searchable PDF variant is named %r", job_id, variant)
        return SKIPPED
    record = store.queries.get(job_id)
    if record is None or JobStatus(record[Field.STATUS.value]) not in TERMINAL:
        log.info("job %s: no searchable PDF to build (gone or not terminal)", job_id)
        return SKIPPED
    finished_at = record[Field.FINISHED_AT.value]
    try:
        sources = sources_of(store.queries, record)
        pdf = run_isolated(searchable_pdf, sources, output, what="building the searchable PDF")
    except (InvalidDocument, SoftTimeLimitExceeded, MemoryError) as error:
        # The same build would fail the same way (the document, the time limit, the memory bound): kept as
        # failed, so that the gateway says so instead of asking for it again and again.
        reason = _reason(error)
        log.warning("job %s: no searchable PDF: %s", job_id, reason)
        store.record_pdf(job_id, finished_at, error=reason, variant=variant)
        return FAILED
    if not store.record_pdf(job_id, finished_at, pdf=pdf, variant=variant):
        log.info("job %s ended again or went while its PDF was built: not kept", job_id)
        return SKIPPED
    return BUILT


def _reason(error: BaseException) -> str:
    if isinstance(error, SoftTimeLimitExceeded):
        return "building it ran past the job time limit (OCRGW_JOB_TIMEOUT)"
    if isinstance(error, MemoryError):
        return "building it needed more memory than a worker process may use"
    return str(error)


def sources_of(queries: JobQueries, record: dict[str, str]) -> list[SourceDocument]:
    """What the job's searchable PDF is drawn from (see the module's table); ``InvalidDocument`` if gone."""
    if record[Field.KIND.value] == JobKind.PARENT.value:
        return _parent_sources(queries, record)
    job_id = record[Field.ID.value]
    result = queries.result(job_id)
    if result is None:
        raise InvalidDocument(f"job {job_id} has no result")
    return [_job_source(queries, job_id, record, result)]


def _job_source(queries: JobQueries, job_id: str, record: dict[str, Any], result: dict[str, Any]) -> SourceDocument:
    content_type = str(record[Field.CONTENT_TYPE.value])
    pages = parse_pages(record.get(Field.SOURCE_PAGES.value))
    if pages is None:
        (document,) = queries.payloads([job_id])
        return SourceDocument(_stored(document, job_id), content_type, dict(enumerate(result.get("pages", []))))
    first, last = pages
    document = _stored(queries.source_document(job_id), job_id)
    return SourceDocument(document, content_type, _by_source_index(result, first), only=range(first - 1, last))


def _parent_sources(queries: JobQueries, record: dict[str, str]) -> list[SourceDocument]:
    parent_id = record[Field.ID.value]
    children = queries.children_with_results(parent_id, int(record[Field.TOTAL.value]))
    completed = [
        (child, result)
        for child, result in children
        if child[Field.STATUS.value] == JobStatus.COMPLETED.value and result is not None
    ]
    if not completed:
        raise InvalidDocument(f"job {parent_id} has no completed child")
    if children and children[0][0].get(Field.SOURCE_PAGES.value):
        # A split: its one document, every page, each completed child's pages at their places in it.
        pages: dict[int, dict] = {}
        for child, result in completed:
            first, _ = parse_pages(child[Field.SOURCE_PAGES.value])  # type: ignore[misc]  # a split's child has one
            pages.update(_by_source_index(result, first))
        document = _stored(queries.source_document(parent_id), parent_id)
        return [SourceDocument(document, str(children[0][0][Field.CONTENT_TYPE.value]), pages)]
    # Separate documents: each child's own, read in one round trip.
    documents = queries.payloads([str(child[Field.ID.value]) for child, _ in completed])
    return [
        SourceDocument(
            _stored(document, str(child[Field.ID.value])),
            str(child[Field.CONTENT_TYPE.value]),
            dict(enumerate(result.get("pages", []))),
        )
        for (child, result), document in zip(completed, documents, strict=True)
    ]


def _by_source_index(result: dict[str, Any], first: int) -> dict[int, dict]:
    """A child's result pages keyed by their 0-based index in the document its pages start at ``first`` of."""
    return {first - 1 + offset: page for offset, page in enumerate(result.get("pages", []))}


def _stored(document: bytes | None, job_id: str) -> bytes:
    if document is None:
        raise InvalidDocument(f"the document of job {job_id} is no longer stored")
    return document
