"""The store's layout on a real redis-server: recorded at the first start, every process held to it, and
``ocrgw store migrate`` moving a store from one bucket count to another with jobs of every status in it;
and a redrive's Idempotency-Key holding across the 24 buckets of a real stack.

The moves carry what the store counts beside its jobs: each tenant's usage records (added together where
two old buckets land in one new one, their expiry kept), the lanes' turns, and the retries waiting out
their backoff.

The moves each have a private redis-server (a move refuses while any other client is connected to the
store's database, and the session's stack is connected to its own).  The redrive runs on a stack of the
module's (on the cluster, in the cluster pass).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from jobs import controls
from jobs.config import Settings
from jobs.connections import StoreClient
from jobs.records import GroupRules, Idempotency, NewJob, Owner
from jobs.store import JobStore
from jobs.store_layout import Layout, recorded
from jobs.usage import Period, UsageQueries
from tests.harness import START_TIMEOUT, ProcGroup, _gunicorn_isolation_args, free_port, wait_until
from tests.integration.fanout_support import Gateway, echo_child, group_body
from tests.integration.polling import wait_for_job
from tests.integration.sentinel_support import SentinelSet, find_redis_sentinel
from tests.integration.test_cli import CLI, cli_env
from tests.integration.test_redis_security import run_refused
from tests.keyspace import keys

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
TENANTS = ("alpha", "beta")
# A claimed job's lease, short so that the one left processing when the stack stopped is taken back soon.
LEASE_SECONDS = "3"
ENV = {
    "OCRGW_LEASE_SECONDS": LEASE_SECONDS,
    "OCRGW_REQUEUE_SECONDS": "2",
    "OCRGW_SWEEP_INTERVAL": "0.2",
    "OCRGW_TENANT_MAX_INFLIGHT": "20",
}
WAIT = 120.0  # bounds a hang; asserts no speed
RETRY_BACKOFF_SECONDS = 2.0
REDRIVE_KEY = Idempotency("redrive-1", "/jobs/redriven/retry|False")


def command(url: str, buckets: int, *args: str, more: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``ocrgw store <args>`` on the store at ``url`` (and ``more`` settings) with ``buckets`` buckets."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OCRGW_", "REDIS_"))}
    env.update({**ENV, **(more or {}), "REDIS_URL": url, "OCRGW_STORE_BUCKETS": str(buckets), "PYTHONPATH": str(REPO)})
    return subprocess.run(
        [sys.executable, "-m", "cli", "store", *args], env=env, capture_output=True, text=True, timeout=300, cwd=REPO
    )


@pytest.fixture
def server(redis_server_factory):
    return redis_server_factory()


@pytest.fixture
def counting() -> Iterator[None]:
    """The test sets this process's bucket count as it goes; unset after it."""
    yield
    keys.use_bucket_count(None)


def store_of(url: str, buckets: int) -> JobStore:
    keys.use_bucket_count(buckets)
    settings = Settings.from_env({"REDIS_URL": url, "OCRGW_STORE_BUCKETS": str(buckets), **ENV})
    return JobStore(Redis.from_url(url), settings)


def echo(text: str) -> NewJob:
    return NewJob(model="echo", content_type="text/plain", payload=text.encode())


