"""A submitted document held to its declared type and to the page and pixel limits, or the problem why not.

Run on every document of a submission (a raw body, a JSON job, each child of
a group, a PDF before it is split), before anything is stored: the magic
bytes must be those of the declared type (``415 content_type_mismatch``),
and what the headers declare must be within ``OCRGW_MAX_PAGES`` and
``OCRGW_MAX_IMAGE_PIXELS`` (``422 too_many_pages``, ``422 too_many_pixels``;
``422 invalid_document`` when the headers cannot be read, ``422
encrypted_document`` for a PDF that needs a password to open).  Nothing is
decoded: a decompression bomb is refused from its header.
"""

from __future__ import annotations

from typing import Any

from documents import sniffing
from documents.inspection import inspect
from documents.limits import DocumentLimits, TooManyPages, TooManyPixels
from gateway.problems import Problem
from jobs.errors import EncryptedDocument, InvalidDocument
from jobs.records import NewJob


def check_document(job: NewJob, limits: DocumentLimits) -> int:
    """The document's page count, once it is what it says and within ``limits``; else the problem why not."""
    declared, document = job.content_type, job.payload
    if not sniffing.matches(declared, document):
        detected = sniffing.sniff(document)
        raise Problem(
            "content_type_mismatch",
            f"The document is declared {declared}, but its bytes are {sniffing.describe(detected)}.",
            declared=declared,
            detected=detected,
        )
    try:
        return inspect(document, declared, limits)
    except TooManyPages as error:
        counted: dict[str, Any] = {} if error.page_count is None else {"page_count": error.page_count}
        raise Problem("too_many_pages", _sentence(error), max_pages=error.max_pages, **counted) from None
    except TooManyPixels as error:
        raise Problem(
            "too_many_pixels",
            _sentence(error),
            page=error.page,
            width=error.width,
            height=error.height,
            max_image_pixels=error.max_pixels,
        ) from None
    except EncryptedDocument as error:
        raise Problem("encrypted_document", _sentence(error)) from None
    except InvalidDocument as error:
        raise Problem("invalid_document", f"The document cannot be read: {error}.") from None


def _sentence(error: Exception) -> str:
    text = str(error)
    return f"{text[:1].upper()}{text[1:]}."
