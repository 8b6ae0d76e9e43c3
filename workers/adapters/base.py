"""The one interface between the worker task and an OCR engine.

An adapter turns a document (bytes plus content type) into an ``OcrResult``.
Everything the task stores comes from ``OcrResult.to_dict()``, so engines can
be swapped without the task, the store or the gateway noticing.

Layout.  With ``options.layout`` each page, once read, goes through
``documents.layout.analyse`` in this process (its models are resident, as the
orientation classifier is): an OCRed page with the very image the engine
read (upright and straightened), a page answered from its text layer with
the page drawn small for the model and its lines' font sizes and weights
(no OCR runs), a ``redo`` page with its own text and OCR's words together.
The page's lines come back in reading order, a line the layout cut in two
as two lines; its ``blocks`` are set, and its ``text`` becomes its body
(``documents.structure.body_text``).  The layout runs within the job's time
budget (checked before it starts) and the worker process's memory limit.  A
layout that fails on a page, for any reason, leaves that page as it was read
with ``layout_error`` saying why: a page's text is worth more than its
structure, so the job never fails for it.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from billiard.exceptions import SoftTimeLimitExceeded
from PIL import Image

from documents import resolution
from documents.inspection import inspect
from documents.isolation import run_isolated
from documents.limits import configured
from documents.pages import PDF_TYPE, Document, open_document
from documents.structure import body_text, tables_of
from documents.text_layer import OwnWords, TextLayer, in_frame
from jobs.contract import ErrorCode
from jobs.errors import AdapterError, InvalidDocument
from jobs.registry import (
    DEFAULT_ORIENTATION,
    DEFAULT_ROTATE_PAGES_THRESHOLD,
    MAX_IMAGE_DPI_OPTION,
    MIN_IMAGE_DPI_OPTION,
    ORIENTATION_METHODS,
)

if TYPE_CHECKING:  # the layout is imported with the first page laid out (see laid_out)
    from documents.layout import Sight

log = logging.getLogger(__name__)

ProgressCallback = Callable[[int, int], None]  # (pages_done, pages_total)
T = TypeVar("T")
#: How much of a layout's failure a page keeps in ``layout_error``; the log has all of it.
LAYOUT_ERROR_CHARS = 300

#: Where a page's text comes from: an engine read its image, or the PDF carried it.
OCR, TEXT_LAYER = "ocr", "text_layer"
TEXT_LAYER_CHOICES = ("ignore", "prefer", "redo")


@dataclass(frozen=True)
class Word:
    text: str
    confidence: float  # 0..1
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in page pixels


@dataclass(frozen=True)
class Line:
    text: str
    confidence: float  # 0..1
    bbox: tuple[int, int, int, int]  # x0, y0, x1, y1 in page pixels
    words: tuple[Word, ...] = ()
    # None: the page's source.  TEXT_LAYER on an OCRed page: the page's own visible text (``text_layer: redo``).
    source: str | None = None


@dataclass(frozen=True)
class PageResult:
    page: int  # 1-based, in the whole document (see ``options.first_page``)
    text: str
    lines: list[Line]
    source: str = OCR  # OCR or TEXT_LAYER
    # The page image's size in pixels, the space of the lines' boxes; 0 when
    # the page has no image (echo's text).
    width: int = 0
    height: int = 0
    # What was done to the page before it was read (``documents.geometry``): degrees clockwise it was
    # turned to stand upright, then degrees counter-clockwise it was turned about its centre to straighten it.
    rotation: int = 0
    skew: float = 0.0
    # Who said which way up the page stands: "classifier" or "osd"; None when nobody was asked.
    orientation_by: str | None = None
    # The resolution the page was read at, and where it comes from (``documents.resolution``); 0 and ''
    # when the page has no image.
    dpi: float = 0.0
    dpi_source: str = ""
    # With options.layout: the page's blocks in reading order, as ``documents.structure`` shapes them (None:
    # no layout was asked, or it failed), and why it failed.
    blocks: tuple[Mapping[str, Any], ...] | None = None
    layout_error: str | None = None


@dataclass(frozen=True)
class OcrResult:
    pages: list[PageResult]

    @property
    def text(self) -> str:
        return "\n\n".join(page.text.rstrip() for page in self.pages)

    def to_dict(self) -> dict[str, Any]:
        pages = [_page_dict(page) for page in self.pages]
        out: dict[str, Any] = {"text": self.text, "pages": pages}
        if any(page.blocks is not None for page in self.pages):
            out["tables"] = tables_of(pages)
        return out


def _page_dict(page: PageResult) -> dict[str, Any]:
    out: dict[str, Any] = {
        "page": page.page,
        "text": page.text,
        "source": page.source,
        "rotation": int(page.rotation),
        "skew": round(float(page.skew), 2),
        "orientation_by": page.orientation_by,
        "lines": [_line_dict(line, page.source) for line in page.lines],
    }
    if page.width and page.height:
        out["width"], out["height"] = page.width, page.height
    if page.dpi:
        out["dpi"], out["dpi_source"] = round(float(page.dpi), 2), page.dpi_source
    if page.blocks is not None:
        out["blocks"] = [dict(block) for block in page.blocks]
    if page.layout_error is not None:
        out["layout_error"] = page.layout_error
    return out


def _line_dict(line: Line, page_source: str) -> dict[str, Any]:
    out = _text_dict(line) | {"words": [_text_dict(word) for word in line.words]}
    if line.source is not None and line.source != page_source:  # said only where a page mixes the two
        out["source"] = line.source
    return out


def _text_dict(item: Line | Word) -> dict[str, Any]:
    return {
        "text": item.text,
        "confidence": round(float(item.confidence), 4),
        "bbox": [int(v) for v in item.bbox],
    }


class Adapter(ABC):
    name: str

    @abstractmethod
    def run(
        self,
        document: bytes,
        content_type: str,
        options: dict,
        on_page: ProgressCallback | None = None,
        *,
        pages: tuple[int, int] | None = None,
    ) -> OcrResult:
        """OCR ``document``, or only its pages ``pages`` (first and last, 1-based, inclusive: a split's child
        reads its pages of the one stored document); call ``on_page`` after each page so the job shows progress.

        Exceptions raised by ``on_page`` propagate untouched: that is how the
        caller stops a run early (for instance when the job was cancelled).
        """


class PageAdapter(Adapter):
    """An adapter that renders the document and recognises one page image at a time.

    ``options["timeout_s"]`` bounds the whole document, not each page: a job
    has one time budget however many pages it has.  Subclasses get the
    deadline so an engine that can be interrupted mid-page may honour it.
    ``options["text_layer"] == "prefer"`` answers a PDF page that carries
    text from that text, without rendering it; ``"redo"`` OCRs every page
    and answers with its visible text as the PDF has it and the words OCR
    read elsewhere (an OCR word on the visible text is that text read a
    second time, and goes); ``options["first_page"]`` numbers the pages from
    there (the document is part of a larger one).

    Each page is drawn in a child process of its own (``documents.isolation``),
    and the text layers are read in one: a page that makes the decoder abort
    fails the job as ``invalid_document`` and leaves this process serving.
    """

    #: The resolution PDF pages are drawn at; None: each page's content decides (``documents.resolution``).
    dpi: float | None = None
    #: How tall this engine's box of a line of body text is, in points: what an image's resolution is
    #: estimated from when it states none (``documents.resolution``).
    line_height_points = resolution.LINE_HEIGHT_POINTS
    #: False reads the pages in this process (tests of engines, where a fork per page buys nothing).
    isolate_pages = True
    #: The last PDF that passed inspection in this process (see ``_inspect_once``).
    _inspected: bytes | None = None

    def run(self, document, content_type, options, on_page=None, *, pages=None):
        deadline = _deadline(options.get("timeout_s"))
        text_layer = _text_layer(options.get("text_layer", "ignore"))
        first_page = _first_page(options.get("first_page", 1))
        layout = _switch(options, "layout")
        known_words: set[str] = set()  # the document's words so far, for the layout's hyphenation
        results = []
        if self.isolate_pages and content_type.split(";", 1)[0].strip().lower() == PDF_TYPE:
            self._inspect_once(document)
        with open_document(document, content_type, dpi=self.dpi) as doc:
            indices = page_indices(pages, doc.page_count)
            total = len(indices)
            drawn_small = layout and text_layer == "prefer"  # born-digital pages, drawn for their layout alone
            drawings: dict[int, Image.Image] = {}
            if text_layer == "ignore":
                layers: list[TextLayer | None] = [None] * total
            else:
                layers, drawings = self._text_layers(doc, indices, visible_only=text_layer == "redo", drawn=drawn_small)
            for done, index in enumerate(indices):
                if deadline is not None and time.monotonic() >= deadline:
                    raise AdapterError(
                        f"{self.name} ran out of time after {done} of {total} pages",
                        code=ErrorCode.ENGINE_TIMEOUT,
                    )
                layer = layers[done]
                if layer is not None and text_layer == "prefer":
                    page = _from_text_layer(first_page + done, layer)
                    if drawn_small:
                        if index not in drawings:
                            drawings = self._layout_images(doc, _with_layers(indices[done:], layers[done:]))
                        styles = [line.font_size for line in layer.lines], [line.bold for line in layer.lines]
                        page = laid_out(page, drawings.pop(index), known_words, deadline, styles)
                else:
                    page, image, sight = self._ocr_page(doc, index, first_page + done, options, deadline, layout)
                    page = page if layer is None else with_visible_text(page, layer)
                    if layout:
                        page = laid_out(page, image, known_words, deadline, sight=sight)
                    del image, sight
                results.append(page)
                if on_page is not None:
                    on_page(done + 1, total)
        return OcrResult(pages=results)

    def _inspect_once(self, document: bytes) -> None:
        """Opening a PDF can cost PDFium gigabytes: it is tried in a child under a bound first, so that this
        process only opens a PDF known to fit.  The children of a split read the one document of their
        group, which the runner keeps: the same object is not tried again, a fork per child saved (a
        fork costs more the more memory the process holds, as once PP-OCRv4 has run in it)."""
        if document is self._inspected:
            return
        inspect(document, PDF_TYPE, configured(), self.dpi)
        self._inspected = document

    def _text_layers(
        self, doc: Document, indices: range, *, visible_only: bool, drawn: bool = False
    ) -> tuple[list[TextLayer | None], dict[int, Image.Image]]:
        """The text layers of the pages read, in one child: a fork costs more than reading a page's text.
        ``drawn``: the first pages that have one are drawn small for their layout too
        (``Document.layout_image``), in the same child, since a page answered from its text is drawn for
        nothing else (``_layout_images`` draws the others, a few at a time)."""

        def read_all() -> tuple[list[TextLayer | None], dict[int, Image.Image]]:
            layers = [doc.text_layer(index, visible_only=visible_only) for index in indices]
            wanted = _with_layers(indices, layers) if drawn else []
            return layers, {index: doc.layout_image(index) for index in wanted}

        return run_isolated(read_all, what="reading the text layers") if self.isolate_pages else read_all()

    def _layout_images(self, doc: Document, wanted: list[int]) -> dict[int, Image.Image]:
        """Pages ``wanted`` drawn small for their layout, in one child."""

        def draw() -> dict[int, Image.Image]:
            return {index: doc.layout_image(index) for index in wanted}

        return run_isolated(draw, what="drawing pages for their layout") if self.isolate_pages else draw()

    def _read(self, read: Callable[[int], T], index: int) -> T:
        if not self.isolate_pages:
            return read(index)
        return run_isolated(read, index, what=f"page {index + 1}")

    def _ocr_page(
        self, doc: Document, index: int, number: int, options: dict, deadline: float | None, layout: bool = False
    ) -> tuple[PageResult, Image.Image, Future[Sight] | None]:
        """Draws the page (in a child), stands it upright and straightens it as the options ask, and reads it;
        the page read, the image it was read from (what its layout is found on) and, with ``layout``, what the
        layout's models see of that image, looked at while the engine read it.

        The geometry runs here, on the drawn image: it only reads pixels (with
        the orientation classifier this process loaded once, or tesseract's OSD
        in a subprocess), so a child would buy nothing.
        """
        geometry = _geometry_options(options)
        given = _image_dpi(options.get("image_dpi"))
        image = self._read(doc.page, index)
        an_image = image.info.get("dpi_source") in (None, resolution.STATED)  # not a drawn PDF page
        read_at = _resolution(image, given)
        if geometry.rotate_pages or geometry.deskew:
            # Imported when asked for: OpenCV weighs tens of megabytes in every process that loads it.
            from documents.geometry import correct

            page = correct(
                image,
                rotate_pages=geometry.rotate_pages,
                deskew=geometry.deskew,
                threshold=geometry.threshold,
                deadline=deadline,
                orientation_method=geometry.orientation,
            )
            image = page.image
            rotation, skew, orientation_by = page.rotation, page.skew, page.orientation_by
        else:
            rotation, skew, orientation_by = 0, 0.0, None
        # The engine's hint (Tesseract's --dpi) is what says how large the type is, and only an image's own
        # resolution, or one given for it, says that: a PDF page's drawing resolution does not (a slide of a
        # page drawn at 2400 dpi holds type a third its size), and told it, Tesseract takes the dots on the
        # i and the commas for specks and drops them.  Left to itself, it measures the type.
        if read_at is not None and an_image:
            image.info["dpi"] = (read_at.dpi, read_at.dpi)
        else:
            image.info.pop("dpi", None)
        sight = None
        if layout:
            from documents.layout import look_ahead  # as analyse: the models load with the first page laid out

            sight = look_ahead(image, width=image.width, height=image.height)
        try:
            result = self.recognise(number, image, options, deadline)
        except BaseException:
            _settle(sight)
            raise
        if read_at is None:
            # An image that states no resolution: its text says what it is (the engine has read it already).
            read_at = resolution.estimate_image_dpi(
                image.width, image.height, _line_heights(result), self.line_height_points
            )
        read = replace(
            result,
            source=OCR,
            width=image.width,
            height=image.height,
            rotation=rotation,
            skew=skew,
            orientation_by=orientation_by,
            dpi=read_at.dpi,
            dpi_source=read_at.source,
        )
        return read, image, sight

    @abstractmethod
    def recognise(self, page: int, image: Image.Image, options: dict, deadline: float | None) -> PageResult:
        """Recognise one rendered page (RGB or L); ``deadline`` is a ``time.monotonic()`` value."""


#: How many born-digital pages are drawn for their layout at once, in one child: a fork spared for each page,
#: and a bounded number of drawings (about 1.5 MB each) held at a time, whatever the document's length.
LAYOUT_DRAWINGS_AT_ONCE = 8


def _with_layers(indices: Sequence[int], layers: Sequence[TextLayer | None]) -> list[int]:
    """The next pages of ``indices`` that have a text layer, as many as are drawn for their layout at once."""
    return [index for index, layer in zip(indices, layers, strict=True) if layer is not None][:LAYOUT_DRAWINGS_AT_ONCE]


def _from_text_layer(number: int, layer: TextLayer) -> PageResult:
    lines = [
        Line(line.text, 1.0, line.bbox, tuple(Word(word.text, 1.0, word.bbox) for word in line.words))
        for line in layer.lines
    ]
    return PageResult(
        number, layer.text, lines, TEXT_LAYER, layer.width, layer.height, dpi=layer.dpi, dpi_source=layer.dpi_source
    )


def laid_out(
    page: PageResult,
    image: Image.Image,
    known_words: set[str],
    deadline: float | None,
    styles: tuple[Sequence[float | None], Sequence[bool | None]] | None = None,
    *,
    sight: Future[Sight] | None = None,
) -> PageResult:
    """``page`` with its layout (``documents.layout.analyse`` on ``image``): its lines in reading order, its
    blocks, its body as its text; or, when the layout fails, as it was with ``layout_error``.

    ``known_words`` (lower case) gains this page's words first: a word hyphenated across two of its lines is
    joined back when this page, an earlier one or the dictionary has it whole.  ``styles``: the font size and
    boldness of each line, for a page whose lines came from its text layer.  ``sight``: what the models saw of
    ``image`` while the engine read it (``documents.layout.look_ahead``); without it they look now.
    """
    known_words.update(_plain_words(page.lines))
    if not page.lines:
        _settle(sight)
        return replace(page, blocks=())
    if deadline is not None and time.monotonic() >= deadline:
        _settle(sight)
        raise AdapterError(f"ran out of time before the layout of page {page.page}", code=ErrorCode.ENGINE_TIMEOUT)
    # Imported with the first page laid out: ONNX Runtime and the models weigh on every process that loads them.
    from documents.layout import analyse

    font_sizes, bold = styles if styles is not None else (None, None)
    try:
        layout = analyse(
            image,
            page.lines,
            width=page.width,
            height=page.height,
            dpi=page.dpi,
            font_sizes=font_sizes,
            bold=bold,
            known_words=frozenset(known_words),
            sight=sight.result() if sight is not None else None,
        )
        lines = [_piece(page.lines[piece.line], piece.words) for piece in layout.pieces]
        blocks = tuple(block.to_dict() for block in layout.blocks)
    except SoftTimeLimitExceeded:  # the job's time is up: that ends the job, not the layout alone
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the models do, the page keeps what OCR read
        log.warning("the layout of page %s failed; the page keeps its plain lines", page.page, exc_info=True)
        return replace(page, layout_error=f"{type(exc).__name__}: {exc}"[:LAYOUT_ERROR_CHARS])
    return replace(page, lines=lines, blocks=blocks, text=body_text(blocks))


def _settle(sight: Future[Sight] | None) -> None:
    """The models' look at a page whose layout will not be made, ended before the page is left: the look must
    not run on while this process forks to draw the next page (a child of a process whose other thread holds
    a lock inside ONNX Runtime can wait on it forever), nor beside the next page's look."""
    if sight is not None and not sight.cancel():
        wait([sight])


