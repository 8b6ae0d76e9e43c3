"""Redis Sentinel: the primary SIGKILLed mid-group, and every process follows the failover by itself.

A primary, one replica and three sentinels (``sentinel_support``); the
gateway, a worker, the coordinator and beat find the master through the
sentinels (the webhook deliverer too), and the gateway acknowledges a creation only once the replica
has it (``OCRGW_MIN_REPLICAS=1``).  Whatever got a 202 must then end
as every group must (``assert_group_settled``): terminal, the cap held by
the recorded intervals, one finalize and one audit event per job.  Until
the old primary is back as the new master's replica, no creation can be
acknowledged (503); then one is, and runs.

No process is restarted meanwhile: the worker, the coordinator and the
webhook deliverer lose their broker connection with the primary and each
comes back on its own, the same process (its pid) taking new work after
the failover, with no "Unrecoverable error" on its way (a crash kombu could
once cause there: see ``workers.broker.guard_closed_redis_channels``).
"""

from __future__ import annotations

import contextlib
import json
import time

import pytest
from kombu import Connection, Consumer, Exchange, Producer, Queue

from jobs.config import Settings
from tests.harness import CELERY_READY, Proc, ProcGroup, find_redis_server, in_ci
from tests.integration.chaos_support import FAST, WAIT, assert_group_settled, assert_single_settled, echo, group, texts
from tests.integration.fanout_support import Gateway
from tests.integration.polling import wait_for_job
from tests.integration.sentinel_support import SentinelSet, find_redis_sentinel
from tests.webhook_receiver import Receiver
from workers.celery_app import make_celery

pytestmark = [pytest.mark.integration, pytest.mark.chaos, pytest.mark.failover]


@pytest.fixture
def sentinels(tmp_path):
    if find_redis_sentinel() is None or find_redis_server() is None:
        why = "redis-server and redis-sentinel are needed (scripts/setup.sh --tests installs them)"
        if in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    group = ProcGroup(tmp_path / "sentinels", label="sentinels")
    try:
        yield SentinelSet(group, tmp_path / "sentinels").start()
    finally:
        group.close()


def submit(gateway: Gateway, body, key: str) -> str:
    response = gateway.post_json(body, {"Idempotency-Key": key})
    assert response.status_code == 202, f"{response.status_code} {response.text}"
    return response.json()["id"]


#: What Celery logs as it ends a worker on an exception it cannot retry (its consumer's queues then wait
#: for a restart), and what kombu raised there once.
CELERY_GAVE_UP = ("Unrecoverable error", "AttributeError")


def assert_rode_out(proc: Proc, pid: int) -> None:
    """``proc`` is the process it was before the failover, still running, and it never gave up on its broker."""
    assert proc.alive and proc.pid == pid, f"{proc.name} (pid {pid}) is not running any more:\n{proc.log_tail()}"
    log = proc.log_text()
    given_up = [line for line in log.splitlines() if any(sign in line for sign in CELERY_GAVE_UP)]
    assert not given_up, f"{proc.name} logged {given_up}:\n{proc.log_tail()}"


def assert_reconnected(proc: Proc) -> None:
    """``proc`` lost its broker connection with the primary and connected again (to the new master)."""
    log = proc.log_text()
    assert "Connection to broker lost" in log and log.count("Connected to sentinel://") >= 2, proc.log_tail()


