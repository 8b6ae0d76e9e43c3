"""Tesseract 5, resident in the process through tesserocr, on pages drawn for the test."""

from __future__ import annotations

import difflib
import io
import os
import threading
import time

import pytesseract
import pytest
from PIL import Image

from documents.pages import open_document
from jobs.errors import AdapterError, EngineUnavailable, InvalidDocument
from tests.scans import scanned_pdf
from tests.unit.workers.pages import (
    HELLO_PNG,
    Progress,
    draw,
    inside,
    placed_where_shown,
    png,
    source_words,
    two_page_pdf,
    words,
)
from workers.adapters import get_adapter
from workers.adapters import tesseract as tesseract_module
from workers.adapters.tesseract import TesseractAdapter

# --- tesseract ---------------------------------------------------------------


def scanned_page(index: int) -> Image.Image:
    """Page ``index`` of the real PDF, scanned at 200 dpi and drawn as a worker draws it."""
    with open_document(scanned_pdf([index]), "application/pdf") as doc:
        return doc.page(0)


def small_page() -> Image.Image:
    return Image.open(io.BytesIO(HELLO_PNG)).convert("RGB")


def big_page() -> Image.Image:
    pages = [scanned_page(index) for index in (2, 3, 4, 5)]
    width, height = pages[0].size
    sheet = Image.new("L", (width * 4, height), 255)
    for at, page in enumerate(pages):
        sheet.paste(page.convert("L"), (at * width, 0))
    sheet.info["dpi"] = pages[0].info["dpi"]
    return sheet


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


def test_a_budget_spent_before_the_page_reaches_tesseract_is_a_transient_timeout(tesseract):
    with pytest.raises(AdapterError) as caught:
        tesseract.run(HELLO_PNG, "image/png", {"timeout_s": 0.001})
    assert caught.value.code == "engine_timeout"
    assert caught.value.transient is True


def test_a_page_still_being_read_when_the_budget_ends_is_stopped_and_the_engine_reads_the_next_one(tesseract):
    """Four scanned pages side by side take Tesseract seconds; the budget ends 50 ms into them."""
    page = big_page()
    tesseract.recognise(1, small_page(), {}, None)  # the engine loaded, so the budget goes to the page
    engine = tesseract._engines.get("eng")

    with pytest.raises(AdapterError) as caught:
        tesseract.recognise(1, page, {}, time.monotonic() + 0.05)

    assert caught.value.code == "engine_timeout"
    assert caught.value.transient is True
    # The same engine, kept, reads the next page whole; and the next job.
    assert {"HELLO", "OCRGW"} <= words(tesseract.recognise(2, small_page(), {}, None).text)
    assert {"HELLO", "OCRGW"} <= words(tesseract.run(HELLO_PNG, "image/png", {}).text)
    assert tesseract._engines.get("eng") is engine and not engine.ended


def test_tesseract_bad_document_is_invalid(tesseract):
    with pytest.raises(InvalidDocument):
        tesseract.run(HELLO_PNG[:100], "image/png", {})


def test_missing_tesseract_binary_means_engine_unavailable(monkeypatch, tmp_path):
    monkeypatch.setattr("pytesseract.pytesseract.tesseract_cmd", str(tmp_path / "no-tesseract"))

    with pytest.raises(EngineUnavailable):
        TesseractAdapter().run(HELLO_PNG, "image/png", {})


@pytest.mark.parametrize(
    "failure",
    [
        pytest.param(lambda: None, id="Recognize answered false"),
        pytest.param(lambda: (_ for _ in ()).throw(RuntimeError("Error reading image")), id="the image refused"),
    ],
)
def test_tesseract_failing_on_a_page_is_a_transient_error_and_the_next_page_gets_a_new_engine(monkeypatch, failure):
    """Tesseract reports a failure inside as Recognize answering false (with no deadline passed)."""
    adapter = TesseractAdapter()
    adapter.run(HELLO_PNG, "image/png", {})
    failed = adapter._engines.get("eng")
    monkeypatch.setattr(tesseract_module._Engine, "read", lambda self, *args: failure())

    with pytest.raises(AdapterError, match="tesseract failed on page 1") as caught:
        adapter.run(HELLO_PNG, "image/png", {})
    assert type(caught.value) is AdapterError
    assert caught.value.transient is True
    monkeypatch.undo()

    assert failed is not None and failed.ended and adapter._engines.get("eng") is None
    assert {"HELLO", "OCRGW"} <= words(adapter.run(HELLO_PNG, "image/png", {}).text)
    assert adapter._engines.get("eng") not in (None, failed)


def test_tesseract_limits_openmp_threads_unless_told_otherwise(monkeypatch):
    monkeypatch.delenv("OMP_THREAD_LIMIT", raising=False)
    TesseractAdapter()
    assert os.environ["OMP_THREAD_LIMIT"] == "1"

    monkeypatch.setenv("OMP_THREAD_LIMIT", "2")
    TesseractAdapter()
    assert os.environ["OMP_THREAD_LIMIT"] == "2"


# --- words, and pages turned and crooked --------------------------------------


