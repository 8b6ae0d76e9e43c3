"""Chaos: real processes killed (SIGKILL, the whole process group) or stopped in the middle of groups.

Each test runs its own deployment (redis-server, worker, coordinator, beat,
gunicorn) on a database of its own, breaks something while a group runs,
and ends with the same check (``assert_group_settled``): every job terminal,
every completed child's result stored, the cap held by the children's
recorded intervals, and exactly one terminal audit event per job.

Leases are short and the sweep fast (see ``chaos_support.FAST``), so that
a dead worker's child comes back within seconds; nothing asserts how long
anything took.
"""

from __future__ import annotations

import signal
import threading

import pytest
import requests

from tests.harness import ProcGroup, wait_until
from tests.integration.chaos_support import FAST, WAIT, assert_group_settled, echo, group, job_ids, root_ids, texts
from tests.integration.fanout_support import Gateway
from tests.integration.polling import wait_for_job, wait_until_processing

pytestmark = [pytest.mark.integration, pytest.mark.chaos]


def submit(gateway: Gateway, body, headers=None) -> str:
    response = gateway.post_json(body, headers)
    assert response.status_code == 202, f"{response.status_code} {response.text}"
    return response.json()["id"]


def completed_at_least(n: int):
    return lambda view: view["counts"]["completed"] >= n


# -- workers ----------------------------------------------------------------------------------------


def test_a_killed_worker_s_child_is_reclaimed_and_completes_on_another_worker(procs):
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True)
    child_texts = texts(6)
    children = [echo(child_texts[0], delay_ms=3000)] + [echo(t, delay_ms=300) for t in child_texts[1:]]
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group(children, max_parallel=2))
        wait_until_processing(gateway.job, f"{parent_id}-0")

        stack.worker.kill(signal.SIGKILL)
        procs.worker(db=db, env=FAST)

        view = assert_group_settled(gateway, parent_id, child_texts, 2)
        first = gateway.job(f"{parent_id}-0")
        assert first["attempts"] == 2 and first["last_error_code"] == "lease_expired", first
        assert all(c["attempts"] <= 2 for c in view["children"]), view["children"]


def test_a_child_run_in_a_kept_slot_is_reclaimed_when_its_worker_is_killed(procs):
    """The child a finishing worker claimed for itself has no Celery message to
    redeliver: its lease alone brings it back."""
    db = procs.fresh_db()
    # A kept slot that would last a minute: child 0 may take over the default 1 s on a slow machine.
    stack = procs.stack(db=db, env={**FAST, "OCRGW_KEEP_SLOT_SECONDS": "60"}, web=True)
    child_texts = texts(3)
    children = [echo(child_texts[0]), echo(child_texts[1], delay_ms=3000), echo(child_texts[2])]
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group(children, max_parallel=1))
        wait_until_processing(gateway.job, f"{parent_id}-1")
        first, second = gateway.job(f"{parent_id}-0"), gateway.job(f"{parent_id}-1")
        assert second["started_at"] == first["finished_at"], "child 1 did not run in the kept slot"

        stack.worker.kill(signal.SIGKILL)
        procs.worker(db=db, env=FAST)

        assert_group_settled(gateway, parent_id, child_texts, 1)
        second = gateway.job(f"{parent_id}-1")
        assert second["attempts"] == 2 and second["last_error_code"] == "lease_expired", second


