"""The transitions: one Lua script each (``<name>.lua``), described by its spec beside it
(``<name>.py``, defining ``<NAME>``), listed once in ``TRANSITIONS`` and registered once per client.

``Scripts(client, keyspace).run(CLAIM, keys={...}, args={...})`` packs the named keys
and arguments in the spec's order, calls the script by SHA (redis-py's
``Script``: EVALSHA, reloaded on NOSCRIPT; it also works in pipelines) and
decodes the reply into the spec's dataclass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from redis import Redis
from redis.client import Pipeline
from redis.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisClusterException, RedisError

from jobs.keys import Keyspace
from jobs.transitions.cancel import CANCEL
from jobs.transitions.claim import CLAIM
from jobs.transitions.claim_next import CLAIM_NEXT
from jobs.transitions.claim_webhook import CLAIM_WEBHOOK
from jobs.transitions.complete import COMPLETE
from jobs.transitions.create import CREATE
from jobs.transitions.expire import EXPIRE
from jobs.transitions.heartbeat import HEARTBEAT
from jobs.transitions.ledger_forget import LEDGER_FORGET
from jobs.transitions.ledger_grant import LEDGER_GRANT
from jobs.transitions.ledger_open import LEDGER_OPEN
from jobs.transitions.ledger_return import LEDGER_RETURN
from jobs.transitions.ledger_settle import LEDGER_SETTLE
from jobs.transitions.progress import PROGRESS
from jobs.transitions.quota_fence import QUOTA_FENCE
from jobs.transitions.quota_grant import QUOTA_GRANT
from jobs.transitions.quota_return import QUOTA_RETURN
from jobs.transitions.reclaim import RECLAIM
from jobs.transitions.record_pdf import RECORD_PDF
from jobs.transitions.record_webhook import RECORD_WEBHOOK
from jobs.transitions.redrive import REDRIVE
from jobs.transitions.release import RELEASE
from jobs.transitions.release_webhook import RELEASE_WEBHOOK
from jobs.transitions.republish import REPUBLISH
from jobs.transitions.reserve_interactive import RESERVE_INTERACTIVE
from jobs.transitions.reserve_key import RESERVE_KEY
from jobs.transitions.reserve_webhook import RESERVE_WEBHOOK
from jobs.transitions.retry import RETRY
from jobs.transitions.set_cap import SET_CAP
from jobs.transitions.spec import Dispatch, Transition
from jobs.transitions.unlock_sweep import UNLOCK_SWEEP

TRANSITIONS: tuple[Transition, ...] = (
    CREATE,
    CLAIM,
    CLAIM_NEXT,
    HEARTBEAT,
    PROGRESS,
    COMPLETE,
    RETRY,
    RECLAIM,
    REPUBLISH,
    RELEASE,
    UNLOCK_SWEEP,
    CANCEL,
    SET_CAP,
    REDRIVE,
    RESERVE_KEY,
    CLAIM_WEBHOOK,
    RECORD_WEBHOOK,
    RESERVE_WEBHOOK,
    RELEASE_WEBHOOK,
    EXPIRE,
    RECORD_PDF,
    LEDGER_GRANT,
    LEDGER_RETURN,
    LEDGER_OPEN,
    LEDGER_SETTLE,
    LEDGER_FORGET,
    QUOTA_GRANT,
    QUOTA_RETURN,
    QUOTA_FENCE,
    RESERVE_INTERACTIVE,
)


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

    def __init__(self, client: Redis | RedisCluster, keyspace: Keyspace):
        #: The registered scripts by transition name (redis-py ``Script`` objects).
        self.by_name = {t.name: client.register_script(t.source()) for t in TRANSITIONS}
        self.client = client
        #: The layout of the store's keys: which bucket a call's first key is in.
        self.keyspace = keyspace
        self.on_cluster = isinstance(client, RedisCluster)

    def run(self, transition: Transition, keys: Mapping[str, str], args: Mapping[str, Any]) -> Any:
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

    def run_all(self, transition: Transition, calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]]) -> list:
        """Runs many calls, one pipeline (one round trip) per bucket; returns their decoded replies in order.

        A bucket is one slot: on a cluster its pipeline goes to the slot's primary (see ``_run_on_primary``).
        """
        by_bucket: dict[int, list[int]] = {}
        for position, (call_keys, call_args) in enumerate(calls):
            first_key = transition.pack(call_keys, call_args)[0][0]
            by_bucket.setdefault(self.keyspace.bucket_of_key(first_key), []).append(position)
        replies: list[Any] = [None] * len(calls)
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
        return replies

    def _run_on_primary(
        self, transition: Transition, bucket: int, calls: Sequence[tuple[Mapping[str, str], Mapping[str, Any]]]
    ) -> list:
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


__all__ = ["TRANSITIONS", "Dispatch", "Scripts", "Transition"]
