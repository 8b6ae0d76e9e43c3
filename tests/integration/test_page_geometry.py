"""Scans fed turned and crooked, read back upright and straight, with real processes and engines.

A real gunicorn gateway, Celery worker (Tesseract, PP-OCRv4), coordinator,
beat and Redis.  The document is a scan of a real PDF (tests/scans.py): some
sheets fed a quarter or half turn, some crooked by a few degrees.  Each page
read with ``rotate_pages`` and ``deskew`` must say how it was turned and
straightened, and read as the source's text layer says.

Similarity is difflib's ratio of the page's text to the source's, whitespace
collapsed.  Tesseract reads these pages, stood up, at 0.99 or better; the same
upside-down page read as it is scores 0.05, so 0.95 leaves room for OCR's
slips and none for a page left on its side or upside down.  PP-OCRv4's model
drops most spaces between words, so its text is compared without them.
"""

from __future__ import annotations

import difflib

import pytest

from tests.integration.live import OCR_TIMEOUT, b64
from tests.integration.polling import wait_for_job
from tests.scans import scanned_pdf, source_text

pytestmark = pytest.mark.integration

#: Source pages, and how each sheet was fed: turned clockwise, crooked counter-clockwise (degrees).
PAGES = (2, 5, 9, 12)
TURNED = {5: 90, 9: 180, 12: 270}
SKEWED = {2: 3.5, 9: -2.5, 12: 1.5}
MIN_SIMILARITY = 0.95
#: How far the measured skew may be from the skew the sheet was fed with, in degrees.
SKEW_TOLERANCE = 0.3


def similarity(read: str, source: str, *, spaces: bool = True) -> float:
    def normal(text: str) -> str:
        return (" " if spaces else "").join(text.split())

    return difflib.SequenceMatcher(None, normal(read), normal(source), autojunk=False).ratio()


def submitted(gateway, model: str, document: bytes) -> str:
    body = {
        "model": model,
        "content_type": "application/pdf",
        "payload": b64(document),
        "options": {"rotate_pages": True, "deskew": True},
    }
    response = gateway.post_json(body)
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    return response.json()["id"]


def test_turned_and_crooked_scans_are_read_upright_and_straight(gateway):
    # Given a scan of four pages: three fed turned, three crooked; and one more page for PP-OCRv4
    tesseract_job = submitted(gateway, "tesseract", scanned_pdf(PAGES, turned=TURNED, skewed=SKEWED))
    paddle_job = submitted(gateway, "paddleocr", scanned_pdf([12], turned={12: 90}, skewed={12: -2.0}))

    # When they are read, turning pages upright and straightening them
    tesseract = wait_for_job(gateway.job, tesseract_job, timeout=OCR_TIMEOUT)
    paddle = wait_for_job(gateway.job, paddle_job, timeout=OCR_TIMEOUT)

    # Then each page says how far it was turned to stand upright (back from how it was fed) and straightened
    assert tesseract["status"] == "completed", tesseract
    pages = tesseract["result"]["pages"]
    assert [p["page"] for p in pages] == [1, 2, 3, 4]
    assert [p["rotation"] for p in pages] == [(360 - TURNED.get(index, 0)) % 360 for index in PAGES]
    for index, page in zip(PAGES, pages, strict=True):
        assert page["skew"] == pytest.approx(-SKEWED.get(index, 0.0), abs=SKEW_TOLERANCE), page["page"]
        # And reads as its source does, in a portrait page's pixels (every sheet of the source is portrait)
        assert similarity(page["text"], source_text(index)) >= MIN_SIMILARITY, (index, page["text"][:300])
        assert page["width"] < page["height"]
        for line in page["lines"]:
            assert line["words"], line
            x0, y0, x1, y1 = line["bbox"]
            assert 0 <= x0 < x1 <= page["width"] and 0 <= y0 < y1 <= page["height"], line
    # And PP-OCRv4 stands its page up and straightens it as well
    assert paddle["status"] == "completed", paddle
    (page,) = paddle["result"]["pages"]
    assert (page["rotation"], page["source"]) == (270, "ocr")
    assert page["skew"] == pytest.approx(2.0, abs=SKEW_TOLERANCE)
    assert similarity(page["text"], source_text(12), spaces=False) >= MIN_SIMILARITY, page["text"][:300]
    assert all(line["words"] for line in page["lines"])