def test_a_worker_s_warm_shutdown_finishes_the_running_child_and_takes_no_more(procs):
    """A kept slot that would last a minute: a worker told to stop still takes
    no next child into it."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env={**FAST, "OCRGW_KEEP_SLOT_SECONDS": "60"}, web=True, concurrency=1)
    child_texts = texts(3)
    children = [echo(child_texts[0], delay_ms=2000)] + [echo(t) for t in child_texts[1:]]
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group(children, max_parallel=1))
        wait_until_processing(gateway.job, f"{parent_id}-0")

        stack.worker.terminate()
        assert stack.worker.wait(timeout=WAIT) == 0
        # Before any other worker exists: the draining worker finished its child itself.
        first = gateway.job(f"{parent_id}-0")
        assert (first["status"], first["attempts"]) == ("completed", 1), first
        # ... and took none of the children released meanwhile.
        assert gateway.job(f"{parent_id}-1")["status"] == "queued"

        procs.worker(db=db, env=FAST)
        view = assert_group_settled(gateway, parent_id, child_texts, 1)
        assert [c["attempts"] for c in view["children"]] == [1, 1, 1]


def test_a_worker_killed_during_its_warm_shutdown_has_its_child_reclaimed(procs):
    """What a warm shutdown cannot finish within the grace period (SIGTERM, then SIGKILL) is not lost."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True, concurrency=1)
    child_texts = texts(3)
    children = [echo(child_texts[0], delay_ms=4000)] + [echo(t) for t in child_texts[1:]]
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group(children, max_parallel=1))
        wait_until_processing(gateway.job, f"{parent_id}-0")

        stack.worker.terminate()
        wait_until(
            lambda: "Warm shutdown" in stack.worker.log_text(), WAIT, message="the worker never began its warm shutdown"
        )
        stack.worker.kill(signal.SIGKILL)  # the grace period is over
        procs.worker(db=db, env=FAST)

        assert_group_settled(gateway, parent_id, child_texts, 1)
        assert gateway.job(f"{parent_id}-0")["attempts"] == 2


# -- coordinator and beat ---------------------------------------------------------------------------


def test_coordinator_and_beat_killed_mid_group_repair_it_once_restarted(procs):
    """With the sweep gone, a dead worker's children wait; once it is back, they are reclaimed."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True)
    child_texts = texts(8)
    with Gateway(stack.web().base_url) as gateway:
        # Children long enough that the one seen processing is still running when its worker dies,
        # however slowly a loaded machine answers the poll.
        parent_id = submit(gateway, group([echo(t, delay_ms=2000) for t in child_texts], max_parallel=2))
        wait_for_job(gateway.job, parent_id, completed_at_least(2), what="2 children completed", through_outages=True)

        stack.coordinator.kill(signal.SIGKILL)
        stack.beat.kill(signal.SIGKILL)
        wait_for_job(
            gateway.job,
            parent_id,
            lambda v: v["counts"]["processing"] >= 1,
            what="a child processing",
            through_outages=True,
        )
        stack.worker.kill(signal.SIGKILL)
        # What the dead worker held stays processing: no sweep runs to take it back.
        orphans = {c["id"] for c in gateway.get(f"/jobs/{parent_id}")["children"] if c["status"] == "processing"}
        assert orphans
        procs.worker(db=db, env=FAST)

        procs.coordinator(db=db, env=FAST, wait=False)
        procs.beat(db=db, env=FAST)
        view = assert_group_settled(gateway, parent_id, child_texts, 2)
        assert {c["id"] for c in view["children"] if c["attempts"] == 2} == orphans, view["children"]


def test_completions_alone_drain_a_group_once_coordinator_and_beat_are_gone_for_good(procs):
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True)
    child_texts = texts(10)
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group([echo(t, delay_ms=100) for t in child_texts], max_parallel=2))
        wait_for_job(gateway.job, parent_id, completed_at_least(1), what="a child completed", through_outages=True)

        stack.coordinator.kill(signal.SIGKILL)
        stack.beat.kill(signal.SIGKILL)

        assert_group_settled(gateway, parent_id, child_texts, 2)


def test_two_coordinators_and_two_beats_repair_a_whole_group_exactly_once(procs):
    """Crashing children make the sweep reclaim them twice and fail them the third time;
    with every tick scheduled twice and two coordinators taking them, each job still ends once."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True)
    second = [procs.coordinator(db=db, env=FAST, wait=False), procs.beat(db=db, env=FAST, wait=False)]
    second[0].wait_ready(r"@\S+ ready\.")
    second[1].wait_ready(r"beat: Starting")
    child_texts = texts(7)
    children = [echo(t, delay_ms=200) for t in child_texts]
    for index in (0, 5):
        children[index] = echo(child_texts[index], delay_ms=200, crash=True)
    with Gateway(stack.web().base_url) as gateway:
        parent_id = submit(gateway, group(children, max_parallel=2))

        view = assert_group_settled(gateway, parent_id, child_texts, 2, failed={0: "lease_expired", 5: "lease_expired"})

        attempts = [c["attempts"] for c in view["children"]]
        assert attempts == [3, 1, 1, 1, 1, 3, 1], attempts
        for coordinator in (stack.coordinator, second[0]):
            assert "ocrgw.sweep" in coordinator.log_text(), "a coordinator never swept"


# -- Redis --------------------------------------------------------------------------------------------