def _piece(line: Line, words: Sequence[int] | None) -> Line:
    """The line, or the part of it made of its words ``words`` (a line the layout's regions cut in two)."""
    if words is None:
        return line
    read = [word for word in line.words if word.text.strip()]  # as the layout numbers them
    kept = tuple(read[number] for number in words)
    if not kept:
        raise ValueError("the layout gave a piece of a line without words")
    return replace(
        line,
        text=" ".join(word.text for word in kept),
        confidence=sum(word.confidence for word in kept) / len(kept),
        bbox=union_bbox([word.bbox for word in kept]),
        words=kept,
    )


def _plain_words(lines: Sequence[Line]) -> set[str]:
    """The lines' words in lower case, without the punctuation round them."""
    found = set()
    for line in lines:
        for word in line.text.split():
            plain = word.strip(".,;:!?\"'()[]{}<>«»“”‘’-–—").lower()
            if plain:
                found.add(plain)
    return found


def _switch(options: dict, name: str) -> bool:
    value = options.get(name, False)
    if not isinstance(value, bool):
        raise AdapterError(f"options.{name} must be true or false", code=ErrorCode.INVALID_OPTIONS)
    return value


def _resolution(image: Image.Image, given: float | None) -> resolution.Resolution | None:
    """The resolution a drawn page says it was drawn at, or ``given`` for an image document; None: unknown yet.

    ``options.image_dpi`` is for images, as OCRmyPDF's ``--image-dpi``: a PDF page's resolution is its own.
    """
    source = image.info.get("dpi_source")
    dpi = image.info.get("dpi")
    if source not in (None, resolution.STATED) and dpi:
        return resolution.Resolution(float(dpi[0]), source)
    if given is not None:
        return resolution.Resolution(given, resolution.OPTION)
    if source == resolution.STATED and dpi:
        return resolution.Resolution(round(float(dpi[0]), 2), resolution.STATED)
    return None


