"""The transitions registered on a Redis client and called by name (see ``Scripts``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisClusterException, RedisError

from jobs.keys import Keyspace
from jobs.transitions.catalogue import discovered
from jobs.transitions.spec import ReplyT, Transition

#: Calls of a script that meet NOSCRIPT before giving up.  redis-py loads a script the server does
#: not know and calls it again, but once only: a Redis that restarted between that load and the
#: call (a restart forgets every script) answers NOSCRIPT again.  A NOSCRIPT reply means the script
#: did not run at all, so calling it again is always safe.
NOSCRIPT_ATTEMPTS = 3


def _bucket_or_none(keyspace: Keyspace, key: str) -> int:
    """The bucket of a script's first key, which its wake-ups are for; 0 for a key of no bucket (a tenant's
    ledger, in a slot of its own: its scripts answer no wake-ups)."""
    try:
        return keyspace.bucket_of_key(key)
    except KeyError:
        return 0


class Scripts:
    """The transitions registered on one Redis client, or a Redis Cluster's.

    On a cluster a call goes to the primary of its first key's slot; one that
    answers NOSCRIPT (a replica promoted since the scripts were loaded: SCRIPT
    LOAD reaches the primaries only) gets the script loaded (on every primary,
    that one now included) and the call sent again.
    """

    def __init__(
        self, client: Redis | RedisCluster, keyspace: Keyspace, transitions: Iterable[Transition] | None = None
    ):
        """``transitions``: those to register; every entry of this package when not given (``discovered``)."""
        #: The registered scripts by transition name (redis-py ``Script`` objects).
        self.by_name = {t.name: client.register_script(t.source()) for t in (transitions or discovered())}
        self.client = client
        #: The layout of the store's keys: which bucket a call's first key is in.
        self.keyspace = keyspace
        self.on_cluster = isinstance(client, RedisCluster)

    def run(self, transition: Transition[ReplyT], keys: Mapping[str, str], args: Mapping[str, Any]) -> ReplyT:
        packed_keys, packed_args = transition.pack(keys, args)
        script = self.by_name[transition.name]
        for attempt in range(1, NOSCRIPT_ATTEMPTS + 1):
            try:
                return transition.decode(
                    script(keys=packed_keys, args=packed_args), _bucket_or_none(self.keyspace, packed_keys[0])
                )
            except NoScriptError:
                if attempt == NOSCRIPT_ATTEMPTS:
                    raise
        raise AssertionError("unreachable: the last attempt returns or raises")

    def run_all(
        self, transition: Transition[ReplyT], calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]]
    ) -> list[ReplyT]:
        """Runs many calls, one pipeline (one round trip) per bucket; returns their decoded replies in order.

        A bucket is one slot: on a cluster its pipeline goes to the slot's primary (see ``_run_on_primary``).
        """
        by_bucket: dict[int, list[int]] = {}
        for position, (call_keys, call_args) in enumerate(calls):
            first_key = transition.pack(call_keys, call_args)[0][0]
            by_bucket.setdefault(self.keyspace.bucket_of_key(first_key), []).append(position)
        replies: dict[int, ReplyT] = {}
        for bucket, positions in by_bucket.items():
            in_bucket = [calls[p] for p in positions]
            if self.on_cluster:
                found = self._run_on_primary(transition, bucket, in_bucket)
            else:
                pipe = self.client.pipeline(transaction=False)
                for call_keys, call_args in in_bucket:
                    self.queue(pipe, transition, call_keys, call_args)
                found = [transition.decode(raw, bucket) for raw in pipe.execute()]
            for position, reply in zip(positions, found, strict=True):
                replies[position] = reply
        return [replies[position] for position in range(len(calls))]

    def _run_on_primary(
        self,
        transition: Transition[ReplyT],
        bucket: int,
        calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]],
    ) -> list[ReplyT]:
        """One bucket's calls on a cluster, in one pipeline of the bucket's primary's own client (which loads
        the scripts first, as a cluster's pipeline does not).

        A call the primary refused (MOVED: the slot is served elsewhere now; NOSCRIPT) did not run, and is
        sent again on its own, through the cluster client and its retries; so is every call when the primary
        could not be reached at all, a call that had run then answering as a repeat does (each transition
        checks its precondition).
        """
        assert isinstance(self.client, RedisCluster)
        first_key = transition.pack(*calls[0])[0][0]
        try:
            primary = self.client.get_redis_connection(self.client.get_node_from_key(first_key))
            pipe = primary.pipeline(transaction=False)
            for call_keys, call_args in calls:
                self.queue(pipe, transition, call_keys, call_args)
            raws = pipe.execute(raise_on_error=False)
        except (RedisError, RedisClusterException):
            return [self.run(transition, call_keys, call_args) for call_keys, call_args in calls]
        return [
            self.run(transition, *call) if isinstance(raw, Exception) else transition.decode(raw, bucket)
            for call, raw in zip(calls, raws, strict=True)
        ]

    def queue(self, pipe: Pipeline, transition: Transition, keys: Mapping[str, str], args: Mapping[str, Any]) -> None:
        """Adds a call to ``pipe``; decode its raw reply with ``transition.decode``."""
        packed_keys, packed_args = transition.pack(keys, args)
        self.by_name[transition.name](keys=packed_keys, args=packed_args, client=pipe)
