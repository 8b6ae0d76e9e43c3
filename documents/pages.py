"""Decode uploaded documents into page images for the OCR engines; read a PDF page's text; count and cut PDFs.

Pages are rendered lazily: a 200-page PDF at 300 dpi is over 5 GB of RGB
pixels, so a worker holds one page at a time while the page count is known
up front for progress reporting.  Each PDF page is drawn at the resolution
its content needs (``documents.resolution``), and the page image says what
that was and why (``info["dpi"]``, ``info["dpi_source"]``); an image's
page says the resolution it states, if it states one.  Every way a
document can fail to decode surfaces as ``InvalidDocument`` so the job
fails once instead of retrying (and a PDF the gateway is asked to split is
refused at submission).
"""

from __future__ import annotations

import io
import os
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Self

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

from documents import headers, resolution, sniffing
from documents.limits import PIXELS_CEILING, DocumentLimits, check_pages, check_pixels, configured, pdf_render_scale
from documents.text_layer import TextLayer, read_own_text, read_text_layer
from jobs.errors import EncryptedDocument, InvalidDocument
from jobs.registry import DOCUMENT_TYPES, IMAGE_TYPES

#: The resolution of a result page that records none (one stored before pages recorded theirs).
RENDER_DPI = 200
PDF_TYPE = "application/pdf"
_ONE_TO_ONE = 1 - 1e-6
#: What the layout model reads (``documents.layout.regions``), width and height in pixels: a page answered
#: from its text layer is drawn for its layout alone (``Document.layout_image``) just large enough to cover
#: it.  Larger would be drawn to be thrown away by the model's resize; smaller would be enlarged by it, and
#: lose what the model sees (a letter page comes out at 73 dpi, as a 200-dpi scan does once reduced for it).
LAYOUT_INPUT = (608, 800)

# The page and pixel limits are checked from the headers before Pillow opens
# an image (``documents.limits``); Pillow's own bomb check stays as a backstop
# at the highest limit a setting may ask for.  Pillow raises
# DecompressionBombError above twice its limit and only warns between one and
# two times it; the filter makes that warning an error too.
Image.MAX_IMAGE_PIXELS = PIXELS_CEILING
warnings.filterwarnings("error", category=Image.DecompressionBombWarning)

# Pillow has many decoders (some call out to Ghostscript); accept only the
# raster formats the gateway advertises, whatever the declared image type.
_IMAGE_FORMATS = ("PNG", "JPEG", "TIFF")

# PDFium keeps global state and pypdfium2 is not thread-safe, even across
# separate documents: every call into it goes through this lock.  A fork
# waits for it, so that a child (``documents.isolation``) never inherits
# PDFium half-way through a call; the child gets a lock of its own.
_PDFIUM_LOCK = threading.Lock()


def _new_pdfium_lock() -> None:
    global _PDFIUM_LOCK
    _PDFIUM_LOCK = threading.Lock()


os.register_at_fork(
    before=lambda: _PDFIUM_LOCK.acquire(),
    after_in_parent=lambda: _PDFIUM_LOCK.release(),
    after_in_child=_new_pdfium_lock,
)

_DECODE_ERRORS = (
    OSError,  # Pillow's "image file is truncated", "broken data stream", ...
    SyntaxError,  # Pillow plugins signal malformed headers this way
    ValueError,
    EOFError,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,
)