@pytest.mark.standalone(reason="kills a standalone redis-server (the cluster's failover: test_cluster_failover)")
def test_redis_killed_twice_mid_group_with_aof_loses_nothing(redis_server_factory, tmp_path):
    """Two crashes of redis-server, each once the Celery processes are back at work after the last.

    Kept slots are off, so that children completed after a restart prove
    the worker takes messages again.  (Killed again while Celery is still
    re-establishing its connection, a worker can exit with kombu's
    "Unrecoverable error"; docs/operating/production.md covers that.)
    """
    server = redis_server_factory(appendonly=True)
    procs = ProcGroup(tmp_path / "procs", redis=server, label="chaos aof")
    try:
        db = procs.fresh_db()
        stack = procs.stack(db=db, env={**FAST, "OCRGW_KEEP_SLOT_SECONDS": "0"}, web=True)
        child_texts = texts(12)
        with Gateway(stack.web().base_url) as gateway:
            parent_id = submit(gateway, group([echo(t, delay_ms=300) for t in child_texts], max_parallel=3))
            for done in (3, 7):
                wait_for_job(
                    gateway.job,
                    parent_id,
                    completed_at_least(done),
                    what=f"{done} children completed",
                    through_outages=True,
                )
                connected = [p.log_text().count("Connected to") for p in (stack.worker, stack.coordinator)]
                server.restart(hard=True)
                for proc, before in zip((stack.worker, stack.coordinator), connected, strict=True):
                    wait_until(
                        lambda: proc.log_text().count("Connected to") > before,  # noqa: B023 (called in this iteration)
                        WAIT,
                        message=f"{proc.name} never reconnected",
                    )

            assert_group_settled(gateway, parent_id, child_texts, 3)
    finally:
        procs.close()


# -- gateways ---------------------------------------------------------------------------------------------


def test_a_gateway_killed_during_a_burst_leaves_no_duplicate_and_no_partial_group(procs):
    """Clients send groups with Idempotency-Keys to one gateway, which is killed
    mid-burst; they retry every request on another.  Each key maps to one
    parent, every parent has all its children, and every group completes."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True)
    doomed = procs.web(db=db, env=FAST)
    n_groups, n_children = 40, 3
    bodies = {
        f"burst-{g}": group([echo(f"g{g}-c{c}") for c in range(n_children)], max_parallel=2) for g in range(n_groups)
    }
    first_answers: dict[str, str] = {}
    lock = threading.Lock()
    todo = list(bodies)

    def client() -> None:
        with Gateway(doomed.base_url, timeout=10) as gateway:
            while True:
                with lock:
                    if not todo:
                        return
                    key = todo.pop(0)
                try:
                    response = gateway.post_json(bodies[key], {"Idempotency-Key": key})
                except requests.RequestException:
                    continue  # the gateway is gone: this client retries elsewhere, below
                if response.status_code == 202:
                    with lock:
                        first_answers[key] = response.json()["id"]

    threads = [threading.Thread(target=client, name=f"burst-{i}") for i in range(4)]
    for thread in threads:
        thread.start()
    wait_until(
        lambda: len(first_answers) >= 3 or not any(t.is_alive() for t in threads),
        WAIT,
        message="the burst never got going",
    )
    doomed.kill(signal.SIGKILL)
    for thread in threads:
        thread.join(timeout=WAIT)
        assert not thread.is_alive()
    assert 0 < len(first_answers) < n_groups, f"the kill did not land mid-burst: {len(first_answers)} answered"

    with Gateway(stack.web().base_url) as survivor:
        parents = {}
        for key, body in bodies.items():
            response = survivor.post_json(body, {"Idempotency-Key": key})
            assert response.status_code == 202, response.text
            parents[key] = response.json()["id"]
            if key in first_answers:
                assert parents[key] == first_answers[key], key
                assert response.headers.get("Idempotent-Replayed") == "true"

        with stack.store_client() as client_:
            assert sorted(root_ids(client_)) == sorted(parents.values()), "a duplicate or stray parent"
            stored = set(job_ids(client_))
        for parent_id in parents.values():
            assert {f"{parent_id}-{i}" for i in range(n_children)} <= stored, f"{parent_id} is partial"
        for g, parent_id in enumerate(parents.values()):
            assert_group_settled(survivor, parent_id, [f"g{g}-c{c}" for c in range(n_children)], 2)
