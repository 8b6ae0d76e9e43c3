import io
import os
import re
import time

import pytest
from PIL import Image, ImageDraw, ImageFont

import workers.adapters as adapters
from jobs.errors import AdapterError, EchoFailed, EngineUnavailable, InvalidDocument
from workers.adapters import get_adapter
from workers.adapters.base import Line, OcrResult, PageResult
from workers.adapters.paddleocr import PaddleOcrAdapter, engine_threads
from workers.adapters.paddleocr import _page_result as paddle_page
from workers.adapters.tesseract import TesseractAdapter

FONT = ImageFont.load_default(size=48)


def draw(rows, size=(900, 600)) -> Image.Image:
    """Black text on white; ``rows`` holds (x, y, text)."""
    image = Image.new("RGB", size, "white")
    pen = ImageDraw.Draw(image)
    for x, y, text in rows:
        pen.text((x, y), text, fill="black", font=FONT)
    return image


def png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


def words(text: str) -> set[str]:
    return set(re.findall(r"[A-Z0-9]+", text.upper()))


HELLO_PNG = png(draw([(80, 120, "HELLO OCRGW 42"), (80, 320, "INVOICE 1234")]))


def two_page_pdf() -> bytes:
    first = draw([(80, 200, "FIRST PAGE 111")])
    second = draw([(80, 200, "SECOND PAGE 222")])
    buf = io.BytesIO()
    # 200 px per inch, the adapters' rendering dpi: pages come back at this size.
    first.save(buf, "PDF", resolution=200, save_all=True, append_images=[second])
    return buf.getvalue()


class Progress(list):
    def __call__(self, done, total):
        self.append((done, total))


# --- result model ------------------------------------------------------------


def test_result_text_joins_pages_and_to_dict_is_json_ready():
    result = OcrResult(
        pages=[
            PageResult(1, "one\n  \n", [Line("one", 0.123456, (1, 2, 3, 4))]),
            PageResult(2, "two", []),
        ]
    )

    assert result.text == "one\n\ntwo"
    assert result.to_dict() == {
        "text": "one\n\ntwo",
        "pages": [
            {"page": 1, "text": "one\n  \n", "lines": [{"text": "one", "confidence": 0.1235, "bbox": [1, 2, 3, 4]}]},
            {"page": 2, "text": "two", "lines": []},
        ],
    }


# --- registry ----------------------------------------------------------------


def test_get_adapter_returns_one_instance_per_process():
    assert get_adapter("echo") is get_adapter("echo")
    assert get_adapter("tesseract").name == "tesseract"


def test_unknown_model_is_a_permanent_adapter_error():
    with pytest.raises(AdapterError) as caught:
        get_adapter("no-such-engine")

    assert caught.value.code == "unknown_model"
    assert caught.value.transient is False


def test_a_forked_child_builds_its_own_adapters():
    before = get_adapter("echo")

    adapters._reset_after_fork()

    assert get_adapter("echo") is not before


# --- echo --------------------------------------------------------------------


def test_echo_returns_the_payload_with_a_line_per_non_empty_line():
    progress = Progress()

    result = get_adapter("echo").run("héllo\n\n  \nworld 42\n".encode(), "text/plain", {}, progress)

    assert result.to_dict() == {
        "text": "héllo\n\n  \nworld 42",
        "pages": [
            {
                "page": 1,
                "text": "héllo\n\n  \nworld 42\n",
                "lines": [
                    {"text": "héllo", "confidence": 1.0, "bbox": [0, 0, 0, 0]},
                    {"text": "world 42", "confidence": 1.0, "bbox": [0, 0, 0, 0]},
                ],
            }
        ],
    }
    assert progress == [(1, 1)]


def test_echo_sleeps_for_delay_ms():
    started = time.monotonic()
    get_adapter("echo").run(b"x", "text/plain", {"delay_ms": 60})
    assert time.monotonic() - started >= 0.06


def test_echo_fails_on_request_after_the_delay():
    started = time.monotonic()
    with pytest.raises(EchoFailed, match="echo asked to fail") as caught:
        get_adapter("echo").run(b"x", "text/plain", {"fail": True, "delay_ms": 30})
    assert time.monotonic() - started >= 0.03
    assert caught.value.code == "echo_failed"
    assert caught.value.transient is False


@pytest.mark.parametrize("delay", [-1, "10", True, float("inf")])
def test_echo_rejects_a_bad_delay(delay):
    with pytest.raises(AdapterError, match="delay_ms") as caught:
        get_adapter("echo").run(b"x", "text/plain", {"delay_ms": delay})
    assert caught.value.code == "invalid_options"
    assert caught.value.transient is False


def test_echo_accepts_text_plain_only():
    with pytest.raises(InvalidDocument, match="text/plain"):
        get_adapter("echo").run(b"x", "image/png", {})
    assert get_adapter("echo").run(b"x", "text/plain; charset=utf-8", {}).text == "x"


def test_echo_rejects_bytes_that_are_not_utf8():
    with pytest.raises(InvalidDocument, match="UTF-8"):
        get_adapter("echo").run(b"\xff\xfe\x00", "text/plain", {})


def test_echo_is_cheap_enough_for_thousand_job_benchmarks():
    echo = get_adapter("echo")
    started = time.perf_counter()
    for _ in range(1000):
        echo.run(b"line one\nline two", "text/plain", {}, lambda done, total: None)
    assert time.perf_counter() - started < 1.0


# --- tesseract ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tesseract():
    return get_adapter("tesseract")


