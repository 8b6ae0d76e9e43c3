"""Tenants take turns in the interactive lane, end to end: real redis-server, gunicorn, Celery worker,
coordinator and beat, with API keys.

One worker process (``--queues ocr.echo``), so the jobs run one at a time and
their order is the lane's.  Kept slots last a minute, so the worker goes from
job to job itself, taking the ready index's next turn (ready.lua).  Every
figure is read from what the scripts recorded (each job's creation, start
and end, Redis time), never from the test's clock.

Alpha sends a burst of interactive jobs of about a second each; once the
first runs, beta sends one.  First in, first out, beta's would wait for all of
alpha's; with turns it starts right after the job running when it came.  With
weights 2:1 (gamma's keys say ``weight=2``), two backlogs interleave two of
gamma's for each of delta's.

On 24 buckets (the cluster pass) every job is made in one bucket, through
Idempotency-Keys of that bucket: the turns are each bucket's, and wake-ups of
different buckets are served by the broker first in, first out
(docs/security/fair-share.md says so).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from itertools import count
from pathlib import Path
from typing import Any

import pytest
import requests

from jobs.config import Settings
from jobs.store import JobStore
from tests.harness import BEAT_READY, CELERY_READY, START_TIMEOUT, ProcGroup, Stack
from tests.integration.fanout_support import Gateway, echo_child, keyspace, recorded_micros
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

KEYS = {
    "alpha": "alpha-key-7Rk2",
    "beta": "beta-key-Q81x",
    "gamma": "gamma-key-3Mw9",  # weight=2
    "delta": "delta-key-Lp04",
    "epsilon": "epsilon-key-Vb55",  # interactive_max_inflight=0
    "zeta": "zeta-key-Hd27",  # interactive_max_inflight=1
}
POLICIES = {"gamma": ":weight=2", "epsilon": ":interactive_max_inflight=0", "zeta": ":interactive_max_inflight=1"}
BURST = 8
JOB_MS = 1000  # alpha's jobs: beta's waits for the one running when it came, at most
WEIGHTED_MS = 300
WAIT = 120.0  # bounds a hang only
KEY_NUMBERS = count()


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def start_turns_stack(procs: ProcGroup, keys_file: Path) -> Stack:
    db = procs.fresh_db()
    env = {
        "OCRGW_API_KEYS_FILE": str(keys_file),
        "OCRGW_KEEP_SLOT_SECONDS": "60",
        "OCRGW_SWEEP_INTERVAL": "0.5",
        "OCRGW_INTERACTIVE_MAX_INFLIGHT": str(BURST * 2),
    }
    worker = procs.worker(concurrency=1, queues="ocr.echo", db=db, env=env, wait=False)
    coordinator = procs.coordinator(db=db, env=env, wait=False)
    beat = procs.beat(db=db, env=env, wait=False)
    stack = Stack(procs, db, procs.url(db), env, worker, coordinator, beat)
    stack.web()
    worker.wait_ready(CELERY_READY, START_TIMEOUT)
    coordinator.wait_ready(CELERY_READY, START_TIMEOUT)
    beat.wait_ready(BEAT_READY, START_TIMEOUT)
    return stack


@pytest.fixture(scope="module")
def turns_stack(module_procs: ProcGroup, tmp_path_factory) -> Stack:
    keys_file = tmp_path_factory.mktemp("turns") / "api-keys"
    keys_file.write_text("".join(f"{tenant}:{digest(key)}{POLICIES.get(tenant, '')}\n" for tenant, key in KEYS.items()))
    return start_turns_stack(module_procs, keys_file)


class Tenants:
    """Submits each tenant's interactive echo jobs with its own key, every root in one bucket."""

    def __init__(self, gateway: Gateway, store: JobStore):
        self.gateway, self.store = gateway, store
        self.bucket = 0

    def post(self, tenant: str, delay_ms: int) -> requests.Response:
        key = self._key_in_bucket(tenant)
        body = echo_child(f"{tenant} {key}", delay_ms=delay_ms, priority="interactive")
        headers = {"Authorization": f"Bearer {KEYS[tenant]}", "Idempotency-Key": key}
        return self.gateway.post_json(body, headers=headers)

    def submit(self, tenant: str, delay_ms: int) -> str:
        response = self.post(tenant, delay_ms)
        assert response.status_code == 202, response.text
        job_id = response.json()["id"]
        assert keys.bucket_of(job_id) == self.bucket
        return job_id

    def _key_in_bucket(self, tenant: str) -> str:
        """A fresh Idempotency-Key of the tenant's whose bucket (a keyed root's) is ``self.bucket``."""
        while True:
            key = f"turn-{next(KEY_NUMBERS)}"  # never one an earlier test of the module sent
            if keys.bucket_of_idempotency(tenant, key) == self.bucket:
                return key

    def ended(self, job_id: str) -> Mapping[str, Any]:
        return wait_for_job(self.store.queries.get, job_id, lambda v: v["status"] == "completed", timeout=WAIT)

    def started(self, job_id: str) -> Mapping[str, Any]:
        return wait_for_job(self.store.queries.get, job_id, lambda v: v["status"] != "queued", timeout=WAIT)


