"""The sweep's side of the store: the indexes it reads and the transitions that repair what a crash left.

A mixin of ``JobStore``, which provides ``redis``, ``scripts`` and
``settings``; every transition that releases held children, the store's and
the controls' too, takes its release inputs from ``release_keys`` and
``release_args`` here.

The indexes are per bucket (``jobs.keys``): the sweep goes over the buckets
one at a time, each under its own lock, so that sweepers share them, and
every pipeline of scripts stays within one bucket (one hash slot).
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from jobs import fair_share
from jobs.contract import Field, JobKind, JobStatus, Reply
from jobs.ids import DEFAULT_TENANT, tenant_tag
from jobs.keys import Keyspace
from jobs.records import Dispatch, Reclaimed
from jobs.transitions.expire import EXPIRE
from jobs.transitions.reclaim import RECLAIM
from jobs.transitions.release import RELEASE
from jobs.transitions.republish import REPUBLISH
from jobs.transitions.unlock_sweep import UNLOCK_SWEEP


class SweepTransitions:
    redis: Any
    scripts: Any
    settings: Any
    keyspace: Keyspace

    @property
    def requeue_ms(self) -> int:
        """When the sweep re-publishes a queued job nobody claimed, from now."""
        return int(self.settings.requeue_seconds * 1000)

    def release_keys(self, job_id: str) -> dict[str, str]:
        """The keys of ``RELEASE_KEYS`` (jobs/transitions/spec.py) for a transition on ``job_id``."""
        bucket = self.keyspace.bucket_of(job_id)
        return {
            "parent": self.keyspace.parent_or_self(job_id),
            "queued": self.keyspace.queued(bucket),
            "due": self.keyspace.due_parents(bucket),
        }

    def release_args(self, job_id: str, release_limit: int | None = None) -> dict[str, Any]:
        """The arguments of ``RELEASE_ARGS`` (jobs/transitions/spec.py) for a transition on ``job_id``.

        ``release_limit`` defaults to ``OCRGW_RELEASE_BATCH``.
        """
        return {
            "prefix": self.keyspace.group_prefix(job_id),
            "release_limit": self.settings.release_batch if release_limit is None else release_limit,
            "requeue_ms": self.requeue_ms,
            "tenant_max_inflight": self.settings.tenant_max_inflight,
            # Across buckets, each bucket's share of the cap is its quota (jobs.tenant_quota).
            "tenant_quota": int(self.settings.tenant_max_inflight > 0 and self.keyspace.bucket_count > 1),
        }

    def now_ms(self) -> int:
        seconds, micros = self.redis.time()
        return seconds * 1000 + micros // 1000

    def try_lock_sweep(self, token: str, ttl_ms: int, bucket: int = 0) -> bool:
        """One sweep of a bucket at a time: an overlapping tick finds the bucket's lock taken and leaves it."""
        return bool(self.redis.set(self.keyspace.sweep_lock(bucket), token, nx=True, px=ttl_ms))

    def unlock_sweep(self, token: str, bucket: int = 0) -> None:
        self.scripts.run(UNLOCK_SWEEP, keys={"lock": self.keyspace.sweep_lock(bucket)}, args={"token": token})

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
            return [m.decode() for m in self.redis.zrangebyscore(index(bucket), "-inf", now_ms, start=0, num=limit)]
        pipe = self.redis.pipeline(transaction=False)
        for b in self.keyspace.buckets():
            pipe.zrangebyscore(index(b), "-inf", now_ms, start=0, num=limit, withscores=True)
        merged = heapq.merge(*(((score, m.decode()) for m, score in reply) for reply in pipe.execute()))
        return [member for _, member in list(merged)[:limit]]

    def _pipelined(self, transition, calls: list[tuple[dict, dict]]) -> list:
        """Runs the calls, a round trip per bucket; returns their decoded replies in order."""
        return self.scripts.run_all(transition, calls)

    def reclaim(self, job_ids: Iterable[str]) -> Reclaimed:
        ids = list(job_ids)
        replies = self._pipelined(
            RECLAIM,
            [
                (
                    {
                        **self.keyspace.of_running_job(j),
                        **self.release_keys(j),
                        "events": self.keyspace.events(j),
                        "webhooks": self.keyspace.webhooks(self.keyspace.bucket_of(j)),
                    },
                    {
                        "job_id": j,
                        "max_attempts": self.settings.max_attempts,
                        "usage_keep_s": self.settings.usage_retention,
                        **self.release_args(j),
                    },
                )
                for j in ids
            ],
        )
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
        replies = self._pipelined(
            REPUBLISH,
            [
                (
                    {"job": self.keyspace.job(j), "queued": self.keyspace.queued(self.keyspace.bucket_of(j))},
                    {"job_id": j, "requeue_ms": self.requeue_ms},
                )
                for j in ids
            ],
        )
        return [
            Dispatch(j, r.model, priority=r.priority) for j, r in zip(ids, replies, strict=True) if r.code == Reply.OK
        ]

    def release(self, parent_ids: Iterable[str]) -> list[Dispatch]:
        """Releases the parents' held children, tenants taking turns; the dispatches in that fair order."""
        return self.release_counted(parent_ids)[0]

    def release_counted(self, parent_ids: Iterable[str]) -> tuple[list[Dispatch], int]:
        """``release``, and how many children it released (the dispatches are wake-ups: fewer, or none)."""
        parent_ids = fair_share.round_robin(parent_ids, lambda p: p)
        replies = self._pipelined(
            RELEASE,
            [
                (
                    {
                        **self.release_keys(p),
                        "events": self.keyspace.events(p),
                        "webhooks": self.keyspace.webhooks(self.keyspace.bucket_of(p)),
                        **self.keyspace.roots_by_status(p, JobKind.PARENT),
                    },
                    {"parent_id": p, **self.release_args(p)},
                )
                for p in parent_ids
            ],
        )
        children = sum(r.children for r in replies if r.code == Reply.OK)
        return fair_share.fair_order(d for r in replies for d in r.released), children

    def due_to_expire(self, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
        """Ended roots whose retention (``result_ttl``) is over at ``now_ms``, the longest ended first.

        The expiring index is scored by when each root ended, not by when it is
        due, so the transitions that end a job need no retention of their own and
        a changed OCRGW_RESULT_TTL applies to the jobs already ended.
        """
        return self.due_in(self.keyspace.expiring, now_ms - self.settings.result_ttl_ms, limit, bucket)

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
        replies = self._pipelined(
            EXPIRE,
            [
                (
                    {
                        "root": self.keyspace.job(root),
                        "events": self.keyspace.events(root),
                        "due": self.keyspace.due_parents(self.keyspace.bucket_of(root)),
                        "webhooks": self.keyspace.webhooks(self.keyspace.bucket_of(root)),
                        **self.keyspace.roots_by_status(root, kind),
                    },
                    {
                        "root_id": root,
                        "prefix": self.keyspace.group_prefix(root),
                        "ttl_ms": self.settings.result_ttl_ms,
                        "owed_ms": self.settings.webhook_owed_ms,
                    },
                )
                for root, kind in zip(ids, kinds, strict=True)
            ],
        )
        return sum(1 for reply in replies if reply.code == Reply.OK)

    def active_parent_count(self, tenant: str = DEFAULT_TENANT) -> int:
        """The tenant's parents not yet terminal, from the listing's indexes of every bucket."""
        tag = tenant_tag(tenant)
        pipe = self.redis.pipeline(transaction=False)
        for bucket in self.keyspace.buckets():
            for status in (JobStatus.QUEUED, JobStatus.PROCESSING):
                pipe.zcard(self.keyspace.roots(JobKind.PARENT.value, status.value, tag, bucket))
        return sum(pipe.execute())
