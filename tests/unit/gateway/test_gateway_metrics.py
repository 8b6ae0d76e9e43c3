"""GET /metrics: the gateway's counts and the store's gauges, parsed; submissions counted by shape and model;
the bearer token it asks for when one is set."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway import create_app
from jobs import observed
from jobs.config import Settings
from tests.keyspace import keys
from tests.pdfs import text_pdf
from tests.unit.observability.support import Counts

from .support import assert_problem, b64, echo_job, fanout, png

SUBMISSIONS, FINISHED = "ocrgw_submissions_total", "ocrgw_jobs_finished_total"
TOKEN = "scrape-token-0123456789"


@pytest.fixture
def settings() -> Settings:
    return Settings(max_children=4, max_pages=20, max_body_bytes=1 << 20)


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.mimetype == "text/plain"
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for s in family.samples
    }


def test_metrics_show_the_store_s_jobs_per_model_and_status_as_last_counted(client, redis):
    response = client.post("/jobs", json=fanout(*(echo_job(f"child {i}") for i in range(4)), max_parallel=1))
    assert response.status_code == 202
    assert ("ocrgw_jobs_held", (("model", "echo"),)) not in scrape(client)  # nothing counted yet
    sample = observed.record_sample(redis, keys)  # the coordinator's count

    got = scrape(client)

    assert got[("ocrgw_jobs_held", (("model", "echo"),))] == 3
    assert got[("ocrgw_jobs_queued", (("model", "echo"),))] == 1
    assert got[("ocrgw_jobs_in_flight", (("model", "echo"),))] == 1
    assert got[("ocrgw_store_up", ())] == 1
    assert got[("ocrgw_jobs_sample_timestamp_seconds", ())] == sample.sampled_at_ms / 1000


def test_each_submission_is_counted_by_its_shape_and_model(client):
    pdf = {"model": "tesseract", "content_type": "application/pdf", "payload": b64(text_pdf("one", "two", "three"))}
    mixed = fanout(echo_job("a"), {"model": "tesseract", "content_type": "image/png", "payload": b64(png())})
    counts = Counts()

    for body in (echo_job("one"), fanout(echo_job("a"), echo_job("b")), {**pdf, "split_pages": 2}, mixed):
        assert client.post("/jobs", json=body).status_code == 202
    assert client.post("/jobs?model=echo", data=b"raw", content_type="text/plain").status_code == 202

    assert counts.delta(SUBMISSIONS, shape="single", model="echo") == 2
    assert counts.delta(SUBMISSIONS, shape="group", model="echo") == 1
    assert counts.delta(SUBMISSIONS, shape="split", model="tesseract") == 1
    assert counts.delta(SUBMISSIONS, shape="group", model="mixed") == 1
    # What the scrape shows is what was counted.
    assert scrape(client)[(SUBMISSIONS, (("model", "tesseract"), ("shape", "split")))] >= 1


def test_a_replayed_submission_creates_nothing_and_counts_nothing(client, caplog):
    caplog.set_level(logging.INFO, logger="gateway.metrics")
    headers = {"Idempotency-Key": "metrics-replay-1"}
    first = client.post("/jobs", json=echo_job("once"), headers=headers)
    counts = Counts()

    again = client.post("/jobs", json=echo_job("once"), headers=headers)

    assert again.headers["Idempotent-Replayed"] == "true"
    assert counts.delta(SUBMISSIONS, shape="single", model="echo") == 0
    job_id = first.get_json()["id"]
    lines = [(r.getMessage(), getattr(r, "job_id", None)) for r in caplog.records if r.name == "gateway.metrics"]
    assert lines == [(f"accepted {job_id}: single, 1 job(s)", job_id), (f"replayed {job_id}: single, 1 job(s)", job_id)]


def test_metrics_are_for_prometheus_not_a_route_of_the_api(client):
    assert "/metrics" not in client.get("/openapi.json").get_json()["paths"]
    assert client.post("/metrics").status_code == 405


@pytest.fixture
def guarded(settings, store):
    """A gateway whose /metrics asks for TOKEN."""
    return create_app(replace(settings, metrics_token=TOKEN), store, len).test_client()


@pytest.mark.parametrize(
    ("authorization", "code"),
    [
        (None, "missing_metrics_token"),
        ("Basic " + TOKEN, "missing_metrics_token"),
        ("Bearer ", "missing_metrics_token"),
        ("Bearer " + TOKEN[:-1], "invalid_metrics_token"),
        ("Bearer " + TOKEN + "x", "invalid_metrics_token"),
        ("Bearer é" + TOKEN, "invalid_metrics_token"),
    ],
)
def test_with_a_token_set_metrics_without_it_is_401(guarded, authorization, code):
    headers = {"Authorization": authorization} if authorization is not None else {}

    response = guarded.get("/metrics", headers=headers)

    body = assert_problem(response, 401, code)
    assert TOKEN not in response.get_data(as_text=True) and "ocrgw_" not in body["detail"]
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_with_a_token_set_metrics_with_it_answers(guarded):
    response = guarded.get("/metrics", headers={"Authorization": f"bearer  {TOKEN} "})

    assert response.status_code == 200
    assert "ocrgw_store_up 1.0" in response.get_data(as_text=True)


def test_the_token_guards_metrics_only(guarded):
    assert guarded.get("/healthz").status_code == 200


def test_jobs_cancelled_before_they_started_are_counted_as_finished_where_they_are_cancelled(client, store):
    group = client.post("/jobs", json=fanout(*(echo_job(f"child {i}") for i in range(4)), max_parallel=2))
    parent_id = group.get_json()["id"]
    running = store.claim(f"{parent_id}-0")  # started: its worker ends it, and counts it
    assert running is not None
    single_id = client.post("/jobs", json=echo_job("alone")).get_json()["id"]
    counts = Counts()

    assert client.delete(f"/jobs/{parent_id}").status_code == 202  # one child still runs
    assert client.delete(f"/jobs/{single_id}").status_code == 200
    assert client.delete(f"/jobs/{single_id}").status_code == 409  # already ended: nothing more

    # One child queued and two held in the group, and the single job: four, once each.
    assert counts.delta(FINISHED, model="echo", status="cancelled") == 4
    assert scrape(client)[(FINISHED, (("model", "echo"), ("status", "cancelled")))] >= 4
