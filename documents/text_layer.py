"""The embedded text of a PDF page, as lines in the pixel space of the page's rendering.

A PDF made by a word processor (or already OCRed) carries its text: with
``options.text_layer: "prefer"`` such a page is answered from it, with no
OCR at all (OCRmyPDF's "skip text").  Its lines must look like an engine's:
the same text per line and boxes in the same pixels as an OCR line of the
page rendered at the adapter's dpi, so that a searchable PDF can place them
whatever produced them.

PDFium lists a page's characters in content order and inserts generated
line breaks between lines; a line here is the run of characters between two
breaks.  ``FPDF_PageToDevice`` maps PDF points to the pixels of a rendering
of a given size, crop box and page rotation included, exactly as
``FPDF_RenderPageBitmap`` draws them.  The caller holds the PDFium lock.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_LINE_BREAKS = frozenset("\r\n")


@dataclass(frozen=True)
class TextWord:
    text: str
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in the rendering's pixels


@dataclass(frozen=True)
class TextLine:
    text: str
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in the rendering's pixels
    words: tuple[TextWord, ...] = ()


@dataclass(frozen=True)
class TextLayer:
    lines: list[TextLine]
    width: int  # the rendering's size in pixels: the space of the boxes
    height: int
    # The resolution of that space, and why the page would be drawn at it (``documents.resolution``).
    dpi: float = 0.0
    dpi_source: str = ""

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def rendering_size(width_pt: float, height_pt: float, scale: float) -> tuple[int, int]:
    """The pixel size pypdfium2 renders a page of this size at ``scale`` (it rounds up)."""
    return math.ceil(width_pt * scale), math.ceil(height_pt * scale)


def read_text_layer(page: pdfium.PdfPage, scale: float) -> TextLayer | None:
    """The page's text as lines, or None when it has no text other than whitespace."""
    width_pt, height_pt = page.get_size()
    width, height = rendering_size(width_pt, height_pt, scale)
    textpage = page.get_textpage()
    try:
        lines: list[TextLine] = []
        # The line's words so far, each a list of (character, its box in PDF points).
        words: list[list[tuple[str, tuple[float, float, float, float]]]] = [[]]
        for index in range(textpage.count_chars()):
            char = _char(textpage, index)
            if char in _LINE_BREAKS:
                _end_line(lines, words, page, width, height)
                words = [[]]
            elif char.isspace():
                if words[-1]:
                    words.append([])
            else:
                words[-1].append((char, textpage.get_charbox(index, loose=True)))
        _end_line(lines, words, page, width, height)
    finally:
        textpage.close()
    return TextLayer(lines, width, height) if lines else None


def _char(textpage: pdfium.PdfTextPage, index: int) -> str:
    code = pdfium_c.FPDFText_GetUnicode(textpage, index)
    # 0 is a char PDFium could not map to Unicode; a lone surrogate is half of one.
    if code == 0 or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def _end_line(lines, words, page, width, height) -> None:
    """Adds the line of ``words`` (each a list of characters and their boxes) if it shows anything."""
    placed = [word for word in (_place_word(chars, page, width, height) for chars in words if chars) if word]
    if not placed:
        return
    bbox = (
        min(word.bbox[0] for word in placed),
        min(word.bbox[1] for word in placed),
        max(word.bbox[2] for word in placed),
        max(word.bbox[3] for word in placed),
    )
    lines.append(TextLine(" ".join(word.text for word in placed), bbox, tuple(placed)))


def _place_word(chars, page, width, height) -> TextWord | None:
    """The word of ``chars`` with its box in the rendering's pixels, clipped to it; None when nothing is left."""
    corners = [
        _to_device(page, x, y, width, height)
        for _, (left, bottom, right, top) in chars
        for x, y in ((left, top), (right, bottom))
    ]
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    bbox = (max(min(xs), 0), max(min(ys), 0), min(max(xs), width), min(max(ys), height))
    if bbox[0] < bbox[2] and bbox[1] < bbox[3]:
        return TextWord("".join(char for char, _ in chars), bbox)
    return None


def _to_device(page: pdfium.PdfPage, x: float, y: float, width: int, height: int) -> tuple[int, int]:
    device_x, device_y = ctypes.c_int(), ctypes.c_int()
    pdfium_c.FPDF_PageToDevice(page, 0, 0, width, height, 0, x, y, device_x, device_y)
    return device_x.value, device_y.value