def jobs_of_every_status(store: JobStore) -> dict[str, str]:
    """For each tenant, a job in each status (held, queued, processing, completed, failed, cancelled),
    written by the store's own transitions as a stack would, with no stack running."""
    made: dict[str, str] = {}
    for tenant in TENANTS:
        owner = Owner(tenant)
        done = store.create_single(echo(f"done {tenant}"), owner=owner).job_id
        claim = store.claim(done)
        assert claim is not None
        store.complete(done, claim.attempt, {"text": f"done {tenant}"})
        failed = store.create_single(echo(f"failed {tenant}"), owner=owner).job_id
        claim = store.claim(failed)
        assert claim is not None
        store.fail(failed, claim.attempt, "bad_document", "no")
        cancelled = store.create_single(echo("cancelled"), owner=owner).job_id
        controls.cancel(store, cancelled)
        queued = store.create_single(echo(f"queued {tenant}"), owner=owner).job_id
        running = store.create_single(echo(f"running {tenant}"), owner=owner).job_id
        assert store.claim(running) is not None  # its worker gone with the stack: its lease runs out
        # A group with one child processing, one queued and two held (its cap is 2).
        group = store.create_group([echo(f"page {i} of {tenant}") for i in range(4)], GroupRules(2), owner=owner).job_id
        assert store.claim(keys.child_id(group, 0)) is not None
        # A failed group redriven with an Idempotency-Key: its child queued again, the key taken.
        redriven = store.create_group([echo(f"again {tenant}")], GroupRules(1), owner=owner).job_id
        claim = store.claim(keys.child_id(redriven, 0))
        assert claim is not None
        store.fail(claim.job_id, claim.attempt, "bad_document", "no")
        assert controls.redrive(store, redriven, idempotency=REDRIVE_KEY, tenant=tenant).count == 1
        # A retry waiting out its backoff (a store's ``later`` entry) when the stack stops.
        retrying = store.create_single(echo(f"retrying {tenant}"), owner=owner).job_id
        claim = store.claim(retrying)
        assert claim is not None
        store.retry(retrying, claim.attempt, RETRY_BACKOFF_SECONDS, "engine_busy", "busy")
        made.update(
            {
                f"{tenant} completed": done,
                f"{tenant} failed": failed,
                f"{tenant} cancelled": cancelled,
                f"{tenant} queued": queued,
                f"{tenant} processing": running,
                f"{tenant} group": group,
                f"{tenant} redriven": redriven,
                f"{tenant} retrying": retrying,
            }
        )
    return made


def usage_of(store: JobStore) -> dict[str, list[Period]]:
    """What each tenant used, hour by hour, as ``GET /usage`` reads it (summed over the buckets)."""
    now = datetime.now(UTC)
    queries = UsageQueries(store.redis, keys)
    return {t: queries.periods(t, now - timedelta(days=2), now + timedelta(days=1), "hour") for t in TENANTS}


def later_entries(client: StoreClient) -> dict[str, float]:
    """The retries waiting out their backoff, in every bucket's index, each only in its own bucket's."""
    found: dict[str, float] = {}
    for bucket in keys.buckets():
        listed: list[Any] = list(client.zrange(keys.later(bucket), 0, -1, withscores=True))
        for member, score in listed:
            job_id = member.decode()
            assert keys.bucket_of(job_id) == bucket, (job_id, bucket)
            found[job_id] = score
    return found


