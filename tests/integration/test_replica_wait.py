"""OCRGW_MIN_REPLICAS against a real redis-server: WAIT decides between 202 and 503.

Without a replica, ``WAIT 1`` times out: the gateway answers
``503 store_unavailable`` with Retry-After and publishes nothing, and a
retry with the same Idempotency-Key replays the same job (no second one).
With a replica that has the creation, the answer is the usual 202; with
one that is connected but frozen, even a replay waits for it.
"""

from __future__ import annotations

import signal

import pytest

from gateway import create_app
from jobs.config import Settings
from jobs.records import Dispatch
from jobs.store import JobStore
from jobs.transitions.spec import PULL
from tests.harness import wait_until
from tests.integration.chaos_support import echo, group, root_ids, texts
from tests.keyspace import keys

pytestmark = pytest.mark.integration

REPLICA_WAIT_MS = "100"


def in_process_gateway(redis_url: str, min_replicas: int, wait_ms: str = REPLICA_WAIT_MS):
    """A gateway app on ``redis_url`` and the list of what it published."""
    settings = Settings.from_env(
        {"REDIS_URL": redis_url, "OCRGW_MIN_REPLICAS": str(min_replicas), "OCRGW_REPLICA_WAIT_MS": wait_ms}
    )
    published: list[Dispatch] = []

    def publish(dispatches: list[Dispatch]) -> int:
        published.extend(dispatches)
        return len(dispatches)

    app = create_app(settings, JobStore.from_settings(settings), publish=publish)
    return app.test_client(), published


def replica_online(primary) -> bool:
    with primary.client() as redis:
        return any(
            k.startswith("slave") and isinstance(v, dict) and v.get("state") == "online"
            for k, v in redis.info("replication").items()
        )


BODY = group([echo(t) for t in texts(3)], max_parallel=2)


def test_without_the_replicas_the_creation_is_refused_503_unpublished_and_a_retry_replays_it(procs):
    db = procs.fresh_db()
    client, published = in_process_gateway(procs.url(db), min_replicas=1)

    first = client.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-1"})
    assert first.status_code == 503, first.get_data(as_text=True)
    assert first.get_json()["code"] == "store_unavailable"
    assert first.headers["Retry-After"].isdigit()
    assert published == []
    with procs.redis.client(db) as redis:
        kept = root_ids(redis)
    assert len(kept) == 1  # kept, for the retry to replay

    again = client.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-1"})
    assert again.status_code == 503 and published == []
    with procs.redis.client(db) as redis:
        assert root_ids(redis) == kept

    # Once the replicas confirm (here: none are asked for), the same key answers with that same job.
    confirmed, published = in_process_gateway(procs.url(db), min_replicas=0)
    replay = confirmed.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-1"})
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"
    assert [replay.get_json()["id"]] == kept


def test_with_a_replica_the_creation_is_acknowledged_once_the_replica_has_it(redis_server_factory):
    primary = redis_server_factory()
    replica = redis_server_factory(extra_args=["--replicaof", primary.host, str(primary.port)])

    wait_until(lambda: replica_online(primary), 60, 0.1, message="the replica never came online")
    # A wait long enough for a loaded machine: a live replica answers WAIT as soon as it has the write.
    client, published = in_process_gateway(primary.url, min_replicas=1, wait_ms="10000")

    response = client.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-2"})

    assert response.status_code == 202, response.get_data(as_text=True)
    job_id = response.get_json()["id"]
    # The two children released into the group's slots are ready: one wake-up each, published after the WAIT.
    assert [(d.task, d.model, d.priority) for d in published] == [(PULL, "echo", "batch")] * 2
    with replica.client() as redis:
        assert root_ids(redis) == [job_id]
        ready = keys.ready(keys.bucket_of(job_id), "echo", "batch")
        assert redis.zrange(ready, 0, -1) == [f"{job_id}-0".encode(), f"{job_id}-1".encode()]


def test_a_replay_waits_for_the_original_creation_even_on_a_connection_that_wrote_nothing(redis_server_factory):
    """The replica is frozen (SIGSTOP): connected, but acknowledging nothing.  A replay writes
    nothing itself, and Redis documents WAIT as covering the calling connection's own writes;
    the creation's mark gives it one, after the original creation, so a replay on another
    gateway's connection waits for that creation too."""
    primary = redis_server_factory()
    replica = redis_server_factory(extra_args=["--replicaof", primary.host, str(primary.port)])
    wait_until(lambda: replica_online(primary), 60, 0.1, message="the replica never came online")
    replica.proc.kill(signal.SIGSTOP)
    try:
        first, _ = in_process_gateway(primary.url, min_replicas=1)
        assert first.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-3"}).status_code == 503

        other, published = in_process_gateway(primary.url, min_replicas=1)  # another gateway: its own connections
        replay = other.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-3"})
        assert replay.status_code == 503 and published == []
    finally:
        replica.proc.kill(signal.SIGCONT)

    # The thawed replica has the backlog to read first; a loaded machine needs more than 100 ms for
    # that, and a live replica answers WAIT as soon as it has caught up.
    thawed, _ = in_process_gateway(primary.url, min_replicas=1, wait_ms="10000")
    replay = thawed.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-3"})
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"
    with replica.client() as redis:
        assert root_ids(redis) == [replay.get_json()["id"]]


def test_a_replica_wait_longer_than_a_socket_s_default_timeout_answers_for_the_replicas(redis_server_factory):
    """WAIT blocks its connection for OCRGW_REPLICA_WAIT_MS: at 6 s, past redis-py's 5 s socket
    default, the store's client must still wait it out and answer 503 for the replicas, not take
    the wait for a lost connection and retry it."""
    primary = redis_server_factory()
    replica = redis_server_factory(extra_args=["--replicaof", primary.host, str(primary.port)])
    wait_until(lambda: replica_online(primary), 60, 0.1, message="the replica never came online")
    replica.proc.kill(signal.SIGSTOP)
    try:
        client, published = in_process_gateway(primary.url, min_replicas=1, wait_ms="6000")
        response = client.post("/jobs", json=BODY, headers={"Idempotency-Key": "k-4"})
        with primary.client() as redis:
            kept = root_ids(redis)
            creations = redis.info("commandstats").get("cmdstat_wait", {}).get("calls")
    finally:
        replica.proc.kill(signal.SIGCONT)

    assert response.status_code == 503
    assert "replicated" in response.get_json()["detail"]  # the replicas' answer, not "does not answer"
    assert published == [] and len(kept) == 1
    assert creations == 1  # one WAIT: the client never retried it
