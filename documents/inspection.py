"""A document held to the limits from its headers alone, the way the gateway checks it at submission.

What a worker would refuse before decoding (``documents.pages``), found
without decoding: the page count of a PDF, a TIFF or a text (a form feed
separates a text's pages), every TIFF page's and the image's pixel size, and
every PDF page's size at the render resolution.  A PDF is opened (its
cross-reference table and page tree are read, no page content), an image's
headers are walked.  The cost is bounded by the body size and the page limit.
"""

from __future__ import annotations

from documents import headers
from documents.limits import DocumentLimits, check_pages, check_pixels, pdf_render_scale
from documents.pages import PDF_TYPE, RENDER_DPI, _PdfDocument
from documents.sniffing import TEXT
from jobs.registry import IMAGE_TYPES

FORM_FEED = b"\f"


def inspect(data: bytes, media_type: str, limits: DocumentLimits, dpi: int = RENDER_DPI) -> int:
    """The document's page count, once it is within ``limits``.

    Raises ``TooManyPages``, ``TooManyPixels`` or, for headers that cannot be
    read, ``InvalidDocument``.  A type with no pages to count (none the
    registry has today) counts one.
    """
    if media_type == PDF_TYPE:
        return _pdf(data, limits, dpi)
    if media_type in IMAGE_TYPES:
        sizes, more = headers.frame_sizes(data, media_type, limits.max_pages)
        check_pages(None if more else len(sizes), limits, "image")
        for page, (width, height) in enumerate(sizes, start=1):
            check_pixels(page, width, height, limits)
        return len(sizes)
    if media_type == TEXT:
        page_count = data.count(FORM_FEED) + 1
        check_pages(page_count, limits, "text")
        return page_count
    return 1


def _pdf(data: bytes, limits: DocumentLimits, dpi: int) -> int:
    with _PdfDocument(data, dpi, limits) as pdf:
        for page, (width, height) in enumerate(pdf.page_sizes(), start=1):
            pdf_render_scale(page, width, height, dpi, limits)
        return pdf.page_count
