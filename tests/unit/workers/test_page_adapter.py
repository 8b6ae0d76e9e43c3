"""What every page engine shares: text layers preferred over OCR, page numbers in the whole document."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from jobs.errors import AdapterError, InvalidDocument
from tests.ocr_layers import LEGEND, earlier_ocr_pdf, legend_box
from tests.pdfs import pdf
from tests.scans import scanned_pages, scanned_pdf
from tests.unit.workers.pages import HELLO_PNG, Progress
from workers.adapters.base import Line, PageAdapter, PageResult, Word

MIXED = pdf([("text", "Text page one"), ("image", "IMAGE TWO"), ("text", "Text page three"), ("image", "IMAGE FOUR")])


class RecordingEngine(PageAdapter):
    """Answers each page it is asked to read with ``ocr <page>``; records which it read."""

    name = "recording"

    def __init__(self):
        self.read: list[tuple[int, tuple[int, int]]] = []

    def recognise(self, page, image, options, deadline):
        self.read.append((page, image.size))
        return PageResult(page, f"ocr {page}", [Line(f"ocr {page}", 0.5, (1, 2, 3, 4))])


def test_prefer_answers_text_pages_from_their_text_and_ocrs_the_others():
    engine = RecordingEngine()

    result = engine.run(MIXED, "application/pdf", {"text_layer": "prefer", "rotate_pages": True, "deskew": True})

    assert [p.source for p in result.pages] == ["text_layer", "ocr", "text_layer", "ocr"]
    assert [p.text for p in result.pages] == ["Text page one", "ocr 2", "Text page three", "ocr 4"]
    assert [page for page, _ in engine.read] == [2, 4]
    text_page = result.pages[0]
    assert [(line.text, line.confidence) for line in text_page.lines] == [("Text page one", 1.0)]
    # Both kinds say which pixels their boxes are in: the page as it would be drawn (text only: at 300 dpi).
    assert (text_page.width, text_page.height) == (2550, 3300)
    assert (text_page.dpi, text_page.dpi_source) == (300, "vector")
    assert (result.pages[1].width, result.pages[1].height) == engine.read[0][1]
    assert result.to_dict()["pages"][0]["source"] == "text_layer"
    # A text page's words come from its characters, as sure as its lines; it is never turned or straightened.
    assert [(w.text, w.confidence) for w in text_page.lines[0].words] == [("Text", 1.0), ("page", 1.0), ("one", 1.0)]
    assert [(p.rotation, p.skew) for p in result.pages] == [(0, 0.0)] * 4
    assert [p.orientation_by for p in result.pages][::2] == [None, None]  # nobody asked which way up text stands


def test_a_page_is_stood_upright_and_straightened_before_the_engine_reads_it():
    upright = scanned_pages([5])[0]
    document = scanned_pdf([5], turned={5: 90}, skewed={5: 2.6})
    engine = RecordingEngine()

    result = engine.run(document, "application/pdf", {"rotate_pages": True, "deskew": True})

    (page,) = result.pages
    with Image.open(io.BytesIO(upright.jpeg)) as image:
        upright_size = image.size
    # Fed a quarter turn clockwise: three more quarters clockwise stand it up; then it is turned back 2.6°.
    assert (page.rotation, page.source, page.orientation_by) == (270, "ocr", "classifier")
    assert page.skew == pytest.approx(-2.6, abs=0.3)
    [(number, read_size)] = engine.read
    # Drawn from the PDF page, the scan may gain a pixel: the page's size in points is rounded up.
    assert number == 1 and read_size == pytest.approx(upright_size, abs=1)
    assert (page.width, page.height) == read_size
    assert result.to_dict()["pages"][0]["rotation"] == 270
    assert result.to_dict()["pages"][0]["orientation_by"] == "classifier"


def test_pages_are_read_as_they_are_unless_the_options_ask():
    engine = RecordingEngine()

    (page,) = engine.run(scanned_pdf([5], turned={5: 90}, skewed={5: 2.6}), "application/pdf", {}).pages

    assert (page.rotation, page.skew) == (0, 0.0)
    assert engine.read[0][1][0] > engine.read[0][1][1]  # still lying on its side


def test_ignore_is_the_default_and_ocrs_every_page():
    for options in ({}, {"text_layer": "ignore"}):
        engine = RecordingEngine()

        result = engine.run(MIXED, "application/pdf", options)

        assert [p.source for p in result.pages] == ["ocr"] * 4
        assert [page for page, _ in engine.read] == [1, 2, 3, 4]


class LegendReader(PageAdapter):
    """Reads the legend's words where the page prints them, and a line of its own where the page has no text."""

    name = "legend-reader"

    def recognise(self, page, image, options, deadline):
        x0, y0, x1, y1 = legend_box(*image.size)
        third = (x1 - x0) // 3
        on_legend = [Word("Archived", 0.8, (x0, y0, x0 + third, y1)), Word("QUOKKA", 0.7, (x1 - third, y0, x1, y1))]
        elsewhere = (Word("scanned", 0.9, (200, 300, 400, 340)), Word("words", 0.9, (420, 300, 560, 340)))
        lines = [
            Line("scanned words", 0.9, (200, 300, 560, 340), elsewhere),
            Line("Archived QUOKKA", 0.75, (x0, y0, x1, y1), tuple(on_legend)),
            Line("also here", 0.9, (200, 400, 560, 440)),  # a line without words, on no visible text
        ]
        return PageResult(page, "\n".join(line.text for line in lines), lines)


