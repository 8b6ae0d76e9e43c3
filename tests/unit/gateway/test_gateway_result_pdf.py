"""GET /jobs/{id}/result.pdf: asked for once (202), built by a worker, then kept and answered (200); and the
merged result of a split PDF: pages keep their numbers."""

from __future__ import annotations

import io

import pypdfium2 as pdfium
import pytest
from celery.exceptions import SoftTimeLimitExceeded
from PIL import Image

from gateway.api.results import PDF_ASK_MARGIN_SECONDS
from jobs.config import Settings, default_of
from jobs.records import Dispatch
from jobs.transitions.spec import BUILD_PDF
from tests.keyspace import keys
from tests.pdfa_checks import claims, pdfa_failures
from tests.pdfs import image_pdf, text_pdf
from workers import pdf_build

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


def built(client, store, published, job_id: str, model: str = "tesseract"):
    """The PDF as a client gets it: the first ask answers 202 and sends one build, a worker builds it, the next
    ask answers it."""
    published.clear()
    asked = client.get(f"/jobs/{job_id}/result.pdf")
    assert asked.status_code == 202, asked.get_data(as_text=True)
    assert asked.headers["Retry-After"] == "1"
    assert asked.get_json() == {"id": job_id, "status": "building", "url": f"/jobs/{job_id}/result.pdf"}
    assert published == [[Dispatch(job_id, model, BUILD_PDF)]]
    assert pdf_build.build_pdf(store, job_id) == pdf_build.BUILT
    return client.get(f"/jobs/{job_id}/result.pdf")


def pdf_texts(response) -> list[str]:
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "application/pdf"
    document = pdfium.PdfDocument(response.get_data())
    return [document[i].get_textpage().get_text_range() for i in range(len(document))]


def submit_png(client) -> str:
    return client.post("/jobs?model=tesseract", data=png(), content_type="image/png").get_json()["id"]


def test_a_completed_image_jobs_pdf_is_built_once_and_is_its_image_with_its_text(client, store, published):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "Invoice 42")))

    response = built(client, store, published, job_id)

    assert pdf_texts(response) == ["Invoice 42"]
    assert response.headers["Content-Disposition"] == f'inline; filename="{job_id}.pdf"'
    # Kept: asked again, it is answered from the store, and no other build is sent.
    published.clear()
    again = client.get(f"/jobs/{job_id}/result.pdf")
    assert again.status_code == 200 and again.get_data() == response.get_data() and published == []


def test_while_a_build_is_under_way_no_other_is_asked_for_until_its_mark_lapses(client, store, published, redis):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "once")))
    published.clear()

    answers = [client.get(f"/jobs/{job_id}/result.pdf").status_code for _ in range(3)]

    assert answers == [202] * 3 and published == [[Dispatch(job_id, "tesseract", BUILD_PDF)]]
    # The mark outlives a build that runs to the job time limit, and then lapses.
    assert (
        PDF_ASK_MARGIN_SECONDS < redis.ttl(keys.pdf_asked(job_id)) <= default_of("job_timeout") + PDF_ASK_MARGIN_SECONDS
    )
    redis.delete(keys.pdf_asked(job_id))  # what the TTL does to a build whose message was lost
    assert client.get(f"/jobs/{job_id}/result.pdf").status_code == 202
    assert len(published) == 2


def test_a_split_parents_pdf_is_its_document_with_its_completed_childrens_text(client, store, published):
    data = text_pdf("one", "two", "three", "four", "five")
    parent_id = client.post("/jobs?split_pages=2", data=data, content_type="application/pdf").get_json()["id"]
    # Each child's result numbers its pages in the whole document; child 1 fails.
    run(store, f"{parent_id}-0", result_of((1, "ocr one"), (2, "ocr two")))
    run(store, f"{parent_id}-1", "engine_timeout")
    run(store, f"{parent_id}-2", result_of((5, "ocr five")))

    texts = pdf_texts(built(client, store, published, parent_id))
    merged = client.get(f"/jobs/{parent_id}/result").get_json()

    # Every page of the document (its own text layer kept), the failed child's pages without OCR text.
    assert len(texts) == 5
    assert ["ocr one" in texts[0], "ocr two" in texts[1], "ocr" in texts[2], "ocr" in texts[3]] == [
        True,
        True,
        False,
        False,
    ]
    assert "ocr five" in texts[4]
    assert [(p["page"], p["child_index"], p["text"]) for p in merged["pages"]] == [
        (1, 0, "ocr one"), (2, 0, "ocr two"), (5, 2, "ocr five")]  # fmt: skip
    assert merged["text"] == "ocr one\n\nocr two\n\nocr five"


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


