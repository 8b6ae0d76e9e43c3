"""The store's client on a real Redis Cluster (three primaries, a replica each): OCRGW_REDIS_CLUSTER.

A transition whose keys share one hash tag runs through ``Scripts.run`` on
the cluster client, and still runs once the primary of its slot was
SIGKILLed and its replica promoted: the function's library, loaded on the
primary, reached its replica with the rest of the replication stream.  A
primary that lost its functions (FUNCTION FLUSH, as a restart without
persistence does) answers that the function is missing, and gets it again.
A write with its WAIT (``OCRGW_MIN_REPLICAS``) goes to the primary that took
the write: it counts that primary's replica, and none while that replica is
frozen (SIGSTOP); after a failover, the promoted primary's.  At start a
cluster that refuses the password stops the process.  (A whole job's flow
on the cluster is tests/integration/test_cluster_store.py's.)
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from redis.cluster import RedisCluster

from jobs import redis_access
from jobs.config import Settings
from jobs.contract import Field, JobStatus, Reply
from jobs.replication import write_and_wait
from jobs.store import JobStore
from jobs.transitions.progress import PROGRESS
from tests.harness import ProcGroup
from tests.keyspace import keys
from tests.redis_cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster]

JOB_ID = "0123456789ab0000000000000000abcd"
ATTEMPT = 1


@pytest.fixture
def store(empty_cluster: LocalCluster) -> Iterator[JobStore]:
    """The store's own client of the cluster, as every process makes it, with creations waiting for 1 replica."""
    env = {**empty_cluster.env(min_replicas=1), "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}
    store = JobStore.from_settings(Settings.from_env(env))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    assert isinstance(store.redis, RedisCluster)
    try:
        yield store
    finally:
        store.redis.close()
        store._probe.close()
        keys.use_bucket_count(None)  # the store set this process's count: back to the environment's


def processing_job(store: JobStore) -> str:
    """A job being processed at ATTEMPT, on its slot's primary and its replica both; returns its key."""
    job = keys.job(JOB_ID)
    cluster = store.redis
    assert isinstance(cluster, RedisCluster)
    primary = cluster.get_redis_connection(cluster.get_node_from_key(job))
    pipe = primary.pipeline(transaction=False)
    pipe.hset(job, mapping={Field.STATUS.value: JobStatus.PROCESSING.value, Field.ATTEMPTS.value: ATTEMPT})
    pipe.execute_command("WAIT", 1, 10_000)
    assert pipe.execute()[1] == 1, "the replica never had the job"
    return job


def report_progress(store: JobStore, stage: str) -> Reply:
    reply = store.scripts.run(
        PROGRESS, keys={"job": keys.job(JOB_ID)}, args={"attempt": ATTEMPT, "stage": stage, "progress": "0.5"}
    )
    return reply.code


def knows_function(cluster: LocalCluster, key: str, name: str) -> bool:
    with cluster.owner(key).primary.admin() as client:
        return bool(client.function_list(library=name))


def test_a_transition_runs_on_its_slot_s_primary_and_after_a_failover_on_the_promoted_replica(
    empty_cluster: LocalCluster, store: JobStore
):
    job = processing_job(store)
    assert report_progress(store, "page 1/2") == Reply.OK
    name = PROGRESS.function_name
    assert knows_function(empty_cluster, job, name)
    with empty_cluster.owner(job).primary.admin() as client:
        # The replica has everything before this write once it confirms it: the library among it.
        client.set(job + ":replicated", "1")
        assert client.execute_command("WAIT", 1, 10_000) == 1

    promoted = empty_cluster.fail_over(job)
    assert empty_cluster.owner(job).primary is promoted
    assert knows_function(empty_cluster, job, name), "the replica should have had the library replicated"
    with promoted.admin() as client:
        client.function_flush()  # as a restart without persistence leaves it

    assert report_progress(store, "page 2/2") == Reply.OK  # missing, loaded, called again
    assert knows_function(empty_cluster, job, name)
    with promoted.admin() as client:
        assert client.hget(job, Field.STAGE.value) == "page 2/2"


def test_a_write_waits_for_the_replica_of_the_primary_that_took_it(empty_cluster: LocalCluster, store: JobStore):
    job = processing_job(store)
    mark = keys.replication_mark(keys.bucket_of(JOB_ID))  # in the slot of the job's bucket
    owner = empty_cluster.owner(job)

    raw, confirmed = write_and_wait(
        store.redis, store.scripts, PROGRESS, {"job": job}, _progress("page 1/2"), 1, 10_000, mark, JOB_ID
    )
    assert PROGRESS.decode(raw).code == Reply.OK and confirmed == 1
    with owner.primary.admin() as client:
        assert client.get(mark) == JOB_ID  # the mark went to that primary, in the job's slot
    with owner.replicas[0].admin() as client:
        client.execute_command("READONLY")  # a replica of a cluster serves reads only when asked so
        assert client.hget(job, Field.STAGE.value) == "page 1/2"  # already: WAIT confirmed it

    (replica,) = owner.replicas
    assert replica.proc is not None
    replica.proc.kill(signal.SIGSTOP)  # connected, but acknowledging nothing
    try:
        raw, confirmed = write_and_wait(
            store.redis, store.scripts, PROGRESS, {"job": job}, _progress("page 2/2"), 1, 300, mark, JOB_ID
        )
    finally:
        replica.proc.kill(signal.SIGCONT)
    assert PROGRESS.decode(raw).code == Reply.OK and confirmed == 0


def test_after_a_failover_the_write_and_its_wait_go_to_the_promoted_primary(
    empty_cluster: LocalCluster, store: JobStore
):
    """The client's map still names the killed primary, which is back as the promoted one's replica:
    the write is sent there, MOVED, sent again to the promoted primary (which has the function, or
    gets it), and its WAIT counts the promoted primary's replica."""
    job = processing_job(store)
    mark = keys.replication_mark(keys.bucket_of(JOB_ID))
    killed = empty_cluster.owner(job).primary
    promoted = empty_cluster.fail_over(job)
    empty_cluster.restore()
    assert empty_cluster.owner(job).replicas == (killed,)

    raw, confirmed = write_and_wait(
        store.redis, store.scripts, PROGRESS, {"job": job}, _progress("page 2/2"), 1, 10_000, mark, JOB_ID
    )
    assert PROGRESS.decode(raw).code == Reply.OK and confirmed == 1
    with promoted.admin() as client:
        assert client.get(mark) == JOB_ID
        assert client.hget(job, Field.STAGE.value) == "page 2/2"


def test_a_mark_outside_the_written_slot_is_refused_before_anything_is_sent(
    empty_cluster: LocalCluster, store: JobStore
):
    job = processing_job(store)
    with pytest.raises(ValueError, match="not in the slot"):
        write_and_wait(
            store.redis, store.scripts, PROGRESS, {"job": job}, _progress("x"), 1, 300, keys.REPLICATION_MARK, JOB_ID
        )
    with empty_cluster.owner(job).primary.admin() as client:
        assert client.hget(job, Field.STAGE.value) is None


def test_at_start_a_cluster_that_refuses_the_password_stops_the_process(tmp_path):
    """As a process checks its store at start (``jobs.redis_access``): a cluster of its own, with a password."""
    group = ProcGroup(tmp_path, label="redis cluster with a password")
    cluster = LocalCluster(group, tmp_path, replicas=0, password="the-right-password")
    try:
        env = {**cluster.start().env(), "CELERY_BROKER_URL": "redis://127.0.0.1:1/0"}
        redis_access.check_settings(Settings.from_env(env))  # it answers: nothing to say

        wrong = Settings.from_env({**env, "REDIS_URL": f"redis://:wrong@{cluster.nodes[0].address}/0"})
        with pytest.raises(redis_access.RedisRefused, match="^REDIS_URL: Redis at the cluster of OCRGW_REDIS_CLUSTER"):
            redis_access.check_settings(wrong)
    finally:
        cluster.stop()
        group.close()


def _progress(stage: str) -> dict[str, object]:
    return {"attempt": ATTEMPT, "stage": stage, "progress": "0.5"}
