"""The resolution each page is read at, and where that figure comes from.

An engine reads pixels, so the resolution decides what it sees: a page
drawn too coarsely loses its small type, one drawn finer than its content
costs time and gains nothing.  A PDF page is drawn at what its content
needs.  A page whose content is an image is drawn so that the image's
pixels land one to one: its effective resolution is its pixels over the
size it is placed at on the page, through the page's and every form
XObject's matrices (``"content"``).  Where a page holds several images,
the densest of those that cover a real share of the page
(``CONTENT_SHARE``) decides: a logo or a signature stamped on a scan does
not.  A page with no such image (a born-digital page, vector drawings) is
drawn at ``VECTOR_DPI`` (``"vector"``), the resolution at which 8 pt type
is about 33 pixels high, as Tesseract reads best; a page with an image and
visible text of its own at the larger of the two.  Text drawn invisibly (an
earlier OCR layer) needs no pixels and raises nothing.

An image coarser than ``MIN_IMAGE_DPI`` is drawn at that: a 72-dpi fax or
web image holds 10 pt type in about 10 pixels, below what Tesseract's
recogniser reads well, and PDFium's smooth interpolation of the lifted
image gives it the pixels it needs.  Measured with Tesseract on three pages
of the real PDF behind ``tests/scans.py``: scanned at 72 dpi they read at
76.9% drawn at 72, 97.1% at 150, 97.0% at 200 and 91.7% at 300; scanned
at 100 dpi, 97.0% at 100, 99.1% at 150 and 200, 96.9% at 300.  So 150, and
no more: past it, the interpolation's blur costs more than its pixels give.
Whatever this decides, the pixel limit that bounds a page has the last word
(``documents.limits.pdf_render_scale`` draws a page that would exceed it
smaller).

An image document is read as its pixels are; only the searchable PDF's page
size and the engine's hint depend on its resolution.  One it states is used
as it is (``"stated"``); ``options.image_dpi`` gives one to an image that
states none, or overrides what it states (``"option"``, as OCRmyPDF's
``--image-dpi``).  Otherwise the resolution is estimated once the page has
been read (``"estimated"``), from the height of its lines of text: body
text is set at 9 to 12 pt and its lines (ascender to descender) measure
about 0.8 to 0.9 of that (``LINE_HEIGHT_POINTS``), so the median line's height in
pixels gives the resolution within about 15% (an engine whose line boxes are
taller, as PP-OCRv4's detector's are, says how tall).  That alone would size a
page 15% wrong; but most scans are of a standard sheet (A4, Letter, Legal,
A5, ...) at a usual scanner resolution (150, 200, 300 dpi, ...), and where
the image's aspect is that of a sheet within ``ASPECT_TOLERANCE``, and the
resolution that sheet implies is near the estimate, the sheet is taken:
first one at a usual resolution within 30% of the estimate, then one at a
usual resolution within a factor of two (a page mostly of small type, a
table or a listing, measures a third coarser than it is, and its sheet
and resolution still say what it is), then any within 30%.  A4 and A5
share an aspect (as do A3 and A4): the implied resolutions differ by 41%,
and the estimate tells them apart.  A page with too few lines of text to
measure (a photograph, a blank sheet) is sized the same way as if its
text had said ``FALLBACK_DPI`` (the most common scanning resolution), and
else taken at that (``"assumed"``).

The estimate needs the page's words, so the page is read first and its
resolution decided after, not the other way round: the pixels the engine
reads are the same whatever the resolution, and estimating first would
mean finding the text twice.  Tesseract is then given no ``--dpi`` and
measures the type itself, as it does for any image that states none.  Nor
is it told a PDF page's drawing resolution (``workers.adapters.base``): that
says how fine the pixels are, not how large the type is, and on a slide of
a page (type a third its size, at 2400 dpi) the hint made Tesseract drop
dots and commas as specks (96.7% read against 99.2% without it); on the
200-dpi scans it changes nothing.
"""

from __future__ import annotations

import ctypes
import math
import numbers
import statistics
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import ExifTags, Image

from jobs.registry import MAX_IMAGE_DPI_OPTION, MIN_IMAGE_DPI_OPTION

