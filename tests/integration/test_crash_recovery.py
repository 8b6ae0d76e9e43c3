"""Crashes of real processes: nothing accepted is lost, caps and exactly-once hold.

Each test kills (SIGKILL) or stops a real process in the middle of a group,
then checks the invariants from what Redis recorded: every job terminal,
results present, the cap from the children's started_at/finished_at, and
exactly one terminal audit event per job.
"""

from __future__ import annotations

import signal

import pytest

from jobs import JobStore, NewJob, Settings
from tests.harness import ProcGroup, wait_until
from tests.integration.fanout_support import (
    Gateway,
    assert_audited_once,
    echo_child,
    echo_children,
    intervals,
    peak_overlap,
    submit_group,
    wait_terminal,
)

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

# Short leases and a fast sweep, so a dead worker's job comes back in seconds.
FAST = {"OCRGW_LEASE_SECONDS": "1.5", "OCRGW_SWEEP_INTERVAL": "0.2", "OCRGW_REQUEUE_SECONDS": "2",
        "OCRGW_RETRY_BACKOFF": "0.2"}


def submit(gateway, children, max_parallel) -> str:
    return submit_group(gateway, children, max_parallel).json()["id"]


def children_of(view):
    return view["children"]


def assert_group_invariants(gateway: Gateway, view, max_parallel: int) -> None:
    assert view["status"] == "completed", view["counts"]
    assert all(c["status"] == "completed" for c in children_of(view))
    assert peak_overlap(intervals(children_of(view))) <= max_parallel
    assert_audited_once(gateway, view["id"], [c["id"] for c in children_of(view)], "completed")


def test_killed_worker_child_is_reclaimed_and_completes_on_another_worker(procs):
    db = procs.fresh_db()
    worker = procs.worker(db=db, env=FAST)
    procs.coordinator(db=db, env=FAST)
    procs.beat(db=db, env=FAST)
    with Gateway(procs.web(db=db, env=FAST).base_url) as gateway:
        parent_id = submit(gateway, [echo_child("slow", delay_ms=4000), echo_child("fast")], 2)
        first = f"{parent_id}-0"
        wait_until(lambda: gateway.job(first)["status"] == "processing", 60, message="child 0 never started")

        worker.kill(signal.SIGKILL)
        procs.worker(db=db, env=FAST)

        view = wait_terminal(gateway.job, parent_id, timeout=120)
        assert_group_invariants(gateway, view, 2)
        assert children_of(view)[0]["attempts"] == 2


def test_completions_alone_drain_a_group_when_coordinator_and_beat_are_gone(procs):
    db = procs.fresh_db()
    procs.worker(db=db, concurrency=2, env=FAST)
    coordinator = procs.coordinator(db=db, env=FAST)
    beat = procs.beat(db=db, env=FAST)
    with Gateway(procs.web(db=db, env=FAST).base_url) as gateway:
        parent_id = submit(gateway, echo_children(12, delay_ms=50), 2)
        wait_until(lambda: gateway.job(parent_id)["counts"]["completed"] >= 2, 60,
                   message="the group never got going")

        coordinator.kill()
        beat.kill()

        view = wait_terminal(gateway.job, parent_id, timeout=120)
        assert_group_invariants(gateway, view, 2)


def test_coordinator_and_beat_restarted_mid_group(procs):
    db = procs.fresh_db()
    worker_env = {**FAST}
    procs.worker(db=db, concurrency=2, env=worker_env)
    coordinator, beat = procs.coordinator(db=db, env=FAST), procs.beat(db=db, env=FAST)
    with Gateway(procs.web(db=db, env=FAST).base_url) as gateway:
        parent_id = submit(gateway, echo_children(10, delay_ms=100), 3)
        coordinator.kill()
        beat.kill()
        procs.coordinator(db=db, env=FAST)
        procs.beat(db=db, env=FAST)

        view = wait_terminal(gateway.job, parent_id, timeout=120)
        assert_group_invariants(gateway, view, 3)


def test_redis_restart_with_aof_loses_nothing_accepted(redis_server_factory, tmp_path):
    server = redis_server_factory(appendonly=True)
    group = ProcGroup(tmp_path / "aof", redis=server, label="aof")
    try:
        group.worker(concurrency=2, env=FAST)
        group.coordinator(env=FAST)
        group.beat(env=FAST)
        with Gateway(group.web(env=FAST).base_url) as gateway:
            parent_id = submit(gateway, echo_children(16, delay_ms=150), 2)
            single = gateway.post_raw(b"single", "text/plain", params={"model": "echo"}).json()["id"]
            wait_until(lambda: gateway.job(parent_id)["counts"]["completed"] >= 2, 60,
                       message="the group never got going")

            server.restart()  # SIGTERM: Redis fsyncs the AOF, then comes back on the same port

            view = wait_terminal(gateway.job, parent_id, timeout=180)
            assert_group_invariants(gateway, view, 2)
            assert wait_terminal(gateway.job, single, timeout=60)["status"] == "completed"
    finally:
        group.close()


def test_hung_job_times_out_and_frees_its_slot(procs):
    db = procs.fresh_db()
    env = {**FAST, "OCRGW_JOB_TIMEOUT": "2", "OCRGW_LEASE_SECONDS": "10"}
    procs.worker(db=db, concurrency=2, env=env)
    procs.coordinator(db=db, env=env)
    procs.beat(db=db, env=env)
    with Gateway(procs.web(db=db, env=env).base_url) as gateway:
        parent_id = submit(gateway, [echo_child("hangs", delay_ms=60_000), echo_child("next")], 1)

        view = wait_terminal(gateway.job, parent_id, timeout=90)

        hung, after = children_of(view)
        assert (hung["status"], hung["error_code"]) == ("failed", "timeout")
        assert after["status"] == "completed"  # the slot went to the next child
        assert view["status"] == "failed"


def test_sigterm_lets_the_worker_finish_its_job(procs):
    db = procs.fresh_db()
    worker = procs.worker(db=db, concurrency=1, env=FAST)
    with Gateway(procs.web(db=db, env=FAST).base_url) as gateway:
        response = gateway.post_json({"model": "echo", "content_type": "text/plain", "payload": "ZG9uZQ==",
                                      "options": {"delay_ms": 1500}})
        job_id = response.json()["id"]
        wait_until(lambda: gateway.job(job_id)["status"] == "processing", 60, message="never started")

        worker.terminate()  # warm shutdown
        worker.wait(60)

        job = gateway.job(job_id)
        assert (job["status"], job["attempts"], job["result"]["text"]) == ("completed", 1, "done")


def test_a_queued_job_whose_message_was_lost_still_runs(procs, redis_server):
    db = procs.fresh_db()
    procs.worker(db=db, concurrency=1, env=FAST)
    procs.coordinator(db=db, env=FAST)
    procs.beat(db=db, env=FAST)
    store = JobStore.from_settings(Settings.from_env({"REDIS_URL": redis_server.url_for(db), **FAST}))

    created = store.create_single(NewJob("echo", "text/plain", b"orphan"))  # and never published

    job = wait_terminal(store.get, created.job_id, timeout=60)
    assert job["status"] == "completed" and store.result(created.job_id)["text"] == "orphan"
