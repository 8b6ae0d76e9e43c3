"""The whole stack with its store on a real Redis Cluster (three primaries, a replica each): gateway,
worker, coordinator and beat with OCRGW_REDIS_CLUSTER (24 buckets by default), the broker on a
standalone redis-server of its own.

A group of echo children under a cap and a single job complete, each child exactly once, the cap held
(from the children's started_at and finished_at), with every transition in one hash slot (a script that
crossed slots would fail on the cluster).  The sweep's batches of scripts run per bucket, each in one
pipeline of its slot's primary.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests

from coordinator.sweep import Sweeper
from jobs.config import Settings
from jobs.contract import JobStatus, count_field
from jobs.records import GroupRules, NewJob
from jobs.store import JobStore
from jobs.transitions import Scripts
from tests.harness import ProcGroup, Stack
from tests.integration.fanout_support import (
    Gateway,
    echo_child,
    echo_children,
    events_of,
    intervals,
    peak_overlap,
    submit_group,
)
from tests.integration.polling import wait_for_job
from tests.keyspace import keys
from tests.redis_cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

CHILDREN, MAX_PARALLEL = 20, 3


@pytest.fixture
def cluster_stack(empty_cluster: LocalCluster, procs: ProcGroup) -> Iterator[Stack]:
    """Worker, coordinator, beat and gateway on the cluster; their broker a database of the session's
    standalone redis-server."""
    db = procs.fresh_db()
    env = {**empty_cluster.env(), "CELERY_BROKER_URL": procs.url(db), "OCRGW_SWEEP_INTERVAL": "0.5"}
    yield procs.stack(db=db, env=env, concurrency=4, web=True)


def test_a_group_and_a_single_job_complete_once_on_the_cluster_under_their_cap(
    cluster_stack: Stack, empty_cluster: LocalCluster
):
    with Gateway(cluster_stack.web().base_url) as gateway:
        parent_id = submit_group(gateway, echo_children(CHILDREN, delay_ms=100), MAX_PARALLEL).json()["id"]
        single = gateway.post_json(echo_child("alone"))
        assert single.status_code == 202, single.text
        single_id = single.json()["id"]

        view = wait_for_job(gateway.job, parent_id, timeout=120)
        alone = wait_for_job(gateway.job, single_id, timeout=60)

        assert view["status"] == "completed", view["counts"]
        assert [c["index"] for c in view["children"]] == list(range(CHILDREN))
        assert all(c["status"] == "completed" and c["attempts"] == 1 for c in view["children"])
        assert peak_overlap(intervals(view["children"])) <= MAX_PARALLEL
        assert view["result"]["text"] == "\n\n".join(f"child-{i}" for i in range(CHILDREN))
        jobs, child_events = events_of(gateway, parent_id)
        assert len(jobs) == 1 and sorted(e["job_id"] for e in child_events) == sorted(
            keys.child_id(parent_id, i) for i in range(CHILDREN)
        )
        assert alone["status"] == "completed" and alone["attempts"] == 1

        # Both are listed, newest first, from their buckets' listing sets.
        listed = [j["id"] for j in gateway.get("/jobs")["jobs"]]
        assert listed == [single_id, parent_id]
        # A scrape reads the gauges' count and the store's time (no pipelined TIME on a cluster).
        scrape = requests.get(f"{cluster_stack.web().base_url}/metrics", timeout=30)
        assert scrape.status_code == 200 and "ocrgw_" in scrape.text

    # Each root's keys are in the slot of its bucket, on the primary serving it.
    with empty_cluster.client(decode_responses=True) as client:
        keys.use_bucket_count(24)
        try:
            for root in (parent_id, single_id):
                assert client.hget(keys.job(root), "status") == "completed"
        finally:
            keys.use_bucket_count(None)


@pytest.fixture
def cluster_store(empty_cluster: LocalCluster) -> Iterator[JobStore]:
    """The store's own client of the cluster, as a process makes it (24 buckets)."""
    store = JobStore.from_settings(Settings.from_env({**empty_cluster.env(), "CELERY_BROKER_URL": "redis://x:1/0"}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    try:
        yield store
    finally:
        store.redis.close()
        store._probe.close()
        keys.use_bucket_count(None)  # the store set this process's count: back to the environment's


def echo(text: str) -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=text.encode())


def test_the_sweep_s_scripts_run_per_bucket_on_their_primaries(cluster_store: JobStore, monkeypatch):
    store = cluster_store
    singles = [store.create_single(echo(f"single {i}")).job_id for i in range(12)]
    parents = [
        store.create_group([echo("a"), echo("b"), echo("c")], GroupRules(2), release=False).job_id for _ in range(6)
    ]
    assert len({keys.bucket_of(j) for j in singles}) > 1
    # From here on each batch must go in its buckets' pipelines, no call sent on its own.
    real_run = Scripts.run

    def one_by_one(*args, **kwargs):
        raise AssertionError("a call of a batch was sent on its own")

    monkeypatch.setattr(Scripts, "run", one_by_one)
    # As if every wake-up had been lost: each is queued past its publish deadline.
    for job_id in singles:
        store.redis.zadd(keys.queued(keys.bucket_of(job_id)), {job_id: 1})
    republished = store.republish(store.stale_queued(store.now_ms(), 100))
    assert sorted(d.job_id for d in republished) == sorted(singles)

    # Groups whose creator released nothing: the sweep releases them, bucket by bucket.
    store.release(store.due_parents(store.now_ms(), 100))
    for parent in parents:
        assert store.redis.hget(keys.job(parent), count_field(JobStatus.QUEUED)) == b"2"

    monkeypatch.setattr(Scripts, "run", real_run)

    report = Sweeper(store, publish=len).sweep()
    assert not report.skipped and report.republished == 0
