"""What one request may spend checking its documents: a budget of time and count, identical documents once.

Every document of a submission is checked before anything is stored, in the
gateway thread that answers it (``gateway.document_checks``).  A request
whose checks take more than ``OCRGW_INSPECTION_SECONDS`` in all, or that has
more than ``OCRGW_INSPECTION_MAX_DOCUMENTS`` distinct documents, is refused
``413 inspection_budget_exceeded`` as soon as the budget is spent, naming the
child it was checking, and stores nothing.  The same bytes sent twice are
checked once: 200 copies of a page cost one check, ten copies of a bomb one.
"""

from __future__ import annotations

import pytest

from documents.isolation import OutOfTime
from gateway import document_checks
from jobs.config import Settings
from tests import bad_documents as bad

from .support import assert_problem, b64, echo_job, fanout

PDF = "application/pdf"
BODY_BYTES = 64 << 20


#: Time enough that only the tests of the time budget meet it, however loaded the machine.
AMPLE_SECONDS = 120.0


def with_budget(**fields) -> Settings:
    return Settings(max_body_bytes=BODY_BYTES, **{"inspection_seconds": AMPLE_SECONDS, **fields})


@pytest.fixture
def settings() -> Settings:
    return with_budget()


def pdf_child(data: bytes) -> dict:
    return {"model": "tesseract", "payload": b64(data), "content_type": PDF}


def refused(client, keyspace, body: dict, status: int, code: str) -> dict:
    before = keyspace()
    problem = assert_problem(client.post("/jobs", json=body), status, code)
    assert keyspace() == before
    return problem


class CountingInspector(document_checks.Inspector):
    """The real inspector, counting the documents it is asked to check and the seconds each is given."""

    given: list[float]

    def inspect(self, data, media_type, limits, *, seconds):
        CountingInspector.given.append(seconds)
        return super().inspect(data, media_type, limits, seconds=seconds)


@pytest.fixture
def given(monkeypatch) -> list[float]:
    """The seconds each check of the request was given, one entry per document actually checked."""
    CountingInspector.given = []
    monkeypatch.setattr(document_checks, "Inspector", CountingInspector)
    return CountingInspector.given


# -- identical documents, checked once ---------------------------------------------------------------


def test_a_group_of_200_identical_pdfs_is_accepted_after_one_check(client, given):
    page = bad.real_pdf(1)

    response = client.post("/jobs", json=fanout(*[pdf_child(page)] * 200))

    assert response.status_code == 202, response.get_data(as_text=True)
    assert len(given) == 1


def test_a_group_of_ten_identical_bombs_is_refused_at_its_first_child_after_one_check(client, keyspace, given):
    problem = refused(client, keyspace, fanout(*[pdf_child(bad.pdf_xref_stream_bomb())] * 10), 422, "invalid_document")

    assert problem["child_index"] == 0
    assert "opening the PDF ended the process reading it" in problem["detail"]
    assert len(given) == 1


def test_the_same_bytes_declared_another_type_are_checked_on_their_own(client, given):
    text = b"plain words"
    children = [echo_job("plain words"), {"model": "echo", "payload": b64(text), "content_type": "text/plain"}]

    assert client.post("/jobs", json=fanout(*children, pdf_child(bad.real_pdf(2)))).status_code == 202
    assert len(given) == 2  # the two identical texts once, the PDF once


# -- the count -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("settings", [with_budget(inspection_max_documents=3)])
def test_a_request_with_more_distinct_documents_than_allowed_is_refused_at_the_first_one_past(client, keyspace, given):
    children = [pdf_child(bad.real_pdf(pages)) for pages in (1, 2, 3, 4)]

    problem = refused(client, keyspace, fanout(*children), 413, "inspection_budget_exceeded")

    assert (problem["child_index"], problem["max_inspections"]) == (3, 3)
    assert "more than 3 distinct documents" in problem["detail"]
    assert len(given) == 3


@pytest.mark.parametrize("settings", [with_budget(inspection_max_documents=3)])
def test_copies_do_not_count_against_the_number_of_documents(client, given):
    children = [pdf_child(bad.real_pdf(pages)) for pages in (1, 2, 3, 1, 2, 3, 3)]

    assert client.post("/jobs", json=fanout(*children)).status_code == 202
    assert len(given) == 3


# -- the time ----------------------------------------------------------------------------------------


class Clock:
    """A monotonic clock that moves only when a check runs: each takes ``step`` seconds."""

    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("settings", [with_budget(inspection_seconds=1.0)])
def test_each_check_is_given_what_is_left_and_none_begins_once_it_is_spent(client, keyspace, monkeypatch, given):
    clock = Clock(0.3)
    monkeypatch.setattr(document_checks, "monotonic", clock)

    def slow_inspect(self, data, media_type, limits, *, seconds):
        given.append(seconds)
        clock.now += clock.step
        return 1

    monkeypatch.setattr(CountingInspector, "inspect", slow_inspect)
    children = [pdf_child(bad.real_pdf(pages)) for pages in range(1, 7)]

    problem = refused(client, keyspace, fanout(*children), 413, "inspection_budget_exceeded")

    assert given == pytest.approx([1.0, 0.7, 0.4, 0.1])
    assert (problem["child_index"], problem["inspection_seconds"]) == (4, 1.0)
    assert "more than the 1 s a request may spend checking them (4 checked)" in problem["detail"]


def test_a_check_still_running_when_the_time_is_spent_refuses_the_request(client, keyspace, monkeypatch):
    def out_of_time(self, data, media_type, limits, *, seconds):
        if media_type != PDF:
            return 1
        raise OutOfTime("opening the PDF took longer than it may")

    monkeypatch.setattr(document_checks.Inspector, "inspect", out_of_time)
    body = fanout(echo_job(), pdf_child(bad.real_pdf(1)))

    problem = refused(client, keyspace, body, 413, "inspection_budget_exceeded")

    assert problem["child_index"] == 1


@pytest.mark.parametrize("settings", [with_budget(inspection_seconds=0.3)])
def test_a_pdf_slower_to_open_than_the_budget_is_refused_when_it_is_spent_raw_or_in_a_group(client, keyspace):
    # Its cross-reference table rebuilt from 16 MB: about two seconds of PDFium, killed at 0.3.
    slow = bad.pdf_without_xref(16 << 20)
    before = keyspace()

    raw = client.post("/jobs?model=tesseract", data=slow, content_type=PDF)
    grouped = client.post("/jobs", json=fanout(pdf_child(bad.real_pdf(1)), pdf_child(slow)))

    assert_problem(raw, 413, "inspection_budget_exceeded")
    assert assert_problem(grouped, 413, "inspection_budget_exceeded")["child_index"] == 1
    assert keyspace() == before
