"""The sweep's side of the store: the indexes it reads and the transitions that repair what a crash left.

A mixin of ``JobStore``, which provides ``redis`` and ``context`` (the
store's ``StoreContext``: every entry of jobs/transitions is called through
it, and it fills the release inputs of each transition that releases held
children).

The indexes are per bucket (``jobs.keys``): the sweep goes over the buckets
one at a time, each under its own lock, so that sweepers share them, and
every pipeline of scripts stays within one bucket (one hash slot).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from typing import cast

from jobs import fair_share
from jobs.connections import StoreClient
from jobs.contract import Field, JobKind, JobStatus, Reply
from jobs.ids import DEFAULT_TENANT, tenant_tag
from jobs.keys import Keyspace
from jobs.records import Dispatch, Reclaimed
from jobs.transitions import expire, reclaim, release, republish, unlock_sweep
from jobs.transitions.context import StoreContext


class SweepTransitions:
    redis: StoreClient
    context: StoreContext
    keyspace: Keyspace

    @property
    def requeue_ms(self) -> int:
        """When the sweep re-publishes a queued job nobody claimed, from now."""
        return self.context.requeue_ms

    def release_args(self, job_id: str, release_limit: int | None = None) -> dict[str, int | str]:
        """The release inputs a transition on ``job_id`` gets (``StoreContext.release_args``)."""
        return self.context.release_args(job_id, release_limit)

    def now_ms(self) -> int:
        seconds, micros = self.redis.time()
        return seconds * 1000 + micros // 1000

    def try_lock_sweep(self, token: str, ttl_ms: int, bucket: int = 0) -> bool:
        """One sweep of a bucket at a time: an overlapping tick finds the bucket's lock taken and leaves it."""
        return bool(self.redis.set(self.keyspace.sweep_lock(bucket), token, nx=True, px=ttl_ms))

    def unlock_sweep(self, token: str, bucket: int = 0) -> None:
        unlock_sweep.call(self.context, self.keyspace.sweep_lock(bucket), token)

    def expired_leases(self, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        return self.due_in(self.keyspace.leases, now_ms, limit, bucket)

    def stale_queued(self, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        return self.due_in(self.keyspace.queued, now_ms, limit, bucket)

    def due_parents(self, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        return self.due_in(self.keyspace.due_parents, now_ms, limit, bucket)

    def due_in(self, index: Callable[[int], str], now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        """The members of a bucket's time index (scored in ms) due at ``now_ms``, the longest waiting first;
        with no ``bucket``, of every bucket's, merged."""
        if bucket is not None:
            found = cast(list[bytes], self.redis.zrangebyscore(index(bucket), "-inf", now_ms, start=0, num=limit))
            return [m.decode() for m in found]
        pipe = self.redis.pipeline(transaction=False)
        for b in self.keyspace.buckets():
            pipe.zrangebyscore(index(b), "-inf", now_ms, start=0, num=limit, withscores=True)
        merged = heapq.merge(*(((score, m.decode()) for m, score in reply) for reply in pipe.execute()))
        return [member for _, member in list(merged)[:limit]]

    def reclaim(self, job_ids: Iterable[str]) -> Reclaimed:
        ids = list(job_ids)
        replies = reclaim.call(self.context, ids)
        requeued: list[Dispatch] = []
        failed: list[str] = []
        dispatches: list[Dispatch] = []
        cancelled_unstarted: Counter[str] = Counter()
        released = 0
        for job_id, reply in zip(ids, replies, strict=True):
            if reply.code != Reply.OK:
                continue
            if reply.requeued:
                requeued.append(Dispatch(job_id, reply.model, priority=reply.priority))
            else:
                failed.append(job_id)
                dispatches += reply.released
                released += reply.children
                cancelled_unstarted.update(reply.cancelled_unstarted)
        return Reclaimed(requeued, failed, dispatches, dict(cancelled_unstarted), released)

    def republish(self, job_ids: Iterable[str]) -> list[Dispatch]:
        ids = list(job_ids)
        replies = republish.call(self.context, ids)
        return [
            Dispatch(j, r.model, priority=r.priority) for j, r in zip(ids, replies, strict=True) if r.code == Reply.OK
        ]

    def release(self, parent_ids: Iterable[str]) -> list[Dispatch]:
        """Releases the parents' held children, tenants taking turns; the dispatches in that fair order."""
        return self.release_counted(parent_ids)[0]

    def release_counted(self, parent_ids: Iterable[str]) -> tuple[list[Dispatch], int]:
        """``release``, and how many children it released (the dispatches are wake-ups: fewer, or none)."""
        parent_ids = fair_share.round_robin(parent_ids, lambda p: p)
        replies = release.call(self.context, parent_ids)
        children = sum(r.children for r in replies if r.code == Reply.OK)
        return fair_share.fair_order(d for r in replies for d in r.released), children

    def due_to_expire(self, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        """Ended roots whose retention (``result_ttl``) is over at ``now_ms``, the longest ended first.

        The expiring index is scored by when each root ended, not by when it is
        due, so the transitions that end a job need no retention of their own and
        a changed OCRGW_RESULT_TTL applies to the jobs already ended.
        """
        return self.due_in(self.keyspace.expiring, now_ms - self.context.settings.result_ttl_ms, limit, bucket)

    def expire(self, root_ids: Iterable[str]) -> int:
        """Deletes each root with every key of its group and its index entries; returns how many went."""
        ids = list(root_ids)
        if not ids:
            return 0
        # A root's kind names its listing sets; it never changes, so reading it first is safe.
        pipe = self.redis.pipeline(transaction=False)
        for root in ids:
            pipe.hget(self.keyspace.job(root), Field.KIND.value)
        kinds = [JobKind.PARENT if k == JobKind.PARENT.value.encode() else JobKind.SINGLE for k in pipe.execute()]
        replies = expire.call(self.context, list(zip(ids, kinds, strict=True)))
        return sum(1 for reply in replies if reply.code == Reply.OK)

    def active_parent_count(self, tenant: str = DEFAULT_TENANT) -> int:
        """The tenant's parents not yet terminal, from the listing's indexes of every bucket."""
        tag = tenant_tag(tenant)
        pipe = self.redis.pipeline(transaction=False)
        for bucket in self.keyspace.buckets():
            for status in (JobStatus.QUEUED, JobStatus.PROCESSING):
                pipe.zcard(self.keyspace.roots(JobKind.PARENT.value, status.value, tag, bucket))
        return sum(pipe.execute())
