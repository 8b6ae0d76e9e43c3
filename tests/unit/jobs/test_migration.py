"""``jobs.migration`` on a FakeRedis: where each key of the layout before buckets goes, the Idempotency-Key
records of a redrive, what in flight refuses a run, and the command's refusal of a cluster.

The old keys are spelled here as the version before buckets (commit 3c6f2fd) spelled them; the run on
a store that version really wrote is tests/integration/test_store_migration.py.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import fakeredis
import pytest
from click.testing import CliRunner

from cli.main import main
from jobs.ids import new_job_id, tenant_tag
from jobs.migration import Migration, MigrationRefused, describe, is_current_key, old_key
from tests.keyspace import keys

ROOT = new_job_id("acme")
TAG = tenant_tag("acme")


@pytest.fixture(params=[1, 24])
def count(request, bucket_count, spread) -> Iterator[int]:
    keys.use_bucket_count(request.param)
    yield request.param


@pytest.fixture
def r() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


def old_group(root: str, rest: str) -> str:
    return f"ocrgw:{{{root}}}:{rest}"


def old_idempotency(tenant: str, key: str) -> str:
    return "ocrgw:idem:" + hashlib.sha256(f"{tenant}:{key}".encode()).hexdigest()


def test_each_key_of_the_old_layout_has_its_new_one(count):
    child = keys.child_id(ROOT, 2)
    whole = {
        old_group(ROOT, f"job:{child}"): keys.job(child),
        old_group(ROOT, f"payload:{ROOT}"): keys.payload(ROOT),
        old_group(ROOT, f"result:{child}"): keys.result(child),
        old_group(ROOT, f"pdf:{ROOT}"): keys.pdf(ROOT),
        old_group(ROOT, f"pdf_asked:{ROOT}"): keys.pdf_asked(ROOT),
        old_group(ROOT, "call:abc123"): keys.call(ROOT, "abc123"),
        old_group(ROOT, "children:completed"): keys.children(ROOT, "completed"),
        old_group(ROOT, "events"): keys.events(ROOT),
        "ocrgw:wakeups:echo:batch": keys.wakeups(0, "echo", "batch"),
        "ocrgw:pull_call:abc": keys.pull_call(0, "abc"),
        "ocrgw:workers": keys.WORKERS,
        "ocrgw:workers:celery@host:12": keys.worker_report("celery@host:12"),
    }
    for old, new in whole.items():
        found = old_key(old, keys)
        assert found is not None and found.to == new, old
        assert old_key(new, keys) is None and is_current_key(new, keys), new
    split = {
        "ocrgw:expiring": keys.expiring(keys.bucket_of(ROOT)),
        "ocrgw:webhooks": keys.webhooks(keys.bucket_of(ROOT)),
        f"ocrgw:roots:{TAG}:parent:completed": keys.roots("parent", "completed", TAG, keys.bucket_of(ROOT)),
        "ocrgw:ready:my:model:interactive": keys.ready(keys.bucket_of(ROOT), "my:model", "interactive"),
        f"ocrgw:tenant:{TAG}:webhooks_in_flight": keys.tenant_webhooks(TAG, keys.bucket_of(ROOT)),
    }
    for old, new in split.items():
        found = old_key(old, keys)
        assert found is not None and found.split is not None and found.split(ROOT) == new, old
        assert found.split(keys.child_id(ROOT, 7)) == new, "a child goes with its root"
    for global_key in (keys.DRAINING, keys.GAUGES):
        assert old_key(global_key, keys) is None and is_current_key(global_key, keys)
    assert old_key("celery", keys) is None and not is_current_key("ocrgw:something:else", keys)


def test_indexes_split_by_their_members_buckets_and_keep_scores_and_ttls(r, count):
    roots = [new_job_id("acme") for _ in range(40)]
    r.zadd("ocrgw:expiring", {root: i for i, root in enumerate(roots)})
    r.zadd(f"ocrgw:tenant:{TAG}:webhooks_in_flight", {roots[0]: 5, roots[1]: 6})
    r.pexpire(f"ocrgw:tenant:{TAG}:webhooks_in_flight", 50_000)
    r.set("ocrgw:sweep:lock", "token", px=10_000)

    report = Migration(r, keyspace=keys).run()

    for i, root in enumerate(roots):
        assert r.zscore(keys.expiring(keys.bucket_of(root)), root) == i
    assert report.members["expiring"] == 40 and report.dropped["sweep lock"] == 1
    for root in roots[:2]:
        claims = keys.tenant_webhooks(TAG, keys.bucket_of(root))
        assert r.zscore(claims, root) is not None and 0 < r.pttl(claims) <= 50_000
    assert [k.decode() for k in r.scan_iter() if old_key(k.decode(), keys)] == []
    assert Migration(r, keyspace=keys).run().old_keys == 0, "a second run finds nothing"


def test_a_redrives_record_goes_to_its_keys_bucket_as_a_creations_does(r, count):
    r.hset(old_group(ROOT, f"job:{ROOT}"), mapping={"id": ROOT, "tenant": "acme", "idempotency_key": "create-1"})
    r.hset(old_idempotency("acme", "create-1"), mapping={"id": ROOT, "fingerprint": "f1"})
    r.hset(old_idempotency("acme", "redrive-1"), mapping={"id": ROOT, "fingerprint": "f2"})
    gone = new_job_id("acme")
    r.hset(old_idempotency("acme", "lapsed-job"), mapping={"id": gone, "fingerprint": "f3"})

    report = Migration(r, keyspace=keys).run()

    key_bucket = int(hashlib.sha256(b"acme:create-1").hexdigest()[:8], 16) % count
    assert r.hget(keys.idempotency("acme", "create-1", key_bucket), "fingerprint") == b"f1"
    # Where a redrive with the key now takes it first (reserve_key), whichever bucket its group is in.
    assert r.hget(keys.idempotency("acme", "redrive-1"), "fingerprint") == b"f2"
    gone_bucket = int(hashlib.sha256(b"acme:lapsed-job").hexdigest()[:8], 16) % count
    assert r.hget(keys.idempotency("acme", "lapsed-job", gone_bucket), "fingerprint") == b"f3"
    assert report.idempotency == {"creation": 1, "redrive": 1, "job gone": 1}
    assert any("none dropped" in line for line in describe(report))


def test_work_in_flight_refuses_a_run_and_says_what_it_is(r, count):
    processing = new_job_id("acme")
    r.hset(old_group(processing, f"job:{processing}"), mapping={"id": processing, "status": "processing"})
    r.zadd("ocrgw:leases", {processing: 123})
    r.set(f"ocrgw:tenant:{TAG}:in_flight", 2)
    r.hset(old_group(ROOT, f"job:{ROOT}-0"), mapping={"id": f"{ROOT}-0", "status": "held"})
    before = sorted(r.scan_iter())

    with pytest.raises(MigrationRefused) as refused:
        Migration(r, keyspace=keys).run()

    said = str(refused.value)
    assert "1 lease in the store" in said
    assert f"tenant {TAG} counts 2 jobs in flight" in said
    assert f"1 job processing ({processing})" in said and f"1 job held ({ROOT}-0)" in said
    assert sorted(r.scan_iter()) == before, "nothing moved"


def test_a_store_with_nothing_old_is_left_as_it_is(r, count):
    r.hset(keys.job(ROOT), mapping={"id": ROOT, "status": "processing"})  # the new version at work
    report = Migration(r, keyspace=keys).run()
    assert report.old_keys == 0 and report.current == 1
    assert "nothing to migrate" in describe(report)[1]


def test_the_command_on_a_cluster_reads_its_settings_before_touching_it(monkeypatch):
    # The move between bucket counts runs on a cluster; the layout before buckets is refused there
    # (tests/integration/test_store_layout_live.py).  A cluster's settings want its broker set apart.
    monkeypatch.setenv("OCRGW_REDIS_CLUSTER", "127.0.0.1:1")
    monkeypatch.delenv("CELERY_BROKER_URL", raising=False)
    result = CliRunner().invoke(main, ["store", "migrate"])
    assert result.exit_code == 1
    assert "CELERY_BROKER_URL" in result.output
