"""The store's keys as the tests name them: ``keys``, one ``Keyspace`` that also answers jobs.keys' module names.

A test reads a key the way the code under test builds it, ``keys.job(job_id)``
or ``keys.CHILDREN``, without building a keyspace of its own: ``keys`` has the
bucket count of the store the tests talk to, the environment's
(``OCRGW_STORE_BUCKETS``, as ``Settings.from_env`` reads it) unless a test says
otherwise with ``keys.use_bucket_count``.  The unit tests set it once to
``OCRGW_TEST_STORE_BUCKETS`` (tests/unit/conftest.py); a test of several counts
sets its own and puts the suite's back.

The store itself holds no such setting: each JobStore builds its keyspace from
its own settings, and the tests hand this one to what takes a keyspace.
"""

from __future__ import annotations

from typing import Any

from jobs import keys as key_shapes
from jobs.config import Settings
from jobs.keys import Keyspace


def environment_bucket_count() -> int:
    """The bucket count the environment gives the store's processes."""
    return Settings.from_env().store_buckets


class TestKeys(Keyspace):
    """A keyspace whose count a test may change, and jobs.keys' constants and count-free builders."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        super().__init__(environment_bucket_count())

    def use_bucket_count(self, count: int | None) -> None:
        """Names the keys of a store of ``count`` buckets from now on (None: the environment's again)."""
        super().__init__(environment_bucket_count() if count is None else count)

    def __getattr__(self, name: str) -> Any:
        # Only what the keyspace itself lacks: jobs.keys' constants and its builders that need no count.
        return getattr(key_shapes, name)


keys = TestKeys()