def usage_expiry(client: StoreClient) -> int:
    """When the last of the store's usage records expires (ms since the epoch)."""
    found = [int(client.pexpiretime(k)) for k in client.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:{keys.USAGE}*")]
    assert found and min(found) > 0
    return max(found)


def statuses(store: JobStore, made: dict[str, str]) -> dict[str, str]:
    found = {}
    for name, job_id in made.items():
        view = store.queries.get(job_id)
        found[name] = view["status"] if view else "missing"
        if name.endswith(("group", "redriven")):
            for i in range(4 if name.endswith("group") else 1):
                child = store.queries.get(keys.child_id(job_id, i))
                found[f"{name} {i}"] = child["status"] if child else "missing"
    return found


def bucket_tags_in(client: Redis) -> set[str]:
    """The bucket tags of the store's keys."""
    return {k.decode().partition("{")[2].partition("}")[0] for k in client.scan_iter(match="ocrgw:{b*")}


def tenant_counts(client: StoreClient) -> dict[str, int]:
    """Each tenant's in-flight count, summed over the buckets."""
    found: dict[str, int] = {}
    for raw in client.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:{keys.TENANT}*{keys.IN_FLIGHT}"):
        tag = raw.decode().partition(keys.TENANT)[2].partition(":")[0]
        found[tag] = found.get(tag, 0) + int(client.get(raw) or 0)
    return found


def test_a_store_moves_to_24_buckets_and_back_and_the_stack_then_runs_its_jobs_to_the_end(server, counting, tmp_path):
    url = server.url_for(3)
    client = Redis.from_url(url)
    store = store_of(url, 1)
    made = jobs_of_every_status(store)
    before = statuses(store, made)
    assert {before[f"{t} {s}"] for t in TENANTS for s in ("queued", "processing")} == {"queued", "processing"}
    assert before["alpha group 0"] == "processing" and before["alpha group 2"] == "held"
    assert before["alpha redriven"] == "processing" and before["alpha redriven 0"] == "queued"
    counts = tenant_counts(client)
    used, used_until, waiting = usage_of(store), usage_expiry(client), later_entries(client)
    assert all(used.values()) and set(waiting) == {made[f"{t} retrying"] for t in TENANTS}
    store.redis.close()

    # A process of another count is refused at start, before the move; the CLI says so too.
    shown = command(url, 24, "layout")
    assert shown.returncode == 1
    assert "store: 1 bucket (key schema 2)" in shown.stdout and "this environment: 24 buckets" in shown.stdout
    assert "`ocrgw store migrate`" in shown.stderr

    client.close()  # a move refuses while another client is connected to the store
    dry = command(url, 24, "migrate", "--dry-run")
    assert dry.returncode == 0 and "would move (dry run, nothing moved):" in dry.stdout, dry.stdout + dry.stderr
    assert recorded(client) == Layout(1) and tenant_counts(client) == counts
    assert bucket_tags_in(client) == set(keys.bucket_tags(1))
    for buckets in (24, 1, 24):
        client.close()
        moved = command(url, buckets, "migrate")
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert f"to {buckets})" in moved.stdout, moved.stdout
        print(moved.stdout)
        assert recorded(client) == Layout(buckets)
        moved_store = store_of(url, buckets)
        assert statuses(moved_store, made) == before
        # Nothing of another count is left: every bucket-tagged key is one of this count's buckets.
        tags = bucket_tags_in(client)
        assert tags <= set(keys.bucket_tags(buckets)), tags
        assert tenant_counts(client) == counts
        # Usage counted once, kept as long; the backed-off retries in their new buckets, due when they were.
        assert usage_of(moved_store) == used and usage_expiry(client) == used_until
        assert later_entries(client) == waiting
        for tenant in TENANTS:
            # The key's record and the redrive's mark moved with the store: the same request replays.
            again = controls.redrive(moved_store, made[f"{tenant} redriven"], idempotency=REDRIVE_KEY, tenant=tenant)
            assert again.replayed
        for tenant in TENANTS:
            # The listing's indexes moved too: each tenant still lists its own roots.
            listed = moved_store.queries.list_jobs(tenant=tenant, limit=50)
            assert {j["id"] for j in listed.jobs} == {v for k, v in made.items() if k.startswith(tenant)}
        moved_store.redis.close()

    # The stack of the new count runs every job to its end: the queued ones, the processing ones whose
    # leases ran out while it was stopped, and the held children.
    group = ProcGroup(tmp_path / "stack", redis=server, label="moved store")
    try:
        group.stack(db=3, env={**ENV, "OCRGW_STORE_BUCKETS": "24"}, concurrency=2)
        moved_store = store_of(url, 24)

        def every_job_ended() -> bool:
            now = statuses(moved_store, made)
            return all(s in ("completed", "failed", "cancelled") for s in now.values())

        wait_until(every_job_ended, WAIT, interval=0.2, message=f"jobs not ended: {statuses(moved_store, made)}")
        after = statuses(moved_store, made)
        for name, status in before.items():
            expected = status if status in ("completed", "failed", "cancelled") else "completed"
            assert after[name] == expected, (name, after)
        for tenant in TENANTS:
            result = moved_store.queries.result(made[f"{tenant} queued"])
            assert result is not None and result["text"] == f"queued {tenant}"
        # Each tenant's count back to none in flight, in every bucket.
        wait_until(lambda: tenant_counts(client) == {}, WAIT, interval=0.2, message="in-flight counts left")
    finally:
        group.close()


def turns_behind_ready(client: StoreClient) -> list[str]:
    """The queued jobs whose tenant's next turn in their bucket is not behind their own (ready.lua keeps it
    behind every one): none, once the lanes' turns moved with the ready entries."""
    behind: list[str] = []
    for bucket in keys.buckets():
        for lane in ("interactive", "batch"):
            listed: list[Any] = list(client.zrange(keys.ready(bucket, "echo", lane), 0, -1, withscores=True))
            for member, turn in listed:
                job_id = member.decode()
                finish = client.hget(keys.turns(bucket), f"{keys.TURN_FINISH}echo:{lane}:{keys.tag_of(job_id)}")
                if finish is None or not turn < float(finish):
                    behind.append(job_id)
    return behind


@pytest.mark.parametrize("where", ["one Redis", "a Redis Cluster"])
def test_usage_of_many_buckets_moved_into_one_is_added_up_once(where, request, counting):
    if where == "one Redis":
        url, more = request.getfixturevalue("server").url_for(7), {}
        connect = lambda: Redis.from_url(url)  # noqa: E731
    else:
        cluster = request.getfixturevalue("empty_cluster")
        more = {**cluster.env(), "CELERY_BROKER_URL": request.getfixturevalue("redis_server").url_for(9)}
        url, connect = more["REDIS_URL"], cluster.client
    keys.use_bucket_count(24)
    store = JobStore(connect(), Settings.from_env({**more, **ENV, "REDIS_URL": url, "OCRGW_STORE_BUCKETS": "24"}))
    made = jobs_of_every_status(store)
    # More completed jobs, so that each tenant has usage records in several buckets.
    for tenant in TENANTS:
        for i in range(8):
            done = store.create_single(echo(f"more {i}"), owner=Owner(tenant)).job_id
            claim = store.claim(done)
            assert claim is not None
            store.complete(done, claim.attempt, {"text": "more"})
    records = list(store.redis.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:{keys.USAGE}*"))
    assert len(records) > 2 * len(TENANTS)
    tenant_days = {_text_of(k).partition("}:")[2] for k in records}  # usage:<tenant tag>:<day>
    before, used, used_until = statuses(store, made), usage_of(store), usage_expiry(store.redis)
    waiting = later_entries(store.redis)
    assert turns_behind_ready(store.redis) == []
    store.redis.close()

    moved = command(url, 1, "migrate", more=more)

    assert moved.returncode == 0, moved.stdout + moved.stderr
    assert "from 24 buckets to 1)" in moved.stdout and "usage" in moved.stdout, moved.stdout
    keys.use_bucket_count(1)
    client = connect()
    try:
        moved_store = JobStore(client, Settings.from_env({**more, **ENV, "REDIS_URL": url, "OCRGW_STORE_BUCKETS": "1"}))
        assert statuses(moved_store, made) == before
        # One record per tenant and day now, each the sum of the records it was made of, kept as long.
        after = [_text_of(k) for k in client.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:{keys.USAGE}*")]
        assert sorted(k.partition("}:")[2] for k in after) == sorted(tenant_days)
        assert usage_of(moved_store) == used and usage_expiry(client) == used_until
        assert later_entries(client) == waiting
        assert turns_behind_ready(client) == []
        assert bucket_tags_in(client) <= set(keys.bucket_tags(1))
    finally:
        client.close()


def _text_of(key: bytes | str) -> str:
    return key.decode() if isinstance(key, bytes) else key


def test_the_move_is_refused_while_a_process_is_connected(server, counting, tmp_path):
    url = server.url_for(4)
    group = ProcGroup(tmp_path / "stack", redis=server, label="running stack")
    try:
        group.stack(db=4, env=ENV, concurrency=1)
        refused = command(url, 24, "migrate")
        assert refused.returncode == 1
        assert "connected to the store" in refused.stderr and "stop every ocrgw process" in refused.stderr
        assert Redis.from_url(url).get(keys.LAYOUT) is not None  # recorded by the stack, unchanged
        assert recorded(Redis.from_url(url)) == Layout(1)
    finally:
        group.close()


@pytest.mark.parametrize("role", ["web", "worker", "coordinator", "beat", "webhooks"])
def test_a_process_of_another_bucket_count_is_refused_at_start(role, server, counting, tmp_path, monkeypatch):
    url = server.url_for(5)
    Redis.from_url(url).set(keys.LAYOUT, Layout(24).encode())
    monkeypatch.setenv("OCRGW_STORE_BUCKETS", "1")

    output = run_refused(role, url, tmp_path)

    line = (
        "ocrgw: the store is laid out for 24 buckets (key schema 2), and this process for 1 bucket "
        "(key schema 2) (OCRGW_STORE_BUCKETS=1)"
    )
    assert output.count(line) == 1, output
    assert "`ocrgw store migrate`" in output and "Traceback" not in output, output


# -- a redrive's Idempotency-Key across buckets ----------------------------------------------------------

KEYS = {"alpha": "alpha-key", "beta": "beta-key"}


@pytest.fixture(scope="module")
def tenants_on_24_buckets(stack_factory) -> Iterator[dict[str, Gateway]]:
    """A stack whose store has 24 buckets, and a client of its gateway for each of two tenants."""
    env = {"OCRGW_STORE_BUCKETS": "24", "OCRGW_API_KEYS": ",".join(f"{t}:{k}" for t, k in KEYS.items())}
    stack = stack_factory(env)
    clients = {tenant: Gateway(stack.web().base_url) for tenant in KEYS}
    for tenant, client in clients.items():
        client.http.headers["Authorization"] = f"Bearer {KEYS[tenant]}"
    yield clients
    for client in clients.values():
        client.close()


def failed_group(gateway: Gateway) -> str:
    """A group of one child that fails (echo's ``fail``), once it has ended failed."""
    created = gateway.post_json(group_body([echo_child("no", fail=True)], 1))
    assert created.status_code == 202, created.text
    parent = created.json()["id"]
    assert wait_for_job(gateway.job, parent, timeout=WAIT)["status"] == "failed"
    return parent


def retry(gateway: Gateway, parent: str, key: str):
    return gateway.http.post(f"{gateway.base_url}/jobs/{parent}/retry", headers={"Idempotency-Key": key}, timeout=30)


def test_one_key_redrives_one_group_whichever_buckets_the_groups_are_in(tenants_on_24_buckets):
    alpha, beta = tenants_on_24_buckets["alpha"], tenants_on_24_buckets["beta"]
    keys.use_bucket_count(24)
    try:
        first = failed_group(alpha)
        second = failed_group(alpha)
        while keys.bucket_of(second) == keys.bucket_of(first):
            second = failed_group(alpha)
    finally:
        keys.use_bucket_count(None)

    ran = retry(alpha, first, "once")
    assert ran.status_code == 202 and "Idempotent-Replayed" not in ran.headers
    refused = retry(alpha, second, "once")
    assert (refused.status_code, refused.json()["code"]) == (422, "idempotency_key_reused")
    replayed = retry(alpha, first, "once")
    assert replayed.status_code == 202 and replayed.headers["Idempotent-Replayed"] == "true"

    # The first group ran once more; the second was not run again.
    assert wait_for_job(alpha.job, first, timeout=WAIT)["redrives"] == 1
    assert alpha.job(second)["redrives"] == 0 and alpha.job(second)["status"] == "failed"
    # Another tenant's key of the same name is its own.
    theirs = failed_group(beta)
    assert retry(beta, theirs, "once").status_code == 202


# -- on a Redis Cluster ------------------------------------------------------------------------------


def test_on_a_cluster_the_first_start_records_24_buckets_and_another_count_is_refused(
    empty_cluster, redis_server, tmp_path, monkeypatch
):
    cluster = {**empty_cluster.env(), "CELERY_BROKER_URL": redis_server.url_for(9)}
    shown = command(cluster["REDIS_URL"], 24, "layout", more=cluster)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "store: 24 buckets (key schema 2)" in shown.stdout
    with empty_cluster.client() as client:
        assert recorded(client) == Layout(24)

    for name, value in cluster.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("OCRGW_STORE_BUCKETS", "12")
    output = run_refused("web", cluster["REDIS_URL"], tmp_path)

    assert "the store is laid out for 24 buckets (key schema 2), and this process for 12 buckets" in output, output
    assert "Traceback" not in output


def test_on_a_cluster_a_store_moves_to_24_buckets_and_back(empty_cluster, redis_server, counting):
    cluster = {**empty_cluster.env(), "CELERY_BROKER_URL": redis_server.url_for(9)}
    keys.use_bucket_count(1)
    store = JobStore(empty_cluster.client(), Settings.from_env({**cluster, **ENV, "OCRGW_STORE_BUCKETS": "1"}))
    made = jobs_of_every_status(store)
    before, counts = statuses(store, made), tenant_counts(store.redis)
    used, used_until, waiting = usage_of(store), usage_expiry(store.redis), later_entries(store.redis)
    store.redis.close()

    for buckets in (24, 1):
        moved = command(cluster["REDIS_URL"], buckets, "migrate", more=cluster)
        assert moved.returncode == 0, moved.stdout + moved.stderr
        assert f"to {buckets})" in moved.stdout and "job               26 keys" in moved.stdout, moved.stdout
        keys.use_bucket_count(buckets)
        with empty_cluster.client() as client:
            assert recorded(client) == Layout(buckets)
            moved_store = JobStore(client, Settings.from_env({**cluster, **ENV, "OCRGW_STORE_BUCKETS": str(buckets)}))
            assert statuses(moved_store, made) == before
            assert bucket_tags_in(client) <= set(keys.bucket_tags(buckets))
            assert tenant_counts(client) == counts
            assert usage_of(moved_store) == used and usage_expiry(client) == used_until
            assert later_entries(client) == waiting
            assert not list(client.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:usage-moved:*"))
            for tenant in TENANTS:
                again = controls.redrive(
                    moved_store, made[f"{tenant} redriven"], idempotency=REDRIVE_KEY, tenant=tenant
                )
                assert again.replayed


def test_on_a_cluster_the_layout_before_buckets_is_refused(empty_cluster, redis_server):
    cluster = {**empty_cluster.env(), "CELERY_BROKER_URL": redis_server.url_for(9)}
    root = "0" * 32
    with empty_cluster.client() as client:
        client.hset(f"ocrgw:{{{root}}}:job:{root}", "status", "completed")
    refused = command(cluster["REDIS_URL"], 24, "migrate", more=cluster)
    assert refused.returncode == 1
    assert "the store is a Redis Cluster" in refused.stderr and "copying it to other servers" in refused.stderr


# -- behind Sentinel ---------------------------------------------------------------------------------


def test_behind_sentinel_the_layout_is_recorded_on_the_master_and_checked(tmp_path, monkeypatch):
    if find_redis_sentinel() is None:
        pytest.fail("redis-sentinel is needed (scripts/setup.sh --tests installs it)", pytrace=False)
    group = ProcGroup(tmp_path / "sentinels", label="sentinels")
    try:
        sentinels = SentinelSet(group, tmp_path / "sentinels").start()
        behind = sentinels.env(min_replicas=0)
        shown = command(behind["REDIS_URL"], 6, "layout", more=behind)
        assert shown.returncode == 0, shown.stdout + shown.stderr
        with sentinels.primary.client() as master:
            assert recorded(master) == Layout(6)

        for name, value in behind.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("OCRGW_STORE_BUCKETS", "1")
        output = run_refused("worker", behind["REDIS_URL"], tmp_path)
        assert "the store is laid out for 6 buckets (key schema 2), and this process for 1 bucket" in output, output
    finally:
        group.close()


# -- ocrgw up ------------------------------------------------------------------------------------------


def test_ocrgw_up_on_a_store_of_another_count_does_not_start(server, procs, tmp_path):
    url = server.url_for(6)
    Redis.from_url(url).set(keys.LAYOUT, Layout(24).encode())
    env = cli_env(REDIS_URL=url, CELERY_BROKER_URL=url, PORT=str(free_port()), WEB_CONCURRENCY="1")
    env.update(OCRGW_WORKER_CONCURRENCY="1", OCRGW_WORKER_QUEUES="ocr.echo")
    env["GUNICORN_CMD_ARGS"] = " ".join(_gunicorn_isolation_args())

    up = procs.start("ocrgw-up", [*CLI, "up"], env=env)

    assert up.wait(timeout=START_TIMEOUT) != 0, up.log_tail()
    log = up.log_text()
    assert "the store is laid out for 24 buckets (key schema 2), and this process for 1 bucket" in log, log
    assert recorded(Redis.from_url(url)) == Layout(24)  # nothing rewritten
