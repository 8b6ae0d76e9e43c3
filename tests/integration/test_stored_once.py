"""What a split and a searchable PDF cost the store, with a real redis-server, gateway and workers.

A PDF split into one child a page is stored once, as its parent's
document, and its children name their pages of it: Redis grows by the
document and a small record per child, not by a copy of the pages a child
reads (a 40-page PDF whose pages share one image used to store that image
40 times over).  A job's searchable PDF is built once, by a worker: the
first request asks for it (202, Retry-After), the next ones get the kept PDF.
"""

from __future__ import annotations

import base64
import io
import random

import pikepdf
import pypdfium2 as pdfium
import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway
from tests.integration.live import OCR_TIMEOUT, png_bytes
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

PAGES = 40
IMAGE_SIDE = 580  # RGB noise, which no filter shrinks: 580 * 580 * 3 bytes, about 1 MB
# What a split adds to Redis for each child besides the document it shares, at most, once the group has
# completed.  MEMORY USAGE says: its job hash about 0.8 KB (some 30 short fields in a listpack), its
# result of one page of text about 0.4 KB, its audit event about 0.25 KB, its entries in the group's
# sorted sets a few dozen bytes; allocator rounding and the record of its calls come on top (measured:
# about 2.4 KB a child all told).  4 KB holds that with room; a copy of the shared image, what each
# child stored before, is 1 MB.
PER_CHILD_BYTES = 4096
WORDS = "HELLO OCRGW 2026"


def shared_image_pdf(pages: int) -> bytes:
    """A PDF of ``pages`` pages that all draw one image XObject, each with a line of its own text."""
    document = pikepdf.new()
    noise = random.Random(18).randbytes(IMAGE_SIDE * IMAGE_SIDE * 3)
    image = document.make_stream(
        noise,
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=IMAGE_SIDE,
        Height=IMAGE_SIDE,
        ColorSpace=pikepdf.Name.DeviceRGB,
        BitsPerComponent=8,
    )
    font = document.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)
    )
    for n in range(1, pages + 1):
        content = f"q 300 0 0 300 156 400 cm /Im0 Do Q BT /F1 24 Tf 72 120 Td (Page {n:02d} shared) Tj ET"
        page = pikepdf.Dictionary(
            Type=pikepdf.Name.Page,
            MediaBox=[0, 0, 612, 792],
            Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=image), Font=pikepdf.Dictionary(F1=font)),
            Contents=document.make_stream(content.encode()),
        )
        document.pages.append(pikepdf.Page(page))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def used_memory(db) -> int:
    return int(db.info("memory")["used_memory"])


def test_a_split_stores_its_document_once_and_each_child_reads_its_page(gateway, db):
    # Given a 40-page PDF of about 1 MB whose pages all show one image, and a stack that has run a split
    # before (its scripts loaded and its connections made: what they cost Redis is paid once, not per group)
    document = shared_image_pdf(PAGES)
    assert 900_000 < len(document) < 1_200_000
    warm_up = gateway.post_raw(shared_image_pdf(2), "application/pdf", {"model": "tesseract", "split_pages": "1"})
    assert wait_for_job(gateway.job, warm_up.json()["id"], timeout=OCR_TIMEOUT)["status"] == "completed"
    before = used_memory(db)

    # When it is split one page a child (each page read from its text layer)
    job = {"model": "tesseract", "content_type": "application/pdf", "payload": base64.b64encode(document).decode()}
    response = gateway.post_json({**job, "split_pages": 1, "max_parallel": 4, "options": {"text_layer": "prefer"}})
    assert response.status_code == 202, response.text
    parent_id = response.json()["id"]

    # Then every child reads its own page of it: the group completes with each page's text, in order
    view = wait_for_job(gateway.job, parent_id, timeout=3 * OCR_TIMEOUT)
    assert (view["status"], view["total"]) == ("completed", PAGES), view
    pages = view["result"]["pages"]
    assert [p["page"] for p in pages] == list(range(1, PAGES + 1))
    for page in pages:
        assert f"Page {page['page']:02d} shared" in page["text"], page
    # And the document is stored once, as the parent's; no child stores a copy of its page
    assert db.get(keys.payload(parent_id)) == document
    assert not any(db.exists(keys.payload(keys.child_id(parent_id, i))) for i in range(PAGES))
    # And Redis grew by the document and a small record per child, not by a copy of the image per child
    # (once the request's own buffers, as large as the document, are given back)
    # (once Redis has given back the request's own buffers, as large as the document: it does so within
    # seconds of the connection's last large command, so this waits, bounded, rather than reads once)
    bound = len(document) + PAGES * PER_CHILD_BYTES
    wait_until(
        lambda: used_memory(db) - before <= bound,
        OCR_TIMEOUT,
        interval=0.5,
        message=lambda: f"Redis grew by {used_memory(db) - before} bytes for a {len(document)}-byte PDF",
    )


def get_pdf(gateway: Gateway, job_id: str):
    return gateway.http.get(f"{gateway.base_url}/jobs/{job_id}/result.pdf", timeout=gateway.timeout)


def test_a_searchable_pdf_is_built_once_by_a_worker_and_kept(gateway, db, tmp_path):
    # Given a completed OCR job of a page image
    created = gateway.post_raw(png_bytes(tmp_path, WORDS), "image/png", {"model": "tesseract"})
    assert created.status_code == 202, created.text
    job = wait_for_job(gateway.job, created.json()["id"], timeout=OCR_TIMEOUT)
    assert job["status"] == "completed", job
    job_id = job["id"]

    # When its searchable PDF is asked for the first time
    first = get_pdf(gateway, job_id)

    # Then the gateway asks a worker to build it and says when to come back
    assert first.status_code == 202, first.text
    assert first.headers["Retry-After"] == "1"
    assert first.json() == {"id": job_id, "status": "building", "url": f"/jobs/{job_id}/result.pdf"}
    # And polling gets the PDF once the worker has built it, the recognized words on its page
    built = wait_until(lambda: (r := get_pdf(gateway, job_id)).status_code == 200 and r, OCR_TIMEOUT,
                       interval=0.5, message="the searchable PDF was never built")  # fmt: skip
    assert built.headers["Content-Type"] == "application/pdf"
    pdf = pdfium.PdfDocument(built.content)
    try:
        assert len(pdf) == 1 and WORDS in pdf[0].get_textpage().get_text_range()
    finally:
        pdf.close()
    # And it is kept beside the result: the next request answers the same PDF and asks for no build
    assert db.hget(keys.pdf(job_id), "pdf") == built.content
    assert not db.exists(keys.pdf_asked(job_id))
    again = get_pdf(gateway, job_id)
    assert again.status_code == 200 and again.content == built.content
    assert not db.exists(keys.pdf_asked(job_id))