POINTS_PER_INCH = 72
#: A page without an image that covers a share of it is drawn at this (and one with visible text at no less).
VECTOR_DPI = 300
#: An image's effective resolution is lifted to at least this.
MIN_IMAGE_DPI = 150
#: The share of the page an image must cover for its resolution to decide the page's.
CONTENT_SHARE = 0.1
#: An image document with no stated resolution and too little text to measure is taken at this.
FALLBACK_DPI = 300
#: The height of Tesseract's box of a line of body text, top of its ascenders to bottom of its descenders, in points.
LINE_HEIGHT_POINTS = 9.5
#: Fewer measured lines than this and the text says nothing reliable about the resolution.
MIN_MEASURED_LINES = 3
#: A line is measured only if it has this many words: a lone word may be all capitals or all x-height.
MIN_WORDS_A_LINE = 3
#: How far (short side over long side, relative) an image's aspect may be from a sheet's to be that sheet.
ASPECT_TOLERANCE = 0.015
#: How far (as a ratio) a sheet's implied resolution may be from the text's estimate for the sheet to be taken.
SNAP_RATIO = 1.3
#: How far a sheet's implied resolution may be from the estimate when it is a usual one.
WIDE_SNAP_RATIO = 2.0
#: Resolutions scanners offer; a sheet implying one of these (within ``USUAL_TOLERANCE``) is the likelier.
USUAL_DPIS = (72, 96, 100, 150, 200, 240, 300, 400, 600, 1200)
USUAL_TOLERANCE = 0.02
#: Sheets, by name: (short side, long side) in inches.
PAPER_SIZES: dict[str, tuple[float, float]] = {
    "A3": (297 / 25.4, 420 / 25.4),
    "A4": (210 / 25.4, 297 / 25.4),
    "A5": (148 / 25.4, 210 / 25.4),
    "A6": (105 / 25.4, 148 / 25.4),
    "B4": (250 / 25.4, 353 / 25.4),
    "B5": (176 / 25.4, 250 / 25.4),
    "Letter": (8.5, 11.0),
    "Legal": (8.5, 14.0),
    "Tabloid": (11.0, 17.0),
    "Executive": (7.25, 10.5),
    "Statement": (5.5, 8.5),
}

# Where a page's resolution comes from.
CONTENT, VECTOR, STATED, OPTION, ESTIMATED, ASSUMED = "content", "vector", "stated", "option", "estimated", "assumed"
DPI_SOURCES = (CONTENT, VECTOR, STATED, OPTION, ESTIMATED, ASSUMED)
# Image DPIs below this are no resolution (an unset pHYs, a JFIF aspect ratio).
_MIN_CREDIBLE_DPI = 10
_INVISIBLE_TEXT = (pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE, pdfium_c.FPDF_TEXTRENDERMODE_CLIP)
# Deeper forms than this are not looked into (PDFium draws them all the same).
_MAX_FORM_DEPTH = 8
# A page's objects are looked at up to this many, forms' included: a form drawing a form a hundred times,
# and so on down, would otherwise be a walk without end; what was seen by then decides.
_MAX_OBJECTS = 200_000

Matrix = tuple[float, float, float, float, float, float]


@dataclass(frozen=True)
class Resolution:
    """The dots per inch a page is read at, and where that figure comes from (one of ``DPI_SOURCES``)."""

    dpi: float
    source: str


# -- PDF pages ------------------------------------------------------------------------------------


def pdf_page_resolution(page: pdfium.PdfPage) -> Resolution:
    """The resolution to draw ``page`` at for its content (the caller holds PDFium's lock)."""
    width, height = page.get_size()
    page_area = abs(width * height)
    densest, visible_text = 0.0, False
    for kind, obj, matrix in _page_objects(page):
        if kind == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            densest = max(densest, _image_dpi(obj, matrix, page_area))
        elif kind == pdfium_c.FPDF_PAGEOBJ_TEXT and not visible_text:
            visible_text = pdfium_c.FPDFTextObj_GetTextRenderMode(obj) not in _INVISIBLE_TEXT
    return page_resolution(densest, visible_text)


