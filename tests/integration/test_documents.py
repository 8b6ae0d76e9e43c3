"""Documents end to end: PDF split, text layers and searchable PDFs, with real processes and engines.

A real gunicorn gateway, Celery worker (Tesseract), coordinator, beat and
Redis.  Each test submits over HTTP and checks what a client sees: the
merged text in page order with the pages' numbers in the whole document,
where each page's text came from, and the text a PDF reader extracts from
the searchable PDF.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import pikepdf
import pypdfium2 as pdfium
import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, intervals, peak_overlap
from tests.integration.live import OCR_TIMEOUT, assert_problem, b64, ocrgw_keyspace, pdf_bytes, png_bytes
from tests.integration.polling import wait_for_job
from tests.keyspace import keys
from tests.pdfs import pdf
from tests.scans import page_accuracy, page_texts, real_pdf, scanned_pages, source_text

pytestmark = pytest.mark.integration

PAGES = 25
WORDS = "HELLO OCRGW 2026"


def page_label(n: int) -> str:
    return f"PAGE {n:02d} ALPHA"


def accepted(response) -> dict:
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    return response.json()


def pdf_texts(gateway: Gateway, job_id: str) -> list[str]:
    """The text a PDF reader extracts from each page of the job's searchable PDF, once a worker has built it."""

    def fetched():
        response = gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.pdf", timeout=gateway.timeout)
        assert response.status_code in (200, 202), f"{response.status_code}: {response.text[:300]}"
        return response.status_code == 200 and response

    response = wait_until(fetched, OCR_TIMEOUT, interval=0.5, message="the searchable PDF was never built")
    assert response.headers["Content-Type"] == "application/pdf"
    document = pdfium.PdfDocument(response.content)
    try:
        return [document[i].get_textpage().get_text_range() for i in range(len(document))]
    finally:
        document.close()


def in_order(text: str, parts: list[str]) -> bool:
    positions = [text.find(part) for part in parts]
    return -1 not in positions and positions == sorted(positions)


def test_a_25_page_pdf_split_in_10_page_children_reads_in_page_order(gateway, db, tmp_path):
    # Given a 25-page PDF (images of text: every page needs OCR)
    document = pdf_bytes(tmp_path, *(page_label(n) for n in range(1, PAGES + 1)))

    # When it is posted raw with split_pages=10, at most two children at once
    parent = accepted(
        gateway.post_raw(document, "application/pdf", {"model": "tesseract", "split_pages": "10", "max_parallel": "2"})
    )
    view = wait_for_job(gateway.job, parent["id"], timeout=3 * OCR_TIMEOUT)

    # Then it is one group of three children: pages 1-10, 11-20 and 21-25 of the document, stored once
    assert (view["kind"], view["status"], view["total"]) == ("parent", "completed", 3), view
    assert db.get(keys.payload(parent["id"])) == document
    assert [db.hget(keys.job(c["id"]), "source_pages") for c in view["children"]] == [b"1-10", b"11-20", b"21-25"]
    assert not any(db.exists(keys.payload(c["id"])) for c in view["children"])
    assert peak_overlap(intervals(view["children"])) <= 2
    children = [gateway.get(f"/jobs/{c['id']}") for c in view["children"]]
    assert [c["pages"] for c in children] == [10, 10, 5]
    assert [[p["page"] for p in c["result"]["pages"]] for c in children] == [
        list(range(1, 11)), list(range(11, 21)), list(range(21, 26))]  # fmt: skip
    # And the merged text is in page order, each page numbered in the whole document
    merged = view["result"]
    assert [p["page"] for p in merged["pages"]] == list(range(1, PAGES + 1))
    for page in merged["pages"]:
        assert page_label(page["page"]) in page["text"], page
        assert page["source"] == "ocr"
    assert [p["child_index"] for p in merged["pages"]] == [0] * 10 + [1] * 10 + [2] * 5
    assert in_order(merged["text"], [page_label(n) for n in range(1, PAGES + 1)])
    # And the group's searchable PDF holds the 25 pages, in order, each with its words
    texts = pdf_texts(gateway, parent["id"])
    assert len(texts) == PAGES
    for n, text in enumerate(texts, start=1):
        assert page_label(n) in text, (n, text)


