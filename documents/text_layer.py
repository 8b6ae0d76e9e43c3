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

Text drawn in render mode 3 is invisible: an earlier OCR layer over a scan,
not something the page shows.  ``visible_only`` leaves it out (PDFium says
which text object drew each character, and that object its mode), which is
what a page's own text is when its OCR layer is done again.  A page read again
is turned and straightened before OCR, so ``in_frame`` carries a layer's
boxes into the pixels of the page as read, and ``OwnWords`` says whether an
OCR word lies on the page's own text (the same word, read twice).

Each line also says how its type is set, for a page's layout
(``documents.layout``) to tell headings apart: its size in points (the
median over its characters, ``FPDFText_GetFontSize``) and whether it is bold
(most of its characters drawn with a font of weight 600 or more, or one
whose name says Bold, as the standard fonts say it: PDFium gives them no
weight).
"""

from __future__ import annotations

import ctypes
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

_LINE_BREAKS = frozenset("\r\n")
#: FPDF_TEXTRENDERMODE_INVISIBLE: text that draws nothing and adds nothing to the clipping path (PDF 1.7,
#: table 106), the mode of an OCR layer: what is told apart from visible text here, and taken off a page by
#: ``documents.invisible_layer``.
INVISIBLE_MODE = 3
#: The share of an OCR word's box that the page's own words must cover for it to be one of them, read again.
COVERED_SHARE = 0.5
#: The weight from which a font is bold (CSS's semibold and up).
BOLD_WEIGHT = 600

Box = tuple[int, int, int, int]


@dataclass(frozen=True)
class TextWord:
    text: str
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in the rendering's pixels


@dataclass(frozen=True)
class TextLine:
    text: str
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in the rendering's pixels
    words: tuple[TextWord, ...] = ()
    font_size: float | None = None  # points, the median over its characters; None: not known
    bold: bool | None = None


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


def read_text_layer(page: pdfium.PdfPage, scale: float, *, visible_only: bool = False) -> TextLayer | None:
    """The page's text as lines, or None when it has no text other than whitespace (or, ``visible_only``,
    none that is drawn visibly)."""
    return _read(page, scale, visible_only)[0]


def read_own_text(page: pdfium.PdfPage, scale: float) -> tuple[TextLayer | None, bool]:
    """The page's visible text (``read_text_layer``'s ``visible_only``), and whether it draws any invisibly."""
    return _read(page, scale, visible_only=True)


def _read(page: pdfium.PdfPage, scale: float, visible_only: bool) -> tuple[TextLayer | None, bool]:
    width_pt, height_pt = page.get_size()
    width, height = rendering_size(width_pt, height_pt, scale)
    textpage = page.get_textpage()
    modes = _RenderModes(textpage)
    invisible = False
    try:
        lines: list[TextLine] = []
        # The line's words so far, each a list of (character, its box in PDF points), and its characters' styles.
        words: list[list[tuple[str, tuple[float, float, float, float]]]] = [[]]
        styles: list[tuple[float, bool]] = []
        for index in range(textpage.count_chars()):
            if modes.invisible(index):
                invisible = True
                if visible_only:
                    continue
            char = _char(textpage, index)
            if char in _LINE_BREAKS:
                _end_line(lines, words, page, width, height, styles)
                words, styles = [[]], []
            elif char.isspace():
                if words[-1]:
                    words.append([])
            else:
                words[-1].append((char, textpage.get_charbox(index, loose=True)))
                styles.append(modes.style(index))
        _end_line(lines, words, page, width, height, styles)
    finally:
        textpage.close()
    return (TextLayer(lines, width, height) if lines else None), invisible


class _RenderModes:
    """Whether each character is drawn in render mode 3, and in which style: PDFium names the text object
    that draws it, and a run of characters shares one, so its mode and font are asked once a run."""

    def __init__(self, textpage: pdfium.PdfTextPage):
        self._textpage = textpage
        self._last: tuple[int, bool] = (0, False)
        self._last_font: tuple[int, bool] = (0, False)
        self._name = ctypes.create_string_buffer(128)
        self._flags = ctypes.c_int()

    def style(self, index: int) -> tuple[float, bool]:
        """The character's font size in points, and whether its font is bold."""
        size = float(pdfium_c.FPDFText_GetFontSize(self._textpage, index))
        text_object = pdfium_c.FPDFText_GetTextObject(self._textpage, index)
        address = ctypes.cast(text_object, ctypes.c_void_p).value or 0
        if not address or address != self._last_font[0]:
            weight = pdfium_c.FPDFText_GetFontWeight(self._textpage, index)
            bold = weight >= BOLD_WEIGHT
            if not bold:
                length = pdfium_c.FPDFText_GetFontInfo(
                    self._textpage, index, self._name, len(self._name), ctypes.byref(self._flags)
                )
                bold = length > 0 and b"bold" in self._name.value.lower()
            self._last_font = (address, bold)
        return size, self._last_font[1]

    def invisible(self, index: int) -> bool:
        text_object = pdfium_c.FPDFText_GetTextObject(self._textpage, index)
        address = ctypes.cast(text_object, ctypes.c_void_p).value or 0
        if not address:  # a space or line break PDFium generated: drawn by nothing
            return False
        if address != self._last[0]:
            self._last = (address, pdfium_c.FPDFTextObj_GetTextRenderMode(text_object) == INVISIBLE_MODE)
        return self._last[1]


