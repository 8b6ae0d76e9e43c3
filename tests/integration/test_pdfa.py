"""PDF/A end to end: made on request, point by point, and never claimed falsely, with real processes and engines.

A real gunicorn gateway, Celery worker (Tesseract), coordinator, beat and
Redis.  A scan made from the real specification PDF is read by Tesseract;
its searchable PDF is then asked for as PDF/A-2b (by the query, by the
job's option, by ``ocrgw ocr --output-type pdfa``) and checked with pikepdf
on each requirement ocrgw promises (``tests.pdfa_checks``), with its image
bytes and its text layer; a PDF/A input's plain searchable copy claims
nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway
from tests.integration.live import OCR_TIMEOUT, b64
from tests.integration.polling import wait_for_job
from tests.integration.test_cli import ocrgw
from tests.pdfa_checks import claiming_pdfa, claims, image_streams, pdfa_failures
from tests.scans import page_accuracy, page_texts, real_pdf, scanned_pdf, source_text

pytestmark = pytest.mark.integration

PAGES = (0, 1)
#: Tesseract reads these 200-dpi scans at about 0.97 of the source's characters.
MIN_PAGE_ACCURACY = 0.9
PDFA_2B = {"pdfaid:part": "2", "pdfaid:conformance": "B"}


def completed(gateway: Gateway, response) -> str:
    assert response.status_code == 202, f"{response.status_code}: {response.text}"
    job = wait_for_job(gateway.job, response.json()["id"], timeout=2 * OCR_TIMEOUT)
    assert job["status"] == "completed", job
    return job["id"]


def fetched_pdf(gateway: Gateway, job_id: str, query: str = "") -> bytes:
    def fetched():
        response = gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.pdf{query}", timeout=gateway.timeout)
        assert response.status_code in (200, 202), f"{response.status_code}: {response.text[:300]}"
        return response.status_code == 200 and response.content

    return wait_until(fetched, OCR_TIMEOUT, interval=0.5, message="the searchable PDF was never built")


def assert_reads_as_the_source(pdf: bytes) -> None:
    source = real_pdf()
    for index, text in zip(PAGES, page_texts(pdf), strict=True):
        assert page_accuracy(source_text(index, source), text) >= MIN_PAGE_ACCURACY, (index, text[:300])


def test_a_scans_pdfa_asked_for_by_the_query_meets_each_requirement_beside_its_plain_pdf(gateway):
    # Given a two-page scan read by Tesseract
    scan = scanned_pdf(PAGES)
    job_id = completed(gateway, gateway.post_raw(scan, "application/pdf", {"model": "tesseract"}))

    # When its searchable PDF is fetched as PDF/A, and as the plain PDF
    pdfa = fetched_pdf(gateway, job_id, "?output_type=pdfa")
    plain = fetched_pdf(gateway, job_id)

    # Then the PDF/A meets each point, keeps the scan's image bytes and reads as the source; the plain one claims
    # nothing
    assert pdfa_failures(pdfa) == [] and claims(pdfa) == PDFA_2B
    assert image_streams(pdfa) == image_streams(scan)
    assert_reads_as_the_source(pdfa)
    assert claims(plain) == {} and image_streams(plain) == image_streams(scan)
    assert len(pdfa) <= 1.05 * len(scan) + (len(plain) - len(scan)) + 4_000  # the scan, its text, the profile


def test_the_jobs_output_type_option_makes_its_pdf_pdfa(gateway):
    scan = scanned_pdf(PAGES)
    job = {"model": "tesseract", "content_type": "application/pdf", "payload": b64(scan),
           "options": {"output_type": "pdfa"}}  # fmt: skip
    job_id = completed(gateway, gateway.post_json(job))

    pdfa = fetched_pdf(gateway, job_id)

    assert pdfa_failures(pdfa) == [] and claims(pdfa) == PDFA_2B
    assert image_streams(pdfa) == image_streams(scan)


def test_a_pdfa_inputs_plain_searchable_copy_claims_nothing(gateway):
    document = claiming_pdfa(scanned_pdf(PAGES))
    assert claims(document)
    job_id = completed(gateway, gateway.post_raw(document, "application/pdf", {"model": "tesseract"}))

    plain = fetched_pdf(gateway, job_id)

    assert claims(plain) == {}
    assert_reads_as_the_source(plain)


def test_ocrgw_ocr_with_output_type_pdfa_writes_a_pdfa(api, tmp_path: Path):
    scan = scanned_pdf(PAGES)
    (tmp_path / "scan.pdf").write_bytes(scan)
    out = tmp_path / "archived.pdf"

    done = ocrgw(api.base_url, "ocr", str(tmp_path / "scan.pdf"), str(out), "--output-type", "pdfa", "-j", "2")

    assert done.returncode == 0, done.stderr
    pdfa = out.read_bytes()
    assert pdfa_failures(pdfa) == [] and claims(pdfa) == PDFA_2B
    assert image_streams(pdfa) == image_streams(scan)
    assert_reads_as_the_source(pdfa)
