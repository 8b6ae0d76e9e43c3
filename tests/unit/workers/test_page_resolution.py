"""The resolution each result page records, and the one the engine is told: a PDF page's, an image's own,
options.image_dpi, or an estimate from the text the engine read."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from jobs.contract import ErrorCode
from jobs.errors import AdapterError
from tests.pdfs import pdf
from tests.scans import scanned_pdf
from workers.adapters.base import Line, PageAdapter, PageResult, Word
from workers.adapters.paddleocr import PaddleOcrAdapter


class LinesEngine(PageAdapter):
    """Reads every page as 20 lines of three words, each line ``line_height`` pixels high; records the dpi hint."""

    name = "lines"
    isolate_pages = False

    def __init__(self, line_height: int = 0):
        self.line_height = line_height
        self.told: list[object] = []

    def recognise(self, page, image, options, deadline):
        self.told.append(image.info.get("dpi"))
        lines = []
        for row in range(20 if self.line_height else 0):
            top = 10 + row * 2 * self.line_height
            box = (10, top, 300, top + self.line_height)
            words = tuple(Word(text, 0.9, box) for text in ("three", "words", "here"))
            lines.append(Line("three words here", 0.9, box, words))
        return PageResult(page, "", lines)


def png(size: tuple[int, int], **params) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", size, 255).save(buffer, "PNG", **params)
    return buffer.getvalue()


LETTER_AT_300 = (2550, 3300)


def test_an_image_without_a_resolution_is_read_without_a_hint_and_its_text_says_it():
    engine = LinesEngine(line_height=40)  # 9.6 pt lines at 300 dpi

    page = engine.run(png(LETTER_AT_300), "image/png", {}).pages[0]

    assert engine.told == [None]  # the engine estimates its own
    assert (page.dpi, page.dpi_source) == (300, "estimated")
    assert {"dpi": 300, "dpi_source": "estimated"}.items() <= _page_dict(engine, png(LETTER_AT_300)).items()


def test_image_dpi_is_used_as_given_and_told_to_the_engine():
    engine = LinesEngine(line_height=40)

    page = engine.run(png(LETTER_AT_300), "image/png", {"image_dpi": 150}).pages[0]

    assert engine.told == [(150.0, 150.0)]
    assert (page.dpi, page.dpi_source) == (150, "option")


def test_a_stated_resolution_is_used_as_it_is_and_image_dpi_overrides_it():
    stated = png(LETTER_AT_300, dpi=(240, 240))

    assert _read(stated, {}) == (240, "stated")
    assert _read(stated, {"image_dpi": 300}) == (300, "option")
    engine = LinesEngine(line_height=40)
    engine.run(stated, "image/png", {})
    assert engine.told == [(240, 240)]


def test_a_pdf_pages_drawing_resolution_is_not_told_to_the_engine_which_measures_the_type_itself():
    engine = LinesEngine(line_height=40)

    page = engine.run(scanned_pdf([0]), "application/pdf", {}).pages[0]

    assert (page.dpi, page.dpi_source) == (200, "content")
    assert engine.told == [None]


def test_image_dpi_leaves_a_pdf_pages_resolution_its_own():
    assert _read(scanned_pdf([0]), {"image_dpi": 600}, "application/pdf") == (200, "content")
    assert _read(pdf([("text", "born digital")]), {}, "application/pdf") == (300, "vector")


@pytest.mark.parametrize("value", [0, -1, 49, 4801, True, "300", float("nan")])
def test_a_bad_image_dpi_is_invalid_options(value):
    with pytest.raises(AdapterError) as raised:
        LinesEngine().run(png((100, 100)), "image/png", {"image_dpi": value})

    assert raised.value.code == ErrorCode.INVALID_OPTIONS


def _read(document: bytes, options: dict, content_type: str = "image/png") -> tuple[float, str]:
    page = LinesEngine(line_height=40).run(document, content_type, options).pages[0]
    return page.dpi, page.dpi_source


def _page_dict(engine: LinesEngine, document: bytes) -> dict:
    return engine.run(document, "image/png", {}).to_dict()["pages"][0]


def test_an_engine_with_taller_line_boxes_says_how_tall_and_estimates_the_same():
    class TallBoxes(LinesEngine):
        line_height_points = 11.8  # PP-OCRv4's

    page = TallBoxes(line_height=49).run(png(LETTER_AT_300), "image/png", {}).pages[0]  # 11.8 pt at 300 dpi

    assert (page.dpi, page.dpi_source) == (300, "estimated")
    assert PaddleOcrAdapter.line_height_points > LinesEngine.line_height_points