def test_every_acknowledged_job_ends_once_after_the_primary_is_killed_mid_group(sentinels, tmp_path):
    procs = ProcGroup(tmp_path / "procs", redis=sentinels.primary, label="failover stack")
    env = {
        **FAST,
        **sentinels.env(min_replicas=1),
        "OCRGW_WEBHOOK_ALLOW_PRIVATE": "1",
        "OCRGW_WEBHOOK_BACKOFF": "0.5",
        # A replica on a slow machine may confirm a creation after the default 2 s; the 503 expected
        # below (no replica at all) then takes these 4 s.
        "OCRGW_REPLICA_WAIT_MS": "4000",
    }
    try:
        deliverer = procs.webhooks(concurrency=2, env=env, wait=False)
        stack = procs.stack(env=env, web=True)
        deliverer.wait_ready(CELERY_READY)
        first_texts, second_texts = texts(8, "first"), texts(6, "second")
        with Gateway(stack.web().base_url) as gateway, Receiver() as receiver:
            first = submit(gateway, group([echo(t, delay_ms=600) for t in first_texts], max_parallel=2), "first")
            second = submit(gateway, group([echo(t, delay_ms=400) for t in second_texts], max_parallel=3), "second")
            # A single job whose webhook is due after the failover: the deliverer follows it too.
            hooked = submit(
                gateway, {**echo("hooked", delay_ms=3000), "callback_url": receiver.url("/hooked")}, "hooked"
            )
            wait_for_job(
                gateway.job,
                first,
                lambda v: v["counts"]["completed"] >= 1,
                what="a first completed child",
                through_outages=True,
            )

            celery_procs = [(proc, proc.pid) for proc in (stack.worker, stack.coordinator, deliverer)]
            sentinels.primary.kill()
            sentinels.wait_failover()

            assert_group_settled(gateway, first, first_texts, 2)
            assert_group_settled(gateway, second, second_texts, 3)
            view = assert_single_settled(gateway, hooked, "hooked")
            delivered = receiver.wait_for("/hooked", 1, WAIT)  # at least once: a lost delivery is sent again
            assert json.loads(delivered[-1].body)["status"] == view["status"] == "completed"

            # The new master has no replica yet: nothing can be acknowledged.
            refused = gateway.post_json(echo("late"), {"Idempotency-Key": "late"})
            assert refused.status_code == 503 and refused.json()["code"] == "store_unavailable", refused.text
            # The old primary comes back empty; the sentinels make it the new master's replica.
            new_master = sentinels.replica
            sentinels.primary.start()
            sentinels.wait_replicated(new_master, replicas=1)
            late = submit(gateway, echo("late"), "late")
            assert_single_settled(gateway, late, "late")
            # New children, run after the failover by the worker that ran the first ones.
            after_texts = texts(4, "after")
            after = submit(gateway, group([echo(t) for t in after_texts], max_parallel=2), "after")
            assert_group_settled(gateway, after, after_texts, 2)
            for proc, pid in celery_procs:
                assert_rode_out(proc, pid)
            assert_reconnected(stack.worker)
    finally:
        procs.close()


def consume_until(connection: Connection, received: list, deadline: float) -> None:
    while not received and time.monotonic() < deadline:
        with contextlib.suppress(TimeoutError):
            connection.drain_events(timeout=1)


def test_a_consumer_s_connection_closed_as_the_primary_dies_closes_its_channels_without_error(sentinels):
    """Celery's consumer, at a connection loss, collects its broker connection, then closes it.

    The crash once seen at a failover, replayed with kombu alone: a task
    message unacknowledged (its task running) on the consumer's channel,
    that channel's BRPOP in flight, and the broadcast (pidbox) channel's
    connection the one that failed.  Collecting then aborts on the broadcast
    channel (its auto-delete queue cannot be deleted) before the task
    channel is closed, and closes the connection (the transport forgets its
    client); the close that follows closes the task channel, which restores
    its unacknowledged message through a new pool.  kombu 5.7.0 raised
    ``AttributeError: 'NoneType' object has no attribute 'hostname'`` there,
    which Celery does not retry: "Unrecoverable error" (see
    ``workers.broker.guard_closed_redis_channels``).
    """
    settings = Settings.from_env(sentinels.env(min_replicas=0))
    connection = make_celery(settings).connection_for_read()
    tasks = Queue("ocrgw-test-tasks", Exchange("ocrgw-test-tasks", "direct"), "ocrgw-test-tasks")
    broadcast = Queue("ocrgw-test-box", Exchange("ocrgw-test-box", "fanout"), auto_delete=True)
    try:
        task_channel = connection.default_channel
        Producer(task_channel).publish(
            {"job": 1}, exchange=tasks.exchange, routing_key=tasks.routing_key, declare=[tasks]
        )
        received: list = []
        task_consumer = Consumer(
            task_channel, queues=[tasks], callbacks=[lambda _body, message: received.append(message)]
        )
        task_consumer.qos(prefetch_count=2)  # two pool processes: one more message may be asked for
        task_consumer.consume()
        Consumer(connection.channel(), queues=[broadcast], callbacks=[lambda *_: None], no_ack=True).consume()
        consume_until(connection, received, time.monotonic() + WAIT)
        assert received, "the task message never came"
        # The next BRPOP is sent, and waits (the queue is empty) when the primary dies.
        deadline = time.monotonic() + WAIT
        while not task_channel._in_poll and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                connection.drain_events(timeout=0.2)
        assert task_channel._in_poll and task_channel.qos._delivered

        sentinels.primary.kill()
        connection.collect(socket_timeout=5)
        # The task channel is still to be closed, and its transport has forgotten its connection.
        assert not task_channel.closed and task_channel.connection.client is None
        connection.close()  # raised AttributeError
        assert task_channel.closed
    finally:
        connection.release()
