"""options.layout in the page adapters: each page read goes through documents.layout.analyse, with the image
its engine read (or, for a page answered from its text layer, the page drawn small and its lines' fonts), and
comes back with its lines in the layout's order, its blocks and its body as its text; a layout that fails
leaves the page as read, with layout_error, and the job goes on.

The layout here is a stand-in with a known answer, so that what the adapter does with any answer is seen;
the real models are run on real pages in tests/unit/documents and tests/integration/test_layout.py."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from billiard.exceptions import SoftTimeLimitExceeded

import documents.layout
from documents.layout import PageLayout, Piece
from documents.structure import Block, Cell, Table
from jobs.contract import ErrorCode
from jobs.errors import AdapterError
from tests.pdfs import pdf
from tests.unit.workers.pages import HELLO_PNG
from workers.adapters import base
from workers.adapters.base import Line, PageAdapter, PageResult, Word

TABLE = Table(1, 2, (Cell(0, 0, 1, 1, (0, 0, 5, 5), "a"), Cell(0, 1, 1, 1, (5, 0, 9, 5), "b")), "<table></table>")


def line(text: str, top: int) -> Line:
    words, x = [], 10
    for number, word in enumerate(text.split()):
        words.append(Word(word, 0.5 + number / 10, (x, top, x + 10 * len(word), top + 20)))
        x += 10 * len(word) + 10
    return Line(text, 0.6, base.union_bbox([w.bbox for w in words]), tuple(words))


class Reader(PageAdapter):
    """Reads every page as the same three lines, in the engine's order; records the images it read."""

    name = "reader"
    isolate_pages = False

    def __init__(self, lines=None):
        self.lines = (
            lines if lines is not None else [line("Page 7", 500), line("Results Table a b", 10), line("Body", 40)]
        )
        self.images: list[Any] = []

    def recognise(self, page, image, options, deadline):
        self.images.append(image)
        return PageResult(page, "engine text", list(self.lines))


SIGHT = documents.layout.Sight([], [])