class Document(ABC):
    """A decoded document: ``page_count`` is known, ``page(index)`` renders on demand.

    Use it as a context manager so PDFium resources are released promptly
    even when OCR stops half-way.
    """

    page_count: int

    def pages(self) -> Iterator[Image.Image]:
        """Page images in order, RGB or L, one at a time."""
        for index in range(self.page_count):
            yield self.page(index)

    @abstractmethod
    def page(self, index: int) -> Image.Image:
        """Page ``index`` (0-based) as an image, RGB or L."""

    def text_layer(self, index: int, *, visible_only: bool = False) -> TextLayer | None:
        """The text embedded in page ``index``, if it has any (only PDFs can); ``visible_only``: without the
        text drawn invisibly (an earlier OCR layer)."""
        return None

    def own_text(self, index: int) -> tuple[TextLayer | None, bool]:
        """Page ``index``'s visible text (``text_layer(index, visible_only=True)``), and whether it draws text
        invisibly (an earlier OCR layer); only PDFs have either."""
        return None, False

    def layout_image(self, index: int) -> Image.Image:
        """Page ``index`` as its layout model sees it, when no engine reads it (its text is its text layer's):
        a PDF page is drawn small (``LAYOUT_INPUT``), which costs a fraction of drawing it for OCR."""
        return self.page(index)

    @abstractmethod
    def close(self) -> None:
        """Release the decoder's resources; the rendered pages stay valid."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def open_document(
    document: bytes, content_type: str, dpi: float | None = None, limits: DocumentLimits | None = None
) -> Document:
    """The document, once its page count and page sizes are within ``limits`` (default: the configured ones).

    A PDF's pages are drawn at ``dpi``, or (None) each at the resolution its content needs.
    """
    limits = limits or configured()
    media_type = content_type.split(";", 1)[0].strip().lower()
    if media_type not in DOCUMENT_TYPES:
        raise InvalidDocument(
            f"unsupported content type {content_type!r}; expected one of {', '.join(sorted(DOCUMENT_TYPES))}"
        )
    if not document:
        raise InvalidDocument("the document is empty")
    if media_type == PDF_TYPE:
        return _PdfDocument(document, dpi, limits)
    return _ImageDocument(document, media_type, limits)


def render_pages(
    document: bytes, content_type: str, dpi: float | None = None, limits: DocumentLimits | None = None
) -> list[Image.Image]:
    """All pages at once; for small documents and tests (the adapters stream)."""
    with open_document(document, content_type, dpi, limits) as doc:
        return list(doc.pages())


def pdf_pages(data: bytes, first: int, last: int, limits: DocumentLimits | None = None) -> bytes:
    """Pages ``first`` .. ``last`` (1-based, inclusive) of the PDF, as a PDF of their own.

    It holds those pages only (with the fonts and images they use), for a
    reader that must be sent no more than that (a remote model's upstream).
    """
    with _PdfDocument(data, RENDER_DPI, limits or configured(), check_count=False) as pdf:
        if not 1 <= first <= last <= pdf.page_count:
            raise InvalidDocument(f"pages {first} to {last} are not pages of this {pdf.page_count}-page PDF")
        return pdf.part(first - 1, last - first + 1)


class _ImageDocument(Document):
    def __init__(self, data: bytes, media_type: str, limits: DocumentLimits):
        # Every page's size, from the headers, before Pillow reads anything: a bomb is refused undecoded.
        # The bytes say which headers to read (the gateway holds the declared type to them).
        actual = sniffing.sniff(data)
        if actual not in IMAGE_TYPES:
            raise InvalidDocument(f"the {media_type} body is not a PNG, JPEG or TIFF image")
        sizes, more = headers.frame_sizes(data, actual, limits.max_pages)
        check_pages(None if more else len(sizes), limits, "image")
        for page, (width, height) in enumerate(sizes, start=1):
            check_pixels(page, width, height, limits)
        self._limits = limits
        try:
            self._image = Image.open(io.BytesIO(data), formats=_IMAGE_FORMATS)
        except UnidentifiedImageError:
            raise InvalidDocument(f"the {media_type} body is not a PNG, JPEG or TIFF image") from None
        except _DECODE_ERRORS as exc:
            raise InvalidDocument(f"cannot decode the {media_type} image: {exc}") from None
        # Only TIFF frames are pages: an APNG's frames are an animation
        # and an MPO JPEG's extra frames are previews of the same picture.
        self.page_count = len(sizes)

    def page(self, index: int) -> Image.Image:
        page = index + 1
        try:
            self._image.seek(index)
            # Pillow read this frame's header itself: it must say what the walk above did.
            check_pixels(page, *self._image.size, self._limits)
            self._image.load()
            page_image = _normalise(_upright(self._image))
        except InvalidDocument:
            raise
        except _DECODE_ERRORS as exc:
            raise InvalidDocument(f"cannot decode page {page} of the image: {exc}") from None
        # The engines and the result hold to what the image states, and to nothing Pillow made up.
        page_image.info.pop("dpi", None)
        stated = resolution.stated_dpi(self._image)
        if stated is not None:
            page_image.info["dpi"] = stated
            page_image.info["dpi_source"] = resolution.STATED
        return page_image

    def close(self) -> None:
        self._image.close()


class _PdfDocument(Document):
    def __init__(self, data: bytes, dpi: float | None, limits: DocumentLimits, *, check_count: bool = True):
        self._dpi, self._limits = dpi, limits
        try:
            with _PDFIUM_LOCK:
                self._pdf = pdfium.PdfDocument(data)
        except pdfium.PdfiumError as exc:
            if exc.err_code == pdfium_c.FPDF_ERR_PASSWORD:
                # Asked for a password and given none: a user password.  An owner password alone opens.
                raise EncryptedDocument() from None
            # PDFium also refuses a PDF with an empty page tree, and then its
            # error code is whatever the last failure left behind.
            raise InvalidDocument(f"cannot open the PDF (corrupt, encrypted or without pages): {exc}") from None
        try:
            with _PDFIUM_LOCK:
                # Without a form environment, filled-in AcroForm values that
                # lack an appearance stream would not be drawn (nor read).
                self._pdf.init_forms()
                self.page_count = len(self._pdf)
        except pdfium.PdfiumError as exc:
            self.close()
            raise InvalidDocument(f"cannot read the PDF's pages: {exc}") from None
        if self.page_count < 1:
            self.close()
            raise InvalidDocument("the PDF has no pages")
        if check_count:  # a split checks it itself, and says how many children that makes
            try:
                check_pages(self.page_count, limits, "PDF")
            except InvalidDocument:
                self.close()
                raise

    def page_sizes(self) -> Iterator[tuple[float, float]]:
        """Each page's (width, height) in points, read without loading its content."""
        for index in range(self.page_count):
            try:
                with _PDFIUM_LOCK:
                    size = self._pdf.get_page_size(index)
            except pdfium.PdfiumError as exc:
                raise InvalidDocument(f"cannot read the size of page {index + 1} of the PDF: {exc}") from None
            yield size

    def page(self, index: int) -> Image.Image:
        with self._loaded(index) as (page, scale, source):
            bitmap = page.render(scale=scale, rev_byteorder=True)
            try:
                # A copy: the bitmap's buffer dies with the bitmap.
                image = bitmap.to_pil().convert("RGB")
            finally:
                bitmap.close()
        # What it was drawn at: below what its content asks for when the pixel limit shrank it.
        image.info["dpi"] = (round(scale * 72),) * 2
        image.info["dpi_source"] = source
        return image

    def text_layer(self, index: int, *, visible_only: bool = False) -> TextLayer | None:
        # Sized as the page would be drawn, so that the boxes of every page of a result are in one kind of space.
        with self._loaded(index) as (page, scale, source):
            layer = read_text_layer(page, scale, visible_only=visible_only)
        return _drawn_at(layer, scale, source)

    def own_text(self, index: int) -> tuple[TextLayer | None, bool]:
        with self._loaded(index) as (page, scale, source):
            layer, invisible = read_own_text(page, scale)
        return _drawn_at(layer, scale, source), invisible

    def layout_image(self, index: int) -> Image.Image:
        with self._loaded(index) as (page, scale, _):
            width, height = page.get_size()
            small = min(max(LAYOUT_INPUT[0] / max(width, 1), LAYOUT_INPUT[1] / max(height, 1)), scale)
            bitmap = page.render(scale=small, rev_byteorder=True)
            try:
                image = bitmap.to_pil().convert("RGB")
            finally:
                bitmap.close()
        return image

    @contextmanager
    def _loaded(self, index: int) -> Iterator[tuple[pdfium.PdfPage, float, str]]:
        """Page ``index``, the scale it renders at and why, under the PDFium lock; PDFium's failures as
        InvalidDocument."""
        page_number = index + 1
        try:
            with _PDFIUM_LOCK:
                page = self._pdf[index]
                try:
                    width, height = page.get_size()
                    if self._dpi is None:
                        wanted = resolution.pdf_page_resolution(page)
                    else:
                        wanted = resolution.Resolution(self._dpi, resolution.OPTION)
                    scale = pdf_render_scale(page_number, width, height, wanted.dpi, self._limits)
                    # A hair under: PDFium rounds a side up and holds a page's size as a 32-bit float; a
                    # scan's 1694 pixels over 609.84 points must come back 1694 at 200 dpi, not 1695.
                    yield page, scale * _ONE_TO_ONE, wanted.source
                finally:
                    page.close()
        except pdfium.PdfiumError as exc:
            raise InvalidDocument(f"cannot read page {page_number} of the PDF: {exc}") from None

    def part(self, first: int, count: int) -> bytes:
        """Pages ``first`` .. ``first + count - 1`` (0-based) as a PDF of their own."""
        buffer = io.BytesIO()
        try:
            with _PDFIUM_LOCK:
                part = pdfium.PdfDocument.new()
                try:
                    part.import_pages(self._pdf, list(range(first, first + count)))
                    part.save(buffer)
                finally:
                    part.close()
        except pdfium.PdfiumError as exc:
            raise InvalidDocument(f"cannot copy pages {first + 1} to {first + count} of the PDF: {exc}") from None
        return buffer.getvalue()

    def close(self) -> None:
        with _PDFIUM_LOCK:
            self._pdf.close()


def _drawn_at(layer: TextLayer | None, scale: float, source: str) -> TextLayer | None:
    """``layer`` saying the resolution its page is drawn at, and why that one."""
    return None if layer is None else replace(layer, dpi=round(scale * 72), dpi_source=source)


def _upright(image: Image.Image) -> Image.Image:
    """Apply the EXIF orientation: phone photos are often stored sideways."""
    if image.getexif().get(ExifTags.Base.Orientation, 1) in (0, 1):
        return image
    return ImageOps.exif_transpose(image)


def _normalise(image: Image.Image) -> Image.Image:
    """A detached RGB or L copy, transparency flattened onto white.

    Detached because the source frame belongs to a file that is seeked and
    closed; white because a plain convert("RGB") turns transparency black.
    """
    if image.has_transparency_data:
        rgba = image.convert("RGBA")
        flat = Image.new("RGB", rgba.size, (255, 255, 255))
        flat.paste(rgba, mask=rgba.getchannel("A"))
        return flat
    if image.mode in ("RGB", "L"):
        return image.copy()
    if image.mode == "1":
        return image.convert("L")
    if image.mode.startswith("I"):
        # 16-bit greys: a plain convert("L") clips everything above 255 to white.
        return image.convert("I").point(lambda v: v / 256).convert("L")
    return image.convert("RGB")
