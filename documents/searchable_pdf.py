"""A searchable PDF: the original pages as they were, each with its recognized text grafted on, invisible.

A PDF's pages keep everything they had (content, fonts, images,
annotations); an OCRed page gets one content stream more, drawing its words
in invisible text (``documents.invisible_text``) over the boxes the engine
saw them in, and the glyphless font that stream uses, added to the page's
resources under a name the page does not use yet: OCRmyPDF's way of
grafting a text layer.  A page answered from its own text layer
(``source: "text_layer"``) already has its text and is left as it was.

A word on an OCRed page is found once in the PDF's text, never twice.  An
earlier invisible layer on the page (text in render mode 3: an earlier OCR)
is taken off before the new one goes on (``documents.invisible_layer``).
The page's visible text stays, always, and says its words itself: OCR text
is not added to a page whose visible text already says most of what OCR
read (a born-digital page read with ``text_layer: ignore``), and on a page
that is partly its own text (a scan with a printed legend) no OCR word is
drawn where a visible word lies (``documents.text_layer.OwnWords``, the
visible words carried into the pixels OCR read, turned and straightened as
it read them); a line the result took from the page's own text (``source:
"text_layer"``, ``text_layer: redo``) is not drawn again either.  An
image becomes pages of its own, its bytes embedded as they came
(``documents.pdf_images``).  Nothing is rendered and no image is encoded
again, so a born-digital PDF comes back its own size and a scan its size
plus the text.

The boxes are pixels of the page as the engine read it: upright (turned by
the result's ``rotation``) and straightened (turned by its ``skew``), the
page's displayed size (its crop box, as its ``/Rotate`` shows it) being
``width`` x ``height`` pixels.  So the page is turned the same way:
``/Rotate`` grows by ``rotation``, and for a skew the original content is
drawn through a rotation about the displayed page's centre (its corners may
be cut off); the text is drawn in the displayed page's space, through the
matrix that maps that space onto the page's own.

A single whole PDF is changed where it is and saved; pages of several
documents are copied into a new PDF, each document's shared objects (a font
all its pages use) once.  Streams are saved as they are, compressed only if
they were not, and the small objects in object streams.

Before it is saved the PDF is made as the job's output choice asks
(``jobs.pdf_outputs``): its images optimised at the level asked
(``documents.optimize``), then either made PDF/A-2b (``documents.pdfa``),
or, a plain PDF, stripped of any PDF/A claim its input made, since the
document it describes was edited.
"""

from __future__ import annotations

import io
import math
import struct
import zlib
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

import pikepdf
from PIL import Image

from documents.invisible_layer import remove_invisible_text
from documents.invisible_text import GlyphlessFont, Line, Word, drawable, text_content
from documents.optimize import optimize
from documents.pages import PDF_TYPE, RENDER_DPI, Document, open_document
from documents.pdf_images import POINTS_PER_INCH, add_image_pages
from documents.pdfa import make_pdfa, withdraw_claims
from documents.resolution import ASSUMED, ESTIMATED, OPTION
from documents.text_layer import OwnWords, TextLayer, in_frame
from jobs.errors import EncryptedDocument, InvalidDocument
from jobs.pdf_outputs import DEFAULT_OUTPUT, PDFA, PdfOutput
from jobs.registry import IMAGE_TYPES

Matrix = tuple[float, float, float, float, float, float]
_FONT_NAME_PREFIX = "/OCRgwText"
#: A result page's ``dpi_source`` whose ``dpi`` sizes an image's page rather than what the image states.
GIVEN_DPI_SOURCES = frozenset({OPTION, ESTIMATED, ASSUMED})
#: The share of the words OCR read on a page that its own text must hold for no OCR text to be added to it.
OWN_TEXT_COVERS = 0.8
# What reading a malformed document can raise, beside InvalidDocument: qpdf's
# errors, and what a broken object (a box that is not an array of numbers, a
# dictionary where a stream should be) or image makes Python raise.
_DOCUMENT_ERRORS = (
    pikepdf.PdfError,
    pikepdf.ForeignObjectError,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    OSError,
    RuntimeError,
    EOFError,
    SyntaxError,
    struct.error,
    zlib.error,
    Image.DecompressionBombError,
    Image.DecompressionBombWarning,  # made an error by documents.pages
)


