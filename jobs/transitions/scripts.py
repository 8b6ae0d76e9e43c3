"""The transitions loaded on Redis as functions and called by name (see ``Scripts``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.exceptions import RedisClusterException, RedisError, ResponseError

from jobs.keys import Keyspace
from jobs.transitions.catalogue import discovered
from jobs.transitions.spec import ReplyT, Transition

#: Calls of a function that the server does not know before giving up.  Each such call loads the
#: function's library and is sent again; a Redis that restarted between that load and the call (a
#: restart without persistence forgets every function) answers so again.  That answer means the
#: function did not run at all, so calling it again is always safe.
LOAD_ATTEMPTS = 3


class FunctionMissing(ResponseError):
    """The server does not know the function called (a Redis that never loaded its library, or forgot it)."""


def is_missing(error: BaseException) -> bool:
    return isinstance(error, ResponseError) and str(error).startswith("Function not found")


class Function:
    """One transition's function: called as a redis-py ``Script`` is (``keys``, ``args``, ``client``), with
    FCALL; its library loaded where it is missing.

    A library is loaded once per server and kept there: replicated to its replicas (so a promoted replica
    has it) and in its persistence.  Its top level, which defines the shared names, the includes and the
    inputs, runs once, at the load, where a script (EVALSHA) ran it at every call.
    """

    def __init__(self, client: Redis | RedisCluster, transition: Transition):
        self.client = client
        self.name = transition.function_name
        self.code = transition.source()

    def __call__(
        self, keys: Sequence[str] = (), args: Sequence[Any] = (), client: Redis | RedisCluster | Pipeline | None = None
    ) -> Any:
        client = self.client if client is None else client
        if isinstance(client, Pipeline):
            # Queued: the pipeline's caller loads the library where its reply says it is missing.
            return client.fcall(self.name, len(keys), *keys, *args)
        try:
            return client.fcall(self.name, len(keys), *keys, *args)
        except ResponseError as error:
            if not is_missing(error):
                raise
        self.load(client)
        try:
            return client.fcall(self.name, len(keys), *keys, *args)
        except ResponseError as error:
            if is_missing(error):
                raise FunctionMissing(str(error)) from error
            raise

    def load(self, client: Redis | RedisCluster | None = None) -> None:
        """Loads the library (on a cluster, on every primary); REPLACE makes a load that races another
        process's, of the same code, harmless."""
        (self.client if client is None else client).function_load(self.code, replace=True)


def _bucket_or_none(keyspace: Keyspace, key: str) -> int:
    """The bucket of a script's first key, which its wake-ups are for; 0 for a key of no bucket (a tenant's
    ledger, in a slot of its own: its scripts answer no wake-ups)."""
    try:
        return keyspace.bucket_of_key(key)
    except KeyError:
        return 0


class Scripts:
    """The transitions as functions on one Redis client, or a Redis Cluster's.

    On a cluster a call goes to the primary of its first key's slot; one that
    finds its function missing (a primary that never had it, or lost it)
    gets the library loaded (on every primary) and the call sent again.
    """

    def __init__(
        self, client: Redis | RedisCluster, keyspace: Keyspace, transitions: Iterable[Transition] | None = None
    ):
        """``transitions``: those to register; every entry of this package when not given (``discovered``)."""
        #: The functions by transition name.
        self.by_name: dict[str, Function] = {t.name: Function(client, t) for t in (transitions or discovered())}
        self.client = client
        #: The layout of the store's keys: which bucket a call's first key is in.
        self.keyspace = keyspace
        self.on_cluster = isinstance(client, RedisCluster)

    def run(self, transition: Transition[ReplyT], keys: Mapping[str, str], args: Mapping[str, Any]) -> ReplyT:
        packed_keys, packed_args = transition.pack(keys, args)
        script = self.by_name[transition.name]
        for attempt in range(1, LOAD_ATTEMPTS + 1):
            try:
                return transition.decode(
                    script(keys=packed_keys, args=packed_args), _bucket_or_none(self.keyspace, packed_keys[0])
                )
            except FunctionMissing:
                if attempt == LOAD_ATTEMPTS:
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
                found = [
                    self.run(transition, *call) if _missing_reply(raw) else transition.decode(raw, bucket)
                    for call, raw in zip(in_bucket, pipe.execute(raise_on_error=False), strict=True)
                ]
            for position, reply in zip(positions, found, strict=True):
                replies[position] = reply
        return [replies[position] for position in range(len(calls))]

    def _run_on_primary(
        self,
        transition: Transition[ReplyT],
        bucket: int,
        calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]],
    ) -> list[ReplyT]:
        """One bucket's calls on a cluster, in one pipeline of the bucket's primary's own client.

        A call the primary refused (MOVED: the slot is served elsewhere now; its function missing) did not
        run, and is sent again on its own, through the cluster client and its retries (which load a missing
        library on every primary); so is every call when the primary
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
        """Adds a call to ``pipe``; decode its raw reply with ``transition.decode``.  A reply that says the
        function is missing (``is_missing``) means the call did not run: load it (``load``) and send it again."""
        packed_keys, packed_args = transition.pack(keys, args)
        self.by_name[transition.name](keys=packed_keys, args=packed_args, client=pipe)

    def load(self, transition: Transition, client: Redis | RedisCluster | None = None) -> None:
        """Loads ``transition``'s library on ``client`` (this one's when not given)."""
        self.by_name[transition.name].load(client)


def _missing_reply(raw: Any) -> bool:
    """Whether a pipeline's reply is a function's being missing (the call did not run); any other error
    raises, as the pipeline would have."""
    if isinstance(raw, Exception):
        if is_missing(raw):
            return True
        raise raw
    return False
