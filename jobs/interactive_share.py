"""A tenant's allowance in the interactive lane: how many interactive jobs it may have queued or processing.

The submitting key's ``interactive_max_inflight`` (or
OCRGW_INTERACTIVE_MAX_INFLIGHT) caps the tenant's interactive *places*: a
single job takes one, a group as many as it may run at once (its children,
or its max_parallel when fewer).  The places are counted in the tenant's own
slot (``keys.tenant_interactive``), as its webhook claims are, so the cap
holds across every bucket: each creation in the interactive lane first
reserves its root's places there (``reserve_interactive``, atomic), then
creates the root in its bucket.

A root keeps its places until it has ended.  No script of the root's bucket
can reach the tenant's slot, so the places are given back by whoever next
finds the allowance full: it reads the holders' statuses and forgets those
that ended, and those whose root is not there (a creation that failed or
crashed after its reservation, or a root whose retention ran out) once
``UNCLAIMED_MS`` has passed since they were reserved (a creation in flight
has not written its root yet), then asks again.  So a full allowance costs
one more read per holder, and only when it is full; an allowance with room
costs the one script call.
"""

from __future__ import annotations

from jobs import keys
from jobs.connections import StoreClient
from jobs.contract import TERMINAL, Field, Reply
from jobs.errors import InteractiveLaneFull
from jobs.records import GroupRules
from jobs.transitions import reserve_interactive
from jobs.transitions.context import StoreContext

#: How long a reservation whose root is not (yet) in the store still holds its places (ms): far longer
#: than any creation takes between its reservation and its root's write.
UNCLAIMED_MS = 60_000
_TERMINAL = {s.value for s in TERMINAL}


def places_of(children: int, group: GroupRules | None) -> int:
    """The places a submission takes: 1 for a single job; a group's children, or its max_parallel if fewer."""
    if group is None:
        return 1
    return children if group.max_parallel <= 0 else min(children, group.max_parallel)


class InteractiveShare:
    def __init__(self, context: StoreContext):
        self.redis: StoreClient = context.redis
        self.context = context
        self.keyspace = context.keyspace

    def reserve(self, root_id: str, places: int, limit: int) -> None:
        """Takes ``places`` for ``root_id`` in its tenant's allowance of ``limit``; ``InteractiveLaneFull``
        when they do not fit, even once the ended holders are forgotten."""
        reply = self._reserve(root_id, places, limit)
        if reply.code == Reply.OK:
            return
        if self.forget_ended(keys.tag_of(root_id), [h for h in reply.holders.split(",") if h], reply.now_ms):
            reply = self._reserve(root_id, places, limit)
            if reply.code == Reply.OK:
                return
        raise InteractiveLaneFull(reply.in_use, limit)

    def give_back(self, root_id: str) -> None:
        """The places of a root whose creation created nothing (refused, or a replay of another root)."""
        self.redis.hdel(keys.tenant_interactive(keys.tag_of(root_id)), root_id)

    def forget_ended(self, tag: str, holders: list[str], now_ms: int) -> int:
        """Gives back the places of those ``holders`` that ended, or that are not there and were reserved
        longer than UNCLAIMED_MS before ``now_ms`` (Redis time); how many."""
        if not holders:
            return 0
        reservations = keys.tenant_interactive(tag)
        pipe = self.redis.pipeline(transaction=False)
        for root in holders:
            pipe.hget(self.keyspace.job(root), Field.STATUS.value)
        pipe.hmget(reservations, holders)
        *statuses, reserved = pipe.execute()
        ended = []
        for root, status, held in zip(holders, statuses, reserved, strict=True):
            if held is None:
                continue  # given back meanwhile
            reserved_at = int(held.decode().partition("|")[2] or 0)
            if status is None and now_ms - reserved_at < UNCLAIMED_MS:
                continue  # its creation may still be on its way
            if status is None or status.decode() in _TERMINAL:
                ended.append(root)
        if ended:
            self.redis.hdel(reservations, *ended)
        return len(ended)

    def _reserve(self, root_id: str, places: int, limit: int) -> reserve_interactive.ReserveInteractiveReply:
        return reserve_interactive.call(self.context, root_id, places, limit)