def page_resolution(densest_image_dpi: float, visible_text: bool) -> Resolution:
    """The decision, from what the page holds: its densest covering image's dpi (0: none) and visible text."""
    if densest_image_dpi <= 0:
        return Resolution(VECTOR_DPI, VECTOR)
    content = max(densest_image_dpi, MIN_IMAGE_DPI)
    if visible_text and content < VECTOR_DPI:
        return Resolution(VECTOR_DPI, VECTOR)
    return Resolution(round(content, 2), CONTENT)


def _page_objects(page: pdfium.PdfPage) -> Iterable[tuple[int, pdfium_c.FPDF_PAGEOBJECT, Matrix]]:
    """Every object drawn on the page, forms looked into, with the matrix that maps it onto the page."""
    identity: Matrix = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    stack: list[tuple[pdfium_c.FPDF_PAGEOBJECT | None, Matrix, int]] = [(None, identity, 0)]
    seen = 0
    while stack:
        form, outer, depth = stack.pop()
        count = pdfium_c.FPDFPage_CountObjects(page.raw) if form is None else pdfium_c.FPDFFormObj_CountObjects(form)
        for index in range(max(count, 0)):
            seen += 1
            if seen > _MAX_OBJECTS:
                return
            obj = (
                pdfium_c.FPDFPage_GetObject(page.raw, index)
                if form is None
                else pdfium_c.FPDFFormObj_GetObject(form, index)
            )
            if not obj:
                continue
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind not in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_TEXT, pdfium_c.FPDF_PAGEOBJ_FORM):
                continue
            matrix = _multiply(_matrix(obj), outer)
            if kind == pdfium_c.FPDF_PAGEOBJ_FORM:
                if depth < _MAX_FORM_DEPTH:
                    stack.append((obj, matrix, depth + 1))
                continue
            yield kind, obj, matrix


def _image_dpi(obj: pdfium_c.FPDF_PAGEOBJECT, matrix: Matrix, page_area: float) -> float:
    """The image's effective resolution on the page, or 0 if it covers too little of it to count."""
    a, b, c, d, _, _ = matrix
    covered = abs(a * d - b * c)  # the image is drawn in the unit square
    if not page_area or min(covered, page_area) < CONTENT_SHARE * page_area:
        return 0.0
    width_px, height_px = ctypes.c_uint(), ctypes.c_uint()
    if not pdfium_c.FPDFImageObj_GetImagePixelSize(obj, width_px, height_px):
        return 0.0
    width_pt, height_pt = math.hypot(a, b), math.hypot(c, d)
    if not (width_pt > 0 and height_pt > 0):
        return 0.0
    dpi = max(width_px.value / width_pt, height_px.value / height_pt) * POINTS_PER_INCH
    return dpi if math.isfinite(dpi) else 0.0


def _matrix(obj: pdfium_c.FPDF_PAGEOBJECT) -> Matrix:
    raw = pdfium_c.FS_MATRIX()
    if not pdfium_c.FPDFPageObj_GetMatrix(obj, raw):
        return (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
    return (raw.a, raw.b, raw.c, raw.d, raw.e, raw.f)


def _multiply(first: Matrix, then: Matrix) -> Matrix:
    """The matrix applying ``first``, then ``then`` (PDF's row-vector convention)."""
    a, b, c, d, e, f = first
    p, q, r, s, t, u = then
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s, e * p + f * r + t, e * q + f * s + u)


# -- images ---------------------------------------------------------------------------------------


def credible_dpi(value: object) -> float:
    """``value`` as a resolution, or 0 where it is none (missing, absurd, an unset header's 1 or 0)."""
    # A TIFF's resolution is a Pillow IFDRational, a number but not a float.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return 0.0
    try:
        value = float(value)
    except (ValueError, ZeroDivisionError, OverflowError):
        return 0.0
    return value if math.isfinite(value) and _MIN_CREDIBLE_DPI <= value < 1e6 else 0.0