@dataclass(frozen=True)
class SourceDocument:
    """One document and the result pages that go with it."""

    document: bytes
    content_type: str  # application/pdf, image/jpeg, image/png, image/tiff
    # Result pages by 0-based index of the page in ``document``; a page not in it goes in without text.
    pages: Mapping[int, dict]
    # The 0-based indices of the pages of ``document`` that go in, in order (None: all).
    only: Sequence[int] | None = None


def searchable_pdf(sources: Sequence[SourceDocument], output: PdfOutput = DEFAULT_OUTPUT) -> bytes:
    """One PDF of the pages of every source, in order, each with its result's text grafted on, made as
    ``output`` asks (its images optimised, PDF/A).

    Raises ``InvalidDocument`` for a document that cannot be read (or made PDF/A).
    """
    if not sources:
        raise InvalidDocument("no document to make a PDF of")
    try:
        return _build(sources, output)
    except InvalidDocument:
        raise
    except pikepdf.PasswordError:
        raise EncryptedDocument() from None
    except _DOCUMENT_ERRORS as error:
        raise InvalidDocument(f"cannot read the document: {error}") from None


def _build(sources: Sequence[SourceDocument], output: PdfOutput) -> bytes:
    characters = {c for source in sources for page in _results(source) for c in _page_characters(page)}
    first = sources[0]
    if len(sources) == 1 and _media_type(first) == PDF_TYPE and first.only is None:
        with _open_pdf(first.document) as pdf, _OwnTexts(first) as own:
            font = GlyphlessFont(pdf, characters)
            for index, page in enumerate(pdf.pages):
                result = first.pages.get(index)
                _graft(pdf, page, result, font, RENDER_DPI, own.of(index, result))
            return _saved(_finished(pdf, output))
    with pikepdf.new() as made, _OpenedPdfs() as opened:
        font = GlyphlessFont(made, characters)
        for source in sources:
            with _OwnTexts(source) as own:
                for page, index, result, dpi in _added_pages(made, source, opened):
                    _graft(made, page, result, font, dpi, own.of(index, result))
        return _saved(_finished(made, output))


def _finished(pdf: pikepdf.Pdf, output: PdfOutput) -> pikepdf.Pdf:
    """The PDF as ``output`` asks: its images optimised first, so that a PDF/A is made of the final images."""
    optimize(pdf, output.optimize)
    if output.output_type == PDFA:
        make_pdfa(pdf)
    else:
        withdraw_claims(pdf)
    return pdf


@dataclass(frozen=True)
class _OwnText:
    """What an OCRed page of a PDF carries of its own: its visible text, and whether it has an invisible layer."""

    visible: TextLayer | None
    invisible: bool

    def already_says(self, result: dict) -> bool:
        """Whether the visible text holds most of the words OCR read on the page (``OWN_TEXT_COVERS``).

        Never for a page read with ``text_layer: redo``: its result holds the page's visible text already
        (lines of source ``text_layer``), and what OCR read beside it is, by then, only what that text
        does not say; that those words also occur in the body (a figure's labels) is no reason to drop them.
        """
        if any(isinstance(line, dict) and line.get("source") == "text_layer" for line in _list(result.get("lines"))):
            return False
        read = Counter(word for _, words in _result_lines(result) for text, _ in words for word in text.split())
        if not read or self.visible is None:
            return False
        held = read & Counter(self.visible.text.split())
        return sum(held.values()) >= OWN_TEXT_COVERS * sum(read.values())

    def words(self, result: dict, displayed: _Displayed, default_dpi: float) -> OwnWords:
        """The visible words' boxes in the pixels of the page as OCR read it (``_result_frame``)."""
        if self.visible is None:
            return OwnWords(())
        width, height = _result_frame(result, displayed, default_dpi)
        return OwnWords.of(
            in_frame(
                self.visible, round(width), round(height), _rotation(result.get("rotation")), _skew(result.get("skew"))
            )
        )


class _OwnTexts:
    """The text a source PDF's pages carry of their own, read (by PDFium) only for pages OCR read."""

    def __init__(self, source: SourceDocument):
        self._source = source
        self._document: Document | None = None

    def of(self, index: int, result: Any) -> _OwnText | None:
        """Page ``index``'s own text, if it is a PDF's page that OCR read."""
        if _media_type(self._source) != PDF_TYPE or not isinstance(result, dict) or result.get("source") != "ocr":
            return None
        if self._document is None:
            self._document = open_document(self._source.document, PDF_TYPE)
        return _OwnText(*self._document.own_text(index))

    def __enter__(self) -> _OwnTexts:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self._document is not None:
            self._document.close()