def _line_heights(result: PageResult) -> list[float]:
    """The heights of the page's lines of a few words: what ``documents.resolution`` estimates from."""
    heights = []
    for line in result.lines:
        if len(line.words) >= resolution.MIN_WORDS_A_LINE or len(line.text.split()) >= resolution.MIN_WORDS_A_LINE:
            heights.append(float(line.bbox[3] - line.bbox[1]))
    return heights


def with_visible_text(page: PageResult, layer: TextLayer) -> PageResult:
    """The OCRed ``page`` with the page's own visible text (``layer``, as drawn at the page's rendering) in it,
    and without the OCR words that lie on that text: the same words, read a second time.

    The layer's boxes are carried into the pixels of the page as OCR read it (turned, straightened).  The
    engine's lines keep the engine's reading order (a second column after the first), and the page's own
    lines go in among them by their tops, each before the first engine line that starts below it.
    """
    own = in_frame(layer, page.width, page.height, page.rotation, page.skew)
    taken = OwnWords.of(own)
    visible = sorted(
        (
            Line(line.text, 1.0, line.bbox, tuple(Word(word.text, 1.0, word.bbox) for word in line.words), TEXT_LAYER)
            for line in own.lines
        ),
        key=lambda line: (line.bbox[1], line.bbox[0]),
    )
    read = [line for line in (_not_on_visible(line, taken) for line in page.lines) if line is not None]
    lines: list[Line] = []
    for line in read:
        while visible and visible[0].bbox[1] < line.bbox[1]:
            lines.append(visible.pop(0))
        lines.append(line)
    lines.extend(visible)
    return replace(page, text="\n".join(line.text for line in lines), lines=lines)