def test_a_build_that_fails_is_kept_as_such_and_answered_pdf_unavailable(client, store, published, redis):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "gone")))
    redis.delete(keys.payload(job_id))
    assert client.get(f"/jobs/{job_id}/result.pdf").status_code == 202

    assert pdf_build.build_pdf(store, job_id) == pdf_build.FAILED

    body = assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "pdf_unavailable")
    assert "no longer stored" in body["detail"]


@pytest.mark.parametrize(
    ("stopped_by", "said"),
    [(SoftTimeLimitExceeded(), "job time limit"), (MemoryError(), "more memory")],
)
def test_a_build_stopped_by_the_time_limit_or_the_memory_bound_is_kept_as_failed(
    client, store, redis, monkeypatch, stopped_by, said
):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "too big")))

    def stopped(*args, **kwargs):
        raise stopped_by

    monkeypatch.setattr(pdf_build, "run_isolated", stopped)

    assert pdf_build.build_pdf(store, job_id) == pdf_build.FAILED
    body = assert_problem(client.get(f"/jobs/{job_id}/result.pdf"), 409, "pdf_unavailable")
    assert said in body["detail"]


def test_a_split_childs_pdf_is_its_pages_of_the_document(client, store, published):
    data = text_pdf("one", "two", "three")
    parent_id = client.post("/jobs?split_pages=2", data=data, content_type="application/pdf").get_json()["id"]
    run(store, f"{parent_id}-1", result_of((3, "ocr three")))

    texts = pdf_texts(built(client, store, published, f"{parent_id}-1"))

    assert len(texts) == 1 and "ocr three" in texts[0] and "three" in texts[0]


def test_a_non_split_groups_pdf_holds_its_completed_childrens_documents_in_order(client, store, published):
    image = {"model": "tesseract", "content_type": "image/png", "payload": b64(png())}
    parent_id = client.post("/jobs", json=fanout(image, image, image)).get_json()["id"]
    run(store, f"{parent_id}-0", result_of((1, "first")))
    run(store, f"{parent_id}-1", "engine_timeout")
    run(store, f"{parent_id}-2", result_of((1, "third")))

    assert pdf_texts(built(client, store, published, parent_id)) == ["first", "third"]


def test_a_redrive_drops_the_parents_pdf_and_a_build_of_the_old_ending_is_not_kept(client, store, published, redis):
    image = {"model": "tesseract", "content_type": "image/png", "payload": b64(png())}
    parent_id = client.post("/jobs", json=fanout(image, image)).get_json()["id"]
    run(store, f"{parent_id}-0", result_of((1, "first")))
    run(store, f"{parent_id}-1", "engine_timeout")
    assert pdf_texts(built(client, store, published, parent_id)) == ["first"]
    old_ending = store.queries.get(parent_id)["finished_at"]

    assert client.post(f"/jobs/{parent_id}/retry").status_code == 202

    assert not redis.exists(keys.pdf(parent_id)) and not redis.exists(keys.pdf_asked(parent_id))
    run(store, f"{parent_id}-1", result_of((1, "second")))
    assert not store.record_pdf(parent_id, old_ending, pdf=b"%PDF- of the old pages")
    assert pdf_texts(built(client, store, published, parent_id)) == ["first", "second"]


def test_an_unknown_jobs_pdf_is_404(client):
    assert_problem(client.get(f"/jobs/{'0' * 32}/result.pdf"), 404, "job_not_found")


# -- the PDF's variants: output type and optimisation -----------------------------------------------


def built_variant(client, store, published, job_id: str, query: str, variant: str) -> bytes:
    """A variant as a client gets it: asked for by ``query`` (202, one build of ``variant``), built, answered."""
    published.clear()
    asked = client.get(f"/jobs/{job_id}/result.pdf{query}")
    assert asked.status_code == 202, asked.get_data(as_text=True)
    assert asked.get_json()["url"] == f"/jobs/{job_id}/result.pdf{query}"
    pdf_variant = "" if variant == "pdf" else variant
    assert published == [[Dispatch(job_id, "tesseract", BUILD_PDF, pdf_variant=pdf_variant)]]
    assert pdf_build.build_pdf(store, job_id, variant) == pdf_build.BUILT
    response = client.get(f"/jobs/{job_id}/result.pdf{query}")
    assert response.status_code == 200 and response.mimetype == "application/pdf"
    return response.get_data()


