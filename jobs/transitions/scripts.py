"""The transitions loaded on Redis as functions and called by name (see ``Scripts``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from typing import Any
from weakref import WeakKeyDictionary

from redis import Redis
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ReadOnlyError, RedisClusterException, RedisError, ResponseError

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
    """Whether ``error`` is the server's answer to a call of a function it does not know (in a pipeline,
    redis-py puts the command's place before the server's words)."""
    return isinstance(error, ResponseError) and "Function not found" in str(error)


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
        client = self.client if client is None else client
        try:
            client.function_load(self.code, replace=True)
        except (ReadOnlyError, RedisConnectionError):
            if not isinstance(client, RedisCluster):
                raise
            # The client's map still names a primary that a failover made a replica, or took away: the map
            # is read again (a map no node can give yet is asked for again by the next call), and the
            # library loaded on the primaries it names now.
            with suppress(RedisError, RedisClusterException):
                client.nodes_manager.initialize()
            client.function_load(self.code, replace=True)


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
        #: The libraries this process loaded, by client (``load_once``).
        self._loaded: WeakKeyDictionary[Redis | RedisCluster, set[str]] = WeakKeyDictionary()

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
                found = [
                    transition.decode(_raised(raw), bucket)
                    for raw in self._pipelined(self.client, transition, in_bucket)
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

        A call whose function the primary did not have is sent again in the pipeline once the library is
        loaded there.  A call the primary refused (MOVED: the slot is served elsewhere now) did not run, and
        is sent again on its own, through the cluster client and its retries; so is every call when the primary
        could not be reached at all, a call that had run then answering as a repeat does (each transition
        checks its precondition).
        """
        assert isinstance(self.client, RedisCluster)
        first_key = transition.pack(*calls[0])[0][0]
        try:
            primary = self.client.get_redis_connection(self.client.get_node_from_key(first_key))
            raws = self._pipelined(primary, transition, calls)
        except (RedisError, RedisClusterException):
            return [self.run(transition, call_keys, call_args) for call_keys, call_args in calls]
        return [
            self.run(transition, *call) if isinstance(raw, Exception) else transition.decode(raw, bucket)
            for call, raw in zip(calls, raws, strict=True)
        ]

    def _pipelined(
        self,
        client: Redis | RedisCluster,
        transition: Transition,
        calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]],
    ) -> list[Any]:
        """The raw replies of ``calls`` sent in one pipeline on ``client`` (an error as its exception).  The
        calls whose function the server did not have did not run: once the library is loaded there, they
        go again, in one pipeline too."""
        raws: list[Any] = [None] * len(calls)
        pending = list(range(len(calls)))
        for loads in range(LOAD_ATTEMPTS + 1):
            pipe = client.pipeline(transaction=False)
            for position in pending:
                self.queue(pipe, transition, *calls[position])
            missing = []
            for position, raw in zip(pending, pipe.execute(raise_on_error=False), strict=True):
                if isinstance(raw, Exception) and is_missing(raw):
                    missing.append(position)
                else:
                    raws[position] = raw
            if not missing:
                break
            if loads == LOAD_ATTEMPTS:
                raise FunctionMissing(f"{transition.function_name}: missing again after {LOAD_ATTEMPTS} loads")
            self.load(transition, client)
            pending = missing
        return raws

    def queue(self, pipe: Pipeline, transition: Transition, keys: Mapping[str, str], args: Mapping[str, Any]) -> None:
        """Adds a call to ``pipe``; decode its raw reply with ``transition.decode``.  A reply that says the
        function is missing (``is_missing``) means the call did not run: load the library (``load``) and
        send it again."""
        packed_keys, packed_args = transition.pack(keys, args)
        self.by_name[transition.name](keys=packed_keys, args=packed_args, client=pipe)

    def load(self, transition: Transition, client: Redis | RedisCluster | None = None) -> None:
        """Loads ``transition``'s library on ``client`` (this one's when not given)."""
        client = self.client if client is None else client
        self.by_name[transition.name].load(client)
        self._loaded.setdefault(client, set()).add(transition.name)

    def load_once(self, transition: Transition, client: Redis | RedisCluster | None = None) -> None:
        """Loads ``transition``'s library on ``client`` unless this process did already: before a pipeline
        that a missing function would make costly to send again (one with a WAIT)."""
        if transition.name not in self._loaded.get(self.client if client is None else client, ()):
            self.load(transition, client)


def _raised(raw: Any) -> Any:
    """A pipeline's reply; an error raised, as the pipeline would have."""
    if isinstance(raw, Exception):
        raise raw
    return raw