def _not_on_visible(line: Line, taken: OwnWords) -> Line | None:
    """The OCR line without its words on the page's visible text; None when nothing is left of it."""
    if not line.words:
        return None if taken.cover(line.bbox) else line
    words = tuple(word for word in line.words if not taken.cover(word.bbox))
    if words == line.words:
        return line
    if not words:
        return None
    text = " ".join(word.text for word in words)
    confidence = sum(word.confidence for word in words) / len(words)
    return replace(line, text=text, confidence=confidence, bbox=union_bbox([w.bbox for w in words]), words=words)


@dataclass(frozen=True)
class GeometryOptions:
    rotate_pages: bool
    deskew: bool
    threshold: float
    orientation: str = DEFAULT_ORIENTATION


def _geometry_options(options: dict) -> GeometryOptions:
    """OCRmyPDF's ``rotate_pages``, ``rotate_pages_threshold`` and ``deskew``, and ``orientation``, checked."""
    switches = {}
    for name in ("rotate_pages", "deskew"):
        value = options.get(name, False)
        if not isinstance(value, bool):
            raise AdapterError(f"options.{name} must be true or false", code=ErrorCode.INVALID_OPTIONS)
        switches[name] = value
    threshold = options.get("rotate_pages_threshold", DEFAULT_ROTATE_PAGES_THRESHOLD)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1000:
        raise AdapterError(
            "options.rotate_pages_threshold must be a number from 0 to 1000", code=ErrorCode.INVALID_OPTIONS
        )
    orientation = options.get("orientation", DEFAULT_ORIENTATION)
    if orientation not in ORIENTATION_METHODS:
        raise AdapterError(
            f"options.orientation must be one of {', '.join(ORIENTATION_METHODS)}", code=ErrorCode.INVALID_OPTIONS
        )
    return GeometryOptions(switches["rotate_pages"], switches["deskew"], float(threshold), orientation)


