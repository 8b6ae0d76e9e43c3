"""Acknowledging a creation only once replicas have it (``OCRGW_MIN_REPLICAS``).

Redis replicates asynchronously: a primary that dies right after a write
may take it with it, and the replica promoted in its place never saw it.
``WAIT n timeout`` blocks the calling connection until n replicas have
acknowledged every write that connection made, so the gateway answers 202
for a job only once a failover can no longer lose it.

On a Redis Cluster each primary has replicas of its own, so the WAIT must go
to the primary that took the write, on the connection that made it: the
transition, the mark and WAIT go in one pipeline of that primary's own client
(redis-py's cluster client would send a WAIT of its own to whichever node it
likes).  A pipeline whose transition's function was missing on its server
did not run it: the library is loaded there and the three sent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import suppress
from copy import copy
from typing import Any

from redis import Redis
from redis.cluster import RedisCluster
from redis.exceptions import (
    ClusterDownError,
    MovedError,
    ReadOnlyError,
    RedisClusterException,
    RedisError,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from jobs import keys
from jobs.connections import StoreClient
from jobs.transitions.scripts import LOAD_ATTEMPTS, FunctionMissing, Scripts, is_missing
from jobs.transitions.spec import Transition

# What a write and its WAIT sent straight to a cluster's primary meet while the slot changes hands:
# the primary gone (a lost connection, a timeout), the slot served elsewhere now (MOVED), the
# cluster failing it over (CLUSTERDOWN, TRYAGAIN), the client's map naming no owner yet, or naming
# as a primary a node that is a replica now (READONLY, to the library's load).  The map is
# refreshed and the three are sent again, to the slot's owner then: safe, as a repeated create
# answers as a replay.
_CLUSTER_RETRIED = (
    RedisConnectionError,
    RedisTimeoutError,
    MovedError,
    ReadOnlyError,
    ClusterDownError,
    TryAgainError,
    SlotNotCoveredError,
)
# How long a cluster's replication mark (a key) is kept: nobody reads it, each creation in its slot
# sets it again, and it must not outlive a deleted bucket for long.
MARK_MS = 60_000


def write_and_wait(
    client: StoreClient,
    scripts: Scripts,
    transition: Transition,
    named_keys: Mapping[str, str],
    args: Mapping[str, Any],
    wanted: int,
    wait_ms: int,
    mark_key: str,
    mark_value: str,
) -> tuple[Any, int]:
    """Runs ``transition``, then a mark, then ``WAIT wanted wait_ms``, on one connection; returns the
    transition's raw reply and how many replicas confirmed.

    WAIT counts the replicas that reached this connection's last write, the
    mark, which follows the transition's writes (or, for a replay, which
    writes nothing, the original ones) in the replication stream.  On one
    Redis the mark is a PUBLISH; on a cluster, where a PUBLISH does not move
    the replication offset, it is ``SET mark_key``, which must share the slot
    of the transition's keys, and everything goes to that slot's primary.
    """
    if isinstance(client, RedisCluster):
        return _write_and_wait_on_cluster(
            client, scripts, transition, named_keys, args, wanted, wait_ms, mark_key, mark_value
        )
    # Loaded first, once: a call that found its function missing would have waited for the replicas in vain.
    scripts.load_once(transition, client)
    for attempt in range(1, LOAD_ATTEMPTS + 1):
        pipe = client.pipeline(transaction=False)
        scripts.queue(pipe, transition, keys=named_keys, args=args)
        pipe.publish(keys.REPLICATION_MARK, mark_value)
        pipe.execute_command("WAIT", wanted, wait_ms)
        # A connection lost on the way re-runs the three (the client's retry): a repeated create is a replay.
        try:
            raw, _, confirmed = pipe.execute()
            return raw, int(confirmed)
        except ResponseError as error:
            if not is_missing(error) or attempt == LOAD_ATTEMPTS:
                raise
            scripts.load(transition, client)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _write_and_wait_on_cluster(
    client: RedisCluster,
    scripts: Scripts,
    transition: Transition,
    named_keys: Mapping[str, str],
    args: Mapping[str, Any],
    wanted: int,
    wait_ms: int,
    mark_key: str,
    mark_value: str,
) -> tuple[Any, int]:
    first_key = transition.pack(named_keys, args)[0][0]
    if client.keyslot(mark_key) != client.keyslot(first_key):
        raise ValueError(f"the replication mark {mark_key!r} is not in the slot of {first_key!r}")

    def send() -> list[Any]:
        # The primary of the slot as the client's map says now: after a failover, the promoted replica.
        primary: Redis = client.get_redis_connection(client.get_node_from_key(first_key))
        # Loaded first on that primary, once (its replicas get it from it): a call that found its function
        # missing would have waited for the replica in vain.  Only this primary: another that cannot be
        # reached must not stop a write to this one.
        scripts.load_once(transition, primary)
        pipe = primary.pipeline(transaction=False)
        scripts.queue(pipe, transition, keys=named_keys, args=args)
        pipe.set(mark_key, mark_value, px=MARK_MS)
        pipe.execute_command("WAIT", wanted, wait_ms)
        try:
            return pipe.execute()
        except ResponseError as error:
            if not is_missing(error):
                raise
            # The function did not run: loaded on that primary, the three are sent again.
            scripts.load(transition, primary)
            raise FunctionMissing(str(error)) from error

    def refresh_map(error: Exception) -> None:
        # A map no node could give yet (the cluster still failing the slot over) is asked for again next time.
        with suppress(RedisError, RedisClusterException):
            client.nodes_manager.initialize()

    retry = copy(client.retry)
    retry.update_supported_errors(_CLUSTER_RETRIED)
    for attempt in range(1, LOAD_ATTEMPTS + 1):
        try:
            raw, _, confirmed = retry.call_with_retry(send, refresh_map)
            return raw, int(confirmed)
        except FunctionMissing:
            # The primary did not know the function (it never had it, or forgot it): loaded, sent again.
            if attempt == LOAD_ATTEMPTS:
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")
