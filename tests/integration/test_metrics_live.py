"""Prometheus metrics of a real stack: a group runs, and what each process's /metrics says is what happened.

The stack is the Procfile's (a gunicorn gateway of three workers recycled
every few requests, an OCR worker with its prefork pool, the coordinator
and beat), on a database of its own, with metrics ports for the worker and
the coordinator.  What the metrics say is compared with what the store
recorded: the group's children by status, its hand-offs, its submission.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.harness import wait_until
from tests.integration.fanout_support import Gateway, echo_child, submit_group
from tests.integration.observability_support import WAIT, ProcfileStack, get, metrics_dirs, scrape, value
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

WEB_WORKERS = 3
#: gunicorn replaces each worker after this many requests (plus up to the jitter, so that the workers
#: are not all replaced at once), so the counts come from workers alive and gone.
MAX_REQUESTS, JITTER = 4, 2


@pytest.fixture(scope="module")
def procfile_stack(module_procs):
    env = {
        "OCRGW_SWEEP_INTERVAL": "0.2",
        "OCRGW_GAUGE_INTERVAL": "0.2",
        "OCRGW_METRICS_ADDRESS": "127.0.0.1",
        "OCRGW_METRICS_DIR": str(module_procs.work_dir / "m"),
    }
    stack = ProcfileStack(module_procs, module_procs.fresh_db(), env)
    stack.celery("worker", metrics_env="OCRGW_WORKER_METRICS_PORT")
    stack.celery("coordinator", metrics_env="OCRGW_COORDINATOR_METRICS_PORT")
    stack.celery("beat")
    stack.web(
        workers=WEB_WORKERS, extra_args=["--max-requests", str(MAX_REQUESTS), "--max-requests-jitter", str(JITTER)]
    )
    return stack.ready()


#: How an attempt came to a worker: a message naming it, a wake-up, or taken as the previous job ended.
PATHS = ("message", "pulled", "kept_slot")


def test_after_a_group_has_run_the_metrics_count_its_children_by_status(procfile_stack):
    children = [echo_child(f"metrics-{i}", fail=i % 3 == 0) for i in range(9)]
    max_parallel = 2
    with Gateway(procfile_stack.procs["web"].base_url, timeout=WAIT) as gateway:
        parent_id = submit_group(gateway, children, max_parallel).json()["id"]
        view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    by_status = {s: sum(c["status"] == s for c in view["children"]) for s in ("completed", "failed")}
    assert by_status == {"completed": 6, "failed": 3}

    # The worker counts an attempt's end, and its task's hand-offs, after the write that may end the group:
    # wait for its scrape to catch up with the store.
    def worker_caught_up():
        m = scrape(procfile_stack.metrics_url("worker"))
        ended = sum(value(m, "ocrgw_jobs_finished_total", model="echo", status=s) for s in by_status)
        handoffs = sum(value(m, "ocrgw_handoff_latency_seconds_count", path=p) for p in PATHS)
        return m if ended >= len(children) and handoffs >= len(children) - max_parallel else None

    worker = wait_until(worker_caught_up, WAIT, message="the worker never counted every child and hand-off")
    finished = {s: value(worker, "ocrgw_jobs_finished_total", model="echo", status=s) for s in by_status}
    assert finished == by_status
    assert value(worker, "ocrgw_job_duration_seconds_count", model="echo", status="completed") == 6
    starts = [value(worker, "ocrgw_job_starts_total", model="echo", path=p) for p in PATHS]
    assert sum(starts) == len(children)
    # Every child but those released with the group took over a slot another had freed.
    handoffs = [value(worker, "ocrgw_handoff_latency_seconds_count", path=p) for p in PATHS]
    assert sum(handoffs) == len(children) - max_parallel
    # A kept slot's hand-off is not always 0 s: a finishing worker takes the oldest ready job, which may be
    # one another worker's script released earlier (its wake-up still on its way), not the one it released.

    # The job gauges are the coordinator's last count: wait for one made after the group ended.
    ended_at = datetime.fromisoformat(view["finished_at"].replace("Z", "+00:00")).timestamp()
    gateway_metrics = wait_until(
        lambda: (
            (m := scrape(procfile_stack.metrics_url("web")))
            and value(m, "ocrgw_jobs_sample_timestamp_seconds") > ended_at
            and m
        ),
        WAIT,
        message="the coordinator never counted the gauges after the group ended",
    )
    assert value(gateway_metrics, "ocrgw_submissions_total", shape="group", model="echo") == 1
    assert value(gateway_metrics, "ocrgw_store_up") == 1
    for gauge in ("ocrgw_jobs_held", "ocrgw_jobs_queued", "ocrgw_jobs_processing", "ocrgw_jobs_in_flight"):
        assert value(gateway_metrics, gauge, model="echo") == 0, gauge

    coordinator = wait_until(
        lambda: (
            (m := scrape(procfile_stack.metrics_url("coordinator")))
            and value(m, "ocrgw_sweep_duration_seconds_count", outcome="swept") > 0
            and m
        ),
        WAIT,
        message="the coordinator never counted a sweep",
    )
    assert value(coordinator, "ocrgw_sweep_repairs_total", action="lease_expired") == 0


def test_several_gunicorn_workers_give_one_coherent_count(procfile_stack):
    url = procfile_stack.metrics_url("web")
    before = value(scrape(url), "ocrgw_submissions_total", shape="single", model="echo")
    jobs = WEB_WORKERS * (MAX_REQUESTS + JITTER) + 1  # more than the first workers can serve: some are replaced
    with Gateway(procfile_stack.procs["web"].base_url, timeout=WAIT) as gateway:
        for i in range(jobs):
            response = gateway.post_json(echo_child(f"single-{i}"))
            assert response.status_code == 202, response.text
        # Each scrape may reach any worker, one that has just replaced another included.
        counts = [value(scrape(url), "ocrgw_submissions_total", shape="single", model="echo") for _ in range(8)]

    assert counts == [before + jobs] * len(counts)
    [family] = metrics_dirs(procfile_stack.group.work_dir / "m", "web")
    counted_in = {f.name for f in family.iterdir() if f.name.startswith("counter_")}
    assert len(counted_in) > WEB_WORKERS, f"the submissions were counted by {sorted(counted_in)} only"


def test_the_worker_s_metrics_endpoint_answers_from_its_main_process(procfile_stack):
    status, content_type, body = get(procfile_stack.metrics_url("worker"))

    assert status == 200 and content_type.startswith("text/plain")
    assert "# TYPE ocrgw_job_attempts_total counter" in body


def test_children_cancelled_before_they_started_are_counted_where_they_were_cancelled(procfile_stack):
    """A group of N: one child runs, N-1 are held; a client cancels the group.  The gateway that
    cancelled the held ones counts them, the worker the one it was running (which ends cancelled at
    its next page, or completed if it had none left): each once, where it ended."""
    n = 6
    pages = "\f".join(f"page {p}" for p in range(4))  # the running child sees the cancel at its next page
    children = [echo_child(pages if i == 0 else f"held-{i}", delay_ms=1000) for i in range(n)]
    web, worker = procfile_stack.metrics_url("web"), procfile_stack.metrics_url("worker")

    def finished(url: str, status: str) -> float:
        return value(scrape(url), "ocrgw_jobs_finished_total", model="echo", status=status)

    before = {(url, s): finished(url, s) for url in (web, worker) for s in ("cancelled", "completed")}
    with Gateway(procfile_stack.procs["web"].base_url, timeout=WAIT) as gateway:
        parent_id = submit_group(gateway, children, 1).json()["id"]
        first = f"{parent_id}-0"
        wait_until(lambda: gateway.job(first)["status"] == "processing", WAIT, message="the first child never started")
        assert gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}", timeout=WAIT).status_code == 202
        view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    ran_to = view["children"][0]["status"]
    assert ran_to in ("cancelled", "completed")
    assert [c["status"] for c in view["children"][1:]] == ["cancelled"] * (n - 1)

    # The gateway counted the held children as it cancelled them, before it answered.
    assert finished(web, "cancelled") - before[web, "cancelled"] == n - 1
    # The worker counts the running one once its attempt has ended, under the status it ended with.
    wait_until(
        lambda: finished(worker, ran_to) - before[worker, ran_to] >= 1,
        WAIT,
        message="the worker never counted the child it was running",
    )
    assert finished(worker, "cancelled") - before[worker, "cancelled"] == (ran_to == "cancelled")
    assert finished(web, "cancelled") - before[web, "cancelled"] == n - 1


def test_the_gateway_counts_requests_by_route_template_and_the_worker_a_job_s_queue_wait(procfile_stack):
    """Through gunicorn's several (recycled) workers: a 202 for POST /jobs under ``/jobs``, a 404 for an
    unknown job under ``/jobs/<job_id>`` (never its raw path), and, once the job ran, its queue wait."""
    web, worker = procfile_stack.metrics_url("web"), procfile_stack.metrics_url("worker")
    unknown = "0123456789abcdef0123456789abcdef"

    def requests_counted(status: str, route: str, method: str) -> float:
        return value(scrape(web), "ocrgw_http_requests_total", method=method, route=route, status=status)

    def queue_waits() -> float:
        return value(scrape(worker), "ocrgw_queue_wait_seconds_count", model="echo")

    before = {
        "202": requests_counted("202", "/jobs", "POST"),
        "404": requests_counted("404", "/jobs/<job_id>", "GET"),
        "waits": queue_waits(),
    }
    with Gateway(procfile_stack.procs["web"].base_url, timeout=WAIT) as gateway:
        created = gateway.post_json(echo_child("queue-wait"))
        assert created.status_code == 202, created.text
        assert gateway.http.get(f"{gateway.base_url}/jobs/{unknown}", timeout=WAIT).status_code == 404
        view = wait_for_job(gateway.job, created.json()["id"], timeout=WAIT)
    assert view["status"] == "completed"

    # Counted before each answer went out, by whichever worker answered: any worker's scrape sums them all.
    assert requests_counted("202", "/jobs", "POST") - before["202"] == 1
    assert requests_counted("404", "/jobs/<job_id>", "GET") - before["404"] == 1
    assert value(scrape(web), "ocrgw_http_requests_total", method="GET", route=f"/jobs/{unknown}", status="404") == 0
    duration = value(scrape(web), "ocrgw_http_request_duration_seconds_count", method="POST", route="/jobs")
    assert duration >= 1
    # The worker records the queue wait as the job's first attempt starts, before the job completes.
    assert queue_waits() - before["waits"] == 1
    waited = value(scrape(worker), "ocrgw_queue_wait_seconds_sum", model="echo")
    assert waited > 0


def test_the_gateway_serves_the_live_workers_as_the_coordinator_counted_them(procfile_stack):
    """The worker consumes Tesseract's queue, so it reports to the store: one live, none lapsed."""
    counted = wait_until(
        lambda: (m := scrape(procfile_stack.metrics_url("web"))) and value(m, "ocrgw_workers", state="live") and m,
        WAIT,
        message="the coordinator never counted the live worker",
    )

    assert value(counted, "ocrgw_workers", state="live") == 1
    assert value(counted, "ocrgw_workers", state="lapsed") == 0