def test_the_query_asks_for_a_pdfa_which_is_built_and_kept_beside_the_plain_pdf(client, store, published):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "Invoice 42")))
    plain = built(client, store, published, job_id).get_data()

    pdfa = built_variant(client, store, published, job_id, "?output_type=pdfa", "pdfa")

    assert pdfa_failures(pdfa) == [] and claims(pdfa) == {"pdfaid:part": "2", "pdfaid:conformance": "B"}
    assert claims(plain) == {} and pdfa_failures(plain)
    assert client.get(f"/jobs/{job_id}/result.pdf").get_data() == plain  # still kept, and still plain
    optimised = built_variant(client, store, published, job_id, "?output_type=pdfa&optimize=2", "pdfa-o2")
    assert pdfa_failures(optimised) == []


def test_the_jobs_options_choose_its_variant_and_the_query_overrides_them(client, store, published):
    job = {"model": "tesseract", "content_type": "image/png", "payload": b64(png()), "options": {"output_type": "pdfa"}}
    job_id = client.post("/jobs", json=job).get_json()["id"]
    run(store, job_id, result_of((1, "Invoice 42")))

    pdfa = built_variant(client, store, published, job_id, "", "pdfa")
    plain = built_variant(client, store, published, job_id, "?output_type=pdf", "pdf")

    assert pdfa_failures(pdfa) == [] and claims(plain) == {}


def test_a_split_groups_pdf_is_made_as_its_childrens_options_say(client, store, published):
    scan = image_pdf("page one", "page two")
    job = {"model": "tesseract", "content_type": "application/pdf", "payload": b64(scan), "split_pages": 1,
           "options": {"output_type": "pdfa"}}  # fmt: skip
    parent_id = client.post("/jobs", json=job).get_json()["id"]
    run(store, f"{parent_id}-0", result_of((1, "page one")))
    run(store, f"{parent_id}-1", result_of((2, "page two")))

    pdfa = built_variant(client, store, published, parent_id, "", "pdfa")

    assert pdfa_failures(pdfa) == [] and len(pdfium.PdfDocument(pdfa)) == 2


def test_a_pdfa_that_cannot_be_made_is_unavailable_with_its_reason_and_the_plain_pdf_is_not(client, store, published):
    job_id = client.post("/jobs?model=tesseract", data=text_pdf("Invoice 42"), content_type="application/pdf")
    job_id = job_id.get_json()["id"]
    run(store, job_id, result_of((1, "Invoice 42")))
    client.get(f"/jobs/{job_id}/result.pdf?output_type=pdfa")

    assert pdf_build.build_pdf(store, job_id, "pdfa") == pdf_build.FAILED

    problem = assert_problem(client.get(f"/jobs/{job_id}/result.pdf?output_type=pdfa"), 409, "pdf_unavailable")
    assert "Helvetica, which the PDF does not embed" in problem["detail"]
    assert pdf_texts(built(client, store, published, job_id)) == ["Invoice 42"]


@pytest.mark.parametrize(
    "query",
    ["output_type=pdfa-3", "output_type=PDFA", "optimize=3", "optimize=-1", "optimize=x", "optimize=1&optimize=2"],
)
def test_a_variant_no_job_can_have_is_refused_and_asks_for_nothing(client, store, published, redis, query):
    job_id = submit_png(client)
    run(store, job_id, result_of((1, "Invoice 42")))
    published.clear()

    assert_problem(client.get(f"/jobs/{job_id}/result.pdf?{query}"), 422, "invalid_field")

    assert published == [] and not redis.keys("*pdf_asked*")


@pytest.mark.parametrize("options", [{"output_type": "pdfa-1"}, {"optimize": 3}, {"optimize": "1"}, {"optimize": True}])
def test_a_job_whose_pdf_options_no_pdf_can_have_is_refused_at_submission(client, redis, options):
    job = {"model": "tesseract", "content_type": "image/png", "payload": b64(png()), "options": options}

    problem = assert_problem(client.post("/jobs", json=job), 422, "invalid_field")

    assert "options" in problem["errors"] and not redis.keys("*job:*")
