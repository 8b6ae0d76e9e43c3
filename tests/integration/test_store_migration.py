"""``ocrgw store migrate`` on a store the version before buckets wrote, on a real redis-server.

The fixtures ``tests/fixtures/old_layout_store.json`` and
``old_layout_store_in_flight.json`` were made once with the code of commit
3c6f2fd (main before the merge of branch ``buckets``), run from a temporary
worktree of that commit against a private redis-server 7.0, by
``tests/fixtures/make_old_layout_store.py`` (its docstring has the commands):
for two tenants, ``acme`` and ``globex``, a completed single job, a completed
group of 3 children, a completed job created with an Idempotency-Key, a
failed job and a completed job with a webhook owed (``callback_url``); the
second file has one more job of ``acme`` left queued.  Each key is kept as
its DUMP and PTTL, and RESTOREd here.

The tests run the command as a subprocess, then read every job through the
current code (``JobStore``, ``JobQueries``) with 1 bucket and with 24; they
cut runs short at every write and check that a second run finishes them
alike; and they check the refusals (a queued job; a Redis Cluster).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from jobs import webhooks
from jobs.config import Settings
from jobs.migration import Migration, MigrationRefused, is_current_key
from jobs.records import Idempotency, NewJob, Owner
from jobs.store import JobStore
from tests.keyspace import keys
from tests.redis_cluster import cluster_port

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OLD_STORE = FIXTURES / "old_layout_store.json"
OLD_STORE_IN_FLIGHT = FIXTURES / "old_layout_store_in_flight.json"
CLI = [sys.executable, "-m", "cli", "store", "migrate"]
REPO = Path(__file__).resolve().parents[2]
TENANTS = ("acme", "globex")

pytestmark = pytest.mark.integration


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


HOUR_MS = 3_600_000


def restore(client: Redis, fixture: dict[str, Any]) -> None:
    """The fixture's keys; those with a TTL keep one, of an hour, so that none lapses during a test however
    slow the machine (a call record's was seconds when it was dumped)."""
    client.flushdb()
    for key, kept in fixture["keys"].items():
        ttl = HOUR_MS if int(kept["pttl"]) > 0 else 0
        client.restore(key, ttl, base64.b64decode(kept["dump"]))


def migrate(url: str, buckets: int, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OCRGW_", "REDIS_"))}
    env.update(REDIS_URL=url, OCRGW_STORE_BUCKETS=str(buckets), PYTHONPATH=str(REPO))
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)


@pytest.fixture
def redis_url(redis_server_factory) -> str:
    """A private redis-server's: the session's database 0 is the shared stack's, whose coordinator would
    deliver the fixture's owed webhooks (and rewrite their jobs) while a test compares snapshots."""
    return redis_server_factory().url


@pytest.fixture
def buckets_of(request) -> Iterator[Callable[[int], None]]:
    """Sets this process's bucket count for the test (``keys.use_bucket_count``), and unsets it after."""
    yield keys.use_bucket_count
    keys.use_bucket_count(None)


def snapshot(client: Redis) -> dict[str, Any]:
    """Every key, its content by type, and whether it has a TTL."""
    found: dict[str, Any] = {}
    for raw in client.scan_iter(count=1000):
        key = raw.decode()
        named = client.type(key)
        kind = named.decode() if isinstance(named, bytes) else named
        if kind == "zset":
            content: Any = client.zrange(key, 0, -1, withscores=True)
        elif kind == "hash":
            content = client.hgetall(key)
        elif kind == "stream":
            content = client.xrange(key)
        elif kind == "string":
            content = client.get(key)
        else:
            content = client.dump(key)
        found[key] = (kind, content, client.pttl(key) > 0)
    return found


@pytest.mark.parametrize("count", [1, 24])
def test_an_old_store_reads_as_it_was_after_the_migration(redis_url, buckets_of, count):
    fixture = load(OLD_STORE)
    made = fixture["made"]
    client = Redis.from_url(redis_url)
    restore(client, fixture)

    dry = migrate(redis_url, count, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would move" in dry.stdout and "nothing moved" in dry.stdout
    assert set(snapshot(client)) == set(fixture["keys"]), "a dry run moves nothing"

    done = migrate(redis_url, count)
    assert done.returncode == 0, done.stderr
    print(done.stdout)
    assert "moved:" in done.stdout
    assert "Idempotency-Key records: 2 to the bucket of their (tenant, key)" in done.stdout

    buckets_of(count)
    leftover = [k.decode() for k in client.scan_iter(count=1000) if not is_current_key(k.decode(), keys)]
    assert leftover == [], "every key is in the new layout"

    store = JobStore(client, Settings(store_buckets=count))
    queries = store.queries
    for tenant in TENANTS:
        mine = made[tenant]
        for name in ("single", "keyed", "hooked"):
            view = queries.get(mine[name], tenant)
            assert view is not None and view["status"] == "completed", (name, view)
            result = queries.result(mine[name])
            assert result is not None and result["text"] == f"{name} of {tenant}"
        failed = queries.get(mine["failed"], tenant)
        assert failed is not None and failed["status"] == "failed" and failed["error_code"] == "document_unreadable"

        parent = queries.get(mine["group"], tenant)
        assert parent is not None and parent["status"] == "completed" and parent["total"] == "3"
        page = queries.children_page(mine["group"], 0, 10)
        assert [row["id"] for row in page.children] == [f"{mine['group']}-{i}" for i in range(3)]
        results = queries.children_with_results(mine["group"], 3)
        assert [r["text"] for _, r in results if r is not None] == [f"child {i} of {tenant}" for i in range(3)]
        events = queries.events(mine["group"])
        assert {e["job_id"] for e in events} >= {mine["group"], *(f"{mine['group']}-{i}" for i in range(3))}
        assert [(e["operation"], e["status"]) for e in queries.events(mine["single"])] == [("job", "completed")]

        # Newest first, two a page: the creation order reversed, through the cursor.
        listed, cursor = [], None
        while True:
            got = queries.list_jobs(limit=2, cursor=cursor, tenant=tenant)
            listed += [row["id"] for row in got.jobs]
            cursor = got.next_cursor
            if cursor is None:
                break
        assert listed == [mine[n] for n in ("hooked", "failed", "keyed", "group", "single")]

        # The Idempotency-Key replays its job, wherever its record and its job are.
        idem = mine["idempotency"]
        again = store.create_single(
            NewJob(model="echo", content_type="text/plain", payload=b"anything"),
            Idempotency(idem["key"], idem["fingerprint"]),
            Owner(tenant=tenant),
        )
        assert again.replayed and again.job_id == mine["keyed"]

    owed = webhooks.pending(store)
    assert set(owed) == {made[t]["hooked"] for t in TENANTS}
    for tenant in TENANTS:
        for name in ("single", "group", "keyed", "failed", "hooked"):
            root = made[tenant][name]
            assert client.zscore(keys.expiring(keys.bucket_of(root)), root) is not None, (tenant, name)

    twice = migrate(redis_url, count)
    assert twice.returncode == 0, twice.stderr
    assert "nothing to migrate" in twice.stdout


class Cut(Exception):
    """A run cut short, as a SIGKILL would cut it between two writes."""


class CutAt:
    """A migration's ``step``: raises ``Cut`` before write number ``cut`` (from 0)."""

    def __init__(self, cut: int):
        self.cut, self.writes = cut, 0

    def __call__(self) -> None:
        if self.writes == self.cut:
            raise Cut
        self.writes += 1


@pytest.mark.parametrize("count", [1, 24])
def test_a_run_cut_short_anywhere_is_finished_by_the_next(redis_url, buckets_of, count):
    """Each write is atomic on the server, so a process killed mid-run leaves what an exception there
    leaves: every cut point (one key a write here), then a whole run, ends in the store an uncut run makes."""
    fixture = load(OLD_STORE)
    client = Redis.from_url(redis_url)
    buckets_of(count)
    restore(client, fixture)
    Migration(client, keyspace=keys).run()
    expected = snapshot(client)

    cut = 0
    while True:
        restore(client, fixture)
        try:
            Migration(client, step=CutAt(cut), batch=1, keyspace=keys).run()
        except Cut:
            Migration(client, keyspace=keys).run()
            assert snapshot(client) == expected, f"cut before write {cut}"
            cut += 1
            continue
        break
    assert cut > len(fixture["keys"]) // 2, "the cuts went over the whole run"


def test_a_run_killed_mid_way_is_finished_by_the_next(redis_url, buckets_of):
    """A real SIGKILL of the command once it has begun to move keys, on a store of 10,000 roots (copies of
    one old job): a pipeline of RENAMEs may be cut anywhere."""
    fixture = load(OLD_STORE)
    single = fixture["made"]["acme"]["single"]
    client = Redis.from_url(redis_url)
    client.flushdb()
    group_keys = {k: v for k, v in fixture["keys"].items() if k.startswith(f"ocrgw:{{{single}}}:") and v["pttl"] < 0}
    roots = [single[:12] + os.urandom(10).hex() for _ in range(10_000)]
    pipe = client.pipeline(transaction=False)
    for root in roots:
        for key, kept in group_keys.items():
            pipe.restore(key.replace(single, root), 0, base64.b64decode(kept["dump"]))
        pipe.zadd("ocrgw:expiring", {root: 1})
    pipe.execute()
    total = client.dbsize()

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OCRGW_", "REDIS_"))}
    env.update(REDIS_URL=redis_url, OCRGW_STORE_BUCKETS="24", PYTHONPATH=str(REPO))
    run = subprocess.Popen([*CLI], env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    buckets_of(24)
    try:
        deadline = time.monotonic() + 60
        # Until the first job's hash is in a bucket: the index is split by then, the keys are being moved.
        while not any(is_current_key(k.decode(), keys) for k in client.scan_iter(match="ocrgw:{b*:job:*", count=1000)):
            assert time.monotonic() < deadline and run.poll() is None, "the run never began"
            time.sleep(0.01)
        run.send_signal(signal.SIGKILL)
    finally:
        run.wait()
    old_left = [k for k in client.scan_iter(count=1000) if not is_current_key(k.decode(), keys)]
    assert old_left, "killed mid-way, not after the end (make the store bigger)"
    print(f"killed with {len(old_left)} of {total} keys left to move")

    finished = migrate(redis_url, 24)
    assert finished.returncode == 0, finished.stderr
    # Every key moved, the old expiring index split into one per bucket its roots are in; the layout recorded.
    assert client.dbsize() == total - 1 + len({keys.bucket_of(root) for root in roots}) + 1
    assert client.get(keys.LAYOUT) == b'{"buckets":24,"schema":2}'
    assert [k for k in client.scan_iter(count=1000) if not is_current_key(k.decode(), keys)] == []
    for root in roots:
        assert client.exists(keys.job(root), keys.events(root)) == 2
        assert client.zscore(keys.expiring(keys.bucket_of(root)), root) == 1


def test_a_queued_job_refuses_the_migration(redis_url, buckets_of):
    fixture = load(OLD_STORE_IN_FLIGHT)
    client = Redis.from_url(redis_url)
    restore(client, fixture)
    before = snapshot(client)

    refused = migrate(redis_url, 24)
    assert refused.returncode == 1
    assert "refused" in refused.stderr
    assert f"1 job queued ({fixture['made']['queued']})" in refused.stderr
    assert "1 queued entry in the store" in refused.stderr
    assert "gateway.drain on" in refused.stderr
    assert snapshot(client).keys() == before.keys(), "nothing moved"

    buckets_of(24)
    with pytest.raises(MigrationRefused):
        Migration(client, dry_run=True, keyspace=keys).run()


def test_a_cluster_is_refused(redis_server_factory):
    # A port whose cluster bus port (+10000) is free too: past 55535 the node could not start.
    node = redis_server_factory(extra_args=["--cluster-enabled", "yes"], port=cluster_port())
    refused = migrate(node.url, 24)
    said = refused.stdout + refused.stderr
    assert refused.returncode == 1, said
    assert "Redis Cluster" in refused.stderr and "copying it to other servers" in refused.stderr, said
