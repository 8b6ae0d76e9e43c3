"""GET /jobs/{id}/result.hocr and GET /jobs/{id}/result.alto: a job's result as hOCR and as ALTO."""

from __future__ import annotations

import pytest

from jobs.config import Settings
from tests.pdfs import text_pdf
from tests.unit.documents.markup_support import (
    alto_pages,
    alto_words,
    expected_words,
    hocr_pages,
    hocr_words,
    in_percent,
    to_places,
)

from .support import assert_problem, echo_job, fanout

FORMATS = [("hocr", "application/xhtml+xml"), ("alto", "application/xml")]


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=4, max_pages=20, max_body_bytes=1 << 20)


def page_of(n: int, *texts: str) -> dict:
    """Page ``n`` of an 800x300 image: a line of words per text, the last line without its words (an older result)."""
    lines = []
    for row, text in enumerate(texts):
        top, bottom = 40 + 50 * row, 80 + 50 * row
        words, x = [], 40
        for i, token in enumerate(text.split()):
            words.append({"text": token, "confidence": round(0.6 + 0.1 * i, 4), "bbox": [x, top, x + 90, bottom]})
            x += 100
        line = {"text": text, "confidence": 0.75, "bbox": [40, top, x - 10, bottom], "words": words}
        lines.append(line)
    lines.append({"text": "no words", "confidence": 0.5, "bbox": [40, 250, 200, 280]})
    return {"page": n, "text": "\n".join([*texts, "no words"]), "source": "ocr", "width": 800, "height": 300,
            "rotation": 0, "skew": 0.0, "lines": lines}  # fmt: skip


def result_of(*pages: dict) -> dict:
    return {"text": "\n\n".join(p["text"] for p in pages), "pages": list(pages)}


def run(store, job_id: str, outcome: dict | str) -> None:
    claim = store.claim(job_id)
    if isinstance(outcome, dict):
        store.complete(job_id, claim.attempt, outcome)
    else:
        store.fail(job_id, claim.attempt, outcome, f"{outcome} happened")


def words_in(fmt: str, response) -> list[list[list]]:
    """Each page's lines of words, as the document holds them."""
    text = response.get_data(as_text=True)
    if fmt == "hocr":
        return [hocr_words(page) for page in hocr_pages(text)]
    return [alto_words(page) for page in alto_pages(text)]


def expected(fmt: str, pages: list[dict]) -> list[list[list]]:
    return [(in_percent if fmt == "hocr" else to_places)(expected_words(page)) for page in pages]


def page_numbers(fmt: str, response) -> list[int]:
    """Each page's number in the whole document, as the document says it."""
    text = response.get_data(as_text=True)
    if fmt == "hocr":
        return [int(p.get("title", "").split("ppageno ")[1]) + 1 for p in hocr_pages(text)]
    return [int(p.get("PHYSICAL_IMG_NR", "")) for p in alto_pages(text)]


def ok(response, media_type: str):
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == media_type
    assert response.mimetype_params == {"charset": "utf-8"}
    return response


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_a_completed_jobs_document_holds_every_word_of_its_result(client, store, fmt, media_type):
    job_id = client.post("/jobs", json=echo_job("x")).get_json()["id"]
    result = result_of(page_of(1, "Invoice 42 <paid> & done"), page_of(2, "Total 1.234,50"))
    run(store, job_id, result)

    response = ok(client.get(f"/jobs/{job_id}/result.{fmt}"), media_type)

    assert words_in(fmt, response) == expected(fmt, result["pages"])
    assert page_numbers(fmt, response) == [1, 2]
    suffix = "hocr" if fmt == "hocr" else "xml"
    assert response.headers["Content-Disposition"] == f'inline; filename="{job_id}.{suffix}"'


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_a_split_parents_document_holds_its_completed_childrens_pages_in_document_order(client, store, fmt, media_type):
    data = text_pdf("one", "two", "three", "four", "five")
    parent_id = client.post("/jobs?split_pages=2", data=data, content_type="application/pdf").get_json()["id"]
    first, last = [page_of(1, "one"), page_of(2, "two")], [page_of(5, "five")]
    run(store, f"{parent_id}-0", result_of(*first))
    run(store, f"{parent_id}-1", "engine_timeout")
    run(store, f"{parent_id}-2", result_of(*last))

    group = ok(client.get(f"/jobs/{parent_id}/result.{fmt}"), media_type)
    child = ok(client.get(f"/jobs/{parent_id}-2/result.{fmt}"), media_type)

    assert words_in(fmt, group) == expected(fmt, first + last)
    assert page_numbers(fmt, group) == [1, 2, 5]
    assert words_in(fmt, child) == expected(fmt, last)
    assert page_numbers(fmt, child) == [5]


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_a_groups_document_numbers_its_pages_across_its_children(client, store, fmt, media_type):
    parent_id = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    run(store, f"{parent_id}-0", result_of(page_of(1, "alpha")))
    run(store, f"{parent_id}-1", result_of(page_of(1, "beta")))

    response = ok(client.get(f"/jobs/{parent_id}/result.{fmt}"), media_type)

    assert page_numbers(fmt, response) == [1, 2]
    assert [line[0].text for page in words_in(fmt, response) for line in page[:1]] == ["alpha", "beta"]


