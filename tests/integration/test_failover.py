"""Redis Sentinel: the primary SIGKILLed mid-group, and every process follows the failover by itself.

A primary, one replica and three sentinels (``sentinel_support``); the
gateway, a worker, the coordinator and beat find the master through the
sentinels (the webhook deliverer too), and the gateway acknowledges a creation only once the replica
has it (``OCRGW_MIN_REPLICAS=1``).  Whatever got a 202 must then end
as every group must (``assert_group_settled``): terminal, the cap held by
the recorded intervals, one finalize and one audit event per job.  Until
the old primary is back as the new master's replica, no creation can be
acknowledged (503); then one is, and runs.
"""

from __future__ import annotations

import json

import pytest

from tests.harness import CELERY_READY, ProcGroup, find_redis_server, in_ci
from tests.integration.chaos_support import FAST, WAIT, assert_group_settled, assert_single_settled, echo, group, texts
from tests.integration.fanout_support import Gateway
from tests.integration.polling import wait_for_job
from tests.integration.sentinel_support import SentinelSet, find_redis_sentinel
from tests.webhook_receiver import Receiver

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
    finally:
        procs.close()