def test_redo_answers_a_page_with_its_visible_text_and_the_ocr_of_the_rest_never_the_same_words_twice():
    document = earlier_ocr_pdf([0])

    result = LegendReader().run(document, "application/pdf", {"text_layer": "redo"})

    (page,) = result.pages
    assert page.source == "ocr"
    # The legend is the page's own visible text, as the PDF has it; the old invisible layer is not.
    assert [(line.text, line.source) for line in page.lines] == [
        ("scanned words", None),
        ("also here", None),
        (LEGEND, "text_layer"),
    ]
    assert page.text == f"scanned words\nalso here\n{LEGEND}"
    legend_line = page.lines[-1]
    assert [word.text for word in legend_line.words] == LEGEND.split() and legend_line.confidence == 1.0
    x0, y0, x1, y1 = legend_box(page.width, page.height)
    assert abs(legend_line.bbox[0] - x0) < 10 and abs(legend_line.bbox[3] - y1) < 20
    lines = result.to_dict()["pages"][0]["lines"]
    assert [line.get("source") for line in lines] == [None, None, "text_layer"]


def test_redo_ocrs_every_page_and_keeps_a_text_pages_visible_text_beside_what_ocr_read_elsewhere():
    engine = RecordingEngine()

    result = engine.run(MIXED, "application/pdf", {"text_layer": "redo"})

    assert [p.source for p in result.pages] == ["ocr"] * 4
    assert [page for page, _ in engine.read] == [1, 2, 3, 4]
    # A text page's visible text is its own; the engine's box (1, 2, 3, 4) lies on none of it.
    assert [line.text for line in result.pages[0].lines] == ["ocr 1", "Text page one"]
    assert [line.text for line in result.pages[1].lines] == ["ocr 2"]


class TwoColumnReader(PageAdapter):
    """Reads a two-column page as Tesseract does: the left column top to bottom, then the right one."""

    name = "two-columns"

    def recognise(self, page, image, options, deadline):
        lines = [
            Line("left top", 0.9, (100, 1000, 700, 1040)),
            Line("left bottom", 0.9, (100, 1500, 700, 1540)),
            Line("right top", 0.9, (900, 1000, 1500, 1040)),
        ]
        return PageResult(page, "\n".join(line.text for line in lines), lines)


def test_redo_keeps_the_engines_reading_order_and_puts_the_pages_own_lines_in_among_them_by_their_tops():
    (page,) = TwoColumnReader().run(MIXED, "application/pdf", {"text_layer": "redo"}, pages=(1, 1)).pages

    # The page's own line (near the top) first, then the columns as the engine read them.
    assert [line.text for line in page.lines] == ["Text page one", "left top", "left bottom", "right top"]


