"""RabbitMQ as the broker: the scenarios of the fan-out, reliability and chaos tests that
concern the broker, run again with ``CELERY_BROKER_URL=amqp://...`` against a real rabbitmq-server.

The store stays on the session's redis-server; every Celery process (the
gateway publishing, workers, coordinator, beat) talks to one rabbitmq-server
started for this module, each Redis database with a virtual host of its own
(see ``rabbitmq_support``).  The scenarios are the other modules' own test
functions, called with processes that use RabbitMQ; what they check is
unchanged.  Picked are those where the broker does something: publishing,
hand-offs by message and by kept slot, redelivery of a dead worker's
message, warm shutdown, the sweep re-publishing, and a broker restart in
the middle of a group, which only this module has.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator

import kombu
import pytest
from amqp.exceptions import ChannelError

from jobs.config import Settings
from jobs.store import JobStore
from tests import harness
from tests.harness import ProcGroup, wait_until
from tests.integration import test_chaos, test_fanout, test_priority_lanes, test_reliability, test_webhooks
from tests.integration.chaos_support import FAST, WAIT, assert_group_settled, assert_single_settled, echo, group, texts
from tests.integration.fanout_support import Gateway, recorded_micros
from tests.integration.polling import wait_for_job, wait_until_processing
from tests.integration.rabbitmq_support import RabbitMQServer, find_rabbitmq_server
from tests.keyspace import keys
from workers.broker import is_rabbitmq

pytestmark = [pytest.mark.integration, pytest.mark.rabbitmq]


@pytest.fixture(scope="module")
def rabbitmq(tmp_path_factory) -> Iterator[RabbitMQServer]:
    binary = find_rabbitmq_server()
    if binary is None:
        why = "rabbitmq-server is not installed (scripts/setup.sh --tests installs it)"
        if harness.in_ci():
            pytest.fail(why, pytrace=False)
        pytest.skip(why)
    work = tmp_path_factory.mktemp("rabbitmq")
    group_ = ProcGroup(work, label="rabbitmq")
    server = RabbitMQServer(group_, work / "node", binary=binary)
    try:
        yield server.start()
        server.stop()  # an orderly shutdown; close() below kills only what is left (its epmd)
    finally:
        group_.close()


@pytest.fixture
def procs(request, tmp_path, rabbitmq) -> Iterator[ProcGroup]:
    """The test's own processes, as ``procs`` everywhere, with RabbitMQ as their broker."""
    group_ = ProcGroup(
        tmp_path / "procs", redis=lambda: request.getfixturevalue("redis_server"), label="test", broker=rabbitmq.url_for
    )
    try:
        yield group_
    finally:
        group_.close()


def test_every_process_of_a_stack_takes_its_broker_url_from_the_group(procs):
    env = procs._env(3, None)
    assert is_rabbitmq(env["CELERY_BROKER_URL"]) and env["CELERY_BROKER_URL"].endswith("/ocrgw-3")
    assert Settings.from_env(env).broker_url == env["CELERY_BROKER_URL"]


