"""A searchable PDF: each page the original page image, with the recognized lines as invisible text.

Any engine's result will do: the text is drawn from the stored lines and
their boxes (pixels of the page image the engine read, ``width`` x
``height``), not by an engine, so the gateway builds the PDF on request from
the stored document and result, and needs no engine.  A PDF page is
rendered again at the engines' dpi, so the boxes fall where the engine saw
the words (a text-layer page's boxes are in the same pixels).

The text is in render mode 3 (invisible: PDF 1.7, 9.3.6), one text object
per line, sized to the line's box: the font size is the box's height and
the horizontal scaling stretches the line to the box's width, so a viewer's
selection covers the words.  The font is Tesseract's trick of a "glyphless"
font: every character maps to one blank glyph half an em wide.  Built with
fontTools for the characters a PDF uses, it weighs under a kilobyte and
lets any script be searched and copied (the PDF's ToUnicode map keeps each
character), where a standard PDF font would only cover Latin-1.
"""

from __future__ import annotations

import io
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fontTools.fontBuilder import FontBuilder
from fontTools.pens.ttGlyphPen import TTGlyphPen
from fontTools.ttLib.tables._c_m_a_p import CmapSubtable
from fpdf import FPDF
from fpdf.enums import TextMode
from PIL import Image

from documents.pages import RENDER_DPI, open_document
from jobs.errors import InvalidDocument

POINTS_PER_INCH = 72
_FONT_FAMILY = "glyphless"
_UNITS_PER_EM = 1000
_ASCENT, _DESCENT = 800, -200  # the glyph's box spans the em: a line's box is one em high
_GLYPH_WIDTH = 500
# A page image's dpi below this is no real resolution (an unset pHYs, say).
_MIN_DPI = 10


@dataclass(frozen=True)
class SourceDocument:
    """A document and the result pages of its pages."""

    document: bytes
    content_type: str
    # Result page dicts by the 0-based index of the page in ``document``; a page not in it goes in without text.
    pages: Mapping[int, dict]
    # The 0-based indices of the pages of ``document`` that go in, in order (None: all).
    only: Sequence[int] | None = None


def searchable_pdf(sources: Sequence[SourceDocument]) -> bytes:
    """One PDF of every page of every document, in order, each with its result's text layer.

    Raises ``InvalidDocument`` for a document that cannot be read.
    """
    pdf = FPDF(unit="pt")
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.set_creator("ocrgw")
    characters = {
        c
        for source in sources
        for page in source.pages.values()
        for line in page.get("lines", [])
        for c in _drawable(line.get("text", ""))
    }
    with tempfile.TemporaryDirectory(prefix="ocrgw-font-") as directory:
        # fpdf2 reads fonts from files only.
        font_path = Path(directory) / f"{_FONT_FAMILY}.ttf"
        font_path.write_bytes(glyphless_font(frozenset(characters)))
        pdf.add_font(_FONT_FAMILY, fname=str(font_path))
        try:
            for image, page in _pages(sources):
                _add_page(pdf, image, page)
            return bytes(pdf.output())
        finally:
            # fpdf2 reads the font lazily and keeps its file open.
            for font in pdf.fonts.values():
                if hasattr(font, "ttfont"):
                    font.ttfont.close()


def _pages(sources: Iterable[SourceDocument]) -> Iterator[tuple[Image.Image, dict[str, Any]]]:
    for source in sources:
        with open_document(source.document, source.content_type, dpi=RENDER_DPI) as doc:
            indices = range(doc.page_count) if source.only is None else source.only
            for index in indices:
                if not 0 <= index < doc.page_count:
                    raise InvalidDocument(f"page {index + 1} is not a page of this {doc.page_count}-page document")
                # A page with no result entry still goes in, without text.
                yield doc.page(index), source.pages.get(index, {})


