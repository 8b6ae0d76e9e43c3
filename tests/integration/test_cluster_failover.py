"""A Redis Cluster failover in the middle of a group: the primary serving the group's bucket is killed.

The stack (gateway, worker, coordinator, beat) keeps its store on the session's cluster (three
primaries, a replica each, ``cluster-node-timeout`` 1 s) with ``OCRGW_MIN_REPLICAS=1``, so the
gateway acknowledges a creation only once the replica of its slot has it; the broker is a database
of the session's standalone redis-server.  Once some children of a group have finished, the primary
of the group's hash slot is SIGKILLed; the cluster promotes its replica, and the store's clients
follow it (CLUSTERDOWN and lost connections retried; the functions came with the replication stream).

What must hold: every child completes exactly once (one terminal audit event per job; an attempt
whose completion or lease the dead primary took may be run again, so at most two attempts), the cap
held over every recorded attempt, and the group's result whole.  With ``OCRGW_MIN_REPLICAS=1`` and
one replica per primary, the promoted replica has none left: a creation in its slots is refused
(``503 store_unavailable``) until the killed node is back as its replica, and the same request (its
``Idempotency-Key``) is then acknowledged and completes.  Outcomes are read from what the store
recorded, never from how long anything took.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from jobs.config import CLUSTER_BUCKETS
from jobs.ids import DEFAULT_TENANT
from tests.harness import ProcGroup, Stack, wait_until
from tests.integration.chaos_support import FAST, WAIT, assert_group_settled, assert_single_settled, echo, texts
from tests.integration.fanout_support import Gateway, submit_group
from tests.integration.polling import tolerant, wait_for_job
from tests.keyspace import keys
from tests.redis_cluster import LocalCluster

pytestmark = [pytest.mark.integration, pytest.mark.cluster, pytest.mark.chaos]

CHILDREN, DELAY_MS, MAX_PARALLEL = 40, 200, 3
FINISHED_BEFORE_THE_KILL = 5


@pytest.fixture
def failover_stack(empty_cluster: LocalCluster, procs: ProcGroup) -> Iterator[Stack]:
    """A stack on the cluster whose creations wait for one replica; the cluster is whole again afterwards."""
    db = procs.fresh_db()
    env = {**FAST, **empty_cluster.env(min_replicas=1), "CELERY_BROKER_URL": procs.url(db)}
    keys.use_bucket_count(CLUSTER_BUCKETS)  # the stack's: to find the group's slot
    try:
        yield procs.stack(db=db, env=env, concurrency=4, web=True)
    finally:
        keys.use_bucket_count(None)
        procs.close()  # the processes first: none of them writes while the killed node comes back
        empty_cluster.restore()


def test_a_group_completes_once_under_its_cap_across_a_failover_of_its_bucket_s_primary(
    failover_stack: Stack, empty_cluster: LocalCluster
):
    with Gateway(failover_stack.web().base_url) as gateway:
        children = [echo(text, delay_ms=DELAY_MS) for text in texts(CHILDREN)]
        parent_id = submit_group(gateway, children, MAX_PARALLEL).json()["id"]
        wait_for_job(
            gateway.job,
            parent_id,
            lambda v: v["counts"]["completed"] >= FINISHED_BEFORE_THE_KILL,
            what=f"{FINISHED_BEFORE_THE_KILL} children completed",
        )

        # The primary serving the slot of the group's bucket, as the cluster's slot map says.
        before = empty_cluster.owner(keys.job(parent_id))
        assert before.slot == keys.slot_of(keys.bucket_tag(keys.bucket_of(parent_id)))
        promoted = empty_cluster.fail_over(keys.job(parent_id))
        assert promoted in before.replicas and not before.primary.alive
        assert empty_cluster.owner(keys.job(parent_id)).primary is promoted

        # The failover happened mid-group: children were left to run on the promoted replica.
        mid = wait_for_job(gateway.job, parent_id, lambda v: v is not None, through_outages=True)
        assert mid["counts"]["completed"] < CHILDREN, "the group ended before its primary was killed"

        # The promoted replica has no replica of its own: a creation in its slots is kept but refused
        # (503 store_unavailable), not acknowledged, until a replica has it.
        key = _idempotency_key_served_by(empty_cluster, promoted)
        body = echo("after the failover")
        [refused] = wait_until(
            tolerant(lambda: _answered(gateway.post_json(body, {"Idempotency-Key": key}))),
            WAIT,
            message="no answer to a creation after the failover",
        )
        assert (refused.status_code, refused.json()["code"]) == (503, "store_unavailable"), refused.text

        view = assert_group_settled(gateway, parent_id, texts(CHILDREN), MAX_PARALLEL)
        attempts = [c["attempts"] for c in view["children"]]
        assert all(1 <= a <= 2 for a in attempts), attempts
        print(f"children by attempts: {dict(sorted(Counter(attempts).items()))}")  # shown with -rP

        # The killed primary comes back as the promoted one's replica: the same request is acknowledged.
        empty_cluster.restore()
        accepted = wait_until(
            tolerant(lambda: _accepted(gateway.post_json(body, {"Idempotency-Key": key}))),
            WAIT,
            message="the creation was never acknowledged once the shard had a replica again",
        )
        assert_single_settled(gateway, accepted.json()["id"], "after the failover")


def _idempotency_key_served_by(cluster: LocalCluster, node) -> str:
    """An Idempotency-Key of the default tenant whose bucket's slot ``node`` serves now."""
    for n in range(10_000):
        key = f"after-the-failover-{n}"
        tag = keys.bucket_tag(keys.bucket_of_idempotency(DEFAULT_TENANT, key))
        if cluster.owner("{" + tag + "}").primary is node:
            return key
    raise AssertionError(f"no key's bucket is on {node.address}")


def _answered(response):
    """A 202 or 503 (a Response of one is falsy, hence the list)."""
    return [response] if response.status_code in (202, 503) else None


def _accepted(response):
    return response if response.status_code == 202 else None
