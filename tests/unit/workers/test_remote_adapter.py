"""The remote adapter against a fake upstream ocrgw: what it sends, what it returns, how it fails."""

from __future__ import annotations

import base64

import pytest

from documents.pages import open_document
from jobs.errors import AdapterError, CancelRequested
from jobs.registry import RemoteModel
from tests.harness import free_port
from tests.pdfs import text_pdf
from workers.adapters import remote
from workers.adapters.remote import RemoteAdapter

from .fake_upstream import UPSTREAM_ID, FakeUpstream, completed, page, view

DOCUMENT = b"\x89PNG\r\n\x1a\n not really a png"


class Clock:
    """time.monotonic and time.sleep for the adapter: sleeping moves the clock, nothing waits."""

    def __init__(self):
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def upstream():
    with FakeUpstream() as fake:
        yield fake


def adapter_for(url: str, key: str = "", job_timeout: float = 60.0, clock: Clock | None = None) -> RemoteAdapter:
    clock = clock or Clock()
    return RemoteAdapter(
        RemoteModel("cloudocr", "tesseract", url, key), job_timeout=job_timeout, sleep=clock.sleep, clock=clock
    )


def failure(run) -> AdapterError:
    with pytest.raises(AdapterError) as caught:
        run()
    return caught.value


# -- a job that goes through ----------------------------------------------------------------


def test_the_document_goes_up_as_a_json_job_and_the_upstreams_pages_come_back(upstream):
    upstream.views = [
        view("queued"),
        view("processing", stage="page 1/2"),
        completed(page(1, "first page"), page(2, "second page", source="text_layer")),
    ]
    shown = []
    clock = Clock()

    result = adapter_for(upstream.url, key="s3cret-key", clock=clock).run(
        DOCUMENT, "image/png", {"lang": "deu", "first_page": 3}, lambda done, total: shown.append((done, total))
    )

    # Then the upstream got one JSON job: its own model name, the document in base64, the options as given
    [submitted] = upstream.of("POST")
    assert submitted.path == "/jobs"
    assert submitted.headers["content-type"] == "application/json"
    assert submitted.headers["authorization"] == "Bearer s3cret-key"
    assert submitted.json() == {
        "model": "tesseract",
        "content_type": "image/png",
        "payload": base64.b64encode(DOCUMENT).decode(),
        "options": {"lang": "deu", "first_page": 3},
    }
    # And it was polled until the job ended, each poll with the key, the interval growing
    polls = upstream.of("GET")
    assert [p.path for p in polls] == [f"/jobs/{UPSTREAM_ID}?children=none"] * 3
    assert all(p.headers["authorization"] == "Bearer s3cret-key" for p in polls)
    assert clock.sleeps == [remote.FIRST_POLL_SECONDS, remote.FIRST_POLL_SECONDS * remote.POLL_GROWTH]
    assert shown == [(1, 2)]  # the upstream's progress is this job's
    # And the result is the upstream's, page for page
    assert result.to_dict() == {
        "text": "first page\n\nsecond page",
        "pages": [page(1, "first page"), page(2, "second page", source="text_layer")],
    }
    assert not upstream.of("DELETE")


def test_an_older_upstream_s_pages_get_no_words_and_stand_as_they_were(upstream):
    older = page(1, "first page", lines=[{"text": "first page", "confidence": 0.9, "bbox": [10, 20, 310, 60]}])
    for field in ("rotation", "skew", "orientation_by"):
        del older[field]
    upstream.views = [completed(older)]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {})

    [shown] = result.to_dict()["pages"]
    assert (shown["rotation"], shown["skew"], shown["orientation_by"]) == (0, 0.0, None)
    assert shown["lines"][0]["words"] == []


def test_who_stood_an_upstream_page_up_comes_along_and_nothing_else_does(upstream):
    upstream.views = [
        completed(
            page(1, "turned", rotation=90, orientation_by="classifier"),
            page(2, "odd", orientation_by="a guess"),
        )
    ]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {"rotate_pages": True})

    assert [p.orientation_by for p in result.pages] == ["classifier", None]


def test_a_redo_page_s_lines_keep_the_source_the_upstream_gave_them(upstream):
    own = {"text": "Printed legend", "confidence": 1.0, "bbox": [10, 80, 310, 120], "words": [], "source": "text_layer"}
    redone = page(1, "first page\nPrinted legend")
    redone["lines"].append(own)
    upstream.views = [completed(redone)]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {})

    assert result.to_dict()["pages"] == [redone]


def test_an_upstream_pages_layout_comes_along_and_so_do_its_tables(upstream):
    laid_out = page(1, "Results")
    laid_out["blocks"] = [{"order": 0, "type": "title", "bbox": [10, 20, 310, 60], "lines": [0], "text": "Results",
                           "level": 1},
                          {"order": 1, "type": "table", "bbox": [10, 80, 310, 120], "lines": [], "text": "a",
                           "table": {"rows": 1, "cols": 1, "html": "<table></table>",
                                     "cells": [{"row": 0, "col": 0, "row_span": 1, "col_span": 1,
                                                "bbox": [10, 80, 310, 120], "text": "a"}]}}]  # fmt: skip
    failed = page(2, "second page")
    failed["layout_error"] = "RuntimeError: the model could not be loaded"
    upstream.views = [completed(laid_out, failed)]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {"layout": True}).to_dict()

    assert result["pages"] == [laid_out, failed]
    assert result["tables"] == [{"number": 1, "page": 1, "block": 1, "rows": 1, "cols": 1, "caption": None}]
    [submitted] = upstream.of("POST")
    assert submitted.json()["options"] == {"layout": True}


