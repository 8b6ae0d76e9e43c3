"""GET /jobs/{id}/result.pdf, and the merged result of a split PDF: pages keep their numbers."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pytest
from PIL import Image

from jobs import keys
from jobs.config import Settings
from tests.pdfs import text_pdf

from .support import assert_problem, b64, echo_job, fanout


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=4, max_pages=20, max_body_bytes=1 << 20)


def png(size=(800, 300)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, "white").save(buffer, "PNG")
    return buffer.getvalue()


def result_of(*pages: tuple[int, str], source: str = "ocr") -> dict:
    """A result whose page ``n`` holds one line, ``text``, in the top left corner of an 800x300 image."""
    return {
        "text": "\n\n".join(text for _, text in pages),
        "pages": [{"page": n, "text": text, "source": source, "width": 800, "height": 300,
                   "lines": [{"text": text, "confidence": 0.9, "bbox": [40, 40, 400, 80]}]} for n, text in pages],
    }  # fmt: skip


def run(store, job_id: str, outcome: dict | str) -> None:
    claim = store.claim(job_id)
    if isinstance(outcome, dict):
        store.complete(job_id, claim.attempt, outcome)
    else:
        store.fail(job_id, claim.attempt, outcome, f"{outcome} happened")


def pdf_texts(response) -> list[str]:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/pdf"
    document = pdfium.PdfDocument(response.get_data())
    return [document[i].get_textpage().get_text_range() for i in range(len(document))]


def submit_png(client) -> str:
    return client.post("/jobs?model=tesseract", data=png(), content_type="image/png").get_json()["id"]


def test_a_completed_image_jobs_pdf_is_its_image_with_its_text(client, store):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "Invoice 42")))

    response = client.get(f"/jobs/{job_id}/result.pdf")

    assert pdf_texts(response) == ["Invoice 42"]
    assert response.headers["Content-Disposition"] == f'inline; filename="{job_id}.pdf"'


def test_a_split_parents_pdf_holds_its_completed_childrens_pages_in_order(client, store):
    data = text_pdf("one", "two", "three", "four", "five")
    parent_id = client.post("/jobs?split_pages=2", data=data, content_type="application/pdf").get_json()["id"]
    # Each child's result numbers its pages in the whole document; child 1 fails.
    # The pages carry their text, so they were answered from it and go in as they are.
    run(store, f"{parent_id}-0", result_of((1, "one"), (2, "two"), source="text_layer"))
    run(store, f"{parent_id}-1", "engine_timeout")
    run(store, f"{parent_id}-2", result_of((5, "five"), source="text_layer"))

    texts = pdf_texts(client.get(f"/jobs/{parent_id}/result.pdf"))
    merged = client.get(f"/jobs/{parent_id}/result").get_json()

    assert texts == ["one", "two", "five"]
    assert [(p["page"], p["child_index"], p["text"]) for p in merged["pages"]] == [
        (1, 0, "one"), (2, 0, "two"), (5, 2, "five")]  # fmt: skip
    assert merged["text"] == "one\n\ntwo\n\nfive"


def test_a_groups_merged_pages_are_numbered_across_its_children(client, store):
    parent_id = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    run(store, f"{parent_id}-0", result_of((1, "a")))
    run(store, f"{parent_id}-1", result_of((1, "b")))

    merged = client.get(f"/jobs/{parent_id}/result").get_json()

    assert [(p["page"], p["child_index"]) for p in merged["pages"]] == [(1, 0), (2, 1)]


def test_before_the_end_the_pdf_is_not_ready(client, store):
    job_id = submit_png(client)
    parent_id = client.post("/jobs", json=fanout({"model": "tesseract", "content_type": "image/png",
                                                  "payload": b64(png())})).get_json()["id"]  # fmt: skip

    single = assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "result_not_ready")
    group = assert_problem(client.get(f"/jobs/{parent_id}/result.pdf"), 409, "result_not_ready")

    assert single["job_status"] == "queued" and group["job_status"] == "queued"


def test_a_failed_job_or_a_group_without_a_completed_child_has_no_pdf(client, store):
    job_id = submit_png(client)
    run(store, job_id, "invalid_document")
    parent_id = client.post("/jobs?split_pages=5", data=text_pdf("x"), content_type="application/pdf").get_json()["id"]
    run(store, f"{parent_id}-0", "engine_timeout")

    single = assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "no_result")
    group = assert_problem(client.get(f"/jobs/{parent_id}/result.pdf"), 409, "no_result")

    assert (single["job_status"], single["error_code"]) == ("failed", "invalid_document")
    assert group["job_status"] == "failed"


def test_text_jobs_make_no_pdf(client, store):
    job_id = client.post("/jobs", json=echo_job("plain text")).get_json()["id"]
    run(store, job_id, result_of((1, "plain text")))
    parent_id = client.post("/jobs", json=fanout(echo_job("t"), {"model": "tesseract", "content_type": "image/png",
                                                                 "payload": b64(png())})).get_json()["id"]  # fmt: skip
    run(store, f"{parent_id}-0", result_of((1, "t")))
    run(store, f"{parent_id}-1", result_of((1, "image")))

    single = assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "pdf_unavailable")
    group = assert_problem(client.get(f"/jobs/{parent_id}/result.pdf"), 409, "pdf_unavailable")

    assert "text/plain" in single["detail"] and "text/plain" in group["detail"]


def test_a_document_no_longer_stored_makes_no_pdf(client, store, redis):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "gone")))
    redis.delete(keys.payload(job_id))

    assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "pdf_unavailable")


def test_an_unknown_jobs_pdf_is_404(client):
    assert_problem(client.get(f"/jobs/{'0' * 32}/result.pdf"), 404, "job_not_found")