def _image_dpi(value: Any) -> float | None:
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not MIN_IMAGE_DPI_OPTION <= value <= MAX_IMAGE_DPI_OPTION
    ):
        raise AdapterError(
            f"options.image_dpi must be a number from {MIN_IMAGE_DPI_OPTION} to {MAX_IMAGE_DPI_OPTION}",
            code=ErrorCode.INVALID_OPTIONS,
        )
    return float(value)


def _deadline(timeout_s: Any) -> float | None:
    if timeout_s is None:
        return None
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < math.inf:
        raise AdapterError("options.timeout_s must be a positive number", code=ErrorCode.INVALID_OPTIONS)
    return time.monotonic() + float(timeout_s)


def _text_layer(choice: Any) -> str:
    if choice not in TEXT_LAYER_CHOICES:
        raise AdapterError(
            f"options.text_layer must be one of {', '.join(TEXT_LAYER_CHOICES)}", code=ErrorCode.INVALID_OPTIONS
        )
    return choice


def _first_page(number: Any) -> int:
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise AdapterError("options.first_page must be an integer >= 1", code=ErrorCode.INVALID_OPTIONS)
    return number


def union_bbox(boxes: list[tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def page_indices(pages: tuple[int, int] | None, page_count: int) -> range:
    """The 0-based indices of the pages to read: all, or ``pages`` (first and last, 1-based) of ``page_count``."""
    if pages is None:
        return range(page_count)
    first, last = pages
    if not 1 <= first <= last <= page_count:
        raise InvalidDocument(f"pages {first} to {last} are not pages of this {page_count}-page document")
    return range(first - 1, last)
