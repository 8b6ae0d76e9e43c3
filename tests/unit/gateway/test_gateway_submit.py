"""POST /jobs: what is accepted, what is refused with which problem, and that a refusal stores nothing."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from jobs.records import Dispatch
from jobs.transitions.spec import PULL
from tests.unit.conftest import PINNED_BUCKET

from .conftest import MAX_BODY_BYTES, MAX_CHILDREN, MAX_PAGES
from .support import assert_problem, b64, echo_job, fanout, png

PNG = png()


# -- accepted --------------------------------------------------------------------------


def test_raw_document_is_accepted_with_the_default_model(client, store, published):
    response = client.post("/jobs", data=PNG, content_type="image/png")

    assert response.status_code == 202
    job = response.get_json()
    assert response.headers["Location"] == f"/jobs/{job['id']}"
    assert job["kind"] == "single"
    assert job["status"] == "queued"
    assert job["model"] == "tesseract"
    assert job["content_type"] == "image/png"
    assert job["doc_hash"] == hashlib.sha256(PNG).hexdigest()
    assert job["pages"] == 0
    assert published == [[Dispatch("", "tesseract", PULL, "batch", PINNED_BUCKET)]]
    assert store.claim(job["id"]).payload == PNG


def test_raw_document_takes_model_doc_hash_and_pages_from_the_query(client):
    response = client.post("/jobs?model=echo&doc_hash=d0&pages=3", data=b"hi", content_type="Text/Plain; charset=utf-8")

    assert response.status_code == 202
    job = response.get_json()
    assert (job["model"], job["doc_hash"], job["pages"], job["content_type"]) == ("echo", "d0", 3, "text/plain")


def test_json_single_job_is_accepted(client, store, published):
    body = echo_job("hello", doc_hash="d1", pages=2, options={"delay_ms": 1.5, "fail": False, "tag": [1]})
    body["content_type"] = "text/plain; charset=utf-8"

    response = client.post("/jobs", json=body)

    assert response.status_code == 202
    job = response.get_json()
    assert (job["kind"], job["model"], job["doc_hash"], job["pages"]) == ("single", "echo", "d1", 2)
    assert job["content_type"] == "text/plain"
    assert published == [[Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]]
    claim = store.claim(job["id"])
    assert claim.payload == b"hello"
    assert claim.options == {"delay_ms": 1.5, "fail": False, "tag": [1]}


def test_the_page_geometry_options_are_taken_as_given(client, store):
    options = {"rotate_pages": True, "orientation": "osd", "rotate_pages_threshold": 5, "deskew": True}

    response = client.post("/jobs", json=png_job(options=options))

    assert response.status_code == 202, response.get_json()
    assert store.claim(response.get_json()["id"]).options == options


def test_json_without_fanout_is_a_single_job(client):
    response = client.post("/jobs", json={"model": "echo", "payload": b64(b"x"), "content_type": "text/plain"})

    assert response.status_code == 202
    assert response.get_json()["kind"] == "single"


def test_fanout_group_is_accepted_and_releases_up_to_max_parallel(client, published):
    children = [echo_job(f"c{i}", doc_hash=f"d{i}") for i in range(3)]

    response = client.post("/jobs", json=fanout(*children, max_parallel=2))

    assert response.status_code == 202
    group = response.get_json()
    assert response.headers["Location"] == f"/jobs/{group['id']}"
    assert group["kind"] == "parent"
    assert group["status"] == "queued"
    assert group["total"] == 3
    assert group["max_parallel"] == 2
    assert group["counts"] == {"held": 1, "queued": 2, "processing": 0, "completed": 0, "failed": 0, "cancelled": 0}
    assert [c["status"] for c in group["children"]] == ["queued", "queued", "held"]
    assert [c["doc_hash"] for c in group["children"]] == ["d0", "d1", "d2"]
    assert published == [
        [Dispatch("", "echo", PULL, "batch", PINNED_BUCKET), Dispatch("", "echo", PULL, "batch", PINNED_BUCKET)]
    ]


def test_children_may_use_different_models(client, store):
    png_child = {"model": "tesseract", "payload": b64(PNG), "content_type": "image/png"}

    response = client.post("/jobs", json=fanout(echo_job(), png_child))

    group = response.get_json()
    assert response.status_code == 202
    assert group["model"] == "mixed"
    assert [c["model"] for c in group["children"]] == ["echo", "tesseract"]


@pytest.mark.parametrize("max_parallel", [0, -1])
def test_max_parallel_zero_or_less_means_no_cap(client, published, max_parallel):
    response = client.post("/jobs", json=fanout(*[echo_job()] * MAX_CHILDREN, max_parallel=max_parallel))

    assert response.status_code == 202
    assert len(published[0]) == MAX_CHILDREN


def test_limits_are_inclusive(client):
    at_limits = echo_job(doc_hash="h" * 128, pages=MAX_PAGES)

    assert client.post("/jobs", json=fanout(*[at_limits] * MAX_CHILDREN)).status_code == 202
    assert client.post(f"/jobs?model=echo&pages={MAX_PAGES}", data=b"x", content_type="text/plain").status_code == 202
    assert client.post("/jobs?model=echo", data=b"x" * MAX_BODY_BYTES, content_type="text/plain").status_code == 202


def test_a_failing_publisher_does_not_fail_the_request(settings, store, caplog):
    from gateway import create_app

    def publish(dispatches):
        raise ConnectionError("broker down")

    client = create_app(settings, store, publish).test_client()

    response = client.post("/jobs", json=echo_job())

    assert response.status_code == 202
    assert store.queries.get(response.get_json()["id"])["status"] == "queued"  # the sweep will re-publish it
    assert "publishing 1 job messages failed" in caplog.text


# -- refused, and nothing stored ------------------------------------------------------

DEEP = b"[" * 4000 + b"]" * 4000  # within the body limit, beyond the parser's recursion


def json_body(raw: bytes) -> dict:
    return {"data": raw, "content_type": "application/json"}


def post_json(obj) -> dict:
    return json_body(json.dumps(obj).encode())


def child(**changes) -> dict:
    job = echo_job()
    job.update(changes)
    return {k: v for k, v in job.items() if v is not ...}


def png_job(**changes) -> dict:
    return {"model": "tesseract", "payload": b64(PNG), "content_type": "image/png", **changes}


# (path, request kwargs, status, code, child_index)
REFUSED = {
    # 400
    "malformed json": ("/jobs", json_body(b'{"model": '), 400, "malformed_json", None),
    "empty json body": ("/jobs", json_body(b""), 400, "malformed_json", None),
    "json array": ("/jobs", json_body(b"[1, 2]"), 400, "malformed_json", None),
    "json string": ("/jobs", json_body(b'"x"'), 400, "malformed_json", None),
    "json not utf-8": ("/jobs", json_body(b'{"model": "\xff"}'), 400, "malformed_json", None),
    "json NaN": ("/jobs", json_body(b'{"model": "echo", "pages": NaN}'), 400, "malformed_json", None),
    "json number out of range": ("/jobs", json_body(b'{"pages": 1e999}'), 400, "malformed_json", None),
    "json duplicate key": ("/jobs", json_body(b'{"model": "echo", "model": "x"}'), 400, "malformed_json", None),
    "json nested too deep": ("/jobs", json_body(DEEP), 400, "malformed_json", None),
    "bad base64": ("/jobs", post_json(child(payload="!!!!")), 400, "invalid_base64", None),
    "base64 unpadded": ("/jobs", post_json(child(payload="aGk")), 400, "invalid_base64", None),
    "base64 with newline": ("/jobs", post_json(child(payload="aGk=\n")), 400, "invalid_base64", None),
    "base64 urlsafe alphabet": ("/jobs", post_json(child(payload="-_-_")), 400, "invalid_base64", None),
    "base64 not ascii": ("/jobs", post_json(child(payload="aGké")), 400, "invalid_base64", None),
    "child bad base64": ("/jobs", post_json(fanout(echo_job(), child(payload="x"))), 400, "invalid_base64", 1),
    # 413
    "raw too large": (
        "/jobs?model=echo",
        {"data": b"x" * (MAX_BODY_BYTES + 1), "content_type": "text/plain"},
        413,
        "payload_too_large",
        None,
    ),
    "json too large": (
        "/jobs",
        post_json(echo_job("x" * MAX_BODY_BYTES)),
        413,
        "payload_too_large",
        None,
    ),
    # 415
    "missing content type": ("/jobs", {"data": b"hello"}, 415, "missing_content_type", None),
    "raw type the model refuses": (
        "/jobs?model=echo",
        {"data": PNG, "content_type": "image/png"},
        415,
        "unsupported_content_type",
        None,
    ),
    "raw type no model takes": (
        "/jobs",
        {"data": b"x", "content_type": "application/octet-stream"},
        415,
        "unsupported_content_type",
        None,
    ),
    "raw form data is a document too": (
        "/jobs",
        {"data": b"a=b", "content_type": "application/x-www-form-urlencoded"},
        415,
        "unsupported_content_type",
        None,
    ),
    "json type the model refuses": (
        "/jobs",
        post_json(child(content_type="image/png")),
        415,
        "unsupported_content_type",
        None,
    ),
    "child type the model refuses": (
        "/jobs",
        post_json(fanout(echo_job(), echo_job(), child(content_type="application/pdf"))),
        415,
        "unsupported_content_type",
        2,
    ),
    # 422
    "raw unknown model": ("/jobs?model=nope", {"data": b"x", "content_type": "text/plain"}, 422, "unknown_model", None),
    "json unknown model": ("/jobs", post_json(child(model="nope")), 422, "unknown_model", None),
    "child unknown model": ("/jobs", post_json(fanout(child(model="gpt"), echo_job())), 422, "unknown_model", 0),
    "raw empty": ("/jobs?model=echo", {"data": b"", "content_type": "text/plain"}, 422, "empty_document", None),
    "json empty payload": ("/jobs", post_json(child(payload="")), 422, "empty_document", None),
    "child empty payload": ("/jobs", post_json(fanout(echo_job(), child(payload=""))), 422, "empty_document", 1),
    "raw pages too big": (
        f"/jobs?model=echo&pages={MAX_PAGES + 1}",
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "raw pages not digits": (
        "/jobs?model=echo&pages=%2B3",
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "raw pages empty": (
        "/jobs?model=echo&pages=",
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "raw doc_hash too long": (
        "/jobs?model=echo&doc_hash=" + "h" * 129,
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "raw options not on this path": (
        "/jobs?model=echo&options=x",
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "raw query parameter repeated": (
        "/jobs?model=echo&model=tesseract",
        {"data": b"x", "content_type": "text/plain"},
        422,
        "invalid_field",
        None,
    ),
    "json with query parameters": ("/jobs?model=echo", post_json(echo_job()), 422, "invalid_field", None),
    "json pages too big": ("/jobs", post_json(child(pages=MAX_PAGES + 1)), 422, "invalid_field", None),
    "json pages negative": ("/jobs", post_json(child(pages=-1)), 422, "invalid_field", None),
    "json pages float": ("/jobs", post_json(child(pages=2.0)), 422, "invalid_field", None),
    "json pages bool": ("/jobs", post_json(child(pages=True)), 422, "invalid_field", None),
    "json pages string": ("/jobs", post_json(child(pages="2")), 422, "invalid_field", None),
    "json doc_hash too long": ("/jobs", post_json(child(doc_hash="h" * 129)), 422, "invalid_field", None),
    "json doc_hash not a string": ("/jobs", post_json(child(doc_hash=7)), 422, "invalid_field", None),
    "json doc_hash lone surrogate": (
        "/jobs",
        json_body(b'{"model": "echo", "payload": "aGk=", "content_type": "text/plain", "doc_hash": "\\ud800"}'),
        422,
        "invalid_field",
        None,
    ),
    "json options a list": ("/jobs", post_json(child(options=[1])), 422, "invalid_field", None),
    "json options null": ("/jobs", post_json(child(options=None)), 422, "invalid_field", None),
    "echo delay_ms a string": ("/jobs", post_json(child(options={"delay_ms": "5"})), 422, "invalid_field", None),
    "echo delay_ms a bool": ("/jobs", post_json(child(options={"delay_ms": True})), 422, "invalid_field", None),
    "echo delay_ms negative": ("/jobs", post_json(child(options={"delay_ms": -1})), 422, "invalid_field", None),
    "echo fail a string": ("/jobs", post_json(child(options={"fail": "yes"})), 422, "invalid_field", None),
    "echo fail a number": ("/jobs", post_json(child(options={"fail": 1})), 422, "invalid_field", None),
    "tesseract psm out of range": ("/jobs", post_json(png_job(options={"psm": 99})), 422, "invalid_field", None),
    "tesseract lang not a language": (
        "/jobs",
        post_json(png_job(options={"lang": "eng; rm -rf /"})),
        422,
        "invalid_field",
        None,
    ),
    "tesseract orientation unknown": (
        "/jobs",
        post_json(png_job(options={"rotate_pages": True, "orientation": "sideways"})),
        422,
        "invalid_field",
        None,
    ),
    "tesseract misspelt option": ("/jobs", post_json(png_job(options={"timeout": 5})), 422, "invalid_field", None),
    "paddleocr timeout zero": (
        "/jobs",
        post_json(png_job(model="paddleocr", options={"timeout_s": 0})),
        422,
        "invalid_field",
        None,
    ),
    "json payload not a string": ("/jobs", post_json(child(payload=5)), 422, "invalid_field", None),
    "json payload missing": ("/jobs", post_json(child(payload=...)), 422, "invalid_field", None),
    "json model missing": ("/jobs", post_json(child(model=...)), 422, "invalid_field", None),
    "json content_type missing": ("/jobs", post_json(child(content_type=...)), 422, "invalid_field", None),
    "json unknown field": ("/jobs", post_json(child(option={})), 422, "invalid_field", None),
    "max_parallel bool": ("/jobs", post_json(fanout(echo_job(), max_parallel=True)), 422, "invalid_field", None),
    "max_parallel float": ("/jobs", post_json(fanout(echo_job(), max_parallel=2.0)), 422, "invalid_field", None),
    "max_parallel string": ("/jobs", post_json(fanout(echo_job(), max_parallel="2")), 422, "invalid_field", None),
    "max_parallel null": ("/jobs", post_json(fanout(echo_job(), max_parallel=None)), 422, "invalid_field", None),
    "max_parallel missing": (
        "/jobs",
        post_json({"fanout": {"children": [echo_job()]}}),
        422,
        "invalid_field",
        None,
    ),
    "fanout not an object": ("/jobs", post_json({"fanout": [echo_job()]}), 422, "invalid_field", None),
    "fanout beside other keys": (
        "/jobs",
        post_json({**fanout(echo_job()), "model": "echo"}),
        422,
        "invalid_field",
        None,
    ),
    "children not a list": (
        "/jobs",
        post_json({"fanout": {"max_parallel": 1, "children": echo_job()}}),
        422,
        "invalid_field",
        None,
    ),
    "no children": ("/jobs", post_json(fanout()), 422, "no_children", None),
    "too many children": (
        "/jobs",
        post_json(fanout(*[echo_job()] * (MAX_CHILDREN + 1))),
        422,
        "too_many_children",
        None,
    ),
    "child not an object": ("/jobs", post_json(fanout(echo_job(), "x")), 422, "invalid_field", 1),
    "child null": ("/jobs", post_json(fanout(echo_job(), None)), 422, "invalid_field", 1),
    "child pages bool": (
        "/jobs",
        post_json(fanout(echo_job(), echo_job(), child(pages=False))),
        422,
        "invalid_field",
        2,
    ),
    "child echo options": ("/jobs", post_json(fanout(child(options={"fail": "no"}))), 422, "invalid_field", 0),
}


@pytest.mark.parametrize("path, kwargs, status, code, child_index", REFUSED.values(), ids=REFUSED.keys())
def test_refused_requests_answer_a_problem_and_store_nothing(
    client, keyspace, published, path, kwargs, status, code, child_index
):
    client.post("/jobs", json=echo_job("already there"))  # a keyspace that is not empty
    published.clear()
    before = keyspace()

    body = assert_problem(client.post(path, **kwargs), status, code)

    assert keyspace() == before
    assert published == []
    if child_index is None:
        assert "child_index" not in body
    else:
        assert body["child_index"] == child_index
        assert f"Child {child_index}" in body["detail"]


def test_invalid_field_names_each_field_in_errors(client):
    body = assert_problem(client.post("/jobs", json=child(pages=-1, doc_hash=5)), 422, "invalid_field")

    assert set(body["errors"]) == {"pages", "doc_hash"}
    assert "pages" in body["detail"] and "doc_hash" in body["detail"]


def test_invalid_child_field_is_reported_relative_to_the_child(client):
    body = assert_problem(
        client.post("/jobs", json=fanout(echo_job(), child(options={"delay_ms": "soon"}))), 422, "invalid_field"
    )

    assert body["child_index"] == 1
    assert set(body["errors"]) == {"options"}
    assert set(body["errors"]["options"]) == {"delay_ms"}


def test_invalid_max_parallel_is_named(client):
    body = assert_problem(client.post("/jobs", json=fanout(echo_job(), max_parallel=1.5)), 422, "invalid_field")

    assert set(body["errors"]["fanout"]) == {"max_parallel"}


def test_the_first_invalid_child_is_the_one_reported(client):
    request = fanout(echo_job(), child(model="nope"), child(payload="!"), max_parallel=1)

    body = assert_problem(client.post("/jobs", json=request), 422, "unknown_model")

    assert body["child_index"] == 1


def test_unsupported_content_type_lists_what_the_model_accepts(client):
    body = assert_problem(
        client.post("/jobs?model=echo", data=PNG, content_type="image/png"), 415, "unsupported_content_type"
    )

    assert body["accepted"] == ["text/plain"]


def test_too_many_children_names_the_limit(client):
    body = assert_problem(
        client.post("/jobs", json=fanout(*[echo_job()] * (MAX_CHILDREN + 1))), 422, "too_many_children"
    )

    assert body["max_children"] == MAX_CHILDREN


@pytest.mark.parametrize("size", [MAX_BODY_BYTES + 1, 3 * MAX_BODY_BYTES])
def test_chunked_body_over_the_limit_is_413(client, keyspace, size):
    before = keyspace()

    response = client.post(
        "/jobs?model=echo",
        input_stream=io.BytesIO(b"x" * size),
        content_type="text/plain",
        headers={"Transfer-Encoding": "chunked"},
        # What gunicorn sets: it decodes the chunks and ends the stream itself.
        environ_overrides={"wsgi.input_terminated": True},
    )

    body = assert_problem(response, 413, "payload_too_large")
    assert body["max_body_bytes"] == MAX_BODY_BYTES
    assert keyspace() == before


def test_chunked_body_at_the_limit_is_accepted_whole(client, store):
    response = client.post(
        "/jobs?model=echo",
        input_stream=io.BytesIO(b"x" * MAX_BODY_BYTES),
        content_type="text/plain",
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},
    )

    assert response.status_code == 202
    assert store.claim(response.get_json()["id"]).payload == b"x" * MAX_BODY_BYTES
