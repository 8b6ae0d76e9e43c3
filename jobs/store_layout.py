"""The store's layout: how many buckets its keys are spread over, and the schema of its keys.

Where every key lives follows from the bucket count (jobs.keys), and the
count comes from each process's own settings (``OCRGW_STORE_BUCKETS``, whose
default moves from 1 to 24 with ``OCRGW_REDIS_CLUSTER``).  A process that
counts otherwise than the processes that wrote the store looks for every
job in the wrong place, and the jobs already there are stranded.  So the
store keeps its layout in a key of its own (``keys.LAYOUT``, in a slot of
its own on a cluster): the bucket count and the key schema version, as one
value.

The first process to start records it (``SET NX``: of several starting at
once, one records and the rest read what it recorded).  Every process
checks it at start (``check``: the gateway as its app is made, a worker,
the coordinator and beat as Celery starts them, ``ocrgw store layout``) and
refuses to start on a mismatch, naming both layouts and ``ocrgw store
migrate``, which moves the store to the configured layout and records it.

A store with keys and no record was written by a version before the
record: its first start reads the layout off its keys (their bucket tags,
a scan done once, while the record is absent) rather than taking its own,
so that a store written with another count is refused too.  A store without
keys takes the process's own layout.  Once recorded, the layout changes
only by ``ocrgw store migrate``; a store emptied (FLUSHDB) records afresh.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from redis.exceptions import RedisClusterException, RedisError

from jobs import connections, keys
from jobs.connections import StoreClient
from jobs.errors import OcrgwError
from jobs.keys import Keyspace

if TYPE_CHECKING:
    from jobs.config import Settings

#: The version of the key schema this code writes: 1 was the layout before buckets (each root under its
#: own hash tag, jobs.migration), 2 is the bucket layout of jobs.keys.
KEY_SCHEMA = 2
#: The layout before buckets: it had no bucket count.
BEFORE_BUCKETS = 1

_BUCKET_TAG = re.compile(r"b(\d+)\.[0-9a-f]+")
_ROOT_TAG = re.compile(r"[0-9a-f]{32}")
_SCAN_COUNT = 1000


class LayoutMismatch(OcrgwError):
    """Raised when the store was written with another bucket count or key schema than this process's."""

    code = "store_layout_mismatch"


@dataclass(frozen=True)
class Layout:
    buckets: int
    schema: int = KEY_SCHEMA

    def __str__(self) -> str:
        if self.schema == BEFORE_BUCKETS:
            return "the layout before buckets (key schema 1)"
        return f"{self.buckets} bucket{'s' if self.buckets != 1 else ''} (key schema {self.schema})"

    def encode(self) -> str:
        return json.dumps({"buckets": self.buckets, "schema": self.schema}, separators=(",", ":"))

    @classmethod
    def decode(cls, raw: bytes | str) -> Layout:
        value = json.loads(raw)
        return cls(int(value["buckets"]), int(value["schema"]))


def configured(keyspace: Keyspace) -> Layout:
    """This process's layout: its keyspace's bucket count and this code's schema."""
    return Layout(keyspace.bucket_count)


def recorded(client: StoreClient) -> Layout | None:
    """The layout the store records; None before any process recorded one."""
    raw = client.get(keys.LAYOUT)
    if raw is None:
        return None
    try:
        return Layout.decode(raw)
    except (ValueError, KeyError, TypeError):
        raise LayoutMismatch(
            f"the store's layout record ({keys.LAYOUT}) is not one ocrgw wrote: {raw!r}; delete it only if "
            "the store holds nothing, or was written with this process's OCRGW_STORE_BUCKETS"
        ) from None


def record(client: StoreClient, layout: Layout) -> None:
    """Records ``layout`` whatever was recorded: for ``ocrgw store migrate`` once the keys are moved."""
    client.set(keys.LAYOUT, layout.encode())


def found_in_keys(client: StoreClient, keyspace: Keyspace) -> Layout | None:
    """The layout the store's keys were written with, read off their hash tags; None for a store
    without any, or whose tags fit the configured count (or no count)."""
    tags: dict[str, int] = {}
    for raw in client.scan_iter(match=f"{keys.NAMESPACE}:{{*", count=_SCAN_COUNT):
        key = raw.decode() if isinstance(raw, bytes) else raw
        tag = key[len(keys.NAMESPACE) + 2 :].partition("}")[0]
        if _ROOT_TAG.fullmatch(tag):
            return Layout(0, BEFORE_BUCKETS)
        bucket = _BUCKET_TAG.fullmatch(tag)
        if bucket is not None:
            tags[tag] = int(bucket.group(1))
    if not tags or set(tags) <= set(keys.bucket_tags(keyspace.bucket_count)):
        return None
    slots = [(keys.slot_of(tag), i) for tag, i in tags.items()]
    for count in range(max(tags.values()) + 1, keys.MAX_BUCKETS + 1):
        # Each tag's slot in its bucket's range first (cheap), then the tags themselves (the first that fit).
        if all(keys.in_bucket_range(slot, i, count) for slot, i in slots) and set(tags) <= set(keys.bucket_tags(count)):
            return Layout(count)
    return None  # keys of more than one count (some stranded already): taken as of none


def record_or_read(client: StoreClient, keyspace: Keyspace) -> Layout:
    """The store's layout, recorded first if no process did yet (race-free: the first ``SET NX`` wins)."""
    current = recorded(client)
    if current is not None:
        return current
    proposed = found_in_keys(client, keyspace) or configured(keyspace)
    client.set(keys.LAYOUT, proposed.encode(), nx=True)
    # This process's, or that of one that won the race; the store emptied meanwhile records nothing.
    return recorded(client) or proposed


def mismatch(store: Layout, process: Layout) -> str:
    """What a process refused for a mismatch says: both layouts, and what to do."""
    if store.schema > process.schema:
        fix = "it was written by a later version of ocrgw: run that version, or a later one"
    elif store.schema == BEFORE_BUCKETS:
        fix = f"stop every ocrgw process and run `ocrgw store migrate` to move the store onto {process}"
    else:
        fix = (
            f"set OCRGW_STORE_BUCKETS={store.buckets} to use the store as it is, or stop every ocrgw process "
            f"and run `ocrgw store migrate` to move the store onto {process}"
        )
    return (
        f"the store is laid out for {store}, and this process for {process} "
        f"(OCRGW_STORE_BUCKETS={process.buckets}): {fix}"
    )


def check(client: StoreClient, keyspace: Keyspace) -> Layout:
    """Records the store's layout if none is, and raises ``LayoutMismatch`` unless it is this process's."""
    store, process = record_or_read(client, keyspace), configured(keyspace)
    if store != process:
        raise LayoutMismatch(mismatch(store, process))
    return store


def exit_if_mismatched(settings: Settings, exit_code: int = 1) -> None:
    """At a process's start: stops it with one line on stderr, and ``exit_code``, on a layout mismatch.

    A store that does not answer is left to the usual retries, as in ``jobs.redis_access``: the
    process starts unchecked rather than not at all.
    """
    client: StoreClient | None = None
    try:
        # A cluster's client asks its seeds for the slot map as it is made: inside the try too.
        client = connections.redis_client(settings, socket_connect_timeout=5, socket_timeout=30)
        check(client, Keyspace(settings.store_buckets))
    except LayoutMismatch as error:
        print(f"ocrgw: {error}", file=sys.stderr, flush=True)
        raise SystemExit(exit_code) from None
    except (RedisError, RedisClusterException) as error:
        print(f"ocrgw: the store's layout is unchecked, the store does not answer: {error}", file=sys.stderr)
    finally:
        if client is not None:
            client.close()
