"""Single jobs end to end: real gunicorn gateway, Celery worker, Redis, OCR engines.

Each test submits over HTTP, polls until the job is terminal and checks what
a client sees: the result the engine produced, the times and attempts the
transitions recorded, and the one audit event of the job.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from documents.pages import open_document
from tests import bad_documents
from tests.integration.live import (
    ECHO_TIMEOUT,
    OCR_TIMEOUT,
    accepted,
    b64,
    parse_time,
    pdf_bytes,
    png_bytes,
    squashed,
)
from tests.integration.polling import wait_for_job
from tests.scans import scanned_pdf

pytestmark = pytest.mark.integration

WORDS = "HELLO OCRGW 2026"


def echo_job(text: str, **options) -> dict:
    job: dict[str, Any] = {"model": "echo", "content_type": "text/plain", "payload": b64(text)}
    if options:
        job["options"] = options
    return job


def test_tesseract_reads_a_raw_png(api, tmp_path):
    # Given a PNG page with clear words
    png = png_bytes(tmp_path, WORDS)

    # When it is posted as the raw body
    response = api.post_raw(png, "image/png", model="tesseract")
    job_id = accepted(response)
    assert response.json()["status"] in {"queued", "processing", "completed"}
    job = wait_for_job(api.job, job_id, timeout=OCR_TIMEOUT)

    # Then the job completed once, with the words, line details and ordered times
    assert job["status"] == "completed", job
    assert (job["kind"], job["model"], job["content_type"]) == ("single", "tesseract", "image/png")
    assert job["attempts"] == 1
    assert job["error_code"] is None and job["error"] is None
    result = job["result"]
    assert WORDS in result["text"]
    lines = result["pages"][0]["lines"]
    assert lines and WORDS in " ".join(line["text"] for line in lines)
    for line in lines:
        assert line["text"] and 0 <= line["confidence"] <= 1
        x0, y0, x1, y1 = line["bbox"]
        assert 0 <= x0 < x1 and 0 <= y0 < y1
    created, started, finished = (parse_time(job[f]) for f in ("created_at", "started_at", "finished_at"))
    assert created <= started <= finished

    # And its audit trail is exactly one completion event
    events = api.events(job_id)
    assert [(e["operation"], e["status"], e["job_id"]) for e in events] == [("job", "completed", job_id)]
    assert events[0]["model"] == "tesseract" and events[0]["parent_job_id"] is None
    parse_time(events[0]["time"])


def test_location_header_points_at_the_job(api):
    response = api.post_json(echo_job("where am I"))
    job_id = accepted(response)
    followed = api.http.get(api.url(response.headers["Location"]), timeout=api.timeout)
    assert followed.status_code == 200 and followed.json()["id"] == job_id
    wait_for_job(api.job, job_id, timeout=ECHO_TIMEOUT)  # leave nothing in flight for the next test


def test_paddleocr_reads_a_png_sent_as_json(api, tmp_path):
    # Given the same page as a base64 JSON single job
    body = {"model": "paddleocr", "content_type": "image/png", "payload": b64(png_bytes(tmp_path, WORDS))}

    # When it runs through PP-OCRv4
    job = wait_for_job(api.job, accepted(api.post_json(body)), timeout=OCR_TIMEOUT)

    # Then the words come back (the bundled model drops spaces between all-caps words)
    assert job["status"] == "completed", job
    assert job["model"] == "paddleocr" and job["attempts"] == 1
    assert squashed(WORDS) in squashed(job["result"]["text"])
    line = job["result"]["pages"][0]["lines"][0]
    assert line["text"] and 0 < line["confidence"] <= 1 and len(line["bbox"]) == 4
    assert [(e["operation"], e["status"]) for e in api.events(job["id"])] == [("job", "completed")]


def test_tesseract_reads_a_two_page_pdf_in_order(api, tmp_path):
    # Given a PDF whose two pages say different things
    pdf = pdf_bytes(tmp_path, "FIRST PAGE ALPHA", "SECOND PAGE OMEGA")

    # When it is OCRed
    job = wait_for_job(api.job, accepted(api.post_raw(pdf, "application/pdf", model="tesseract")), timeout=OCR_TIMEOUT)

    # Then both pages come back, in order, and the merged text keeps that order
    assert job["status"] == "completed", job
    pages = job["result"]["pages"]
    assert [p["page"] for p in pages] == [1, 2]
    assert "FIRST PAGE ALPHA" in pages[0]["text"] and "OMEGA" not in pages[0]["text"]
    assert "SECOND PAGE OMEGA" in pages[1]["text"] and "ALPHA" not in pages[1]["text"]
    text = job["result"]["text"]
    assert text.index("FIRST PAGE ALPHA") < text.index("SECOND PAGE OMEGA")
    assert job["progress"] == 1


def test_corrupt_png_fails_as_invalid_document_and_the_worker_keeps_serving(api):
    # Given a PNG whose header is fine (the gateway reads it) and whose pixels are garbage
    corrupt = bad_documents.png(64, 64, idat=bytes(range(256)) * 8)

    # When it is OCRed
    job = wait_for_job(api.job, accepted(api.post_raw(corrupt, "image/png", model="tesseract")), timeout=OCR_TIMEOUT)

    # Then it fails once, as a bad document, without retries
    assert job["status"] == "failed", job
    assert job["error_code"] == "invalid_document" and job["error"]
    assert job["attempts"] == 1 and job["result"] is None
    events = api.events(job["id"])
    assert [(e["operation"], e["status"], e["error_code"]) for e in events] == [("job", "failed", "invalid_document")]

    # And the worker still serves the next job
    after = wait_for_job(api.job, accepted(api.post_json(echo_job("still alive"))), timeout=ECHO_TIMEOUT)
    assert after["status"] == "completed" and after["result"]["text"] == "still alive"


def test_echo_fail_option_fails_the_job(api):
    job = wait_for_job(api.job, accepted(api.post_json(echo_job("doomed", fail=True))), timeout=ECHO_TIMEOUT)

    assert job["status"] == "failed", job
    assert job["error_code"] == "echo_failed" and job["error"]
    assert job["attempts"] == 1  # a permanent error is not retried
    assert [(e["status"], e["error_code"]) for e in api.events(job["id"])] == [("failed", "echo_failed")]


def test_echo_with_a_delay_completes_with_its_text(api):
    job = wait_for_job(
        api.job, accepted(api.post_json(echo_job("line one\nline two", delay_ms=300))), timeout=ECHO_TIMEOUT
    )

    assert job["status"] == "completed", job
    assert job["result"]["text"] == "line one\nline two"
    assert [line["text"] for line in job["result"]["pages"][0]["lines"]] == ["line one", "line two"]
    # A lower bound only: the sleep lies between claim and completion, both
    # stamped with Redis TIME.  How much longer it took is never asserted.
    ran = parse_time(job["finished_at"]) - parse_time(job["started_at"])
    assert ran.total_seconds() >= 0.3


def test_echo_as_a_raw_text_body(api):
    job = wait_for_job(
        api.job,
        accepted(api.post_raw("grüße".encode(), "text/plain; charset=utf-8", model="echo")),
        timeout=ECHO_TIMEOUT,
    )

    assert job["status"] == "completed", job
    assert (job["model"], job["content_type"], job["result"]["text"]) == ("echo", "text/plain", "grüße")


def test_a_tesseract_page_past_the_jobs_budget_is_stopped_in_the_middle_and_the_worker_reads_the_next_job(
    api, current_deployment, tmp_path
):
    # Given a page Tesseract takes several seconds to read: four scanned pages side by side
    log_from = len(current_deployment.worker.log_text())
    with open_document(scanned_pdf([2, 3, 4, 5]), "application/pdf") as doc:
        scans = [doc.page(i).convert("L") for i in range(doc.page_count)]
    sheet = Image.new("L", (scans[0].width * len(scans), scans[0].height), 255)
    for at, scan in enumerate(scans):
        sheet.paste(scan, (at * scan.width, 0))
    page = io.BytesIO()
    sheet.save(page, "PNG", dpi=(200, 200))

    # When it is read with a budget of a fraction of that
    job = {
        "model": "tesseract",
        "content_type": "image/png",
        "payload": b64(page.getvalue()),
        "options": {"timeout_s": 2.0},
    }
    ended = wait_for_job(api.job, accepted(api.post_json(job)), timeout=OCR_TIMEOUT)

    # Then Tesseract is stopped in the middle of the page (not before it: "after 0 of 1 pages")
    assert (ended["status"], ended["error_code"]) == ("failed", "engine_timeout"), ended
    assert ended["error"] == "tesseract ran out of time on page 1"
    # And the same pool processes, none lost, read the next Tesseract job
    good = png_bytes(tmp_path, WORDS)
    after = wait_for_job(api.job, accepted(api.post_raw(good, "image/png", model="tesseract")), timeout=OCR_TIMEOUT)
    assert after["status"] == "completed" and WORDS in after["result"]["text"], after
    log = current_deployment.worker.log_text()[log_from:]
    assert "WorkerLostError" not in log and "exited with" not in log, log[-5000:]
