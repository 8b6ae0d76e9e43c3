"""Fan-out with every stateless role replicated: two gateways, two coordinators, two beats.

Both beats schedule the sweep and both coordinators run it, while the
completions of one worker release children too; both gateways create and
replay groups.  The cap and exactly-once finalization must hold regardless
of which process happens to release or finish what.  At the end each
coordinator in turn is left alone to sweep, to show both really do.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from jobs.config import Settings
from jobs.store import JobStore, NewJob
from tests.harness import BEAT_READY, CELERY_READY, Proc, wait_until
from tests.integration.fanout_support import (
    Gateway,
    assert_audited_once,
    echo_children,
    group_body,
    in_flight_of,
    intervals,
    peak_overlap,
    submit_group,
)
from tests.integration.polling import wait_for_job

pytestmark = pytest.mark.integration

N_CHILDREN = 40
MAX_PARALLEL = 3


def test_replicated_coordinators_and_gateways_keep_the_cap_and_finalize_once(procs):
    db = procs.fresh_db()
    env = {"OCRGW_SWEEP_INTERVAL": "0.2"}
    started = [
        procs.worker(concurrency=4, db=db, env=env, wait=False),
        procs.coordinator(db=db, env=env, wait=False),
        procs.coordinator(db=db, env=env, wait=False),
    ]
    beats = [procs.beat(db=db, env=env, wait=False) for _ in range(2)]
    webs = [procs.web(db=db, env=env, wait=False) for _ in range(2)]
    for proc in started:
        proc.wait_ready(CELERY_READY)
    for beat in beats:
        beat.wait_ready(BEAT_READY)
    for web in webs:
        web.wait_ready(web.healthy)
    coordinators = started[1:]

    gateways = [Gateway(web.base_url) for web in webs]
    try:
        # Each gateway creates one group; the other replays it with the same key.
        parents = []
        for g, gateway in enumerate(gateways):
            children = echo_children(N_CHILDREN, delay_ms=50)
            key = f"replicas-group-{g}"
            parent_id = submit_group(gateway, children, MAX_PARALLEL, idempotency_key=key).json()["id"]
            other = gateways[1 - g]
            replay = other.post_json(group_body(children, MAX_PARALLEL), {"Idempotency-Key": key})
            assert replay.status_code == 202, replay.text
            assert replay.headers.get("Idempotent-Replayed") == "true"
            assert replay.json()["id"] == parent_id
            parents.append(parent_id)

        def capped(view):
            assert in_flight_of(view) <= MAX_PARALLEL, view["counts"]

        views = []
        for g, parent_id in enumerate(parents):
            # Polled through the gateway that did not create it.
            views.append(wait_for_job(gateways[1 - g].job, parent_id, timeout=120, on_poll=capped))

        for parent_id, view in zip(parents, views, strict=True):
            assert view["status"] == "completed", view["counts"]
            assert view["counts"]["completed"] == N_CHILDREN
            assert view["total"] == N_CHILDREN and len(view["children"]) == N_CHILDREN
            spans = intervals(view["children"])
            assert peak_overlap(spans) <= MAX_PARALLEL, f"peak {peak_overlap(spans)}: {spans}"
            assert all(c["attempts"] == 1 for c in view["children"])
            assert view["result"]["text"] == "\n\n".join(f"child-{i}" for i in range(N_CHILDREN))
            for gateway in gateways:
                assert_audited_once(gateway, parent_id, [c["id"] for c in view["children"]], "completed")
    finally:
        for gateway in gateways:
            gateway.close()

    # The replicas really were there: each coordinator sweeps, shown one at a
    # time with the other frozen, by a job only a sweep can get run.
    store = JobStore.from_settings(Settings.from_env({"REDIS_URL": procs.url(db), **LOST_MESSAGE}))
    try:
        for coordinator in coordinators:
            others = [c for c in coordinators if c is not coordinator]
            assert_sweeps_alone(coordinator, others, store)
    finally:
        store.redis.close()


# A store that creates jobs and publishes nothing, as if every message were
# lost; the job is due for a fresh message almost at once, and only a sweep
# sends one.
LOST_MESSAGE = {"OCRGW_REQUEUE_SECONDS": "0.1"}


def stopped(pid: int) -> bool:
    """True once ``pid`` is stopped by a signal (state T in /proc)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def assert_sweeps_alone(coordinator: Proc, others: list[Proc], store: JobStore) -> None:
    """With ``others`` frozen, a job whose message was lost still runs: ``coordinator`` swept."""
    for other in others:
        other.kill(signal.SIGSTOP)
    try:
        wait_until(
            lambda: all(stopped(other.pid) for other in others),
            timeout=30,
            message="the other coordinators were not frozen",
        )
        job_id = store.create_single(NewJob("echo", "text/plain", coordinator.name.encode())).job_id

        def status() -> str:
            return (store.queries.get(job_id) or {}).get("status", "missing")

        wait_until(
            lambda: status() == "completed",
            timeout=120,
            message=lambda: f"{coordinator.name} never swept: the job is still {status()}",
        )
        result = store.queries.result(job_id)
        assert result is not None and result["text"] == coordinator.name
    finally:
        for other in others:
            other.kill(signal.SIGCONT)
