"""POST /jobs with split_pages: a PDF, stored once, becomes a group of page ranges; bad splits are refused whole."""

from __future__ import annotations

import hashlib
import json

import pytest

from jobs.config import Settings
from tests.keyspace import keys
from tests.pdfs import text_pdf

from .support import assert_problem, b64, echo_job, fanout, png

MAX_CHILDREN, MAX_PAGES = 4, 12
SEVEN_PAGES = text_pdf(*(f"Page {n}" for n in range(1, 8)))


@pytest.fixture
def settings() -> Settings:
    # Room for real PDFs in a body, and limits the tests reach with a few pages.
    return Settings(max_children=MAX_CHILDREN, max_pages=MAX_PAGES, max_body_bytes=1 << 20)


def pdf_job(data: bytes = SEVEN_PAGES, **fields) -> dict:
    return {"model": "tesseract", "content_type": "application/pdf", "payload": b64(data), **fields}


def children_of(redis, parent_id: str, total: int) -> list[dict]:
    out = []
    for index in range(total):
        child_id = keys.child_id(parent_id, index)
        record = {k.decode(): v.decode() for k, v in redis.hgetall(keys.job(child_id)).items()}
        record["payload"] = redis.get(keys.payload(child_id))
        out.append(record)
    return out


def test_a_raw_pdf_with_split_pages_becomes_a_group_of_its_page_ranges(client, redis, published):
    response = client.post("/jobs?model=tesseract&split_pages=2&max_parallel=1", data=SEVEN_PAGES,
                           content_type="application/pdf")  # fmt: skip

    assert response.status_code == 202
    parent = response.get_json()
    assert (parent["kind"], parent["total"], parent["max_parallel"], parent["model"]) == ("parent", 4, 1, "tesseract")
    children = children_of(redis, parent["id"], 4)
    assert [int(c["pages"]) for c in children] == [2, 2, 2, 1]
    assert [json.loads(c["options"]) for c in children] == [{"first_page": n} for n in (1, 3, 5, 7)]
    assert {c["doc_hash"] for c in children} == {hashlib.sha256(SEVEN_PAGES).hexdigest()}
    assert {c["content_type"] for c in children} == {"application/pdf"}
    # The document is stored once, as the parent's payload; each child names its pages of it and stores none.
    assert redis.get(keys.payload(parent["id"])) == SEVEN_PAGES
    assert [c["source_pages"] for c in children] == ["1-2", "3-4", "5-6", "7-7"]
    assert [c["payload"] for c in children] == [None] * 4
    assert len([d for batch in published for d in batch]) == 1  # the cap: one at a time, one wake-up
    assert redis.hget(keys.job(f"{parent['id']}-0"), "status") == b"queued"


def test_a_json_job_with_split_pages_keeps_its_options_and_numbers_from_its_first_page(client, redis, published):
    job = pdf_job(split_pages=3, doc_hash="contract-7", options={"text_layer": "prefer", "first_page": 10})

    response = client.post("/jobs", json=job)

    assert response.status_code == 202
    parent = response.get_json()
    assert (parent["total"], parent["max_parallel"]) == (3, 0)
    children = children_of(redis, parent["id"], 3)
    assert [json.loads(c["options"]) for c in children] == [
        {"text_layer": "prefer", "first_page": n} for n in (10, 13, 16)]  # fmt: skip
    assert [c["doc_hash"] for c in children] == ["contract-7"] * 3
    assert [c["source_pages"] for c in children] == ["1-3", "4-6", "7-7"]
    assert sum(len(batch) for batch in published) == 3  # no cap: every child released


def test_the_idempotency_key_covers_the_split(client):
    url = "/jobs?model=tesseract&split_pages=2"
    headers = {"Idempotency-Key": "split-1"}
    first = client.post(url, data=SEVEN_PAGES, content_type="application/pdf", headers=headers)
    again = client.post(url, data=SEVEN_PAGES, content_type="application/pdf", headers=headers)

    assert first.status_code == again.status_code == 202
    assert again.headers["Idempotent-Replayed"] == "true" and again.get_json()["id"] == first.get_json()["id"]
    for other in ("/jobs?model=tesseract&split_pages=3", "/jobs?model=tesseract&split_pages=2&max_parallel=1",
                  "/jobs?model=tesseract"):  # fmt: skip
        changed = client.post(other, data=SEVEN_PAGES, content_type="application/pdf", headers=headers)
        assert_problem(changed, 422, "idempotency_key_reused")