def test_without_a_key_no_authorization_is_sent(upstream):
    adapter_for(upstream.url).run(DOCUMENT, "image/png", {})

    assert all("authorization" not in r.headers for r in upstream.requests)
    assert "options" not in upstream.of("POST")[0].json()


def test_polls_ride_out_a_few_failed_answers(upstream):
    unavailable = (503, {"code": "store_unavailable", "detail": "later"})
    upstream.views = [unavailable] * remote.POLL_FAILURES_TOLERATED + [completed(page(1, "at last"))]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {})

    assert result.text == "at last"
    assert len(upstream.of("POST")) == 1


# -- what fails, and how --------------------------------------------------------------------


def test_an_unreachable_upstream_is_a_transient_upstream_unreachable():
    closed = f"http://127.0.0.1:{free_port()}"

    error = failure(lambda: adapter_for(closed).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_unreachable", True)
    assert closed in error.message


@pytest.mark.parametrize(
    "status, code",
    [(422, "unsupported_content_type"), (401, "unauthorized"), (403, "on_prem_required"), (404, "not_found")],
)
def test_a_refused_submission_is_a_permanent_upstream_rejected_naming_the_upstreams_code(upstream, status, code):
    upstream.submit = (status, {"code": code, "detail": "said the upstream"})

    error = failure(lambda: adapter_for(upstream.url).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_rejected", False)
    assert f"{status} to the submission ({code}: said the upstream)" in error.message
    assert len(upstream.requests) == 1  # nothing polled


@pytest.mark.parametrize("status", [500, 503, 429])
def test_an_upstream_in_trouble_is_a_transient_upstream_unavailable(upstream, status):
    upstream.submit = (status, {"code": "draining", "detail": "retry on another replica"})

    error = failure(lambda: adapter_for(upstream.url).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_unavailable", True)


def test_a_failed_upstream_job_is_a_permanent_upstream_failed_with_its_error_code(upstream):
    upstream.views = [view("failed", error_code="invalid_document", error="cannot be decoded")]

    error = failure(lambda: adapter_for(upstream.url).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_failed", False)
    assert "invalid_document: cannot be decoded" in error.message


def test_a_redirect_is_not_followed(upstream):
    upstream.submit = (307, None)

    error = failure(lambda: adapter_for(upstream.url).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_bad_response", False)
    assert len(upstream.requests) == 1


@pytest.mark.parametrize(
    "result",
    [None, {"text": "x"}, {"pages": [{"page": 1, "text": "x", "lines": [{"text": "x"}]}]}, {"pages": "x"}],
)
def test_a_result_that_is_not_this_apis_is_upstream_bad_response(upstream, result):
    upstream.views = [view("completed", result=result)]

    error = failure(lambda: adapter_for(upstream.url).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_bad_response", False)


def test_an_upstream_job_that_outlasts_the_jobs_time_fails_transiently_and_is_cancelled(upstream):
    upstream.views = [view("processing")]
    clock = Clock()

    error = failure(lambda: adapter_for(upstream.url, job_timeout=30.0, clock=clock).run(DOCUMENT, "image/png", {}))

    assert (error.code, error.transient) == ("upstream_timeout", True)
    assert clock.now - 1000.0 == pytest.approx(30.0)  # waited for the job's time, not longer
    assert max(clock.sleeps) == remote.MAX_POLL_SECONDS
    assert [r.path for r in upstream.of("DELETE")] == [f"/jobs/{UPSTREAM_ID}"]


def test_the_jobs_own_timeout_s_bounds_the_wait_when_shorter(upstream):
    upstream.views = [view("processing")]
    clock = Clock()

    failure(lambda: adapter_for(upstream.url, clock=clock).run(DOCUMENT, "image/png", {"timeout_s": 2}))

    assert clock.now - 1000.0 == pytest.approx(2.0)
    assert upstream.of("POST")[0].json()["options"] == {"timeout_s": 2}


def test_a_job_cancelled_here_cancels_the_upstream_job(upstream):
    upstream.views = [view("processing", stage="page 1/3")]

    def on_page(done, total):
        raise CancelRequested("cancelled by a client")

    with pytest.raises(CancelRequested):
        adapter_for(upstream.url).run(DOCUMENT, "application/pdf", {}, on_page)

    assert [r.path for r in upstream.of("DELETE")] == [f"/jobs/{UPSTREAM_ID}"]


def test_a_split_childs_pages_alone_go_up(upstream):
    upstream.views = [completed(page(3, "Page 3"), page(4, "Page 4"))]
    whole = text_pdf(*(f"Page {n}" for n in range(1, 7)))

    adapter_for(upstream.url).run(whole, "application/pdf", {"first_page": 3}, pages=(3, 4))

    [submitted] = upstream.of("POST")
    sent = base64.b64decode(submitted.json()["payload"])
    with open_document(sent, "application/pdf") as doc:
        layers = [doc.text_layer(i) for i in range(doc.page_count)]
    assert [layer.text if layer else None for layer in layers] == ["Page 3", "Page 4"]


def test_the_upstreams_resolution_of_a_page_is_kept_and_one_of_no_known_source_dropped(upstream):
    estimated = page(1, "first page") | {"dpi": 300, "dpi_source": "estimated"}
    unknown = page(2, "second page") | {"dpi": 72, "dpi_source": "guessed"}
    upstream.views = [completed(estimated, unknown)]

    result = adapter_for(upstream.url).run(DOCUMENT, "image/png", {})

    first, second = result.to_dict()["pages"]
    assert (first["dpi"], first["dpi_source"]) == (300, "estimated")
    assert "dpi" not in second and "dpi_source" not in second
