"""How large a document may be: its pages, and the pixels of each page image.

The gateway checks them at submission from what the headers declare, before
anything is stored; the workers check them again before they decode a page,
so a document created past the gateway (or one whose header lies) never makes
a worker allocate what a bomb asks for.  A document over a limit is an
``InvalidDocument`` to the workers (the job fails once, ``invalid_document``)
and a ``too_many_pages`` or ``too_many_pixels`` problem to the gateway.

A PDF page is drawn at whatever size one asks: one too large for the
resolution its content needs (``documents.resolution``) is drawn smaller
(an A0 drawing fits at about 180 dpi), but never below ``MIN_RENDER_DPI``,
where text stops being legible; a page too large even there (the 200 x 200
inch page PDF allows) is refused like an image bomb.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from jobs.config import MAX_IMAGE_PIXELS_LIMIT, Settings, default_of
from jobs.errors import InvalidDocument

POINTS_PER_INCH = 72
#: One pixel per PDF point: 10 pt type is then 10 pixels high, about the least an engine reads.
MIN_RENDER_DPI = 72
#: No setting may allow more pixels than this; Pillow's own bomb check is set to it (see ``documents.pages``).
PIXELS_CEILING = MAX_IMAGE_PIXELS_LIMIT


@dataclass(frozen=True)
class DocumentLimits:
    max_pages: int = default_of("max_pages")
    max_pixels: int = default_of("max_image_pixels")  # of one page image

    @classmethod
    def from_settings(cls, settings) -> DocumentLimits:
        return cls(max_pages=settings.max_pages, max_pixels=settings.max_image_pixels)


class TooManyPages(InvalidDocument):
    """Raised when a document has more pages than allowed; ``page_count`` is None when only "more" is known."""

    def __init__(self, page_count: int | None, max_pages: int, what: str = "document"):
        counted = f"{page_count} pages" if page_count is not None else f"more than {max_pages} pages"
        super().__init__(f"the {what} has {counted}; at most {max_pages} are accepted")
        self.page_count, self.max_pages = page_count, max_pages
        self._args = (page_count, max_pages, what)

    def __reduce__(self):  # pickled by a worker's page reader (``documents.isolation``)
        return type(self), self._args


class TooManyPixels(InvalidDocument):
    """Raised when a page image would be larger than allowed (a decompression bomb, or a huge PDF page)."""

    def __init__(self, page: int, width: int, height: int, max_pixels: int, why: str = ""):
        super().__init__(
            f"page {page} {why or 'is'} {width}x{height} pixels, over the limit of {max_pixels} pixels a page"
        )
        self.page, self.width, self.height, self.max_pixels = page, width, height, max_pixels
        self._args = (page, width, height, max_pixels, why)

    def __reduce__(self):
        return type(self), self._args


def check_pages(page_count: int | None, limits: DocumentLimits, what: str = "document") -> None:
    """``page_count`` None means "more than could be counted", always too many."""
    if page_count is None or page_count > limits.max_pages:
        raise TooManyPages(page_count, limits.max_pages, what)


def check_pixels(page: int, width: int, height: int, limits: DocumentLimits) -> None:
    """Page ``page`` (1-based) of ``width`` x ``height`` pixels, declared by its header, may be decoded."""
    if width < 1 or height < 1:
        raise InvalidDocument(f"page {page} of the image is empty ({width}x{height})")
    if width * height > limits.max_pixels:
        raise TooManyPixels(page, width, height, limits.max_pixels)


def rendering_size(width_pt: float, height_pt: float, scale: float) -> tuple[int, int]:
    """The pixel size pypdfium2 renders a page of this size at ``scale`` (it rounds up)."""
    return math.ceil(width_pt * scale), math.ceil(height_pt * scale)


def pdf_render_scale(page: int, width_pt: float, height_pt: float, dpi: float, limits: DocumentLimits) -> float:
    """The scale to render page ``page`` at: ``dpi``, or less for a huge page; TooManyPixels if nothing fits."""
    if not (width_pt > 0 and height_pt > 0) or not math.isfinite(width_pt * height_pt):
        raise InvalidDocument(f"page {page} of the PDF has no area")
    max_pixels = limits.max_pixels

    def pixels(scale: float) -> int:
        width, height = rendering_size(width_pt, height_pt, scale)
        return width * height

    scale = dpi / POINTS_PER_INCH
    if pixels(scale) <= max_pixels:
        return scale
    floor = min(dpi, MIN_RENDER_DPI) / POINTS_PER_INCH
    if pixels(floor) > max_pixels:
        width, height = rendering_size(width_pt, height_pt, floor)
        raise TooManyPixels(page, width, height, max_pixels, f"of the PDF would be, even at {floor * 72:g} dpi,")
    # Shrink until it fits; PDFium rounds the sides up, hence the nudge.
    while pixels(scale) > max_pixels:
        scale *= min(0.99, (max_pixels / (width_pt * height_pt * scale**2)) ** 0.5)
    return max(scale, floor)


@functools.cache
def configured() -> DocumentLimits:
    """The limits of this process's settings (``OCRGW_MAX_PAGES``, ``OCRGW_MAX_IMAGE_PIXELS``), read once."""
    return DocumentLimits.from_settings(Settings.from_env())
