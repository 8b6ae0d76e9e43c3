"""The worst documents against a real stack: refused at the gateway, or failed on a worker that lives on.

A gunicorn gateway refuses what the headers give away (bombs, page floods,
types that are not what they say, bodies over the limit, chunked included)
with its 4xx problem, storing nothing.  What only decoding reveals (a
truncated file, a deflate bomb inside a PDF, a text chunk that inflates to a
gigabyte) is accepted and fails on the worker, ``invalid_document``; and
the documents the gateway would refuse are also put straight into the store
to show that the worker refuses them on its own.  The worker runs one pool
process under ``OCRGW_WORKER_MEMORY_LIMIT_MB``: after every bad job it is
the same process, its peak resident memory (``VmHWM``) stayed under the
limit, and it reads a good page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from jobs.config import Settings
from jobs.records import NewJob
from jobs.store import JobStore
from tests import bad_documents as bad
from tests.harness import wait_until
from tests.integration.chaos_support import FAST
from tests.integration.live import assert_problem, b64, ocrgw_keyspace, png_bytes
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

MEMORY_LIMIT_MB = 1536
MAX_PAGES = 100
MAX_BODY_BYTES = 16 << 20  # room for the complete 10 MB PNG bomb
ENV = {
    **FAST,
    "OCRGW_WORKER_MEMORY_LIMIT_MB": str(MEMORY_LIMIT_MB),
    "OCRGW_MAX_PAGES": str(MAX_PAGES),
    "OCRGW_MAX_BODY_BYTES": str(MAX_BODY_BYTES),
}
#: A bomb fails in seconds; a loaded two-core machine may take a while to get there.
BAD_JOB_TIMEOUT = 300.0


@pytest.fixture(scope="module")
def deployment(stack_factory):
    return stack_factory(env=ENV, concurrency=1)


# -- at the gateway --------------------------------------------------------------------------------

#: name, make the document, its media type, the refusal's status and code
REFUSED: list[tuple[str, Callable[[], bytes], str, int, str]] = [
    ("png 100k x 100k, complete", bad.png_bomb, "image/png", 422, "too_many_pixels"),
    ("jpeg 65535 x 65535", bad.jpeg_bomb, "image/jpeg", 422, "too_many_pixels"),
    ("tiff 100k x 100k", lambda: bad.tiff([(100_000, 100_000)]), "image/tiff", 422, "too_many_pixels"),
    ("tiff of 5000 pages", lambda: bad.tiff_pages(5000), "image/tiff", 422, "too_many_pages"),
    ("pdf page of 200 x 200 inches", bad.pdf_huge_page, "application/pdf", 422, "too_many_pixels"),
    ("pdf of 20000 pages", lambda: bad.pdf_pages(20_000), "application/pdf", 422, "too_many_pages"),
    ("pdf nested 100k deep", bad.pdf_nested_objects, "application/pdf", 422, "invalid_document"),
    ("pdf whose page tree inflates to 1 GB", bad.pdf_object_stream_bomb, "application/pdf", 422, "invalid_document"),
    ("pdf cut in half", lambda: bad.truncated(bad.real_pdf(3)), "application/pdf", 422, "invalid_document"),
    ("tiff cut short", lambda: bad.truncated(bad.real_tiff(3), 0.7), "image/tiff", 422, "invalid_document"),
    ("pdf sent as png", bad.real_pdf, "image/png", 415, "content_type_mismatch"),
    ("png sent as text", bad.real_png, "text/plain", 415, "content_type_mismatch"),
]


def test_what_the_headers_give_away_is_refused_at_submission_and_stores_nothing(gateway, db):
    before = ocrgw_keyspace(db)

    for name, make, content_type, status, code in REFUSED:
        data = make()
        model = "echo" if content_type == "text/plain" else "tesseract"
        raw = gateway.post_raw(data, content_type, params={"model": model})
        as_json = gateway.post_json({"model": model, "content_type": content_type, "payload": b64(data)})
        in_group = gateway.post_json({"fanout": {"max_parallel": 1, "children": [
            {"model": "echo", "content_type": "text/plain", "payload": b64("fine")},
            {"model": model, "content_type": content_type, "payload": b64(data)}]}})  # fmt: skip

        for response in (raw, as_json, in_group):
            assert (response.status_code, response.json()["code"]) == (status, code), f"{name}: {response.text}"
            assert_problem(response, status, code)
        assert in_group.json()["child_index"] == 1, name
        assert ocrgw_keyspace(db) == before, name


def test_a_body_over_the_limit_is_413_on_every_route_that_reads_one_chunked_or_not(gateway, db):
    parent = gateway.post_json({"fanout": {"max_parallel": 1, "children": [
        {"model": "echo", "content_type": "text/plain", "payload": b64("x")}]}}).json()["id"]  # fmt: skip
    wait_for_job(gateway.job, parent, through_outages=True)
    before = ocrgw_keyspace(db)
    # Valid JSON if cut at the limit: only its length tells it is too large.
    padded = json.dumps({"max_parallel": 2}).encode() + b" " * MAX_BODY_BYTES

    def pieces():
        for start in range(0, len(padded), 1 << 20):
            yield padded[start : start + (1 << 20)]

    for method, path in (("PATCH", f"/jobs/{parent}"), ("POST", f"/jobs/{parent}/retry"), ("POST", "/jobs")):
        for body in (padded, pieces()):  # Content-Length, then chunked
            response = gateway.http.request(method, gateway.base_url + path, data=body, timeout=60,
                                            headers={"Content-Type": "application/json"})  # fmt: skip
            problem = assert_problem(response, 413, "payload_too_large")
            assert problem["max_body_bytes"] == MAX_BODY_BYTES
    assert ocrgw_keyspace(db) == before


# -- on the worker ---------------------------------------------------------------------------------

#: Accepted (their headers are fine), failed by the worker.
ACCEPTED_THEN_FAILED: list[tuple[str, Callable[[], bytes], str]] = [
    ("png cut short", lambda: bad.truncated(bad.real_png(300, 300), 0.6), "image/png"),
    ("png whose text inflates to 1 GB", bad.png_text_bomb, "image/png"),
    (
        "png whose pixels are not deflate",
        lambda: bad.png(300, 300, idat=b"\x78\x9c" + bytes(range(256)) * 4),
        "image/png",
    ),  # fmt: skip
    ("jpeg cut short", lambda: bad.truncated(bad.real_jpeg(300, 300), 0.5), "image/jpeg"),
    ("tiff whose pixels were never sent", lambda: bad.tiff([(2000, 2000)]), "image/tiff"),
    ("pdf whose content inflates to 2 GB, deflated twice", bad.pdf_flate_bomb, "application/pdf"),
]
#: What the gateway refuses, put straight into the store: the worker refuses it too, undecoded.
STORED_PAST_THE_GATEWAY: list[tuple[str, Callable[[], bytes], str, str]] = [
    ("png 100k x 100k, complete", bad.png_bomb, "image/png", "tesseract"),
    ("jpeg 65535 x 65535", bad.jpeg_bomb, "image/jpeg", "tesseract"),
    ("tiff of 5000 pages", lambda: bad.tiff_pages(5000), "image/tiff", "tesseract"),
    ("pdf page of 200 x 200 inches", bad.pdf_huge_page, "application/pdf", "tesseract"),
    ("pdf of 20000 pages", lambda: bad.pdf_pages(20_000), "application/pdf", "tesseract"),
    ("pdf nested 100k deep", bad.pdf_nested_objects, "application/pdf", "tesseract"),
    ("pdf whose page tree inflates to 1 GB", bad.pdf_object_stream_bomb, "application/pdf", "tesseract"),
    ("text of 100k form feeds", lambda: b"\f" * 100_000, "text/plain", "echo"),
]


def test_every_bad_job_fails_with_a_clear_code_and_the_same_worker_process_reads_a_good_page_after(
    gateway, deployment, tmp_path
):
    pool = the_pool_process(deployment)
    assert address_space_limit(pool) == MEMORY_LIMIT_MB << 20
    store = JobStore.from_settings(Settings(redis_url=deployment.redis_url))
    jobs: dict[str, str] = {}
    for name, make, content_type in ACCEPTED_THEN_FAILED:
        response = gateway.post_raw(make(), content_type, params={"model": "tesseract"})
        assert response.status_code == 202, f"{name}: {response.status_code} {response.text}"
        jobs[response.json()["id"]] = name
    for name, make, content_type, model in STORED_PAST_THE_GATEWAY:
        # Its message is never sent: the sweep publishes a queued job nobody claimed.
        jobs[store.create_single(NewJob(model, content_type, make())).job_id] = name
    pdf_image_bomb = gateway.post_raw(bad.pdf_image_bomb(), "application/pdf", params={"model": "tesseract"})

    ended = {
        job_id: wait_for_job(gateway.job, job_id, timeout=BAD_JOB_TIMEOUT, through_outages=True) for job_id in jobs
    }
    failures = {jobs[job_id]: (view["status"], view["error_code"], view["attempts"]) for job_id, view in ended.items()}
    assert failures == {name: ("failed", "invalid_document", 1) for name in jobs.values()}
    errors = {jobs[job_id]: view["error"] for job_id, view in ended.items()}
    assert "ended the process reading it" in errors["pdf whose content inflates to 2 GB, deflated twice"]
    assert "100000x100000 pixels" in errors["png 100k x 100k, complete"]
    assert "more than 100 pages" in errors["tiff of 5000 pages"]
    # PDFium draws an image it will not decode as nothing: a blank page, read in no time.
    image_bomb = wait_for_job(gateway.job, pdf_image_bomb.json()["id"], timeout=BAD_JOB_TIMEOUT, through_outages=True)
    assert (image_bomb["status"], image_bomb["result"]["text"]) == ("completed", "")

    good = gateway.post_raw(png_bytes(tmp_path, "HELLO AFTER BOMBS"), "image/png", params={"model": "tesseract"})
    view = wait_for_job(gateway.job, good.json()["id"], timeout=BAD_JOB_TIMEOUT, through_outages=True)
    assert view["status"] == "completed", view
    assert "HELLO AFTER BOMBS" in view["result"]["text"]

    assert the_pool_process(deployment) == pool  # no pool process was lost, none replaced
    peak_kib = peak_resident_kib(pool)
    print(f"worker pool process {pool}: peak resident memory {peak_kib // 1024} MiB of {MEMORY_LIMIT_MB} MiB")
    assert peak_kib < MEMORY_LIMIT_MB * 1024
    log = deployment.worker.log_text()
    assert "WorkerLostError" not in log and "exited with" not in log, log[-5000:]


# -- the worker's processes, from /proc --------------------------------------------------------------


def the_pool_process(deployment) -> int:
    """The one pool process of the worker (concurrency 1), once it is up."""

    def one_child() -> Any:
        text = Path(f"/proc/{deployment.worker.pid}/task/{deployment.worker.pid}/children").read_text().split()
        return int(text[0]) if len(text) == 1 else None

    return wait_until(one_child, 60, interval=0.1, message="the worker's pool process never came up")


def address_space_limit(pid: int) -> int:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            return int(line.split()[3])
    raise AssertionError(f"no address space limit in /proc/{pid}/limits")


def peak_resident_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")
