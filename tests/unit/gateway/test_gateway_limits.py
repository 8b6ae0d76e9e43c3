"""Input limits at submission: each bad document is a clear 4xx problem, and nothing at all is stored.

The declared type must be the bytes' (``415 content_type_mismatch``); what
the headers declare must be within ``OCRGW_MAX_PAGES`` and
``OCRGW_MAX_IMAGE_PIXELS`` (``422 too_many_pages``, ``422 too_many_pixels``),
for a raw body, a JSON job and each child of a group alike; a body over
``OCRGW_MAX_BODY_BYTES`` is ``413`` on every route that reads one, chunked
or not.  Every refusal leaves the keyspace exactly as it was.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest

from jobs.config import Settings
from tests import bad_documents as bad

from .support import assert_problem, b64, echo_job, fanout

MAX_PAGES = 20
MAX_PIXELS = 1_000_000
MAX_BODY = 16 << 20  # room for the complete 10 MB PNG bomb


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=4, max_pages=MAX_PAGES, max_image_pixels=MAX_PIXELS, max_body_bytes=MAX_BODY)


def job(data: bytes, content_type: str, model: str = "tesseract", **fields) -> dict:
    return {"model": model, "payload": b64(data), "content_type": content_type, **fields}


def raw(client, data: bytes, content_type: str, model: str = "tesseract", query: str = ""):
    return client.post(f"/jobs?model={model}{query}", data=data, content_type=content_type)


def refused(client, keyspace, send, status: int, code: str) -> dict:
    """``send()`` is refused with this problem, and the store is as it was."""
    before = keyspace()
    body = assert_problem(send(), status, code)
    assert keyspace() == before
    return body


GOOD = {
    "image/png": bad.real_png(),
    "image/jpeg": bad.real_jpeg(),
    "image/tiff": bad.real_tiff(3),
    "application/pdf": bad.real_pdf(2),
}


@pytest.mark.parametrize("content_type", sorted(GOOD))
def test_a_document_of_its_declared_type_within_the_limits_is_accepted(client, content_type):
    assert raw(client, GOOD[content_type], content_type).status_code == 202
    assert client.post("/jobs", json=job(GOOD[content_type], content_type)).status_code == 202


def test_a_document_at_the_limits_is_accepted(client):
    assert raw(client, bad.pdf_pages(MAX_PAGES), "application/pdf").status_code == 202
    assert raw(client, bad.tiff_pages(MAX_PAGES), "image/tiff").status_code == 202
    assert raw(client, bad.png(1000, 1000), "image/png").status_code == 202
    assert raw(client, b"p\f" * (MAX_PAGES - 1), "text/plain", model="echo").status_code == 202


# -- the declared type against the bytes ----------------------------------------------------------

MISMATCHES = [
    ("image/png", GOOD["application/pdf"], "application/pdf"),
    ("application/pdf", GOOD["image/png"], "image/png"),
    ("image/jpeg", GOOD["image/tiff"], "image/tiff"),
    ("image/tiff", b"GIF89a\x01\x00\x01\x00", "image/gif"),
    ("image/png", b"<html><body>not an image</body></html>", None),
]


@pytest.mark.parametrize(("declared", "data", "detected"), MISMATCHES)
def test_a_raw_body_whose_bytes_are_not_its_declared_type_is_415(client, keyspace, declared, data, detected):
    body = refused(client, keyspace, lambda: raw(client, data, declared), 415, "content_type_mismatch")

    assert (body["declared"], body["detected"]) == (declared, detected)
    assert declared in body["detail"]


@pytest.mark.parametrize(("declared", "data", "detected"), MISMATCHES)
def test_a_json_job_whose_bytes_are_not_its_declared_type_is_415(client, keyspace, declared, data, detected):
    body = refused(client, keyspace, lambda: client.post("/jobs", json=job(data, declared)), 415,
                   "content_type_mismatch")  # fmt: skip

    assert (body["declared"], body["detected"]) == (declared, detected)


def test_text_plain_that_is_really_a_pdf_or_an_image_is_415(client, keyspace):
    for data, detected in ((GOOD["application/pdf"], "application/pdf"), (GOOD["image/jpeg"], "image/jpeg")):
        body = refused(client, keyspace, lambda d=data: raw(client, d, "text/plain", model="echo"), 415,
                       "content_type_mismatch")  # fmt: skip
        assert body["detected"] == detected


def test_a_group_names_the_child_whose_bytes_are_not_its_type(client, keyspace):
    children = [echo_job("fine"), job(GOOD["image/png"], "image/png"), job(GOOD["image/png"], "image/jpeg")]

    body = refused(client, keyspace, lambda: client.post("/jobs", json=fanout(*children)), 415, "content_type_mismatch")

    assert (body["child_index"], body["declared"], body["detected"]) == (2, "image/jpeg", "image/png")
    assert body["detail"].startswith("Child 2: ")


def test_the_model_s_content_types_are_checked_before_the_bytes(client, keyspace):
    # A PNG declared as a GIF: no model takes GIFs, and that is what the client must hear first.
    refused(client, keyspace, lambda: raw(client, GOOD["image/png"], "image/gif"), 415, "unsupported_content_type")


# -- pages ---------------------------------------------------------------------------------------


def test_a_pdf_over_the_page_limit_is_refused_split_or_not(client, keyspace):
    pdf = bad.pdf_pages(MAX_PAGES + 1)
    sends = [
        lambda: raw(client, pdf, "application/pdf"),
        lambda: raw(client, pdf, "application/pdf", query="&split_pages=5"),
        lambda: client.post("/jobs", json=job(pdf, "application/pdf")),
    ]
    for send in sends:
        body = refused(client, keyspace, send, 422, "too_many_pages")
        assert (body["page_count"], body["max_pages"]) == (MAX_PAGES + 1, MAX_PAGES)


def test_a_child_over_the_page_limit_is_named(client, keyspace):
    children = [job(GOOD["application/pdf"], "application/pdf"), job(bad.pdf_pages(5000), "application/pdf")]

    body = refused(client, keyspace, lambda: client.post("/jobs", json=fanout(*children)), 422, "too_many_pages")

    assert (body["child_index"], body["page_count"]) == (1, 5000)


def test_a_tiff_page_flood_is_refused_without_counting_it_to_the_end(client, keyspace):
    body = refused(client, keyspace, lambda: raw(client, bad.tiff_pages(5000), "image/tiff"), 422, "too_many_pages")

    assert body["max_pages"] == MAX_PAGES
    assert "page_count" not in body
    assert f"more than {MAX_PAGES} pages" in body["detail"]


def test_a_text_over_the_page_limit_is_refused(client, keyspace):
    flood = b"\f" * 100_000

    refused(client, keyspace, lambda: raw(client, flood, "text/plain", model="echo"), 422, "too_many_pages")


# -- pixels --------------------------------------------------------------------------------------

#: name -> (make the document, its media type, the (page, width, height) refused)
BOMBS: dict[str, tuple[Callable[[], bytes], str, tuple[int, int, int]]] = {
    "png 100k x 100k, complete": (bad.png_bomb, "image/png", (1, 100_000, 100_000)),
    "jpeg 65535 x 65535": (bad.jpeg_bomb, "image/jpeg", (1, 65_535, 65_535)),
    "tiff with a bomb on page 2": (
        lambda: bad.tiff([(10, 10), (100_000, 100_000)]),
        "image/tiff",
        (2, 100_000, 100_000),
    ),  # fmt: skip
    "pdf page of 200 x 200 inches": (bad.pdf_huge_page, "application/pdf", (1, 14_400, 14_400)),
}


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_a_decompression_bomb_is_refused_from_its_header(client, keyspace, name):
    make, content_type, (page, width, height) = BOMBS[name]
    data = make()

    for send in (lambda: raw(client, data, content_type), lambda: client.post("/jobs", json=job(data, content_type))):
        body = refused(client, keyspace, send, 422, "too_many_pixels")
        assert (body["page"], body["width"], body["height"]) == (page, width, height)
        assert body["max_image_pixels"] == MAX_PIXELS


def test_a_bomb_in_a_group_names_its_child(client, keyspace):
    children = [job(GOOD["image/png"], "image/png"), echo_job(), job(bad.png(5000, 5000, idat=b""), "image/png")]

    body = refused(client, keyspace, lambda: client.post("/jobs", json=fanout(*children)), 422, "too_many_pixels")

    assert (body["child_index"], body["width"], body["height"]) == (2, 5000, 5000)


# -- headers that cannot be read ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "content_type"),
    [
        (bad.truncated(bad.real_pdf(3)), "application/pdf"),
        (b"\x89PNG\r\n\x1a\n", "image/png"),
        (b"\xff\xd8\xff\xd9", "image/jpeg"),
        (b"II*\x00\xff\xff\xff\x7f", "image/tiff"),
    ],
    ids=["pdf cut in half", "png signature only", "jpeg without frame", "tiff pointing nowhere"],
)
def test_a_document_whose_headers_cannot_be_read_is_refused(client, keyspace, data, content_type):
    refused(client, keyspace, lambda: raw(client, data, content_type), 422, "invalid_document")


def test_a_pdf_that_would_cost_gigabytes_to_open_is_refused_without_the_gateway_paying_for_it(client, keyspace):
    body = refused(client, keyspace, lambda: raw(client, bad.pdf_object_stream_bomb(), "application/pdf"), 422,
                   "invalid_document")  # fmt: skip

    assert "opening the PDF ended the process reading it" in body["detail"]


def test_a_corrupt_body_behind_good_headers_is_accepted_the_worker_says_what_is_wrong(client):
    # Pixel data is not decoded at submission: the job fails on a worker with invalid_document.
    assert raw(client, bad.truncated(bad.real_png(300, 300), 0.6), "image/png").status_code == 202


# -- the body size, on every route that reads one -----------------------------------------------------


def chunked(client, method: str, path: str, body: bytes, content_type: str = "application/json"):
    return client.open(
        path,
        method=method,
        input_stream=io.BytesIO(body),
        content_type=content_type,
        headers={"Transfer-Encoding": "chunked"},
        environ_overrides={"wsgi.input_terminated": True},  # what gunicorn sets
    )


@pytest.mark.parametrize(("method", "suffix"), [("PATCH", ""), ("POST", "/retry")])
def test_a_control_s_body_over_the_limit_is_413_even_chunked_and_even_if_its_start_parses(
    client, keyspace, settings, method, suffix
):
    parent = client.post("/jobs", json=fanout(echo_job("a"), echo_job("b"))).get_json()["id"]
    document = {"max_parallel": 1} if method == "PATCH" else {}
    # Cut at the limit, this body is valid JSON: only its length says it is too large.
    padded = json.dumps(document).encode() + b" " * settings.max_body_bytes

    for send in (
        lambda: chunked(client, method, f"/jobs/{parent}{suffix}", padded),
        lambda: client.open(f"/jobs/{parent}{suffix}", method=method, data=padded, content_type="application/json"),
    ):
        body = refused(client, keyspace, send, 413, "payload_too_large")
        assert body["max_body_bytes"] == settings.max_body_bytes


def test_a_chunked_submission_over_the_limit_is_413(client, keyspace, settings):
    refused(client, keyspace, lambda: chunked(client, "POST", "/jobs?model=echo", b"x" * (settings.max_body_bytes + 1),
                                              "text/plain"), 413, "payload_too_large")  # fmt: skip


# -- an encrypted PDF ------------------------------------------------------------------------------------


def encrypted(user: str) -> bytes:
    """A PDF encrypted with AES-256 (R=6), with this user password (empty: an owner password only)."""
    import pikepdf

    from tests.pdfs import text_pdf

    with pikepdf.open(io.BytesIO(text_pdf("a page of text"))) as pdf:
        buffer = io.BytesIO()
        pdf.save(buffer, encryption=pikepdf.Encryption(user=user, owner="owner-secret", R=6))
        return buffer.getvalue()


def test_a_pdf_that_needs_a_password_is_refused_as_encrypted_saying_to_decrypt_it_first(client, keyspace):
    for send in (
        lambda: raw(client, encrypted("user-secret"), "application/pdf"),
        lambda: raw(client, encrypted("user-secret"), "application/pdf", query="&split_pages=1"),
        lambda: client.post("/jobs", json={**echo_job(), "model": "tesseract", "content_type": "application/pdf",
                                           "payload": b64(encrypted("user-secret"))}),
    ):  # fmt: skip
        body = refused(client, keyspace, send, 422, "encrypted_document")

        assert "remove the encryption first" in body["detail"] and "qpdf --decrypt" in body["detail"]


def test_a_pdf_with_an_owner_password_only_is_accepted(client):
    assert raw(client, encrypted(""), "application/pdf").status_code == 202
    assert raw(client, encrypted(""), "application/pdf", query="&split_pages=1").status_code == 202