def test_text_layer_prefer_reads_text_pages_from_their_text_and_ocrs_image_pages(gateway):
    # Given a PDF mixing pages that carry their text and pages that are only pictures
    document = pdf([("text", "Quarterly report\nRevenue grew"), ("image", "IMAGE PAGE TWO"),
                    ("text", "Closing remarks"), ("image", "IMAGE PAGE FOUR")])  # fmt: skip
    job = {"model": "tesseract", "content_type": "application/pdf", "payload": b64(document)}

    # When it is read preferring text layers, and (to compare) ignoring them
    prefer: Mapping[str, Any] = accepted(gateway.post_json({**job, "options": {"text_layer": "prefer"}}))
    ignore: Mapping[str, Any] = accepted(gateway.post_json(job))
    prefer = wait_for_job(gateway.job, prefer["id"], timeout=OCR_TIMEOUT)
    ignore = wait_for_job(gateway.job, ignore["id"], timeout=OCR_TIMEOUT)

    # Then with prefer each page says where its text came from, and the text pages are exact
    assert prefer["status"] == "completed", prefer
    pages = prefer["result"]["pages"]
    assert [p["source"] for p in pages] == ["text_layer", "ocr", "text_layer", "ocr"]
    assert [p["text"] for p in (pages[0], pages[2])] == ["Quarterly report\nRevenue grew", "Closing remarks"]
    assert "IMAGE PAGE TWO" in pages[1]["text"] and "IMAGE PAGE FOUR" in pages[3]["text"]
    assert [line["text"] for line in pages[0]["lines"]] == ["Quarterly report", "Revenue grew"]
    for page in pages:  # every box lies on its page, in the pixels the page says
        for line in page["lines"]:
            x0, y0, x1, y1 = line["bbox"]
            assert 0 <= x0 < x1 <= page["width"] and 0 <= y0 < y1 <= page["height"], (page["page"], line)
    # And by default every page is OCRed, the text pages too
    assert ignore["status"] == "completed", ignore
    assert [p["source"] for p in ignore["result"]["pages"]] == ["ocr"] * 4
    assert "Quarterly report" in ignore["result"]["pages"][0]["text"]


def test_a_single_image_jobs_searchable_pdf_holds_the_recognized_words(gateway, tmp_path):
    # Given a completed OCR job of one page image
    created = accepted(gateway.post_raw(png_bytes(tmp_path, WORDS), "image/png", {"model": "tesseract"}))
    job = wait_for_job(gateway.job, created["id"], timeout=OCR_TIMEOUT)
    assert job["status"] == "completed", job

    # When its searchable PDF is read by a PDF library
    texts = pdf_texts(gateway, job["id"])

    # Then the one page carries the recognized words, as the result has them
    assert len(texts) == 1
    assert " ".join(texts[0].split()) == " ".join(job["result"]["text"].split())
    assert WORDS in texts[0]


def test_a_corrupt_pdf_to_split_is_refused_and_stores_nothing(gateway, db):
    before = ocrgw_keyspace(db)

    response = gateway.post_raw(b"%PDF-1.7\n1 0 obj << >>\ntruncated", "application/pdf",
                                {"model": "tesseract", "split_pages": "10"})  # fmt: skip

    assert_problem(response, 422, "invalid_document")
    assert ocrgw_keyspace(db) == before


def fetched_pdf(gateway: Gateway, job_id: str) -> bytes:
    def fetched():
        response = gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.pdf", timeout=gateway.timeout)
        assert response.status_code in (200, 202), f"{response.status_code}: {response.text[:300]}"
        return response.status_code == 200 and response.content

    return wait_until(fetched, OCR_TIMEOUT, interval=0.5, message="the searchable PDF was never built")


def test_a_born_digital_pdfs_searchable_copy_is_the_pdf_itself_page_for_page(gateway):
    # Given the real 17-page specification, split a page a child and every page OCRed (the default)
    original = real_pdf()
    created = accepted(gateway.post_raw(original, "application/pdf", {"model": "tesseract", "split_pages": "1"}))
    parent = wait_for_job(gateway.job, created["id"], timeout=4 * OCR_TIMEOUT)
    assert parent["status"] == "completed", parent

    # When its searchable PDF is fetched
    searchable = fetched_pdf(gateway, parent["id"])

    # Then every page keeps its size and its own text, with no second copy of what OCR read, at about its size
    before, after = pdfium.PdfDocument(original), pdfium.PdfDocument(searchable)
    try:
        assert len(after) == len(before) == 17
        for index in range(17):
            assert after[index].get_size() == before[index].get_size()
            assert after[index].get_textpage().get_text_range() == before[index].get_textpage().get_text_range()
    finally:
        before.close()
        after.close()
    assert len(searchable) <= 1.2 * len(original)


def test_a_jpegs_bytes_are_found_unchanged_inside_its_searchable_pdf(gateway):
    # Given a scanned page as a JPEG, read by Tesseract
    (scan,) = scanned_pages([0])
    created = accepted(gateway.post_raw(scan.jpeg, "image/jpeg", {"model": "tesseract"}))
    job = wait_for_job(gateway.job, created["id"], timeout=OCR_TIMEOUT)
    assert job["status"] == "completed", job

    # When its searchable PDF is fetched
    searchable = fetched_pdf(gateway, job["id"])

    # Then the page's image is the JPEG, byte for byte, and the page carries the words read from it
    with pikepdf.open(io.BytesIO(searchable)) as pdf:
        (page,) = pdf.pages
        (image,) = page.get_images().values()
        assert image.Filter == pikepdf.Name.DCTDecode
        assert image.read_raw_bytes() == scan.jpeg
    assert page_accuracy(source_text(0), page_texts(searchable)[0]) >= 0.9
    assert len(searchable) <= 1.1 * len(scan.jpeg) + 4 * len(job["result"]["text"].encode())