@dataclass
class StandIn:
    """documents.layout.analyse, answering a known layout and recording what it was given."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    failure: BaseException | None = None

    def __call__(self, image, lines, **given):
        self.calls.append({"image": image, "lines": list(lines), **given})
        if self.failure is not None:
            raise self.failure
        # "Results Table a b" is cut in two: its first two words a heading, the rest a table.
        pieces = [Piece(1, (0, 1)), Piece(1, (2, 3)), Piece(2), Piece(0)]
        blocks = [
            Block(0, "section_header", (10, 10, 140, 30), (0,), "Results Table", level=2),
            Block(1, "table", (150, 10, 200, 30), (1,), "a\tb", table=TABLE),
            Block(2, "text", (10, 40, 50, 60), (2,), "Body"),
            Block(3, "page_footer", (10, 500, 70, 520), (3,), "Page 7"),
        ]
        return PageLayout(pieces, blocks)


@pytest.fixture
def stand_in(monkeypatch) -> StandIn:
    layout = StandIn()
    monkeypatch.setattr(documents.layout, "analyse", layout)
    monkeypatch.setattr(documents.layout, "look", lambda image, **_: SIGHT)  # the models are the stand-in's
    return layout


def test_layout_off_leaves_pages_as_the_engine_read_them(stand_in):
    result = Reader().run(HELLO_PNG, "image/png", {})

    assert stand_in.calls == []
    page = result.to_dict()["pages"][0]
    assert "blocks" not in page and "layout_error" not in page and "tables" not in result.to_dict()
    assert [line["text"] for line in page["lines"]] == ["Page 7", "Results Table a b", "Body"]


def test_a_page_laid_out_has_its_lines_in_reading_order_its_blocks_and_its_body_as_text(stand_in):
    reader = Reader()

    result = reader.run(HELLO_PNG, "image/png", {"layout": True}).to_dict()

    (page,) = result["pages"]
    assert [line["text"] for line in page["lines"]] == ["Results Table", "a b", "Body", "Page 7"]
    heading = page["lines"][0]
    # A piece of a line is its words: their text, their mean confidence, the union of their boxes.
    assert heading["confidence"] == pytest.approx((0.5 + 0.6) / 2)
    assert heading["bbox"] == [10, 10, 140, 30]
    assert [word["text"] for word in heading["words"]] == ["Results", "Table"]
    assert [block["type"] for block in page["blocks"]] == ["section_header", "table", "text", "page_footer"]
    assert page["blocks"][1]["table"]["cells"][1] == {
        "row": 0, "col": 1, "row_span": 1, "col_span": 1, "bbox": [5, 0, 9, 5], "text": "b"
    }  # fmt: skip
    # The body, without the page's footer; the result's text is its pages'.
    assert page["text"] == "Results Table\n\na\tb\n\nBody"
    assert result["text"] == page["text"]
    assert result["tables"] == [{"number": 1, "page": 1, "block": 1, "rows": 1, "cols": 2, "caption": None}]
    assert "layout_error" not in page


def test_the_layout_is_given_the_image_the_engine_read_and_the_pages_frame(stand_in):
    reader = Reader()

    reader.run(HELLO_PNG, "image/png", {"layout": True, "image_dpi": 150})

    (call,) = stand_in.calls
    assert call["image"] is reader.images[0]
    assert (call["width"], call["height"]) == reader.images[0].size
    assert call["dpi"] == 150
    assert [line.text for line in call["lines"]] == ["Page 7", "Results Table a b", "Body"]
    assert call["font_sizes"] is None and call["bold"] is None


def test_the_words_known_to_the_layout_are_those_of_this_page_and_the_pages_before(stand_in):
    pages = [[line("Infor-", 10), line("mation (first)", 40)], [line("Second, page", 10)]]

    class TwoPages(Reader):
        def recognise(self, page, image, options, deadline):
            return PageResult(page, "", pages[page - 1])

    stand_in.failure = ValueError("no answer needed")
    TwoPages().run(pdf([("image", "ONE"), ("image", "TWO")]), "application/pdf", {"layout": True})

    assert [call["known_words"] for call in stand_in.calls] == [
        frozenset({"infor", "mation", "first"}),
        frozenset({"infor", "mation", "first", "second", "page"}),
    ]


def test_a_layout_that_fails_leaves_the_page_as_read_with_layout_error_and_the_job_goes_on(stand_in, caplog):
    stand_in.failure = RuntimeError("[ONNXRuntimeError] : 7 : INVALID_PROTOBUF : " + "x" * 1000)

    result = Reader().run(pdf([("image", "ONE"), ("image", "TWO")]), "application/pdf", {"layout": True}).to_dict()

    assert len(stand_in.calls) == 2
    for page in result["pages"]:
        assert page["layout_error"].startswith("RuntimeError: [ONNXRuntimeError] : 7 : INVALID_PROTOBUF")
        assert len(page["layout_error"]) == base.LAYOUT_ERROR_CHARS
        assert "blocks" not in page
        assert [line["text"] for line in page["lines"]] == ["Page 7", "Results Table a b", "Body"]
        assert page["text"] == "engine text"
    assert "tables" not in result  # no page has blocks
    assert "the layout of page 1 failed" in caplog.text


def test_a_layout_that_breaks_its_own_contract_fails_its_page_only(stand_in, monkeypatch):
    monkeypatch.setattr(documents.layout, "analyse", lambda image, lines, **_: PageLayout([Piece(9)], []))

    (page,) = Reader().run(HELLO_PNG, "image/png", {"layout": True}).to_dict()["pages"]

    assert page["layout_error"].startswith("IndexError")
    assert len(page["lines"]) == 3


def test_the_jobs_time_limit_is_not_taken_for_a_layout_failure(stand_in):
    stand_in.failure = SoftTimeLimitExceeded()

    with pytest.raises(SoftTimeLimitExceeded):
        Reader().run(HELLO_PNG, "image/png", {"layout": True})


def test_a_page_without_lines_has_no_blocks_and_no_error(stand_in):
    (page,) = Reader(lines=[]).run(HELLO_PNG, "image/png", {"layout": True}).to_dict()["pages"]

    assert stand_in.calls == []
    assert page["blocks"] == [] and "layout_error" not in page


def test_the_deadline_is_checked_before_the_layout(stand_in, monkeypatch):
    clock = [1000.0]
    monkeypatch.setattr(base.time, "monotonic", lambda: clock[0])

    class Slow(Reader):
        def recognise(self, page, image, options, deadline):
            clock[0] += 31  # the page's OCR took the rest of the job's time
            return super().recognise(page, image, options, deadline)

    with pytest.raises(AdapterError) as failed:
        Slow().run(HELLO_PNG, "image/png", {"layout": True, "timeout_s": 30})

    assert failed.value.code == ErrorCode.ENGINE_TIMEOUT
    assert "before the layout of page 1" in str(failed.value)
    assert stand_in.calls == []


@pytest.mark.parametrize("value", ["yes", 1])
def test_a_layout_option_that_is_not_a_boolean_is_refused(value):
    with pytest.raises(AdapterError) as refused:
        Reader().run(HELLO_PNG, "image/png", {"layout": value})

    assert refused.value.code == ErrorCode.INVALID_OPTIONS


def test_a_born_digital_page_is_laid_out_from_its_text_layer_drawn_small_with_its_fonts_and_no_ocr(stand_in):
    document = pdf([("text", "Heading line"), ("image", "IMAGE TWO")])
    reader = Reader()
    stand_in.failure = ValueError("no answer needed")

    result = reader.run(document, "application/pdf", {"layout": True, "text_layer": "prefer"})

    first, second = stand_in.calls
    assert len(reader.images) == 1  # the image page only: no OCR of the text page
    page = result.pages[0]
    assert page.source == "text_layer"
    assert [line.text for line in first["lines"]] == ["Heading line"]
    assert first["font_sizes"] == [24.0] and first["bold"] == [False]  # tests.pdfs' text: Helvetica, 24 pt
    # Drawn to cover the model's 608x800 input, while the lines are in the pixels of the page drawn at 300 dpi.
    assert (page.width, page.height, page.dpi) == (first["width"], first["height"], first["dpi"]) == (2550, 3300, 300)
    assert first["image"].size == (619, 800)
    # The image page is read by the engine, and laid out on the image it read.
    assert second["image"] is reader.images[0] and second["font_sizes"] is None


def test_a_redo_page_is_laid_out_on_its_own_text_and_ocrs_together(stand_in):
    document = pdf([("text", "Own visible words")])

    class Beside(Reader):
        def recognise(self, page, image, options, deadline):
            return PageResult(page, "", [line("Read beside", 2000)])

    stand_in.failure = ValueError("no answer needed")
    Beside().run(document, "application/pdf", {"layout": True, "text_layer": "redo"})

    (call,) = stand_in.calls
    assert sorted(line.text for line in call["lines"]) == ["Own visible words", "Read beside"]


def test_a_born_digital_pages_small_drawing_comes_from_the_one_child_that_reads_the_text_layers(stand_in, monkeypatch):
    children = []
    isolated = base.run_isolated

    def counted(function, *args, what):
        children.append(what)
        return isolated(function, *args, what=what)

    monkeypatch.setattr(base, "run_isolated", counted)
    reader = Reader()
    reader.isolate_pages = True
    stand_in.failure = ValueError("no answer needed")

    reader.run(pdf([("text", "one"), ("image", "TWO")]), "application/pdf", {"layout": True, "text_layer": "prefer"})

    assert children == ["reading the text layers", "page 2"]
    assert stand_in.calls[0]["image"].size == (619, 800)


def test_an_ocr_pages_layout_is_given_what_the_models_saw_while_the_engine_read_it(stand_in):
    Reader().run(HELLO_PNG, "image/png", {"layout": True})

    (call,) = stand_in.calls
    assert call["sight"] is SIGHT


def test_a_long_born_digital_documents_pages_are_drawn_for_their_layout_a_few_at_a_time(stand_in, monkeypatch):
    children = []
    isolated = base.run_isolated

    def counted(function, *args, what):
        children.append(what)
        return isolated(function, *args, what=what)

    monkeypatch.setattr(base, "run_isolated", counted)
    monkeypatch.setattr(base, "LAYOUT_DRAWINGS_AT_ONCE", 4)
    reader = Reader()
    reader.isolate_pages = True

    result = reader.run(
        pdf([("text", f"page {n}") for n in range(1, 11)]), "application/pdf", {"layout": True, "text_layer": "prefer"}
    )

    # The first four drawn with the text layers, then four, then the last two: never all ten held at once.
    assert children == ["reading the text layers", "drawing pages for their layout", "drawing pages for their layout"]
    assert len(stand_in.calls) == len(result.pages) == 10


def test_the_models_look_is_over_before_a_page_whose_reading_failed_is_left(stand_in, monkeypatch):
    started, looked = threading.Event(), threading.Event()
    release = threading.Event()

    def slow_look(image, **_):
        started.set()
        release.wait(timeout=10)
        looked.set()
        return SIGHT

    class Failing(Reader):
        def recognise(self, page, image, options, deadline):
            threading.Timer(0.2, release.set).start()
            raise AdapterError("the engine failed", code=ErrorCode.ENGINE_UNAVAILABLE)

    monkeypatch.setattr(documents.layout, "look", slow_look)

    with pytest.raises(AdapterError):
        Failing().run(HELLO_PNG, "image/png", {"layout": True})

    # No thread of the models runs on while the process forks for its next page: the look was called off
    # before it began, or it has ended.
    assert looked.is_set() or not started.is_set()
