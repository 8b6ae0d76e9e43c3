"""The generated Python client (``ocrgw_client``) against a real gateway, worker and engines.

It submits a JSON job, waits for it, reads it and its result through its
typed models, and reads a problem as the typed answer of the operation.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from ocrgw_client import Client
from ocrgw_client.api.health import get_health
from ocrgw_client.api.jobs import create_job, get_job
from ocrgw_client.api.results import get_result
from ocrgw_client.models import (
    Job,
    JobModel,
    Problem,
    ProblemCode,
    Result,
    SingleJobView,
)
from ocrgw_client.models.job_options import JobOptions
from ocrgw_client.types import UNSET

from tests.integration.live import ECHO_TIMEOUT, OCR_TIMEOUT, png_bytes
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

UNKNOWN_ID = "0123456789abcdef0123456789abcdef"
WORDS = "HELLO OCRGW 2026"


@pytest.fixture
def client(current_deployment) -> Iterator[Client]:
    with Client(base_url=current_deployment.web().base_url, timeout=30.0, raise_on_unexpected_status=True) as client:
        yield client


def submitted(client: Client, job: Job) -> str:
    response = create_job.sync_detailed(client=client, body=job)
    assert response.status_code == 202, response.content
    assert isinstance(response.parsed, SingleJobView), response.parsed
    return response.parsed.id


def fetch_with(client: Client):
    """A ``wait_for_job`` fetch that reads the job through the client, as its JSON."""

    def fetch(job_id: str) -> Mapping[str, Any]:
        view = get_job.sync(client=client, job_id=job_id)
        assert isinstance(view, SingleJobView), view
        return view.to_dict()

    return fetch


def test_the_client_submits_a_job_waits_for_it_and_reads_its_result(client):
    # Given an echo job of two pages, built from the client's own models
    job = Job(
        model=JobModel.ECHO,
        content_type="text/plain",
        payload=base64.b64encode(b"first page\fsecond page").decode(),
        options=JobOptions.from_dict({"delay_ms": 0}),
    )

    # When it is submitted and waited for
    job_id = submitted(client, job)
    wait_for_job(fetch_with(client), job_id, timeout=ECHO_TIMEOUT)

    # Then its view and its result come back as the client's types
    view = get_job.sync(client=client, job_id=job_id)
    assert isinstance(view, SingleJobView)
    assert (view.id, view.status.value, view.model) == (job_id, "completed", "echo")
    assert view.error_code is None and isinstance(view.result, Result)
    result = get_result.sync(client=client, job_id=job_id)
    assert isinstance(result, Result)
    assert [page.text for page in result.pages] == ["first page", "second page"]
    assert [page.page for page in result.pages] == [1, 2]
    assert result.text == view.result.text


def test_the_client_reads_a_page_that_tesseract_read(client, tmp_path):
    # Given a real page image, sent as a JSON job for tesseract
    job = Job(
        model=JobModel.TESSERACT,
        content_type="image/png",
        payload=base64.b64encode(png_bytes(tmp_path, WORDS)).decode(),
    )

    # When it has been read
    job_id = submitted(client, job)
    wait_for_job(fetch_with(client), job_id, timeout=OCR_TIMEOUT)

    # Then the words are in its result, with their lines and boxes
    view = get_job.sync(client=client, job_id=job_id)
    assert isinstance(view, SingleJobView) and view.status.value == "completed", view
    result = get_result.sync(client=client, job_id=job_id)
    assert isinstance(result, Result)
    assert WORDS in result.text
    page = result.pages[0]
    assert page.rotation is UNSET or page.rotation.value == 0
    assert page.lines and all(len(line.bbox) == 4 for line in page.lines)


def test_an_unknown_job_is_the_typed_problem_of_get_job(client):
    # When a job that does not exist is read
    response = get_job.sync_detailed(client=client, job_id=UNKNOWN_ID)

    # Then the answer is getJob's 404, the one Problem model, its code one the document lists for it
    assert response.status_code == 404
    problem = response.parsed
    assert isinstance(problem, Problem)
    assert problem.code is ProblemCode.JOB_NOT_FOUND
    assert problem.code.value in {code.value for code in ProblemCode}
    assert (problem.status, problem.job_id) == (404, UNKNOWN_ID)


def test_the_probes_need_no_key(client):
    health = get_health.sync(client=client)

    assert health is not None and health.status == "ok"