def estimate_image_dpi(
    width_px: int, height_px: int, line_heights_px: Sequence[float], line_height_points: float = LINE_HEIGHT_POINTS
) -> Resolution:
    """The resolution of an image of ``width_px`` x ``height_px`` that states none, from its lines' heights.

    ``line_height_points``: how tall the engine's box of a line of body text is, in points.
    """
    text = _text_estimate(line_heights_px, line_height_points)
    sheet = _sheet_dpi(width_px, height_px, text or FALLBACK_DPI)
    if sheet is not None:
        return Resolution(sheet, ESTIMATED if text else ASSUMED)
    if text is not None:
        # Within what options.image_dpi may say: a page of a few huge or tiny lines sizes no page from 1 dpi.
        return Resolution(min(max(_round_to_usual(text), MIN_IMAGE_DPI_OPTION), MAX_IMAGE_DPI_OPTION), ESTIMATED)
    return Resolution(FALLBACK_DPI, ASSUMED)


def _text_estimate(line_heights_px: Sequence[float], line_height_points: float) -> float | None:
    heights = [h for h in line_heights_px if h > 0]
    if len(heights) < MIN_MEASURED_LINES:
        return None
    return statistics.median(heights) * POINTS_PER_INCH / line_height_points


def sheet_candidates(width_px: int, height_px: int) -> list[tuple[str, float]]:
    """The sheets the image's aspect fits, each with the resolution it implies."""
    short, long = sorted((width_px, height_px))
    if short <= 0:
        return []
    found = []
    for name, (short_in, long_in) in PAPER_SIZES.items():
        if abs((short / long) / (short_in / long_in) - 1) <= ASPECT_TOLERANCE:
            found.append((name, (short / short_in + long / long_in) / 2))
    return found


def _sheet_dpi(width_px: int, height_px: int, estimate: float) -> float | None:
    """The resolution of the sheet the image is a scan of, judged against ``estimate``; None: no sheet fits."""
    candidates: list[float] = [dpi for _, dpi in sheet_candidates(width_px, height_px)]
    at_usual: list[float] = [usual for dpi in candidates if (usual := _usual(dpi)) is not None]
    # A sheet at a usual resolution near the estimate, then one further off (a page of small type, read
    # as a third coarser than it is, is still that sheet), then any sheet near it.
    for options, ratio in ((at_usual, SNAP_RATIO), (at_usual, WIDE_SNAP_RATIO), (candidates, SNAP_RATIO)):
        close = [dpi for dpi in options if max(dpi / estimate, estimate / dpi) <= ratio]
        if close:
            nearest: float = min(close, key=lambda dpi: abs(math.log(dpi / estimate)))
            return round(nearest, 2)
    return None


def _usual(dpi: float) -> float | None:
    for usual in USUAL_DPIS:
        if abs(dpi / usual - 1) <= USUAL_TOLERANCE:
            return float(usual)
    return None


def _round_to_usual(dpi: float) -> float:
    nearest = min(USUAL_DPIS, key=lambda usual: abs(math.log(dpi / usual)))
    return float(nearest) if abs(dpi / nearest - 1) <= 0.1 else round(dpi)


def stated_dpi(image: Image.Image) -> tuple[float, float] | None:
    """The resolution the image's headers state, each axis; None where they state none.

    A JPEG states one only in a JFIF header with units, or in EXIF (Pillow
    makes up 72 dpi for EXIF without a resolution, and reads a JFIF aspect
    ratio as dots per inch).  One axis stands for the other if only one is given.
    """
    if image.format == "JPEG" and not _jpeg_states_dpi(image):
        return None
    values = []
    for index in (0, 1):
        try:
            values.append(credible_dpi(image.info["dpi"][index]))
        except (KeyError, TypeError, IndexError):
            values.append(0.0)
    x, y = values
    if not (x or y):
        return None
    return (x or y), (y or x)


def _jpeg_states_dpi(image: Image.Image) -> bool:
    if image.info.get("jfif_unit") in (1, 2):  # dots per inch or per centimetre; 0 is an aspect ratio
        return True
    try:
        return ExifTags.Base.XResolution in image.getexif()
    except (OSError, ValueError, SyntaxError, struct.error):
        return False