def raw(query: str, data: bytes = SEVEN_PAGES, content_type: str = "application/pdf") -> dict:
    return {"path": f"/jobs?{query}", "data": data, "content_type": content_type}


def as_json(body) -> dict:
    return {"path": "/jobs", "json": body}


PNG = png()
REFUSED = {
    "raw split of an image": (raw("split_pages=2", PNG, "image/png"), 422, "invalid_field", None),
    "json split of an image": (
        as_json(pdf_job(PNG, content_type="image/png", split_pages=2)),
        422,
        "invalid_field",
        None,
    ),
    "raw corrupt pdf": (raw("split_pages=2", b"%PDF-1.7\nnot really"), 422, "invalid_document", None),
    "json corrupt pdf": (as_json(pdf_job(b"%PDF-1.7\ngarbage", split_pages=2)), 422, "invalid_document", None),
    "raw split_pages 0": (raw("split_pages=0"), 422, "invalid_field", None),
    "raw split_pages negative": (raw("split_pages=-2"), 422, "invalid_field", None),
    "raw split_pages not a number": (raw("split_pages=two"), 422, "invalid_field", None),
    "json split_pages 0": (as_json(pdf_job(split_pages=0)), 422, "invalid_field", None),
    "json split_pages negative": (as_json(pdf_job(split_pages=-3)), 422, "invalid_field", None),
    "json split_pages string": (as_json(pdf_job(split_pages="2")), 422, "invalid_field", None),
    "json split_pages bool": (as_json(pdf_job(split_pages=True)), 422, "invalid_field", None),
    "raw max_parallel past any int": (
        raw("split_pages=2&max_parallel=99999999999999999999"),
        422,
        "invalid_field",
        None,
    ),
    "json max_parallel past any int": (as_json(pdf_job(split_pages=2, max_parallel=2**64)), 422, "invalid_field", None),
    "raw split_pages past any int": (raw("split_pages=99999999999999999999"), 422, "invalid_field", None),
    "raw max_parallel without split": (raw("max_parallel=2"), 422, "invalid_field", None),
    "json max_parallel without split": (as_json(pdf_job(max_parallel=2)), 422, "invalid_field", None),
    "too many pages": (raw("split_pages=5", text_pdf(*["p"] * (MAX_PAGES + 1))), 422, "too_many_pages", None),
    "too many children": (
        raw("split_pages=1", text_pdf(*["p"] * (MAX_CHILDREN + 1))),
        422,
        "too_many_children",
        None,
    ),  # fmt: skip
    "split in a group's child": (as_json(fanout(echo_job(), pdf_job(split_pages=2))), 422, "invalid_field", 1),
    "split of text": (raw("model=echo&split_pages=2", b"hello", "text/plain"), 422, "invalid_field", None),
}


@pytest.mark.parametrize("request_, status, code, child_index", REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_split_answers_a_problem_and_stores_nothing(
    client, keyspace, published, request_, status, code, child_index
):
    client.post("/jobs", json=echo_job("already there"))  # a keyspace that is not empty
    published.clear()
    before = keyspace()
    kwargs = dict(request_)
    path = kwargs.pop("path")

    body = assert_problem(client.post(path, **kwargs), status, code)

    assert keyspace() == before and published == []
    assert body.get("child_index") == child_index


def test_too_many_pages_says_how_many_and_the_limit(client):
    data = text_pdf(*["p"] * (MAX_PAGES + 1))

    body = assert_problem(client.post("/jobs?split_pages=5", data=data, content_type="application/pdf"), 422,
                          "too_many_pages")  # fmt: skip

    assert (body["page_count"], body["max_pages"]) == (MAX_PAGES + 1, MAX_PAGES)
