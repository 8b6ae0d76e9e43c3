"""Remote models between two real ocrgw deployments: one forwards to the other over HTTP.

The upstream is a whole ocrgw (its own redis-server, worker, coordinator,
beat and gunicorn); the downstream's remote models name its models. A third
remote model points at a closed port. Outcomes are read from what each side
recorded (statuses, attempts, runs, results), never from how long anything took.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.harness import BEAT_READY, CELERY_READY, ProcGroup, RedisServer, free_port
from tests.integration.live import (
    ECHO_TIMEOUT,
    OCR_TIMEOUT,
    Api,
    accepted,
    assert_problem,
    b64,
    png_bytes,
)
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

WORDS = "REMOTE OCRGW 2026"
UPSTREAM_KEY = "downstream-s3cret"


@pytest.fixture(scope="module")
def upstream(redis_server, tmp_path_factory) -> Iterator[Api]:
    """A whole ocrgw of its own, on a redis-server of its own (``redis_server``: one is installed)."""
    work = tmp_path_factory.mktemp("upstream")
    redis_group = ProcGroup(work / "redis", label="upstream redis")
    group = ProcGroup(
        work, redis=lambda: RedisServer(redis_group, work / "data", name="upstream-redis").start(), label="upstream"
    )
    try:
        stack = group.stack(db=0, env={"OCRGW_SWEEP_INTERVAL": "0.2"}, web=True)
        yield Api(stack.web().base_url)
    finally:
        group.close()
        redis_group.close()


@pytest.fixture(scope="module")
def downstream(upstream, redis_server, tmp_path_factory) -> Iterator[Api]:
    """An ocrgw whose remote models are the upstream's tesseract and echo, and an upstream that is not there.

    Its worker names no queue: it consumes every model's, the remote models' included, as the Procfile's does.
    """
    work = tmp_path_factory.mktemp("downstream")
    keys_file = work / "remote-keys"
    keys_file.write_text(f"cloudocr={UPSTREAM_KEY}\ncloudecho={UPSTREAM_KEY}\n")
    closed = f"http://127.0.0.1:{free_port()}"
    env = {
        "OCRGW_REMOTE_MODELS": f"cloudocr=tesseract@{upstream.base_url},cloudecho=echo@{upstream.base_url},"
        f"deadocr=echo@{closed}",
        "OCRGW_REMOTE_KEYS_FILE": str(keys_file),
        "OCRGW_MAX_ATTEMPTS": "2",
        "OCRGW_RETRY_BACKOFF": "0.2",
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "NO_PROXY": "127.0.0.1,localhost",  # loopback: no proxy from the environment applies
    }
    group = ProcGroup(work, redis=redis_server, label="downstream")
    try:
        db = group.fresh_db()
        worker = group.worker(db=db, env=env, wait=False)
        coordinator = group.coordinator(db=db, env=env, wait=False)
        beat = group.beat(db=db, env=env, wait=False)
        web = group.web(db=db, env=env, wait=False)
        for proc in (worker, coordinator):
            proc.wait_ready(CELERY_READY)
        beat.wait_ready(BEAT_READY)
        web.wait_ready(web.healthy)
        yield Api(web.base_url)
    finally:
        group.close()


def upstream_jobs(upstream: Api) -> list[dict]:
    return upstream.get("/jobs", params={"limit": 200})["jobs"]


def test_the_remote_models_are_listed_as_cloud_models(downstream):
    models = {m["name"]: m["location"] for m in downstream.get("/models")["models"]}

    assert {name: models[name] for name in ("cloudocr", "cloudecho", "deadocr", "tesseract")} == {
        "cloudocr": "cloud",
        "cloudecho": "cloud",
        "deadocr": "cloud",
        "tesseract": "on_prem",
    }


def test_a_worker_started_without_queues_serves_a_remote_model(downstream, upstream):
    # Given a remote model that no worker of the downstream was told about by name
    job = {"model": "cloudecho", "content_type": "text/plain", "payload": b64("served by default")}

    # When a job is sent to it
    view = wait_for_job(downstream.job, accepted(downstream.post_json(job)), timeout=ECHO_TIMEOUT)

    # Then the worker with the registry's queues took it, and the upstream's echo answered
    assert (view["status"], view["attempts"]) == ("completed", 1), view
    assert view["result"]["text"] == "served by default"
    assert any(j["model"] == "echo" and j["status"] == "completed" for j in upstream_jobs(upstream))


def test_a_remote_job_completes_with_the_upstreams_text_and_pages(downstream, upstream, tmp_path):
    # Given a page with clear words, sent to the remote model
    png = png_bytes(tmp_path, WORDS)
    job_id = accepted(downstream.post_raw(png, "image/png", model="cloudocr"))

    # When it ends
    job = wait_for_job(downstream.job, job_id, timeout=OCR_TIMEOUT)

    # Then it completed once, with the words, lines and boxes the upstream's tesseract read
    assert job["status"] == "completed", job
    assert (job["model"], job["attempts"]) == ("cloudocr", 1)
    result = job["result"]
    assert WORDS in result["text"]
    [page] = result["pages"]
    assert page["page"] == 1 and page["width"] > 0 and page["height"] > 0
    assert WORDS in " ".join(line["text"] for line in page["lines"])
    assert all(0 <= x0 < x1 and 0 <= y0 < y1 for x0, y0, x1, y1 in (line["bbox"] for line in page["lines"]))
    # And it is the upstream job's own result, page for page
    [there] = [j for j in upstream_jobs(upstream) if j["model"] == "tesseract"]
    assert there["status"] == "completed"
    assert upstream.result(there["id"]) == result


def test_an_on_prem_document_is_refused_and_never_reaches_the_upstream(downstream, upstream):
    before = upstream_jobs(upstream)
    job = {"model": "cloudecho", "content_type": "text/plain", "payload": b64("stays here"), "on_prem": True}

    response = downstream.post_json(job)

    assert_problem(response, 403, "on_prem_required")
    assert upstream_jobs(upstream) == before


def test_an_unreachable_upstream_fails_the_job_with_upstream_unreachable_after_its_attempts(downstream):
    job_id = accepted(downstream.post_json({"model": "deadocr", "content_type": "text/plain", "payload": b64("x")}))

    job = wait_for_job(downstream.job, job_id, timeout=ECHO_TIMEOUT)

    assert (job["status"], job["error_code"]) == ("failed", "upstream_unreachable"), job
    assert "cannot be reached" in job["error"]
    assert job["attempts"] == 2  # OCRGW_MAX_ATTEMPTS: the first was retried
    assert [run["outcome"] for run in job["runs"]] == ["retrying", "failed"]


def test_a_failed_upstream_job_fails_the_job_with_upstream_failed_once(downstream):
    job = {"model": "cloudecho", "content_type": "text/plain", "payload": b64("x"), "options": {"fail": True}}
    job_id = accepted(downstream.post_json(job))

    view = wait_for_job(downstream.job, job_id, timeout=ECHO_TIMEOUT)

    assert (view["status"], view["error_code"], view["attempts"]) == ("failed", "upstream_failed", 1), view
    assert "echo_failed" in view["error"]


def test_a_document_the_upstream_refuses_fails_the_job_with_upstream_rejected_once(downstream, tmp_path):
    job_id = accepted(downstream.post_raw(png_bytes(tmp_path, "not text"), "image/png", model="cloudecho"))

    view = wait_for_job(downstream.job, job_id, timeout=ECHO_TIMEOUT)

    assert (view["status"], view["error_code"], view["attempts"]) == ("failed", "upstream_rejected", 1), view
    assert "415" in view["error"] and "unsupported_content_type" in view["error"]