@pytest.fixture
def tenants(turns_stack: Stack) -> Iterator[Tenants]:
    store = JobStore.from_settings(Settings.from_env({**turns_stack.store_env, **turns_stack.env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    with Gateway(turns_stack.web().base_url) as gateway:
        try:
            yield Tenants(gateway, store)
        finally:
            store.redis.close()
            keys.use_bucket_count(None)


def test_a_tenant_s_interactive_job_starts_right_after_the_job_running_when_it_came(tenants):
    # Given alpha's burst, its first job running
    alpha = [tenants.submit("alpha", JOB_MS) for _ in range(BURST)]
    tenants.started(alpha[0])

    # When beta sends one
    beta = tenants.submit("beta", JOB_MS)

    # Then it starts once the job running then has ended, before any other of alpha's
    ran = {job_id: tenants.ended(job_id) for job_id in [*alpha, beta]}
    came = recorded_micros(ran[beta]["created_at"])
    began = recorded_micros(ran[beta]["started_at"])
    starts = {j: recorded_micros(v["started_at"]) for j, v in ran.items()}
    running_then = [j for j in alpha if starts[j] <= came < recorded_micros(ran[j]["finished_at"])]
    ahead = [j for j in alpha if came < starts[j] < began]
    assert len(running_then) == 1, f"no job of alpha's ran when beta's came: {starts}, {came}"
    assert len(ahead) <= 1, f"{len(ahead)} of alpha's jobs started between beta's submission and its start"
    assert began >= recorded_micros(ran[running_then[0]]["finished_at"]), "two jobs at once on one process"
    assert sum(1 for j in alpha if starts[j] > began) >= BURST - 3, "alpha's burst was not waiting: no test"


def test_weights_two_to_one_interleave_the_starts_two_to_one(tenants):
    # Given both tenants' backlogs queued while a job of a third runs
    first = tenants.submit("alpha", WEIGHTED_MS)
    tenants.started(first)
    gamma = [tenants.submit("gamma", WEIGHTED_MS) for _ in range(6)]
    delta = [tenants.submit("delta", WEIGHTED_MS) for _ in range(3)]

    # When they have all run
    ran = {job_id: tenants.ended(job_id) for job_id in [first, *gamma, *delta]}

    # Then every three starts after it are two of gamma's and one of delta's
    began = recorded_micros(ran[first]["started_at"])
    order = sorted((recorded_micros(v["started_at"]), "gamma" if j in gamma else "delta") for j, v in ran.items())
    after = [tenant for started, tenant in order if started > began]
    assert len(after) == 9
    for start in range(0, 9, 3):
        assert sorted(after[start : start + 3]) == ["delta", "gamma", "gamma"], after


def test_the_interactive_lane_is_each_key_s_to_use_as_its_policy_says(tenants):
    before = keyspace(tenants.store.redis)
    # A key allowed none: 403, and nothing stored
    refused = tenants.post("epsilon", 0)
    assert refused.status_code == 403, refused.text
    assert refused.json()["code"] == "interactive_not_allowed"
    assert keyspace(tenants.store.redis) == before

    # A key allowed one: its second, while the first is in flight, is 429 with Retry-After
    first = tenants.submit("zeta", WEIGHTED_MS)
    full = tenants.post("zeta", 0)
    assert full.status_code == 429, full.text
    assert (full.json()["code"], full.headers["Retry-After"]) == ("interactive_limit_reached", "1")
    assert (full.json()["in_use"], full.json()["interactive_max_inflight"]) == (1, 1)

    # and once the first has ended, the next is accepted
    tenants.ended(first)
    tenants.ended(tenants.submit("zeta", 0))
