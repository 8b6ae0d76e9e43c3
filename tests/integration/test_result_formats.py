"""A result as hOCR and as ALTO, end to end: Tesseract reads real pages, every word of the JSON is in both documents.

A real gunicorn gateway, Celery worker (Tesseract), coordinator, beat and
Redis.  Each test fetches a job's result as JSON, as hOCR and as ALTO, and
holds each document to the JSON word by word: its text, its box, its
confidence, in order, page by page.  The words expected are the JSON's by
the documents' own rule: a line's ``words``, or the line as one word where
the engine gave none.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.fanout_support import Gateway
from tests.integration.live import OCR_TIMEOUT, png_bytes
from tests.integration.polling import wait_for_job
from tests.scans import scanned_pdf
from tests.unit.documents.markup_support import (
    alto_pages,
    alto_words,
    expected_words,
    hocr_box,
    hocr_pages,
    hocr_words,
    in_percent,
    to_places,
)

pytestmark = pytest.mark.integration


def completed(gateway: Gateway, response) -> str:
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    job_id = response.json()["id"]
    view = wait_for_job(gateway.job, job_id, timeout=3 * OCR_TIMEOUT)
    assert view["status"] == "completed", view
    return job_id


def fetched(gateway: Gateway, job_id: str, suffix: str, media_type: str) -> str:
    response = gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.{suffix}", timeout=gateway.timeout)
    assert response.status_code == 200, f"{response.status_code}: {response.text[:300]}"
    assert response.headers["Content-Type"] == f"{media_type}; charset=utf-8"
    return response.content.decode("utf-8")


def assert_documents_hold_the_result(gateway: Gateway, job_id: str) -> list[dict[str, Any]]:
    """The job's hOCR and ALTO against its JSON result, page by page and word by word; the JSON's pages."""
    pages = gateway.get(f"/jobs/{job_id}/result")["pages"]
    hocr = hocr_pages(fetched(gateway, job_id, "hocr", "application/xhtml+xml"))
    alto = alto_pages(fetched(gateway, job_id, "alto", "application/xml"))

    assert [hocr_box(page) for page in hocr] == [(0, 0, p["width"], p["height"]) for p in pages]
    assert [page.get("title", "").split("; ")[1] for page in hocr] == [f"ppageno {p['page'] - 1}" for p in pages]
    assert [(page.get("WIDTH"), page.get("HEIGHT")) for page in alto] == [
        (str(p["width"]), str(p["height"])) for p in pages
    ]
    assert [int(page.get("PHYSICAL_IMG_NR", "")) for page in alto] == [p["page"] for p in pages]
    for page, in_hocr, in_alto in zip(pages, hocr, alto, strict=True):
        words = expected_words(page)
        assert words, page  # the engine read the page
        assert hocr_words(in_hocr) == in_percent(words)
        assert alto_words(in_alto) == to_places(words)
    return pages


def test_a_tesseract_jobs_hocr_and_alto_hold_every_word_of_its_result(gateway, tmp_path):
    image = png_bytes(tmp_path, "Invoice 4711 from ocrgw & Co: total 1234 EUR")
    job_id = completed(gateway, gateway.post_raw(image, "image/png", {"model": "tesseract"}))

    (page,) = assert_documents_hold_the_result(gateway, job_id)

    assert "4711" in page["text"]


def test_a_split_scans_hocr_and_alto_hold_its_pages_in_order_and_each_childs_its_own(gateway):
    document = scanned_pdf([0, 1])
    parent_id = completed(
        gateway, gateway.post_raw(document, "application/pdf", {"model": "tesseract", "split_pages": "1"})
    )

    pages = assert_documents_hold_the_result(gateway, parent_id)
    child_pages = [assert_documents_hold_the_result(gateway, f"{parent_id}-{i}") for i in range(2)]

    assert [p["page"] for p in pages] == [1, 2]
    assert [[p["page"] for p in child] for child in child_pages] == [[1], [2]]
    assert [p["text"] for p in pages] == [child[0]["text"] for child in child_pages]
