"""A submitted document held to its declared type and to the page and pixel limits, or the problem why not.

Run on every document of a submission (a raw body, a JSON job, each child of
a group, a PDF before it is split), before anything is stored: the magic
bytes must be those of the declared type (``415 content_type_mismatch``),
and what the headers declare must be within ``OCRGW_MAX_PAGES`` and
``OCRGW_MAX_IMAGE_PIXELS`` (``422 too_many_pages``, ``422 too_many_pixels``;
``422 invalid_document`` when the headers cannot be read, ``422
encrypted_document`` for a PDF that needs a password to open).  Nothing is
decoded: a decompression bomb is refused from its header.

All of it runs in the gateway thread that answers the request, so what one
request may have it spend is bounded: its ``Inspections`` check at most
``OCRGW_INSPECTION_MAX_DOCUMENTS`` distinct documents, in at most
``OCRGW_INSPECTION_SECONDS`` of wall time in all, and refuse the request
with ``413 inspection_budget_exceeded`` as soon as either is spent, so a
group of costly documents (each PDF within the memory bound but slow to
open) answers in about that time instead of holding the thread for each
child in turn.  A PDF is given what is left of the time, as its CPU limit
and as a deadline, and killed past it.  Identical documents (the same bytes,
the same declared type) are checked once per request: a group of the same
page sent 200 times costs one check, and a bomb repeated in every child
costs one.  The PDFs of one request are opened in one forked process
(``documents.inspection.Inspector``), forked again only after a PDF that
ended it, since a fork of the gateway costs more than opening a real PDF.
"""

from __future__ import annotations

import hashlib
from time import monotonic
from typing import Any

from documents import sniffing
from documents.inspection import Inspector
from documents.isolation import OutOfTime
from documents.limits import DocumentLimits, TooManyPages, TooManyPixels
from gateway.problems import Problem
from jobs.errors import EncryptedDocument, InvalidDocument
from jobs.records import NewJob
from observability import metrics


class Inspections:
    """The document checks of one request, within its budget; a context manager (it may hold a process)."""

    def __init__(self, limits: DocumentLimits, *, seconds: float, max_documents: int):
        self.limits, self.seconds, self.max_documents = limits, seconds, max_documents
        self.spent = 0.0  # wall seconds the checks have taken so far
        self.count = 0  # distinct documents checked so far
        self._outcomes: dict[tuple[str, bytes], int | Problem] = {}
        self._inspector = Inspector()

    def __enter__(self) -> Inspections:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self._inspector.close()

    def check(self, job: NewJob) -> int:
        """The document's page count, once it is what it says and within the limits; else the problem why not."""
        declared, document = job.content_type, job.payload
        if not sniffing.matches(declared, document):
            detected = sniffing.sniff(document)
            raise Problem(
                "content_type_mismatch",
                f"The document is declared {declared}, but its bytes are {sniffing.describe(detected)}.",
                declared=declared,
                detected=detected,
            )
        same = (declared, hashlib.sha256(document).digest())
        if same in self._outcomes:
            metrics.document_checked("reused")
        else:
            self._outcomes[same] = self._inspect(document, declared)
            metrics.document_checked("checked")
        outcome = self._outcomes[same]
        if isinstance(outcome, Problem):
            raise outcome
        return outcome

    def _inspect(self, document: bytes, declared: str) -> int | Problem:
        """The page count or the problem of a document not checked before in this request."""
        if self.count >= self.max_documents:
            raise self._spent(f"it has more than {self.max_documents} distinct documents to check")
        left = self.seconds - self.spent
        if left <= 0:
            raise self._out_of_time()
        self.count += 1
        started = monotonic()
        try:
            return self._inspector.inspect(document, declared, self.limits, seconds=left)
        except OutOfTime:
            raise self._out_of_time() from None
        except (InvalidDocument, MemoryError) as error:
            return problem_of(error)
        finally:
            self.spent += monotonic() - started

    def _out_of_time(self) -> Problem:
        return self._spent(
            f"its documents take more than the {self.seconds:g} s a request may spend checking them "
            f"({self.count} checked)"
        )

    def _spent(self, why: str) -> Problem:
        metrics.document_checked("over_budget")
        return Problem(
            "inspection_budget_exceeded",
            f"The request was refused before anything was stored: {why}. Send its documents in several requests.",
            inspection_seconds=self.seconds,
            max_inspections=self.max_documents,
        )


def problem_of(error: InvalidDocument | MemoryError) -> Problem:
    """The problem a document that failed its check is to the client."""
    if isinstance(error, TooManyPages):
        counted: dict[str, Any] = {} if error.page_count is None else {"page_count": error.page_count}
        return Problem("too_many_pages", _sentence(error), max_pages=error.max_pages, **counted)
    if isinstance(error, TooManyPixels):
        return Problem(
            "too_many_pixels",
            _sentence(error),
            page=error.page,
            width=error.width,
            height=error.height,
            max_image_pixels=error.max_pixels,
        )
    if isinstance(error, EncryptedDocument):
        return Problem("encrypted_document", _sentence(error))
    if isinstance(error, MemoryError):  # raised in the process that opened it, under its bound
        return Problem("invalid_document", "The document cannot be read: it needs more memory than it may take.")
    return Problem("invalid_document", f"The document cannot be read: {error}.")


def _sentence(error: Exception) -> str:
    text = str(error)
    return f"{text[:1].upper()}{text[1:]}."
