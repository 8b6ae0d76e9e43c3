"""PP-OCRv4 on ONNX Runtime, on pages drawn for the test."""

from __future__ import annotations

import io
import logging
import os
import re

import pytest
from PIL import Image

from jobs.config import InvalidSettings
from jobs.errors import AdapterError, EngineUnavailable
from tests.scans import scanned_pages
from tests.unit.workers.pages import HELLO_PNG, Progress, centre, draw, inside, png, source_lines, two_page_pdf
from workers.adapters.base import PageResult
from workers.adapters.paddleocr import PaddleOcrAdapter, engine_threads
from workers.adapters.paddleocr import _page_result as paddle_page

# --- PP-OCRv4 ----------------------------------------------------------------


@pytest.fixture(scope="module")
def paddle():
    return PaddleOcrAdapter(threads=1)


def test_paddle_reads_a_png(paddle):
    progress = Progress()

    result = paddle.run(HELLO_PNG, "image/png", {}, progress)

    # PP-OCRv4's recogniser tends to drop the spaces between capitals.
    text = result.text.upper().replace(" ", "")
    assert "HELLO" in text and "OCRGW" in text and "42" in text and "1234" in text
    assert progress == [(1, 1)]
    first = result.pages[0].lines[0]
    assert "HELLO" in first.text.upper()
    assert 0.5 < first.confidence <= 1.0
    x0, y0, x1, y1 = first.bbox
    assert 60 <= x0 < 120 and 100 <= y0 < 150 and 400 < x1 < 800 and y0 < y1 < 200


def test_paddle_reads_each_pdf_page_in_order(paddle):
    progress = Progress()

    result = paddle.run(two_page_pdf(), "application/pdf", {}, progress)

    assert [page.page for page in result.pages] == [1, 2]
    assert "FIRST" in result.pages[0].text.upper() and "111" in result.pages[0].text
    assert "SECOND" in result.pages[1].text.upper() and "222" in result.pages[1].text
    assert progress == [(1, 2), (2, 2)]


def test_paddle_joins_boxes_on_one_visual_line(paddle):
    image = draw([(60, 150, "Hello"), (520, 150, "ocrgw world 42"), (60, 350, "Second row")], size=(1100, 600))

    lines = paddle.run(png(image), "image/png", {}).pages[0].lines

    assert len(lines) == 2
    assert re.fullmatch(r"hello ocrgw ?world ?42", lines[0].text.lower())
    assert lines[0].bbox[0] < 100 and lines[0].bbox[2] > 850
    assert lines[1].text.lower().replace(" ", "") == "secondrow"


def test_paddle_blank_page_has_no_lines(paddle):
    result = paddle.run(png(Image.new("RGB", (600, 600), "white")), "image/png", {})

    assert result.pages == [PageResult(page=1, text="", lines=[], width=600, height=600, dpi=300, dpi_source="assumed")]


def test_paddle_engine_failure_is_a_transient_adapter_error(monkeypatch):
    adapter = PaddleOcrAdapter()

    def explode(_pixels, **_options):
        raise RuntimeError("onnxruntime went away")

    monkeypatch.setattr(adapter, "_engine", explode)
    with pytest.raises(AdapterError, match="onnxruntime went away") as caught:
        adapter.run(HELLO_PNG, "image/png", {})
    assert caught.value.transient is True


def test_paddle_runs_onnx_with_the_threads_it_was_given(paddle):
    paddle.run(HELLO_PNG, "image/png", {})  # the engine exists after a run

    engine = paddle._engine
    # rapidocr's wrappers (OrtInferSession) hold the onnxruntime.InferenceSession.
    for wrapper in (engine.text_det.infer, engine.text_cls.infer, engine.text_rec.session):
        options = wrapper.session.get_session_options()
        assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def test_engine_threads_come_from_the_settings(monkeypatch):
    monkeypatch.delenv("OCRGW_ENGINE_THREADS", raising=False)
    assert PaddleOcrAdapter().threads == 1
    monkeypatch.setenv("OCRGW_ENGINE_THREADS", "2")
    assert PaddleOcrAdapter().threads == min(2, os.cpu_count() or 1)


def test_engine_threads_never_exceed_the_cores():
    assert engine_threads(999) == os.cpu_count()
    assert engine_threads(1) == 1


def test_paddle_lines_are_sorted_top_to_bottom_then_left_to_right():
    def item(x0, y0, x1, y1, text, score=0.9):
        return [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], text, score]

    page = paddle_page(
        3,
        [
            item(400, 205, 700, 245, "world", 0.8),  # same row as "Hello", a little lower
            item(100, 300, 300, 340, "next"),
            item(100, 200.6, 300, 240.2, "Hello", 1.0),
            item(120, 90, 260, 110, "title"),
        ],
    )

    assert [line.text for line in page.lines] == ["title", "Hello world", "next"]
    assert page.text == "title\nHello world\nnext"
    assert page.lines[1].bbox == (100, 200, 700, 245)
    assert page.lines[1].confidence == pytest.approx(0.9)
    assert page.page == 3