@pytest.mark.parametrize(("fmt", "media_type"), FORMATS)
def test_echos_result_without_sizes_or_words_still_renders(client, store, fmt, media_type):
    job_id = client.post("/jobs", json=echo_job("x")).get_json()["id"]
    line = {"text": "hello", "confidence": 1.0, "bbox": [0, 0, 0, 0]}
    page = {"page": 1, "text": "hello", "source": "ocr", "lines": [line]}
    run(store, job_id, result_of(page))

    response = ok(client.get(f"/jobs/{job_id}/result.{fmt}"), media_type)

    assert words_in(fmt, response) == expected(fmt, [page])


@pytest.mark.parametrize("fmt", ["hocr", "alto"])
def test_before_the_end_there_is_no_document(client, store, fmt):
    job_id = client.post("/jobs", json=echo_job("x")).get_json()["id"]
    parent_id = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    run(store, f"{parent_id}-0", result_of(page_of(1, "alpha")))

    single = assert_problem(client.get(f"/jobs/{job_id}/result.{fmt}"), 409, "result_not_ready")
    group = assert_problem(client.get(f"/jobs/{parent_id}/result.{fmt}"), 409, "result_not_ready")

    assert single["job_status"] == "queued" and group["job_status"] == "processing"


@pytest.mark.parametrize("fmt", ["hocr", "alto"])
def test_a_failed_job_or_a_group_without_a_completed_child_has_no_document(client, store, fmt):
    job_id = client.post("/jobs", json=echo_job("x")).get_json()["id"]
    run(store, job_id, "invalid_document")
    parent_id = client.post("/jobs", json=fanout(echo_job("a"))).get_json()["id"]
    run(store, f"{parent_id}-0", "engine_timeout")

    single = assert_problem(client.get(f"/jobs/{job_id}/result.{fmt}"), 409, "no_result")
    group = assert_problem(client.get(f"/jobs/{parent_id}/result.{fmt}"), 409, "no_result")

    assert (single["job_status"], single["error_code"]) == ("failed", "invalid_document")
    assert group["job_status"] == "failed"


@pytest.mark.parametrize("fmt", ["hocr", "alto"])
def test_an_unknown_jobs_document_is_404(client, fmt):
    assert_problem(client.get(f"/jobs/{'0' * 32}/result.{fmt}"), 404, "job_not_found")


def test_hocr_is_sandboxed_so_no_browser_runs_it_on_the_gateways_origin(client, store):
    job_id = client.post("/jobs", json=echo_job("x")).get_json()["id"]
    run(store, job_id, result_of(page_of(1, "<script>alert(1)</script>")))

    response = ok(client.get(f"/jobs/{job_id}/result.hocr"), "application/xhtml+xml")

    policy = [directive.strip() for directive in response.headers["Content-Security-Policy"].split(";")]
    assert "sandbox" in policy and "default-src 'none'" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert b"<script>" not in response.data  # the words' text is escaped, and the sandbox holds anyway