def _char(textpage: pdfium.PdfTextPage, index: int) -> str:
    code = pdfium_c.FPDFText_GetUnicode(textpage, index)
    # 0 is a char PDFium could not map to Unicode; a lone surrogate is half of one.
    if code == 0 or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def _end_line(lines, words, page, width, height, styles) -> None:
    """Adds the line of ``words`` (each a list of characters and their boxes, ``styles`` their characters'
    sizes and boldness) if it shows anything."""
    placed = [word for word in (_place_word(chars, page, width, height) for chars in words if chars) if word]
    if not placed:
        return
    bbox = (
        min(word.bbox[0] for word in placed),
        min(word.bbox[1] for word in placed),
        max(word.bbox[2] for word in placed),
        max(word.bbox[3] for word in placed),
    )
    font_size = round(statistics.median(size for size, _ in styles), 2) if styles else None
    bold = sum(1 for _, is_bold in styles if is_bold) * 2 > len(styles) if styles else None
    lines.append(TextLine(" ".join(word.text for word in placed), bbox, tuple(placed), font_size, bold))


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


# --- a layer on the page as read ---------------------------------------------------------


def in_frame(layer: TextLayer, width: int, height: int, rotation: int = 0, skew: float = 0.0) -> TextLayer:
    """``layer`` in the pixels of its page as an engine read it: turned ``rotation`` degrees clockwise, drawn
    ``width`` x ``height`` pixels, then turned ``skew`` degrees counter-clockwise about its centre (as
    ``documents.geometry`` does), each box the smallest upright box around the turned one."""
    rotation %= 360
    turned_width, turned_height = (layer.height, layer.width) if rotation in (90, 270) else (layer.width, layer.height)
    scale_x, scale_y = width / turned_width, height / turned_height
    radians = math.radians(skew)
    cos, sin = math.cos(radians), math.sin(radians)

    def placed(box: Box) -> Box:
        corners = [
            _turned(x, y, layer.width, layer.height, rotation) for x in (box[0], box[2]) for y in (box[1], box[3])
        ]
        corners = [(x * scale_x, y * scale_y) for x, y in corners]
        if skew:
            # PIL's counter-clockwise turn, in pixels whose y runs down.
            corners = [
                (width / 2 + dx * cos + dy * sin, height / 2 - dx * sin + dy * cos)
                for dx, dy in ((x - width / 2, y - height / 2) for x, y in corners)
            ]
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        return (
            max(math.floor(min(xs)), 0),
            max(math.floor(min(ys)), 0),
            min(math.ceil(max(xs)), width),
            min(math.ceil(max(ys)), height),
        )

    lines = [
        replace(
            line, bbox=placed(line.bbox), words=tuple(TextWord(word.text, placed(word.bbox)) for word in line.words)
        )
        for line in layer.lines
    ]
    return replace(layer, lines=lines, width=width, height=height)


def _turned(x: float, y: float, width: int, height: int, rotation: int) -> tuple[float, float]:
    """Where pixel (x, y) of a ``width`` x ``height`` image lands once the image is turned clockwise."""
    if rotation == 90:
        return height - y, x
    if rotation == 180:
        return width - x, height - y
    if rotation == 270:
        return y, width - x
    return x, y


class OwnWords:
    """A page's own words' boxes, and whether they cover a word OCR read (``COVERED_SHARE`` of its box).

    Indexed by the bands of pixel rows each box spans, so that a word is held
    to the few boxes in its rows, not to every word of the page: a page of
    text is some 500 words, and OCR reads as many.
    """

    _BAND = 64  # pixels: two or three lines of text at 200 dpi

    def __init__(self, boxes: Iterable[Box]):
        self._boxes = list(boxes)
        self._bands: dict[int, list[int]] = defaultdict(list)
        for number, (_, top, _, bottom) in enumerate(self._boxes):
            for band in range(top // self._BAND, bottom // self._BAND + 1):
                self._bands[band].append(number)

    @classmethod
    def of(cls, layer: TextLayer | None) -> OwnWords:
        """Every word's box of ``layer`` (a line without words: the line's)."""
        if layer is None:
            return cls(())
        return cls(word.bbox for line in layer.lines for word in (line.words or (TextWord(line.text, line.bbox),)))

    def __bool__(self) -> bool:
        return bool(self._boxes)

    def cover(self, box: tuple[float, float, float, float]) -> bool:
        """Whether these words cover ``COVERED_SHARE`` of ``box`` or more (a word OCR read: one of them, read again)."""
        area = (box[2] - box[0]) * (box[3] - box[1])
        if area <= 0:
            return False
        nearby = {
            number
            for band in range(int(box[1]) // self._BAND, int(box[3]) // self._BAND + 1)
            for number in self._bands.get(band, ())
        }
        overlap = 0.0
        for number in nearby:
            other = self._boxes[number]
            width = min(box[2], other[2]) - max(box[0], other[0])
            height = min(box[3], other[3]) - max(box[1], other[1])
            if width > 0 and height > 0:
                overlap += width * height
        return overlap >= COVERED_SHARE * area