# --- words, and pages turned and crooked --------------------------------------

#: The part of a scan of page 5 of the real PDF that the PP-OCRv4 test reads (a whole page takes it long).
CROP = (0, 250, 1694, 1000)


def test_paddle_stands_a_crooked_upside_down_scan_up_and_boxes_its_words_where_the_upright_page_shows_them(paddle):
    upright = Image.open(io.BytesIO(scanned_pages([5])[0].jpeg)).crop(CROP)
    sheet = upright.rotate(2.0, resample=Image.Resampling.BICUBIC, fillcolor=255).rotate(180)

    (page,) = paddle.run(png(sheet), "image/png", {"rotate_pages": True, "deskew": True}).pages

    assert page.rotation == 180 and page.skew == pytest.approx(-2.0, abs=0.3)
    assert (page.width, page.height) == upright.size
    truth = [
        (line.bbox[0] - CROP[0], line.bbox[1] - CROP[1], line.bbox[2] - CROP[0], line.bbox[3] - CROP[1])
        for line in source_lines(5)
    ]
    assert len(page.lines) >= 8
    for line in page.lines:
        assert line.words and line.text == " ".join(word.text for word in line.words)
        assert all(inside(word.bbox, line.bbox) for word in line.words)
        # Each word sits on a line of the upright page: read upside down, it would be far from any.
        for word in line.words:
            x, y = centre(word.bbox)
            assert any(box[0] - 8 <= x <= box[2] + 8 and box[1] - 8 <= y <= box[3] + 8 for box in truth), word


def item(x0, y0, x1, y1, text, score=0.9, characters=None):
    """A RapidOCR detection; ``characters`` (char, x0, x1, score) as ``return_word_box`` gives them."""
    detection = [[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], text, score]
    if characters is not None:
        boxes = [[[a, y0], [b, y0], [b, y1], [a, y1]] for _, a, b, _ in characters]
        detection += [boxes, [c[0] for c in characters], [c[3] for c in characters]]
    return detection


def test_paddle_words_are_runs_of_the_engine_s_characters_between_spaces():
    characters = [("a", 10, 20, 0.9), ("b", 20, 30, 0.7), (" ", 30, 40, 0.5), ("c", 40, 52, 1.0)]

    (line,) = paddle_page(1, [item(8, 5, 55, 25, "ab c", 0.8, characters)]).lines

    assert [(w.text, w.bbox) for w in line.words] == [("ab", (10, 5, 30, 25)), ("c", (40, 5, 52, 25))]
    assert [w.confidence for w in line.words] == pytest.approx([0.8, 1.0])
    assert line.text == "ab c" and line.bbox == (8, 5, 55, 25)


def test_paddle_words_without_character_boxes_share_the_box_by_their_characters():
    (line,) = paddle_page(1, [item(100, 0, 190, 20, "abcd ef", 0.6)]).lines

    # Seven characters over 90 pixels: "abcd" the first four, the space the fifth, "ef" the last two.
    assert [(w.text, w.bbox, w.confidence) for w in line.words] == [
        ("abcd", (100, 0, 151, 20), 0.6),
        ("ef", (164, 0, 190, 20), 0.6),
    ]


def test_paddle_sessions_use_the_providers_asked_for_and_an_unavailable_one_is_refused(paddle, caplog):
    with pytest.raises(EngineUnavailable, match="CUDAExecutionProvider"):
        PaddleOcrAdapter(threads=1, providers=("CUDAExecutionProvider", "CPUExecutionProvider"))
    adapter = PaddleOcrAdapter(threads=1, providers=("CPUExecutionProvider",))

    with caplog.at_level(logging.INFO, logger="workers.adapters.paddleocr"):
        engine = adapter._load()
        adapter._load()

    sessions = (engine.text_det.infer.session, engine.text_cls.infer.session, engine.text_rec.session.session)
    assert all(session.get_providers() == ["CPUExecutionProvider"] for session in sessions)
    logged = [r.getMessage() for r in caplog.records if "ONNX Runtime sessions use" in r.getMessage()]
    assert logged == [
        "PP-OCRv4 loaded; its ONNX Runtime sessions use detection: CPUExecutionProvider, "
        "classification: CPUExecutionProvider, recognition: CPUExecutionProvider"
    ]


def test_the_providers_come_from_the_settings(monkeypatch):
    monkeypatch.setenv("OCRGW_PADDLEOCR_PROVIDERS", "CPUExecutionProvider")
    assert PaddleOcrAdapter(threads=1).providers == ("CPUExecutionProvider",)
    monkeypatch.setenv("OCRGW_PADDLEOCR_PROVIDERS", "CPUExecutionProvidr")
    with pytest.raises(InvalidSettings, match="PADDLEOCR_PROVIDERS.*unknown to ONNX Runtime: CPUExecutionProvidr"):
        PaddleOcrAdapter(threads=1)