def test_the_queues_are_quorum_queues_and_no_delayed_delivery_is_declared(procs, rabbitmq):
    """RabbitMQ refuses to redeclare a queue with another type: each of ocrgw's queues exists as a quorum queue."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env={"OCRGW_SWEEP_INTERVAL": "0.2"}, web=True)
    with Gateway(stack.web().base_url) as gateway:
        assert_single_settled(
            gateway, test_chaos.submit(gateway, echo("through a quorum queue")), "through a quorum queue"
        )
    with kombu.Connection(rabbitmq.url_for(db)) as connection:
        for name in ("coordinator", "ocr.echo", "ocr.echo.interactive", "ocr.tesseract", "ocr.paddleocr"):
            with connection.channel() as channel:
                kombu.Queue(name, channel=channel, queue_arguments={"x-queue-type": "quorum"}).declare()
            with connection.channel() as channel, pytest.raises(ChannelError, match="x-queue-type"):
                kombu.Queue(name, channel=channel, queue_arguments={"x-queue-type": "classic"}).declare()
        with connection.channel() as channel, pytest.raises(ChannelError, match="NOT_FOUND"):
            kombu.Exchange("celery_delayed_27", channel=channel, passive=True).declare()


# -- fan-out: publishing, hand-offs by message and by kept slot, the sweep re-publishing ------------


@pytest.mark.parametrize("slot", ["kept", "message"])
def test_completions_hand_the_slot_to_the_next_child_without_the_sweep(procs, capsys, slot):
    test_fanout.test_completions_hand_the_slot_to_the_next_child_without_the_sweep(procs, capsys, slot)


def test_sweep_republishes_a_queued_job_whose_message_was_never_sent(procs):
    env = {"OCRGW_SWEEP_INTERVAL": "0.2", "OCRGW_REQUEUE_SECONDS": "1"}
    stack = procs.stack(db=procs.fresh_db(), concurrency=2, env=env)
    store = JobStore.from_settings(Settings.from_env({"REDIS_URL": stack.redis_url, **env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    try:
        test_fanout.test_sweep_republishes_a_queued_job_whose_message_was_never_sent(store)
    finally:
        store.redis.close()


# -- priority lanes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("buckets", [1, 24])
def test_an_interactive_job_is_delivered_beside_the_batch_backlog_not_behind_it(procs, capsys, buckets):
    """RabbitMQ has no order across queues: the job is not sure to go first, but it is delivered to the busy
    worker at once (the prefetch is per consumer on quorum queues), so it waits at most for the batch message
    that worker holds already, never for the backlog (see docs/internals/priority-lanes.md).  On 24 buckets
    the job's root is in another bucket than the group's: the worker, chaining its
    group's children, learns of it from the message its consumer holds."""
    stack = test_priority_lanes.start_lanes_stack(procs, buckets)
    store = JobStore.from_settings(Settings.from_env({"REDIS_URL": stack.redis_url, **stack.env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    try:
        with Gateway(stack.web().base_url) as gateway:
            parent = test_priority_lanes.submit_batch_group(gateway, max_parallel=0)
            wait_until(lambda: test_priority_lanes.busy(store, parent), WAIT, message="the batch group never started")
            job_id = test_priority_lanes.submit_interactive(gateway, away_from=parent if buckets > 1 else None)
            job = wait_for_job(store.queries.get, job_id, lambda v: v["status"] == "completed", timeout=WAIT)
            wait_for_job(store.queries.get, parent, lambda v: v["status"] == "completed", timeout=WAIT)
        submitted, started = recorded_micros(job["created_at"]), recorded_micros(job["started_at"])
        batch = test_priority_lanes.runs(store, parent)
        overtaking = [s for s, _ in batch if submitted < s < started]
        with capsys.disabled():
            print(
                f"\n[priority lanes on RabbitMQ, {buckets} bucket(s)] {len(overtaking)} batch children started "
                "before the interactive job"
            )
        assert len(overtaking) <= 1, f"{len(overtaking)} batch children started between the job's submission and start"
        assert sum(1 for s, _ in batch if s > started) >= 2, f"the batch backlog was gone before it: no test ({batch})"
        if buckets > 1:
            assert keys.bucket_of(job_id) != keys.bucket_of(parent), "the job and the group share a bucket"
    finally:
        store.redis.close()
        keys.use_bucket_count(None)


# -- workers: redelivery, kept slots, warm shutdown ------------------------------------------------


@pytest.mark.chaos
def test_a_killed_worker_s_child_is_reclaimed_and_completes_on_another_worker(procs):
    test_chaos.test_a_killed_worker_s_child_is_reclaimed_and_completes_on_another_worker(procs)


@pytest.mark.chaos
def test_a_child_run_in_a_kept_slot_is_reclaimed_when_its_worker_is_killed(procs):
    test_chaos.test_a_child_run_in_a_kept_slot_is_reclaimed_when_its_worker_is_killed(procs)


@pytest.mark.chaos
def test_a_worker_s_warm_shutdown_finishes_the_running_child_and_takes_no_more(procs):
    test_chaos.test_a_worker_s_warm_shutdown_finishes_the_running_child_and_takes_no_more(procs)


@pytest.mark.chaos
def test_an_engine_crash_is_reclaimed_by_the_sweep_until_the_last_attempt(procs):
    """A pool process lost mid-job: its message is requeued by RabbitMQ and redelivered as a no-op."""
    deployment = procs.stack(db=procs.fresh_db(), env=test_reliability.ENV, concurrency=2, web=True)
    with Gateway(deployment.web().base_url) as gateway:
        test_reliability.test_an_engine_crash_is_reclaimed_by_the_sweep_until_the_last_attempt(deployment, gateway)


# -- coordinator and beat ---------------------------------------------------------------------------


@pytest.mark.chaos
def test_coordinator_and_beat_killed_mid_group_repair_it_once_restarted(procs):
    test_chaos.test_coordinator_and_beat_killed_mid_group_repair_it_once_restarted(procs)


# -- the webhook deliverer ---------------------------------------------------------------------------


def test_webhooks_are_handed_to_the_deliverer_and_handed_again_for_a_retry(procs, rabbitmq, tmp_path):
    """The sweep hands each webhook to the deliverer (the Procfile's `webhooks`) by a message, with an expiry."""
    env = test_webhooks.deployment_env(tmp_path / "webhook-secrets")
    stack = procs.stack(db=procs.fresh_db(), env=env, concurrency=2, web=True, webhooks=True)
    with test_webhooks.as_tenant(stack, test_webhooks.ALPHA_KEY) as gateway:
        test_webhooks.test_a_single_job_s_view_arrives_signed_when_it_ends(gateway)
        test_webhooks.test_a_webhook_answered_500_is_retried_after_the_backoff_with_the_same_id_and_both_attempts_are_events(
            gateway
        )


# -- the broker itself --------------------------------------------------------------------------------


@pytest.mark.chaos
def test_a_broker_restart_mid_group_loses_nothing(procs, rabbitmq):
    """rabbitmq-server stops (SIGTERM) and starts again on the same node, ports and data
    while a group runs; the worker and coordinator reconnect, and every child completes.

    Kept slots are off, so the children completed after the restart prove that
    the worker takes messages again.  Messages published before the stop are
    in a durable quorum queue and come back with it; the ones the gateway or a
    worker could not publish meanwhile are re-published by the sweep.
    """
    db = procs.fresh_db()
    stack = procs.stack(db=db, env={**FAST, "OCRGW_KEEP_SLOT_SECONDS": "0"}, web=True)
    child_texts = texts(12)
    with Gateway(stack.web().base_url) as gateway:
        parent_id = test_chaos.submit(gateway, group([echo(t, delay_ms=300) for t in child_texts], max_parallel=3))
        wait_for_job(
            gateway.job, parent_id, test_chaos.completed_at_least(3), what="3 children completed", through_outages=True
        )
        connected = [p.log_text().count("Connected to amqp") for p in (stack.worker, stack.coordinator)]

        rabbitmq.restart()

        for proc, before in zip((stack.worker, stack.coordinator), connected, strict=True):

            def reconnected(proc: harness.Proc = proc, before: int = before) -> bool:
                return proc.log_text().count("Connected to amqp") > before

            wait_until(
                reconnected,
                WAIT,
                message=f"{proc.name} never reconnected",
            )
        assert_group_settled(gateway, parent_id, child_texts, 3)
        assert stack.worker.alive and stack.coordinator.alive and stack.beat.alive


@pytest.mark.chaos
def test_a_worker_killed_while_the_broker_is_down_has_its_child_reclaimed(procs, rabbitmq):
    """Nothing of the broker is needed to take a dead worker's child back: the lease does it."""
    db = procs.fresh_db()
    stack = procs.stack(db=db, env=FAST, web=True, concurrency=1)
    child_texts = texts(3)
    children = [echo(child_texts[0], delay_ms=3000)] + [echo(t) for t in child_texts[1:]]
    with Gateway(stack.web().base_url) as gateway:
        parent_id = test_chaos.submit(gateway, group(children, max_parallel=1))
        wait_until_processing(gateway.job, f"{parent_id}-0")
        rabbitmq.stop()
        stack.worker.kill(signal.SIGKILL)
        rabbitmq.start()
        procs.worker(db=db, env=FAST)

        assert_group_settled(gateway, parent_id, child_texts, 1)
        assert gateway.job(f"{parent_id}-0")["attempts"] == 2
