"""Tesseract 5 through pytesseract, on pages drawn for the test."""

from __future__ import annotations

import os

import pytest

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
from workers.adapters.tesseract import TesseractAdapter

# --- tesseract ---------------------------------------------------------------


def fake_tesseract(directory, script: str):
    """An executable standing in for the tesseract binary, running ``script`` in sh."""
    fake = directory / "tesseract"
    fake.write_text(f"#!/bin/sh\n{script}\n")
    fake.chmod(0o755)
    return fake


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


def test_tesseract_still_working_when_the_budget_ends_is_stopped_with_a_transient_timeout(monkeypatch, tmp_path):
    """A tesseract that never answers, so the budget always ends while it works."""
    adapter = TesseractAdapter()
    adapter._installed_languages()  # from the real binary, before swapping it out
    monkeypatch.setattr("pytesseract.pytesseract.tesseract_cmd", str(fake_tesseract(tmp_path, "exec sleep 600")))

    with pytest.raises(AdapterError) as caught:
        adapter.run(HELLO_PNG, "image/png", {"timeout_s": 0.5})

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
    adapter = TesseractAdapter()
    adapter._installed_languages()  # from the real binary, before swapping it out
    fake = fake_tesseract(tmp_path, "echo 'Error: simulated crash' >&2\nexit 1")
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