class _OpenedPdfs(ExitStack):
    """The source PDFs, each opened once, and kept open until the output is saved.

    qpdf copies a page's streams from its source when the copy is saved; and
    one copier per source PDF is what copies the objects its pages share (a
    font, an image) once, even when the same document comes in twice.
    """

    def __init__(self) -> None:
        super().__init__()
        self._by_document: dict[bytes, pikepdf.Pdf] = {}

    def open(self, document: bytes) -> pikepdf.Pdf:
        if document not in self._by_document:
            self._by_document[document] = self.enter_context(_open_pdf(document))
        return self._by_document[document]


def _added_pages(
    output: pikepdf.Pdf, source: SourceDocument, opened: _OpenedPdfs
) -> list[tuple[pikepdf.Page, int, Any, float]]:
    """The source's pages added to ``output``, each with its index, its result, and the dpi of a sizeless result."""
    media_type = _media_type(source)
    if media_type in IMAGE_TYPES:
        # A page is sized by the resolution its result recorded, where that is not simply the image's own.
        dpis = {index: dpi for index, result in source.pages.items() if (dpi := _given_dpi(result))}
        added = add_image_pages(output, source.document, source.only, dpis)
        indices = range(len(added)) if source.only is None else source.only
        return [
            (image.page, index, source.pages.get(index), image.dpi) for image, index in zip(added, indices, strict=True)
        ]
    if media_type != PDF_TYPE:
        raise InvalidDocument(f"a searchable PDF is made of PDFs and images, not {source.content_type!r}")
    pdf = opened.open(source.document)
    count = len(pdf.pages)
    chosen = range(count) if source.only is None else source.only
    if missing := [index for index in chosen if not 0 <= index < count]:
        raise InvalidDocument(f"the PDF has {count} page(s), not pages {missing} (0-based)")
    pages: list[tuple[pikepdf.Page, int, Any, float]] = []
    for index in chosen:
        output.pages.append(pdf.pages[index])
        pages.append((output.pages[-1], index, source.pages.get(index), RENDER_DPI))
    return pages


def _given_dpi(result: Any) -> float | None:
    """The resolution a result page recorded for an image that states none, or was given one."""
    if not isinstance(result, dict) or result.get("dpi_source") not in GIVEN_DPI_SOURCES:
        return None
    return _positive(result.get("dpi")) or None


def _open_pdf(data: bytes) -> pikepdf.Pdf:
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PasswordError:
        raise EncryptedDocument() from None
    except pikepdf.PdfError as error:
        raise InvalidDocument(f"cannot open the PDF: {error}") from None
    if len(pdf.pages) == 0:
        pdf.close()
        raise InvalidDocument("the PDF has no pages")
    return pdf


def _saved(pdf: pikepdf.Pdf) -> bytes:
    buffer = io.BytesIO()
    pdf.save(
        buffer,
        compress_streams=True,  # only those without a filter: ours, and any the document left uncompressed
        stream_decode_level=pikepdf.StreamDecodeLevel.none,  # every stream as it was
        object_stream_mode=pikepdf.ObjectStreamMode.generate,
        # An input with an owner password only (restrictions, no password to open) comes out without it,
        # as OCRmyPDF makes it: the restrictions are a viewer's courtesy that binds nothing once it opens.
        encryption=False,
    )
    return buffer.getvalue()


def _media_type(source: SourceDocument) -> str:
    return source.content_type.split(";", 1)[0].strip().lower()


def _results(source: SourceDocument) -> Iterator[dict]:
    for page in source.pages.values():
        if isinstance(page, dict):
            yield page


def _page_characters(page: dict) -> set[str]:
    if page.get("source") == "text_layer":
        return set()
    characters: set[str] = set()
    for line in _list(page.get("lines")):
        if isinstance(line, dict):
            characters.update(drawable(line.get("text")))
            for word in _list(line.get("words")):
                if isinstance(word, dict):
                    characters.update(drawable(word.get("text")))
    return characters


# --- one page ------------------------------------------------------------------


@dataclass(frozen=True)
class _Displayed:
    """A page as displayed: its size in points, and the matrix from that space (y up) to the page's own."""

    width: float
    height: float
    to_page: Matrix


