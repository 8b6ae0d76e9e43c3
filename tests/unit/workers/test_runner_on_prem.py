"""The worker's own on-prem check: a marked job of a cloud model fails before a byte leaves."""

from __future__ import annotations

import json

import fakeredis
import pytest

from jobs.records import NewJob
from jobs.registry import RemoteModel, install_remote_models
from jobs.store import JobStore
from tests.keyspace import keys
from tests.unit.remote_models import registry_restored
from workers.runner import COMPLETED, FAILED, Runner

from .fake_upstream import FakeUpstream, completed, page
from .runner_support import SETTINGS


@pytest.fixture
def upstream():
    with FakeUpstream() as fake, registry_restored():
        fake.views = [completed(page(1, "read upstream"))]
        install_remote_models([RemoteModel("cloudocr", "tesseract", fake.url)])
        yield fake


@pytest.fixture
def store() -> JobStore:
    return JobStore(fakeredis.FakeRedis(server=fakeredis.FakeServer()), SETTINGS)


def run(store: JobStore, job: NewJob) -> tuple[str, dict[str, str]]:
    job_id = store.create_single(job).job_id
    outcome = Runner(store, lambda dispatches: len(list(dispatches))).run(job_id)
    view = store.queries.get(job_id)
    assert view is not None
    return outcome, view


def test_a_job_marked_on_prem_fails_on_prem_required_and_nothing_is_sent(store, upstream):
    outcome, job = run(store, NewJob("cloudocr", "image/png", b"\x89PNG secret", on_prem=True))

    assert outcome == FAILED
    assert (job["status"], job["error_code"]) == ("failed", "on_prem_required")
    assert "nothing was sent" in job["error"]
    assert upstream.requests == []
    assert store.redis.get(keys.result(job["id"])) is None


def test_an_unmarked_job_of_the_same_model_goes_up(store, upstream):
    outcome, job = run(store, NewJob("cloudocr", "image/png", b"\x89PNG public"))

    assert outcome == COMPLETED, job
    assert len(upstream.of("POST")) == 1
    assert json.loads(store.redis.get(keys.result(job["id"])))["text"] == "read upstream"


def test_an_on_prem_model_takes_a_marked_job(store, upstream):
    outcome, job = run(store, NewJob("echo", "text/plain", b"stays here", on_prem=True))

    assert outcome == COMPLETED, job
    assert upstream.requests == []
