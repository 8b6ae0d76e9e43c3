"""A document held to the limits from its headers alone, the way the gateway checks it at submission.

What a worker would refuse before decoding (``documents.pages``), found
without decoding: the page count of a PDF, a TIFF or a text (a form feed
separates a text's pages), every TIFF page's and the image's pixel size, and
every PDF page's size.  A worker draws a PDF page at the resolution its
content needs (``documents.resolution``), and smaller when that would be
more pixels than a page may have, down to ``MIN_RENDER_DPI``: a page is
refused only when it is too large even there, which its size alone says,
so the gateway never reads a page's content to decide.  An image's headers are
walked in Python, with work bounded by the body size and the page limit.

A PDF is opened by PDFium (its cross-reference table and page tree, no page
content), which is cheap for any real document but not for every document:
a page tree kept in an object stream deflated twice makes PDFium inflate a
gigabyte, and three, to count the pages of a 3 KB file.  So a PDF is opened
in a forked child (``documents.isolation``) under ``INSPECTION_MEMORY_BYTES``
of address space more than it held before (the document itself not counted)
and ``INSPECTION_CPU_SECONDS`` of CPU, or what the caller gives; a child that
dies on them makes the PDF an ``InvalidDocument``.  The gateway checks every
PDF this way, and a worker checks it again before it opens it itself, so
that neither process ever holds more than that.

What PDFium takes to open a PDF grows with its objects (it keeps the
cross-reference table and the page tree, not the content): measured,
nothing to see for a 17-page scan of 5 MB, 7 MiB for 10,000 pages, 51 MiB
for a million objects in 41 MB, 88 MiB at most for the 1.3 to 1.55 million
objects a 64 MiB body holds.  128 MiB takes those, and is less than the
200 MB a cross-reference stream deflated twice asks for from a file under
1 KB, which PDFium then holds twice: such a PDF is refused rather than read
for half a second.

A caller with many PDFs to open (the gateway, for the children of a group)
opens them in one child, an ``Inspector``, rather than forking for each:
each PDF is still held to its own memory bound and to the CPU seconds the
caller gives it, and to a deadline after which the child is killed
(``OutOfTime``).
"""

from __future__ import annotations

import math
import resource

from documents import headers
from documents.isolation import IsolatedCalls, run_isolated
from documents.limits import MIN_RENDER_DPI, DocumentLimits, check_pages, check_pixels, pdf_render_scale
from documents.pages import PDF_TYPE, _PdfDocument
from documents.sniffing import TEXT
from jobs.registry import IMAGE_TYPES

FORM_FEED = b"\f"
#: What opening a PDF may take: its cross-reference table and page tree are
#: a few megabytes even for 10,000 pages (see above).
INSPECTION_MEMORY_BYTES = 128 << 20
INSPECTION_CPU_SECONDS = 30


class Inspector:
    """Opens PDFs one after another in one forked child, each within its own bounds; a context manager."""

    def __init__(self) -> None:
        self._calls = IsolatedCalls(_bounded_pdf, what="opening the PDF")

    def __enter__(self) -> Inspector:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    @property
    def forks(self) -> int:
        """How many children were forked: one, and one more after each PDF that ended its child."""
        return self._calls.forks

    def inspect(self, data: bytes, media_type: str, limits: DocumentLimits, *, seconds: float) -> int:
        """As ``inspect``, a PDF given ``seconds`` of CPU and of wall time: ``OutOfTime`` past them."""
        if media_type != PDF_TYPE:
            return inspect(data, media_type, limits)
        return self._calls.call(data, limits, None, seconds, timeout=seconds)

    def close(self) -> None:
        self._calls.close()


def inspect(data: bytes, media_type: str, limits: DocumentLimits, dpi: float | None = None) -> int:
    """The document's page count, once it is within ``limits``.

    Raises ``TooManyPages``, ``TooManyPixels`` or, for headers that cannot be
    read, ``InvalidDocument``.  A PDF's pages are held to ``dpi`` if given
    (what a caller that draws them at ``dpi`` needs), else to
    ``MIN_RENDER_DPI``.  A type with no pages to count (none the registry
    has today) counts one.
    """
    if media_type == PDF_TYPE:
        return run_isolated(_bounded_pdf, data, limits, dpi, INSPECTION_CPU_SECONDS, what="opening the PDF")
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


def _bounded_pdf(data: bytes, limits: DocumentLimits, dpi: float | None, cpu_seconds: float) -> int:
    # Soft limits only: an ``Inspector``'s child puts them back for its next PDF.
    _lower(resource.RLIMIT_AS, _address_space() + INSPECTION_MEMORY_BYTES)
    used = resource.getrusage(resource.RUSAGE_SELF)
    _lower(resource.RLIMIT_CPU, math.ceil(used.ru_utime + used.ru_stime + cpu_seconds))
    return _pdf(data, limits, dpi)


def _lower(limit: int, value: int) -> None:
    soft, hard = resource.getrlimit(limit)
    if soft != resource.RLIM_INFINITY:
        value = min(value, soft)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, hard))


def _address_space() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * resource.getpagesize()


def _pdf(data: bytes, limits: DocumentLimits, dpi: float | None) -> int:
    with _PdfDocument(data, dpi, limits) as pdf:
        for page, (width, height) in enumerate(pdf.page_sizes(), start=1):
            pdf_render_scale(page, width, height, dpi or MIN_RENDER_DPI, limits)
        return pdf.page_count