def _graft(
    pdf: pikepdf.Pdf,
    page: pikepdf.Page,
    result: Any,
    font: GlyphlessFont,
    default_dpi: float,
    own: _OwnText | None = None,
) -> None:
    """Turn and straighten the page as the result says, and draw its text on it, in place of an earlier
    invisible layer (``documents.invisible_layer``), except where its ``own`` visible text says it already."""
    if not isinstance(result, dict) or result.get("source") == "text_layer":
        return
    if own is not None and own.invisible:
        remove_invisible_text(pdf, page)
    rotation, skew = _rotation(result.get("rotation")), _skew(result.get("skew"))
    box = _page_box(page)
    turned = (_page_rotation(page) + rotation) % 360
    displayed = _displayed(box, turned)
    lines = _result_lines(result)
    if own is not None and lines:
        lines = [] if own.already_says(result) else _not_on(lines, own.words(result, displayed, default_dpi))
    if not rotation and not skew and not lines:
        return
    if rotation or "/Rotate" in page.obj:
        page.obj.Rotate = turned
    # The page's own content in a graphics state of its own, so that nothing it leaves set reaches the text.
    straighten = _straightening(displayed, skew) if skew else None
    prologue = "q\n" if straighten is None else f"q {_matrix(straighten)} cm\n"
    page.contents_add(pikepdf.Stream(pdf, prologue.encode("ascii")), prepend=True)
    epilogue = b"\nQ\n"
    placed = _placed(lines, result, displayed, default_dpi)
    if placed:
        name = _font_resource(page, font.font)
        text = text_content(placed, font, name)
        epilogue += f"q {_matrix(displayed.to_page)} cm\n".encode("ascii") + text + b"\nQ\n"
    page.contents_add(pikepdf.Stream(pdf, epilogue), prepend=False)


def _page_box(page: pikepdf.Page) -> tuple[float, float, float, float]:
    """The page's visible box (crop box within media box), as left, bottom, right, top."""
    media = _box(page.obj.get("/MediaBox")) or (0.0, 0.0, 612.0, 792.0)
    crop = _box(page.obj.get("/CropBox")) or media
    left, bottom = max(media[0], crop[0]), max(media[1], crop[1])
    right, top = min(media[2], crop[2]), min(media[3], crop[3])
    return (left, bottom, right, top) if left < right and bottom < top else media


def _box(value: Any) -> tuple[float, float, float, float] | None:
    try:
        x0, y0, x1, y1 = (float(v) for v in value)
    except (TypeError, ValueError):
        return None
    if not all(math.isfinite(v) for v in (x0, y0, x1, y1)) or x0 == x1 or y0 == y1:
        return None
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


def _page_rotation(page: pikepdf.Page) -> int:
    """The page's /Rotate as PDFium reads it: quarter turns, truncated, clockwise."""
    try:
        value = int(page.obj.get("/Rotate", 0))
    except (TypeError, ValueError):
        return 0
    return (int(value / 90) % 4) * 90


