"""Leases, retries, time limits, draining and Redis durability, against real processes.

Most tests share one deployment of this module (worker, coordinator, beat
and gunicorn on a database of their own) with short leases, a fast sweep,
a small job time limit and echo's ``crash`` option allowed.  None of them
kills that deployment's processes; a test that stops or freezes a process
starts its own.  Outcomes are read from what the store recorded (status,
attempts, error_code, the audit stream), never from how long anything took.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
import requests

from tests.harness import ROOT, ProcGroup, http_status, wait_until
from tests.integration.chaos_support import (
    FAST,
    WAIT,
    assert_group_settled,
    assert_single_settled,
    echo,
    group,
    root_ids,
    texts,
)
from tests.integration.fanout_support import Gateway
from tests.integration.polling import tolerant, wait_for_job, wait_until_processing
from tests.keyspace import keys

pytestmark = pytest.mark.integration

JOB_TIMEOUT_S = 6
ENV = {**FAST, "OCRGW_JOB_TIMEOUT": str(JOB_TIMEOUT_S)}


@pytest.fixture(scope="module")
def deployment(stack_factory):
    return stack_factory(env=ENV, concurrency=2)


def submit(gateway: Gateway, body, headers=None) -> str:
    response = gateway.post_json(body, headers)
    assert response.status_code == 202, f"{response.status_code} {response.text}"
    return response.json()["id"]


def worker_survived(deployment, log_from: int) -> None:
    """The worker (and its pool) kept running: no process of it was lost since ``log_from``."""
    assert deployment.worker.alive
    log = deployment.worker.log_text()[log_from:]
    assert "WorkerLostError" not in log and "exited with" not in log, log[-5000:]


# -- leases --------------------------------------------------------------------------------------


def test_the_heartbeat_holds_the_lease_while_the_engine_blocks_longer_than_it(gateway, db):
    lease_s = float(FAST["OCRGW_LEASE_SECONDS"])
    job_id = submit(gateway, echo("slow and steady", delay_ms=lease_s * 2.5 * 1000))
    wait_until_processing(gateway.job, job_id)

    first = db.zscore(keys.leases(keys.bucket_of(job_id)), job_id)
    assert first is not None, "a processing job holds a lease in the leases index"
    # The deadline moves on while the adapter sleeps through several lease lengths.
    wait_until(
        lambda: (db.zscore(keys.leases(keys.bucket_of(job_id)), job_id) or 0) > first,
        WAIT,
        message="the lease was never extended",
    )

    view = assert_single_settled(gateway, job_id, "slow and steady")
    assert view["attempts"] == 1
    assert "last_error_code" not in view  # never reclaimed
    assert db.zscore(keys.leases(keys.bucket_of(job_id)), job_id) is None


def test_an_engine_crash_is_reclaimed_by_the_sweep_until_the_last_attempt(deployment, gateway):
    """``crash`` ends the pool process mid-job on every attempt.

    Celery requeues the message of the lost process and its redelivery finds
    the job still processing (a no-op claim); the lease, no longer renewed,
    expires and the sweep gives the job another attempt, and after the last
    it fails ``lease_expired`` and its slot goes to the next child.
    """
    crash, rest = echo("boom", delay_ms=100, crash=True), texts(2)
    parent_id = submit(gateway, group([crash] + [echo(t) for t in rest], max_parallel=1))

    view = assert_group_settled(gateway, parent_id, ["boom"] + rest, 1, failed={0: "lease_expired"})

    crashed = view["children"][0]
    assert crashed["attempts"] == int(FAST["OCRGW_MAX_ATTEMPTS"])
    assert [c["attempts"] for c in view["children"][1:]] == [1, 1]
    log = deployment.worker.log_text()
    assert "echo asked to crash" in log
    assert "'skipped'" in log, "the requeued message of a crashed process was not a no-op"
    # The worker replaced its lost pool processes and goes on taking jobs.
    assert deployment.worker.alive
    assert_single_settled(gateway, submit(gateway, echo("still here")), "still here")


def test_an_attempt_that_lost_its_lease_cannot_overwrite_the_attempt_that_replaced_it(procs):
    """A worker frozen past its lease wakes up while another attempt holds the job.

    Its heartbeat and its completion are refused (attempt token), so the job
    ends once, with the successor's outcome, and one audit event.
    """
    db = procs.fresh_db()
    stalled = procs.worker(db=db, concurrency=1, env=FAST)
    procs.coordinator(db=db, env=FAST)
    procs.beat(db=db, env=FAST)
    with Gateway(procs.web(db=db, env=FAST).base_url) as gateway:
        job_id = submit(gateway, echo("only once", delay_ms=3000))
        wait_until_processing(gateway.job, job_id)

        stalled.kill(signal.SIGSTOP)
        try:
            procs.worker(db=db, concurrency=1, env=FAST)
            wait_for_job(
                gateway.job,
                job_id,
                lambda v: v["status"] == "processing" and v["attempts"] == 2,
                what="attempt 2 processing",
                through_outages=True,
            )
        finally:
            stalled.kill(signal.SIGCONT)

        wait_until(
            lambda: "'discarded'" in stalled.log_text(),
            WAIT,
            message=lambda: f"the stalled attempt was not discarded:\n{stalled.log_tail()}",
        )
        view = assert_single_settled(gateway, job_id, "only once")
        assert view["attempts"] == 2
        assert view["last_error_code"] == "lease_expired"


# -- retries ---------------------------------------------------------------------------------------


def test_a_transient_error_is_retried_until_the_last_attempt(deployment, gateway):
    job_id = submit(gateway, echo("flaky", transient_fail=True))
    seen = set()

    def retried_and_failed(view):
        seen.add((view["status"], view["stage"], view.get("last_error_code")))
        return view["status"] == "failed"

    view = wait_for_job(gateway.job, job_id, retried_and_failed, what="failed", through_outages=True)

    assert (view["attempts"], view["error_code"]) == (int(FAST["OCRGW_MAX_ATTEMPTS"]), "echo_transient")
    events = gateway.events(job_id)
    assert [(e["operation"], e["status"]) for e in events] == [("job", "failed")]
    # Polls may miss the short backoff; the worker says what it did.
    assert deployment.worker.log_text().count(f"job {job_id} attempt") >= 2


def test_a_document_error_is_not_retried(gateway):
    refused_by_engine = submit(gateway, echo("no thanks", fail=True))
    not_utf8_payload = "//79AA=="  # bytes ff fe fd 00
    not_utf8 = submit(gateway, {"model": "echo", "content_type": "text/plain", "payload": not_utf8_payload})

    for job_id, code in ((refused_by_engine, "echo_failed"), (not_utf8, "invalid_document")):
        view = assert_single_settled(gateway, job_id, error_code=code)
        assert view["attempts"] == 1


def test_a_transiently_failing_child_fails_its_group_without_stopping_its_siblings(gateway):
    children = [echo("a"), echo("flaky", transient_fail=True), echo("b")]
    parent_id = submit(gateway, group(children, max_parallel=2))

    view = assert_group_settled(gateway, parent_id, ["a", "flaky", "b"], 2, failed={1: "echo_transient"})

    assert view["children"][1]["attempts"] == int(FAST["OCRGW_MAX_ATTEMPTS"])


# -- the job time limit --------------------------------------------------------------------------------


def test_a_hung_engine_fails_with_timeout_and_its_slot_goes_to_the_next_child(deployment, gateway):
    log_from = len(deployment.worker.log_text())
    hung = echo("hung", delay_ms=JOB_TIMEOUT_S * 100 * 1000)
    rest = texts(2)
    parent_id = submit(gateway, group([hung] + [echo(t) for t in rest], max_parallel=1))

    view = assert_group_settled(gateway, parent_id, ["hung"] + rest, 1, failed={0: "timeout"})

    hung_child = gateway.job(view["children"][0]["id"])
    assert hung_child["attempts"] == 1  # a timeout is not retried
    assert hung_child["error"] == f"the job ran longer than {JOB_TIMEOUT_S:g} s"
    worker_survived(deployment, log_from)


# -- draining the gateway --------------------------------------------------------------------------------


def test_a_gateway_drains_on_sigterm_and_then_exits(deployment, procs, db):
    """Under gunicorn: after SIGTERM the worker keeps serving for the drain
    window, refusing new jobs (503 + Retry-After) and failing /readyz while
    polls still answer, and only then stops."""
    # The checks below all run inside the window, so it leaves a slow machine room; gunicorn's default
    # graceful timeout (30 s) caps it at 15 s.
    web = procs.web(db=deployment.db, env={**ENV, "OCRGW_DRAIN_SECONDS": "10"})
    with Gateway(web.base_url) as gateway:
        job_id = submit(gateway, echo("before the stop"))
        finished = assert_single_settled(gateway, job_id, "before the stop")
        roots_before = len(root_ids(db))

        web.terminate()
        wait_until(
            lambda: http_status(f"{web.base_url}/readyz") == 503, WAIT, message="/readyz never failed after SIGTERM"
        )

        refused = gateway.post_json(echo("too late"))
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "draining"
        assert int(refused.headers["Retry-After"]) > 0
        # Polls keep working: the job and its audit event, as before the stop.
        assert gateway.job(job_id) == finished
        events = gateway.events(job_id)
        assert [(e["operation"], e["job_id"], e["status"], e["model"]) for e in events] == [
            ("job", job_id, "completed", "echo")
        ], events
        assert http_status(f"{web.base_url}/healthz") == 200
        assert len(root_ids(db)) == roots_before  # the refused request stored nothing

        assert web.wait(timeout=WAIT) == 0
    assert "drain window over" in web.log_text()


def test_the_drain_command_drains_every_gateway_until_it_is_turned_off(deployment, gateway):
    job_id = submit(gateway, echo("polled while draining"))
    env = {**os.environ, **deployment.store_env}

    def drain(state: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "gateway.drain", state],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and done.stderr == "", done
        return done.stdout.strip()

    assert drain("on") == "draining"
    try:
        assert http_status(f"{gateway.base_url}/readyz") == 503
        refused = gateway.post_json(echo("refused"))
        assert (refused.status_code, refused.json()["code"]) == (503, "draining")
        assert "Retry-After" in refused.headers
        assert gateway.job(job_id)["id"] == job_id
    finally:
        assert drain("off") == "not draining"
    assert http_status(f"{gateway.base_url}/readyz") == 200
    assert_single_settled(gateway, submit(gateway, echo("welcome back")), "welcome back")


# -- Redis restarts ------------------------------------------------------------------------------------


@pytest.mark.standalone(reason="restarts a standalone redis-server (the cluster's failover: test_cluster_failover)")
@pytest.mark.parametrize("hard", [False, True], ids=["sigterm", "sigkill"])
def test_a_redis_restart_mid_group_loses_nothing_accepted(redis_server_factory, tmp_path, hard):
    """redis-server with ``appendonly yes`` stops (SIGTERM, or SIGKILL) and
    comes back on the same port and directory in the middle of a group.

    Every job accepted before, and the jobs accepted after, reach a terminal
    status: the store's clients retry, Celery reconnects, and the sweep
    re-publishes what the restart interrupted.
    """
    server = redis_server_factory(appendonly=True)
    procs = ProcGroup(tmp_path / "procs", redis=server, label="aof")
    try:
        db = procs.fresh_db()
        stack = procs.stack(db=db, env=ENV, concurrency=2, web=True)
        with Gateway(stack.web().base_url) as gateway:
            child_texts = texts(10)
            parent_id = submit(gateway, group([echo(t, delay_ms=300) for t in child_texts], max_parallel=3))
            singles = {submit(gateway, echo(f"single-{i}", delay_ms=200)): f"single-{i}" for i in range(3)}
            wait_for_job(
                gateway.job,
                parent_id,
                lambda v: v["counts"]["completed"] >= 2,
                what="2 children done",
                through_outages=True,
            )

            server.restart(hard=hard)

            # Accepted after the restart too (a first try may meet a gateway still reconnecting).
            for i in range(2):
                body = echo(f"after-{i}")
                key = {"Idempotency-Key": f"after-restart-{i}"}
                response = wait_until(
                    tolerant(lambda body=body, key=key: _accepted(gateway.post_json(body, key))),
                    WAIT,
                    message="no submission accepted after the restart",
                )
                singles[response.json()["id"]] = f"after-{i}"

            assert_group_settled(gateway, parent_id, child_texts, 3)
            for job_id, text in singles.items():
                assert_single_settled(gateway, job_id, text)
            with server.client(db) as client:
                assert sorted(root_ids(client)) == sorted([parent_id, *singles])
    finally:
        procs.close()


def _accepted(response: requests.Response):
    return response if response.status_code == 202 else None