def test_prefer_on_an_image_ocrs_it():
    engine = RecordingEngine()

    result = engine.run(HELLO_PNG, "image/png", {"text_layer": "prefer"})

    assert [(p.page, p.source, p.width, p.height) for p in result.pages] == [(1, "ocr", 900, 600)]


def test_first_page_numbers_the_pages_in_the_whole_document_and_progress_stays_local():
    engine, progress = RecordingEngine(), Progress()

    result = engine.run(MIXED, "application/pdf", {"first_page": 11, "text_layer": "prefer"}, progress)

    assert [p.page for p in result.pages] == [11, 12, 13, 14]
    assert [page for page, _ in engine.read] == [12, 14]
    assert progress == [(1, 4), (2, 4), (3, 4), (4, 4)]


@pytest.mark.parametrize(
    "options",
    [
        {"text_layer": "always"},
        {"text_layer": True},
        {"first_page": 0},
        {"first_page": "2"},
        {"first_page": True},
        {"rotate_pages": "yes"},
        {"deskew": 1},
        {"rotate_pages": True, "rotate_pages_threshold": -1},
        {"rotate_pages": True, "rotate_pages_threshold": True},
        {"rotate_pages": True, "orientation": "sideways"},
        {"rotate_pages": True, "orientation": None},
    ],
)
def test_bad_options_fail_the_job_once(options):
    with pytest.raises(AdapterError) as raised:
        RecordingEngine().run(MIXED, "application/pdf", options)

    assert raised.value.code == "invalid_options" and raised.value.transient is False


def test_a_page_range_reads_those_pages_only_numbered_from_first_page():
    engine = RecordingEngine()
    progress = []

    result = engine.run(MIXED, "application/pdf", {"text_layer": "prefer", "first_page": 2},
                        lambda done, total: progress.append((done, total)), pages=(2, 3))  # fmt: skip

    assert [(p.page, p.source, p.text) for p in result.pages] == [
        (2, "ocr", "ocr 2"),
        (3, "text_layer", "Text page three"),
    ]
    assert [page for page, _ in engine.read] == [2]
    assert progress == [(1, 2), (2, 2)]


@pytest.mark.parametrize("pages", [(0, 1), (3, 2), (4, 5)])
def test_a_page_range_outside_the_document_is_an_invalid_document(pages):
    with pytest.raises(InvalidDocument):
        RecordingEngine().run(MIXED, "application/pdf", {}, pages=pages)


def test_the_children_of_a_split_inspect_their_one_document_once_and_another_document_again(monkeypatch):
    import workers.adapters.base as base

    inspected: list[bytes] = []
    real_inspect = base.inspect

    def counted(document, *args):
        inspected.append(document)
        return real_inspect(document, *args)

    monkeypatch.setattr(base, "inspect", counted)
    engine = RecordingEngine()
    other = pdf([("image", "ANOTHER")])

    for first in (1, 2, 3):  # the group's document, as the runner keeps it: one object
        engine.run(MIXED, "application/pdf", {}, pages=(first, first))
    engine.run(other, "application/pdf", {})
    engine.run(MIXED, "application/pdf", {}, pages=(4, 4))  # only the last document is remembered: tried again

    assert [len(d) for d in inspected] == [len(MIXED), len(other), len(MIXED)]


def test_a_pdf_that_needs_a_password_fails_the_job_as_invalid_document_saying_to_decrypt_it():
    import pikepdf

    with pikepdf.open(io.BytesIO(MIXED)) as document:
        buffer = io.BytesIO()
        document.save(buffer, encryption=pikepdf.Encryption(user="user-secret", owner="owner-secret", R=6))

    with pytest.raises(InvalidDocument, match="remove the encryption first") as raised:
        RecordingEngine().run(buffer.getvalue(), "application/pdf", {})

    assert raised.value.code == "invalid_document" and raised.value.transient is False