def _rotation(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value % 90:
        return 0
    return int(value) % 360


def _skew(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return 0.0
    return float(value) % 360 if abs(value) >= 360 else float(value)


def _displayed(box: tuple[float, float, float, float], rotate: int) -> _Displayed:
    """The page as a viewer shows it with ``/Rotate`` ``rotate``: its size, and the matrix back to the page.

    A viewer turns the page clockwise; the displayed page's bottom left
    corner is the page's bottom left, bottom right, top right or top left
    corner for 0, 90, 180 and 270 degrees.
    """
    left, bottom, right, top = box
    width, height = right - left, top - bottom
    if rotate == 90:
        return _Displayed(height, width, (0, 1, -1, 0, right, bottom))
    if rotate == 180:
        return _Displayed(width, height, (-1, 0, 0, -1, right, top))
    if rotate == 270:
        return _Displayed(height, width, (0, -1, 1, 0, left, top))
    return _Displayed(width, height, (1, 0, 0, 1, left, bottom))


def _straightening(displayed: _Displayed, skew: float) -> Matrix:
    """The matrix drawing the page's content turned ``skew`` degrees counter-clockwise about its displayed centre."""
    radians = math.radians(skew)
    cos, sin = math.cos(radians), math.sin(radians)
    centre_x, centre_y = displayed.width / 2, displayed.height / 2
    about_centre = _multiply(
        _multiply((1, 0, 0, 1, -centre_x, -centre_y), (cos, sin, -sin, cos, 0, 0)), (1, 0, 0, 1, centre_x, centre_y)
    )
    # Page space -> displayed space, turned there, and back.
    return _multiply(_multiply(_inverse(displayed.to_page), about_centre), displayed.to_page)


def _multiply(first: Matrix, then: Matrix) -> Matrix:
    """The matrix applying ``first``, then ``then`` (PDF's row-vector convention)."""
    a, b, c, d, e, f = first
    p, q, r, s, t, u = then
    return (a * p + b * r, a * q + b * s, c * p + d * r, c * q + d * s, e * p + f * r + t, e * q + f * s + u)


def _inverse(matrix: Matrix) -> Matrix:
    a, b, c, d, e, f = matrix
    det = a * d - b * c
    return (d / det, -b / det, -c / det, a / det, (c * f - d * e) / det, (b * e - a * f) / det)


def _matrix(matrix: Matrix) -> str:
    return " ".join(_number(v) for v in matrix)


def _number(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def _font_resource(page: pikepdf.Page, font: pikepdf.Object) -> str:
    """The name the glyphless font goes by in the page's resources, added under a name the page does not use."""
    if not isinstance(page.obj.get("/Resources"), pikepdf.Dictionary):
        page.obj.Resources = pikepdf.Dictionary()
    resources = page.obj.Resources
    if not isinstance(resources.get("/Font"), pikepdf.Dictionary):
        resources.Font = pikepdf.Dictionary()
    fonts = resources.Font
    for number in range(len(fonts) + 1):
        name = f"{_FONT_NAME_PREFIX}{number or ''}"
        existing = fonts.get(name)
        if existing is None:
            fonts[name] = font
            return name
        if existing.is_indirect and existing.objgen == font.objgen:  # a resource dictionary shared by pages
            return name
    raise AssertionError("unreachable: one of len(fonts) + 1 names is free")


# --- the result's text ---------------------------------------------------------------


PixelBox = tuple[float, float, float, float]


def _result_lines(result: dict) -> list[tuple[PixelBox | None, list[tuple[str, PixelBox]]]]:
    """Each line's box and its words with their boxes (the line as one word if it has none), in pixels."""
    lines = []
    for line in _list(result.get("lines")):
        if not isinstance(line, dict) or line.get("source") == "text_layer":  # the page draws that text itself
            continue
        words = []
        for word in _list(line.get("words")):
            if (
                isinstance(word, dict)
                and (text := drawable(word.get("text")))
                and (box := _pixel_box(word.get("bbox")))
            ):
                words.append((text, box))
        line_box = _pixel_box(line.get("bbox"))
        if not words and line_box and (text := drawable(line.get("text"))):
            words = [(text, line_box)]
        if words:
            lines.append((line_box, words))
    return lines


def _pixel_box(value: Any) -> PixelBox | None:
    box = _box(value) if isinstance(value, list | tuple) and len(value) == 4 else None
    if box is None or isinstance(value[0], bool):
        return None
    return box


def _not_on(lines, taken: OwnWords):
    """The lines without the words that lie on the page's own visible words (``taken``): OCR reading them again."""
    if not taken:
        return lines
    kept = []
    for line_box, words in lines:
        words = [(text, box) for text, box in words if not taken.cover(box)]
        if words:
            kept.append((line_box, words))
    return kept


def _result_frame(result: dict, displayed: _Displayed, default_dpi: float) -> tuple[float, float]:
    """The size in pixels of the page as OCR read it (the space of the result's boxes): the displayed page."""
    width = _positive(result.get("width")) or displayed.width * default_dpi / POINTS_PER_INCH
    height = _positive(result.get("height")) or displayed.height * default_dpi / POINTS_PER_INCH
    return width, height


def _placed(lines, result: dict, displayed: _Displayed, default_dpi: float) -> list[Line]:
    """The lines in the displayed page's points: the result's pixels span the displayed page."""
    width, height = _result_frame(result, displayed, default_dpi)
    scale_x, scale_y = displayed.width / width, displayed.height / height
    placed = []
    for line_box, words in lines:
        top_px = line_box[1] if line_box else min(box[1] for _, box in words)
        bottom_px = line_box[3] if line_box else max(box[3] for _, box in words)
        top_px, bottom_px = max(top_px, 0.0), min(bottom_px, height)
        if bottom_px <= top_px:
            continue
        placed_words = [
            Word(text, max(box[0], 0.0) * scale_x, min(box[2], width) * scale_x)
            for text, box in words
            if min(box[2], width) > max(box[0], 0.0)
        ]
        bottom, top = displayed.height - bottom_px * scale_y, displayed.height - top_px * scale_y
        placed.append(Line(placed_words, bottom, top))
    return placed


def _positive(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return 0.0
    return float(value)


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []
