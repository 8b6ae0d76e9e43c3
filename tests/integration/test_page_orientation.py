"""Turned scans stood upright by the learned classifier, with real processes and engines.

A real gunicorn gateway, Celery worker (Tesseract), coordinator, beat and
Redis.  The document is the benchmark's kind of scan (tests/scans.py, the
turns of bench/scan.py): pages of a real PDF at 200 dpi, some fed a quarter
or half turn, and a blank sheet.  Read with ``rotate_pages``, every text
page must come back upright, say that the classifier decided, and read as
the source's text layer says, in the result and in its searchable PDF; the
blank sheet, too bare for the classifier, is left to OSD, which leaves it
as it lay.  ``orientation: "osd"`` has OSD decide.

Accuracy is tests/scans.py's (1 - edit distance / source length).  Left as
fed, Tesseract reads the upside-down page at 0.13 and one page on its side
at 0.14, but the other two on their side at 0.99 (its layout analysis turns
some sideways text itself): the text cannot show that every page was stood
up, so each page's rotation is checked exactly, and its text at 0.6, which
a page left upside down misses.  Stood up, the pages read at 0.99, but for
page 11, a table whose columns Tesseract reads in another order than the
source's text layer (0.68).
"""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.harness import wait_until
from tests.integration.live import OCR_TIMEOUT, b64
from tests.integration.polling import wait_for_job
from tests.scans import SCAN_DPI, ScannedPage, image_only_pdf, page_accuracy, page_texts, scanned_pages, source_text

pytestmark = pytest.mark.integration

#: Source pages and how each sheet was fed (degrees clockwise): bench/scan.py's turns, on fewer pages.
PAGES = (0, 1, 2, 4, 7, 11)
TURNED = {1: 90, 4: 180, 7: 270, 11: 90}
MIN_ACCURACY = 0.6


def blank_sheet() -> ScannedPage:
    buffer = io.BytesIO()
    Image.new("L", (17 * SCAN_DPI // 2, 11 * SCAN_DPI), 250).save(buffer, "JPEG", quality=80, dpi=(SCAN_DPI, SCAN_DPI))
    return ScannedPage(-1, 0, 0.0, buffer.getvalue())


def submitted(gateway, document: bytes, **options) -> str:
    body = {
        "model": "tesseract",
        "content_type": "application/pdf",
        "payload": b64(document),
        "options": {"rotate_pages": True, **options},
    }
    response = gateway.post_json(body)
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    return response.json()["id"]


def searchable_pdf(gateway, job_id: str) -> bytes:
    def fetched():
        response = gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.pdf", timeout=gateway.timeout)
        assert response.status_code in (200, 202), f"{response.status_code}: {response.text[:300]}"
        return response.status_code == 200 and response.content

    return wait_until(fetched, OCR_TIMEOUT, interval=0.5, message="the searchable PDF was never built")


def test_turned_scans_are_stood_upright_by_the_classifier_and_a_blank_sheet_is_left_to_osd(gateway):
    # Given a scan of six pages, four fed turned, and a blank sheet after them
    document = image_only_pdf([*scanned_pages(PAGES, turned=TURNED), blank_sheet()])

    # When it is read, turning pages upright
    job = wait_for_job(gateway.job, submitted(gateway, document, deskew=True), timeout=2 * OCR_TIMEOUT)

    # Then each text page was turned back from how it was fed, the classifier deciding, and reads as its source
    assert job["status"] == "completed", job
    pages = job["result"]["pages"]
    *text_pages, blank = pages
    assert [p["rotation"] for p in text_pages] == [(360 - TURNED.get(index, 0)) % 360 for index in PAGES]
    assert [p["orientation_by"] for p in text_pages] == ["classifier"] * len(PAGES)
    for index, page in zip(PAGES, text_pages, strict=True):
        assert page_accuracy(source_text(index), page["text"]) >= MIN_ACCURACY, (index, page["text"][:300])
        assert page["width"] < page["height"]  # every sheet of the source is portrait
    # And the blank sheet, too bare for the classifier, was left to OSD, which left it as it lay
    assert (blank["rotation"], blank["orientation_by"], blank["text"].strip()) == (0, "osd", "")
    # And the searchable PDF's text layer reads as the source, page for page
    texts = page_texts(searchable_pdf(gateway, job["id"]))
    assert len(texts) == len(PAGES) + 1
    for index, text in zip(PAGES, texts, strict=False):
        assert page_accuracy(source_text(index), text) >= MIN_ACCURACY, (index, text[:300])


def test_orientation_osd_has_osd_decide(gateway):
    # Given a page fed upside down, read asking for OSD
    document = image_only_pdf(scanned_pages([4], turned={4: 180}))

    job = wait_for_job(gateway.job, submitted(gateway, document, orientation="osd"), timeout=OCR_TIMEOUT)

    # Then OSD stood it up, and the page says so
    assert job["status"] == "completed", job
    (page,) = job["result"]["pages"]
    assert (page["rotation"], page["orientation_by"]) == (180, "osd")
    assert page_accuracy(source_text(4), page["text"]) >= MIN_ACCURACY, page["text"][:300]