def _add_page(pdf: FPDF, image: Image.Image, page: dict[str, Any]) -> None:
    dpi = _dpi(image)
    points_per_pixel = POINTS_PER_INCH / dpi
    width, height = image.width * points_per_pixel, image.height * points_per_pixel
    pdf.add_page(format=(width, height))
    pdf.image(image, x=0, y=0, w=width, h=height)
    # The boxes are in the pixels of the image the engine read: the same
    # image, unless the page was read at another size.
    scale_x = image.width / page["width"] if page.get("width") else 1.0
    scale_y = image.height / page["height"] if page.get("height") else 1.0
    pdf.text_mode = TextMode.INVISIBLE
    for line in page.get("lines", []):
        x0, y0, x1, y1 = line.get("bbox") or (0, 0, 0, 0)
        text = _drawable(line.get("text", ""))
        if not text or x1 <= x0 or y1 <= y0:
            continue  # no box (echo's lines), or nothing to say
        left, right = x0 * scale_x * points_per_pixel, x1 * scale_x * points_per_pixel
        top, bottom = y0 * scale_y * points_per_pixel, y1 * scale_y * points_per_pixel
        size = bottom - top
        pdf.set_font(_FONT_FAMILY, size=size)
        pdf.set_stretching(100)
        natural = pdf.get_string_width(text)
        pdf.set_stretching(100 * (right - left) / natural)
        # The baseline sits a descent above the box's bottom, so the glyphs span the box.
        pdf.text(left, bottom + size * _DESCENT / _UNITS_PER_EM, text)
    pdf.set_stretching(100)


def _dpi(image: Image.Image) -> float:
    """The image's resolution if it states one; else the engines' rendering dpi."""
    dpi = image.info.get("dpi")
    try:
        value = float(dpi[0]) if dpi else 0.0
    except (TypeError, ValueError, IndexError):
        value = 0.0
    return value if value >= _MIN_DPI else float(RENDER_DPI)


def _drawable(text: str) -> str:
    """The text with whitespace made single spaces, and control characters and lone surrogates made U+FFFD."""
    text = " ".join(text.split())
    return "".join("\ufffd" if unicodedata.category(c) in ("Cc", "Cs") else c for c in text)


def glyphless_font(characters: Iterable[str]) -> bytes:
    """A TrueType font whose every character (space and ``characters``) is one blank glyph, half an em wide.

    Only the characters a PDF uses are mapped: fpdf2 and fontTools' subsetter
    walk the whole character map, which for the whole BMP costs a second.
    """
    builder = FontBuilder(_UNITS_PER_EM, isTTF=True)
    builder.setupGlyphOrder([".notdef", "blank"])
    builder.setupCharacterMap({0x20: "blank"})
    # Format 13 maps any set of characters to one glyph, in a few bytes per run.
    many_to_one = CmapSubtable.newSubtable(13)
    many_to_one.platformID, many_to_one.platEncID, many_to_one.language = 0, 6, 0
    many_to_one.cmap = {ord(c): "blank" for c in {" ", *characters}}
    builder.font["cmap"].tables.append(many_to_one)
    # The outline is a box over the em, so that text extraction reports where each character is.
    pen = TTGlyphPen(None)
    pen.moveTo((0, _DESCENT))
    pen.lineTo((0, _ASCENT))
    pen.lineTo((_GLYPH_WIDTH, _ASCENT))
    pen.lineTo((_GLYPH_WIDTH, _DESCENT))
    pen.closePath()
    box = pen.glyph()
    builder.setupGlyf({".notdef": TTGlyphPen(None).glyph(), "blank": box})
    builder.setupHorizontalMetrics({".notdef": (_GLYPH_WIDTH, 0), "blank": (_GLYPH_WIDTH, 0)})
    builder.setupHorizontalHeader(ascent=_ASCENT, descent=_DESCENT)
    builder.setupNameTable({"familyName": "GlyphLessFont", "styleName": "Regular"})
    builder.setupOS2(sTypoAscender=_ASCENT, sTypoDescender=_DESCENT, usWinAscent=_ASCENT, usWinDescent=-_DESCENT)
    builder.setupPost()
    buffer = io.BytesIO()
    builder.save(buffer)
    return buffer.getvalue()