def test_tesseract_reads_a_png(tesseract):
    progress = Progress()

    result = tesseract.run(HELLO_PNG, "image/png", {}, progress)

    assert {"HELLO", "OCRGW", "42", "INVOICE", "1234"} <= words(result.text)
    assert progress == [(1, 1)]
    (page,) = result.pages
    hello = next(line for line in page.lines if "HELLO" in line.text.upper())
    assert 0.5 < hello.confidence <= 1.0
    x0, y0, x1, y1 = hello.bbox
    assert 70 <= x0 < 120 and 110 <= y0 < 150 and 400 < x1 < 800 and y0 < y1 < 200


def test_tesseract_reads_each_pdf_page_in_order(tesseract):
    progress = Progress()

    result = tesseract.run(two_page_pdf(), "application/pdf", {}, progress)

    assert [page.page for page in result.pages] == [1, 2]
    assert {"FIRST", "111"} <= words(result.pages[0].text)
    assert {"SECOND", "222"} <= words(result.pages[1].text)
    assert progress == [(1, 2), (2, 2)]


def test_tesseract_honours_psm(tesseract):
    line = png(draw([(40, 40, "OCRGW 2024")], size=(500, 140)))

    result = tesseract.run(line, "image/png", {"psm": 7})  # a single text line

    assert {"OCRGW", "2024"} <= words(result.text)


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"psm": 99}, "invalid_options"),
        ({"psm": "7"}, "invalid_options"),
        ({"lang": "eng; rm -rf /"}, "invalid_options"),
        ({"lang": "klingon"}, "unsupported_language"),
        ({"timeout_s": 0}, "invalid_options"),
    ],
)
def test_tesseract_rejects_bad_options_without_retry(tesseract, options, code):
    with pytest.raises(AdapterError) as caught:
        tesseract.run(HELLO_PNG, "image/png", options)
    assert caught.value.code == code
    assert caught.value.transient is False


# The first budget runs out before the page reaches tesseract, the second
# while tesseract works on it (its process is killed).
@pytest.mark.parametrize("timeout_s", [0.001, 0.05])
def test_tesseract_timeout_is_a_transient_error(tesseract, timeout_s):
    with pytest.raises(AdapterError) as caught:
        tesseract.run(HELLO_PNG, "image/png", {"timeout_s": timeout_s})
    assert caught.value.code == "engine_timeout"
    assert caught.value.transient is True


def test_tesseract_bad_document_is_invalid(tesseract):
    with pytest.raises(InvalidDocument):
        tesseract.run(HELLO_PNG[:100], "image/png", {})


def test_missing_tesseract_binary_means_engine_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr("pytesseract.pytesseract.tesseract_cmd", str(tmp_path / "no-tesseract"))

    with pytest.raises(EngineUnavailable):
        TesseractAdapter().run(HELLO_PNG, "image/png", {})


def test_tesseract_crash_is_a_transient_adapter_error(monkeypatch, tmp_path):
    fake = tmp_path / "tesseract"
    fake.write_text("#!/bin/sh\necho 'Error: simulated crash' >&2\nexit 1\n")
    fake.chmod(0o755)
    adapter = TesseractAdapter()
    adapter._installed_languages()  # from the real binary, before swapping it out
    monkeypatch.setattr("pytesseract.pytesseract.tesseract_cmd", str(fake))

    with pytest.raises(AdapterError, match="simulated crash") as caught:
        adapter.run(HELLO_PNG, "image/png", {})
    assert type(caught.value) is AdapterError
    assert caught.value.transient is True


def test_tesseract_limits_openmp_threads_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    TesseractAdapter()
    assert os.environ["OMP_THREAD_LIMIT"] == "1"

    monkeypatch.setenv("OMP_THREAD_LIMIT", "2")
    TesseractAdapter()
    assert os.environ["OMP_THREAD_LIMIT"] == "2"


# --- PP-OCRv4 ----------------------------------------------------------------


@pytest.fixture(scope="module")
def paddle():
    return get_adapter("paddleocr")


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

    assert result.pages == [PageResult(page=1, text="", lines=[])]


def test_paddle_engine_failure_is_a_transient_adapter_error():
    adapter = PaddleOcrAdapter()

    def explode(_pixels):
        raise RuntimeError("onnxruntime went away")

    adapter._engine = explode
    with pytest.raises(AdapterError, match="onnxruntime went away") as caught:
        adapter.run(HELLO_PNG, "image/png", {})
    assert caught.value.transient is True


def test_paddle_runs_onnx_with_one_thread_by_default(paddle, monkeypatch):
    monkeypatch.delenv("OCRGW_ENGINE_THREADS", raising=False)
    paddle.run(HELLO_PNG, "image/png", {})  # the engine exists after a run

    engine = paddle._engine
    # rapidocr's wrappers (OrtInferSession) hold the onnxruntime.InferenceSession.
    for wrapper in (engine.text_det.infer, engine.text_cls.infer, engine.text_rec.session):
        options = wrapper.session.get_session_options()
        assert (options.intra_op_num_threads, options.inter_op_num_threads) == (1, 1)


def test_engine_threads_come_from_the_environment(monkeypatch):
    monkeypatch.delenv("OCRGW_ENGINE_THREADS", raising=False)
    assert engine_threads() == 1
    monkeypatch.setenv("OCRGW_ENGINE_THREADS", "2")
    assert engine_threads() == min(2, os.cpu_count())
    monkeypatch.setenv("OCRGW_ENGINE_THREADS", "999")
    assert engine_threads() == os.cpu_count()
    for bad in ("0", "many"):
        monkeypatch.setenv("OCRGW_ENGINE_THREADS", bad)
        with pytest.raises(EngineUnavailable, match="OCRGW_ENGINE_THREADS"):
            engine_threads()


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
