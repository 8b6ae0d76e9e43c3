"""The unit tests' bucket count: ``OCRGW_TEST_STORE_BUCKETS`` (default 1), set before any test module
builds a key, so that the whole suite runs with one bucket or with many.

The store's behaviour must not depend on the count.  With many, the tenant cap is dealt out to the
buckets by each tenant's quota ledger (jobs.tenant_quota), so the tests of the cap run with its ledger:
every unit test holds with either count.

With many buckets, every root a test creates goes to one bucket, ``PINNED_BUCKET`` (not bucket 0, so that
a key built in the wrong bucket shows): the order in which workers take ready jobs is per bucket, and
the tests that say which job a worker takes next compare jobs of several roots.  The tests that spread
roots over the buckets (tests/unit/jobs/test_buckets.py) say so with the ``spread`` fixture.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from jobs import ids, store
from jobs.keys import Keyspace
from tests.keyspace import keys

TEST_BUCKETS = int(os.environ.get("OCRGW_TEST_STORE_BUCKETS", "1"))
keys.use_bucket_count(TEST_BUCKETS)
PINNED_BUCKET = 0 if TEST_BUCKETS == 1 else TEST_BUCKETS * 2 // 3


_REAL = (ids.new_job_id, Keyspace.bucket_of_idempotency)


def _pinned_new_job_id(
    tenant: str = ids.DEFAULT_TENANT, bucket: int | None = None, bucket_count: int | None = None
) -> str:
    return _REAL[0](tenant, PINNED_BUCKET, TEST_BUCKETS)


def _pinned_bucket_of_idempotency(keyspace: Keyspace, tenant: str, key: str) -> int:
    return PINNED_BUCKET


def _pin(on: bool) -> None:
    if on:
        store.new_job_id, Keyspace.bucket_of_idempotency = _pinned_new_job_id, _pinned_bucket_of_idempotency  # type: ignore[method-assign,assignment]
    else:
        store.new_job_id, Keyspace.bucket_of_idempotency = _REAL  # type: ignore[method-assign]


@pytest.fixture(scope="session", autouse=True)
def pinned_bucket() -> Iterator[None]:
    """With many buckets, the roots a test creates (with an Idempotency-Key or not) go to PINNED_BUCKET.

    Session-scoped (hypothesis refuses function-scoped fixtures); ``spread`` lifts it for a test.
    """
    _pin(TEST_BUCKETS > 1)
    yield
    _pin(False)


@pytest.fixture
def spread() -> Iterator[None]:
    """The roots the test creates go to their own buckets, as outside the tests."""
    _pin(False)
    yield
    _pin(TEST_BUCKETS > 1)


@pytest.fixture
def bucket_count() -> Iterator[None]:
    """Restores the suite's bucket count after a test that sets its own (``keys.use_bucket_count``)."""
    yield
    keys.use_bucket_count(TEST_BUCKETS)