def test_tesseract_stands_a_crooked_sideways_scan_up_and_boxes_its_words_where_the_upright_page_shows_them(tesseract):
    document = scanned_pdf([5], turned={5: 90}, skewed={5: 3.0})

    result = tesseract.run(document, "application/pdf", {"rotate_pages": True, "deskew": True})

    (page,) = result.pages
    assert page.rotation == 270 and page.skew == pytest.approx(-3.0, abs=0.3)
    assert page.width < page.height  # upright: portrait again
    assert all(line.words for line in page.lines)
    for line in page.lines:
        assert line.text == " ".join(word.text for word in line.words)
        assert all(inside(word.bbox, line.bbox) and 0 <= word.confidence <= 1 for word in line.words)
    read = [(word.text, word.bbox) for line in page.lines for word in line.words]
    matched, misses = placed_where_shown(read, source_words(5))
    # Nearly every word read is a word of the page, where the upright, straight page has it.
    assert matched >= 100 and len(misses) <= matched // 50, misses[:5]
    shown = result.to_dict()["pages"][0]
    assert (shown["rotation"], shown["width"], shown["height"]) == (270, page.width, page.height)
    assert shown["lines"][0]["words"][0]["text"] == page.lines[0].words[0].text


def test_tesseract_leaves_a_page_alone_unless_asked(tesseract):
    (page,) = tesseract.run(HELLO_PNG, "image/png", {}).pages

    assert (page.rotation, page.skew) == (0, 0.0)
    hello = next(line for line in page.lines if "HELLO" in line.text.upper())
    assert [word.text.upper() for word in hello.words] == ["HELLO", "OCRGW", "42"]
    assert hello.words[0].bbox[2] <= hello.words[1].bbox[0]


# --- the resident engines ------------------------------------------------------


@pytest.fixture
def made(monkeypatch):
    """Every TessBaseAPI made from here on, with the languages it was made for."""
    import tesserocr

    apis = []
    real = tesserocr.PyTessBaseAPI

    def counted(*args, **kwargs):
        api = real(*args, **kwargs)
        apis.append(api.GetInitLanguagesAsString())
        return api

    monkeypatch.setattr(tesserocr, "PyTessBaseAPI", counted)
    return apis


def test_one_engine_per_language_is_made_on_first_use_and_reads_every_page_and_job_after(made):
    adapter = TesseractAdapter()
    assert made == []  # nothing loaded before a page asks for it

    first = adapter.run(two_page_pdf(), "application/pdf", {})
    second = adapter.run(HELLO_PNG, "image/png", {"psm": 11})  # another job, another psm: the same engine

    assert made == ["eng"]
    assert {"FIRST", "SECOND"} <= words(first.text) and {"HELLO", "INVOICE"} <= words(second.text)


def test_two_languages_get_two_engines_and_the_least_recently_used_goes_past_the_bound(made):
    adapter = TesseractAdapter()
    adapter._engines.limit = 2

    adapter.run(HELLO_PNG, "image/png", {"lang": "eng"})
    adapter.run(HELLO_PNG, "image/png", {"lang": "eng+deu"})
    eng, both = adapter._engines.get("eng"), adapter._engines.get("eng+deu")
    adapter.run(HELLO_PNG, "image/png", {"lang": "eng"})  # eng used last: eng+deu is now the oldest
    adapter.run(HELLO_PNG, "image/png", {"lang": "deu"})

    assert made == ["eng", "eng+deu", "deu"]
    assert both is not None and both.ended and adapter._engines.get("eng+deu") is None
    assert eng is not None and adapter._engines.get("eng") is eng and not eng.ended and len(adapter._engines) == 2
    adapter.run(HELLO_PNG, "image/png", {"lang": "eng+deu"})  # asked again: loaded again
    assert made == ["eng", "eng+deu", "deu", "eng+deu"]


def test_threads_sharing_an_engine_read_their_pages_one_at_a_time_each_its_own_text():
    adapter = TesseractAdapter()
    pages = {n: png(draw([(40, 60, f"PAGE {n} OF {n * 111}")], size=(700, 200))) for n in range(1, 5)}
    results: dict[int, set[str]] = {}

    def read(n):
        for _ in range(3):
            results[n] = words(adapter.run(pages[n], "image/png", {}).text)

    threads = [threading.Thread(target=read, args=(n,)) for n in pages]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert results == {n: {"PAGE", str(n), "OF", str(n * 111)} for n in pages}
    assert len(adapter._engines) == 1


def test_the_resident_engine_reads_a_real_page_as_the_tesseract_binary_does():
    """The same page image and options through ``tesseract`` (pytesseract) and through the engine in the process.

    The two libtesseracts are not the same release (Debian's binary, the wheel's library), so a character
    may differ; the lines, their boxes and the paragraphs may not.
    """
    page = scanned_page(4)
    dpi = round(page.info["dpi"][0])
    binary = tesseract_module._page_result(
        1, pytesseract.image_to_data(page.convert("L"), config=f"--dpi {dpi}", output_type=pytesseract.Output.DICT)
    )

    resident = TesseractAdapter().recognise(1, page, {}, None)

    assert len(resident.lines) == len(binary.lines) > 30
    for ours, theirs in zip(resident.lines, binary.lines, strict=True):
        assert max(abs(a - b) for a, b in zip(ours.bbox, theirs.bbox, strict=True)) <= 4, (ours.text, theirs.text)
    assert resident.text.count("\n\n") == binary.text.count("\n\n")  # the same paragraphs
    ours_words = [word.text for line in resident.lines for word in line.words]
    theirs_words = [word.text for line in binary.lines for word in line.words]
    assert difflib.SequenceMatcher(None, ours_words, theirs_words).ratio() >= 0.99
