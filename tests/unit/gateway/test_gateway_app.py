"""The app as a whole: probes, draining, and that every error is a problem document."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from gateway import create_app, drain
from jobs.ids import new_job_id
from jobs.queries import JobQueries
from jobs.store import JobStore
from tests.harness import free_port

from .documented import documented_client
from .support import assert_problem, echo_job

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def redis_down(settings):
    """An app whose Redis refuses every connection."""
    server = fakeredis.FakeServer()
    server.connected = False
    store = JobStore(fakeredis.FakeRedis(server=server), settings)
    return documented_client(create_app(settings, store, lambda dispatches: 0))


# -- the factory -----------------------------------------------------------------------


def test_an_app_with_its_own_publisher_never_imports_celery():
    code = (
        "import sys, fakeredis\n"
        "from gateway import create_app\n"
        "from jobs.config import Settings\n"
        "from jobs.store import JobStore\n"
        "s = Settings()\n"
        "app = create_app(s, JobStore(fakeredis.FakeRedis(), s), lambda d: 0)\n"
        "app.test_client().post('/jobs', json={'model': 'echo', 'payload': 'aGk=', 'content_type': 'text/plain'})\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('celery', 'kombu', 'workers'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, timeout=60)


# -- probes and draining ----------------------------------------------------------------


def test_healthz_answers_without_redis(redis_down):
    response = redis_down.get("/healthz")

    assert (response.status_code, response.get_json()) == (200, {"status": "ok"})


def test_readyz_is_ready_when_redis_answers(client):
    response = client.get("/readyz")

    assert (response.status_code, response.get_json()) == (200, {"status": "ready"})


def test_readyz_is_503_when_redis_does_not_answer(redis_down):
    assert_problem(redis_down.get("/readyz"), 503, "store_unavailable")


def test_readyz_tells_nothing_of_the_redis_it_cannot_reach_and_logs_it(settings, caplog):
    # A real client and a port where nothing listens: the refusal names the host and port.
    port = free_port()
    client = redis.Redis(host="127.0.0.1", port=port, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0))
    store = JobStore(client, settings)
    app = documented_client(create_app(settings, store, lambda dispatches: 0))

    response = app.get("/readyz")

    assert_problem(response, 503, "store_unavailable")
    for internal in ("127.0.0.1", str(port), "Connection refused", "Error", "connecting"):
        assert internal not in response.get_data(as_text=True)
    assert any(str(port) in record.getMessage() for record in caplog.records)


def test_a_submission_is_503_when_redis_does_not_answer(redis_down):
    response = redis_down.post("/jobs", json=echo_job())

    assert_problem(response, 503, "store_unavailable")
    assert response.headers["Retry-After"] == "5"


def test_a_poll_is_503_when_redis_does_not_answer(redis_down):
    assert_problem(redis_down.get(f"/jobs/{new_job_id()}"), 503, "store_unavailable")  # an id the tenant could own


@pytest.mark.parametrize("where", ["process", "store"])
def test_draining_refuses_new_jobs_but_keeps_answering_polls(client, store, keyspace, where):
    job_id = client.post("/jobs", json=echo_job()).get_json()["id"]
    if where == "process":
        drain.start_draining()
    else:
        store.set_draining(True)
    before = keyspace()

    refused = client.post("/jobs", json=echo_job())

    assert_problem(refused, 503, "draining")
    assert refused.headers["Retry-After"] == "5"
    assert keyspace() == before
    assert client.get(f"/jobs/{job_id}").status_code == 200
    assert client.get(f"/jobs/{job_id}/events").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert_problem(client.get("/readyz"), 503, "draining")


def test_sigterm_sets_the_drain_flag_and_keeps_the_previous_handler():
    original = signal.getsignal(signal.SIGTERM)
    seen = []
    signal.signal(signal.SIGTERM, lambda signum, frame: seen.append(signum))
    try:
        drain.install_sigterm_hook()
        drain.install_sigterm_hook()  # a second app in the same process chains nothing more

        signal.raise_signal(signal.SIGTERM)

        assert drain.is_draining()
        assert seen == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, original)


# -- every error is a problem -------------------------------------------------------------


def test_an_unknown_route_is_a_404_problem(client):
    body = assert_problem(client.get("/nothing/here"), 404, "not_found")

    assert body["type"] == "about:blank"
    assert body["title"] == "Not Found"


def test_a_wrong_method_is_a_405_problem_with_allow(client):
    response = client.delete("/jobs")

    assert_problem(response, 405, "method_not_allowed")
    assert set(response.headers["Allow"].split(", ")) >= {"POST"}


def test_an_unexpected_error_is_a_logged_500_problem(client, monkeypatch, caplog):
    def broken(self, job_id, tenant=None):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(JobQueries, "get", broken)

    body = assert_problem(client.get(f"/jobs/{'0' * 32}"), 500, "internal_error")

    assert "disk on fire" not in body["detail"]
    assert "disk on fire" in caplog.text
