"""``jobs.store_layout`` on a FakeRedis: the first start records the layout, every later one is held to it.

A real process refused at start (a gateway, a worker) is tests/integration/test_store_layout_live.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import fakeredis
import pytest

from jobs.store_layout import (
    KEY_SCHEMA,
    Layout,
    LayoutMismatch,
    check,
    found_in_keys,
    record,
    record_or_read,
    recorded,
)
from tests.keyspace import keys


@pytest.fixture
def r() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


@pytest.fixture
def counting(bucket_count) -> Iterator[None]:
    """The test sets the process's bucket count as it goes; the suite's comes back after it."""
    yield


def test_the_first_start_records_its_own_layout_and_the_next_ones_check_it(r, counting):
    keys.use_bucket_count(24)
    assert recorded(r) is None
    assert check(r, keys) == Layout(24, KEY_SCHEMA)
    assert r.get(keys.LAYOUT) == b'{"buckets":24,"schema":2}'
    assert check(r, keys) == Layout(24)  # the same count again: accepted, nothing rewritten

    keys.use_bucket_count(1)
    with pytest.raises(LayoutMismatch) as refused:
        check(r, keys)
    message = str(refused.value)
    # Both values named, and the way out.
    assert "24 buckets (key schema 2)" in message and "1 bucket (key schema 2)" in message
    assert "OCRGW_STORE_BUCKETS=1" in message and "OCRGW_STORE_BUCKETS=24" in message
    assert "`ocrgw store migrate`" in message
    assert recorded(r) == Layout(24)  # a refused process records nothing


def test_of_two_first_starts_the_first_record_wins(r, counting, monkeypatch):
    from jobs import store_layout

    keys.use_bucket_count(24)

    def another_process_records_meanwhile(client, keyspace):
        # Between this process's read (no record) and its SET NX, another one records 6 buckets.
        client.set(keys.LAYOUT, Layout(6).encode(), nx=True)
        return None

    monkeypatch.setattr(store_layout, "found_in_keys", another_process_records_meanwhile)
    assert record_or_read(r, keys) == Layout(6)
    with pytest.raises(LayoutMismatch, match="laid out for 6 buckets"):
        check(r, keys)


def test_a_store_without_a_record_is_read_off_its_keys(r, counting):
    # Written with 24 buckets by a version before the record: a job in bucket 5 and an index in bucket 23.
    keys.use_bucket_count(24)
    r.hset(keys.job(keys.child_id("a" * 12 + "0005" + "0" * 16, 1)), "status", "held")
    r.zadd(keys.expiring(23), {"x": 1})
    keys.use_bucket_count(1)
    assert found_in_keys(r, keys) == Layout(24)
    with pytest.raises(LayoutMismatch, match="laid out for 24 buckets"):
        check(r, keys)
    assert recorded(r) == Layout(24)


def test_a_store_of_its_own_count_or_of_no_keys_takes_the_process_s(r, counting):
    keys.use_bucket_count(4)
    assert found_in_keys(r, keys) is None
    r.zadd(keys.leases(3), {"x": 1})
    r.set(keys.DRAINING, "1")  # global keys say nothing of the count
    assert found_in_keys(r, keys) is None
    assert check(r, keys) == Layout(4)


def test_a_store_of_the_layout_before_buckets_is_refused_until_migrated(r, counting):
    keys.use_bucket_count(1)
    r.hset("ocrgw:{" + "0" * 32 + "}:job:" + "0" * 32, "status", "completed")
    with pytest.raises(LayoutMismatch) as refused:
        check(r, keys)
    assert "the layout before buckets (key schema 1)" in str(refused.value)
    assert "`ocrgw store migrate`" in str(refused.value)
    # The migration records the layout it moved the store to; then the process starts.
    record(r, Layout(1))
    assert check(r, keys) == Layout(1)


def test_keys_of_two_counts_fit_none_and_are_read_at_once(r, counting):
    # Stranded keys of 1 bucket beside a 24-bucket store's: no count has both tags, and the search is bounded.
    keys.use_bucket_count(24)
    r.zadd(keys.leases(23), {"x": 1})
    keys.use_bucket_count(1)
    r.zadd(keys.leases(0), {"x": 1})
    keys.use_bucket_count(7)
    assert found_in_keys(r, keys) is None


def test_a_process_of_another_count_stops_with_one_line_and_one_whose_store_is_down_starts(
    r, counting, monkeypatch, capsys
):
    from jobs import connections
    from jobs.config import Settings
    from jobs.store_layout import exit_if_mismatched

    record(r, Layout(24))
    monkeypatch.setattr(connections, "redis_client", lambda settings, **options: r)
    with pytest.raises(SystemExit) as stopped:
        exit_if_mismatched(Settings(store_buckets=1), exit_code=3)
    assert stopped.value.code == 3
    assert capsys.readouterr().err.count("ocrgw: the store is laid out for 24 buckets") == 1
    exit_if_mismatched(Settings(store_buckets=24))  # the store's own count: starts

    monkeypatch.undo()
    # Nothing listens on port 9: the process starts unchecked, as it rides out the outage.
    exit_if_mismatched(Settings(redis_url="redis://127.0.0.1:9/0", store_buckets=1))
    assert "the store's layout is unchecked, the store does not answer" in capsys.readouterr().err


def test_a_record_of_a_later_schema_or_of_no_layout_is_refused_plainly(r, counting):
    keys.use_bucket_count(1)
    record(r, Layout(1, KEY_SCHEMA + 1))
    with pytest.raises(LayoutMismatch, match="written by a later version of ocrgw"):
        check(r, keys)
    r.set(keys.LAYOUT, "not json")
    with pytest.raises(LayoutMismatch, match="is not one ocrgw wrote"):
        check(r, keys)
