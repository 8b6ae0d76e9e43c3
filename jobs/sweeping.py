"""The sweep's side of the store: the indexes it reads and the transitions that repair what a crash left.

A mixin of ``JobStore``, which provides ``redis``, ``scripts`` and
``settings``; every transition that releases held children, the store's and
the controls' too, takes its release inputs from ``release_keys`` and
``release_args`` here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from jobs import fair_share, keys
from jobs.contract import Field, JobKind, JobStatus, Reply
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

    @property
    def requeue_ms(self) -> int:
        """When the sweep re-publishes a queued job nobody claimed, from now."""
        return int(self.settings.requeue_seconds * 1000)

    @staticmethod
    def release_keys(job_id: str) -> dict[str, str]:
        """The keys of ``RELEASE_KEYS`` (jobs/transitions/spec.py) for a transition on ``job_id``."""
        return {"parent": keys.parent_or_self(job_id), "queued": keys.QUEUED, "due": keys.DUE_PARENTS}

    def release_args(self, job_id: str, release_limit: int | None = None) -> dict[str, Any]:
        """The arguments of ``RELEASE_ARGS`` (jobs/transitions/spec.py) for a transition on ``job_id``.

        ``release_limit`` defaults to ``OCRGW_RELEASE_BATCH``.
        """
        return {
            "prefix": keys.group_prefix(job_id),
            "release_limit": self.settings.release_batch if release_limit is None else release_limit,
            "requeue_ms": self.requeue_ms,
            "tenant_max_inflight": self.settings.tenant_max_inflight,
        }

    def now_ms(self) -> int:
        seconds, micros = self.redis.time()
        return seconds * 1000 + micros // 1000

    def try_lock_sweep(self, token: str, ttl_ms: int) -> bool:
        """One sweep at a time: an overlapping tick finds the lock taken and does nothing."""
        return bool(self.redis.set(keys.SWEEP_LOCK, token, nx=True, px=ttl_ms))

    def unlock_sweep(self, token: str) -> None:
        self.scripts.run(UNLOCK_SWEEP, keys={"lock": keys.SWEEP_LOCK}, args={"token": token})

    def expired_leases(self, now_ms: int, limit: int) -> list[str]:
        return self.due_in(keys.LEASES, now_ms, limit)

    def stale_queued(self, now_ms: int, limit: int) -> list[str]:
        return self.due_in(keys.QUEUED, now_ms, limit)

    def due_parents(self, now_ms: int, limit: int) -> list[str]:
        return self.due_in(keys.DUE_PARENTS, now_ms, limit)

    def due_in(self, index: str, now_ms: int, limit: int) -> list[str]:
        """The members of a time index (scored in ms) due at ``now_ms``, the longest waiting first."""
        return [m.decode() for m in self.redis.zrangebyscore(index, "-inf", now_ms, start=0, num=limit)]

    def _pipelined(self, transition, calls: list[tuple[dict, dict]]) -> list:
        """Runs the calls in one round trip; returns their decoded replies in order."""
        if not calls:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for call_keys, call_args in calls:
            self.scripts.queue(pipe, transition, call_keys, call_args)
        return [transition.decode(raw) for raw in pipe.execute()]

    def reclaim(self, job_ids: Iterable[str]) -> Reclaimed:
        ids = list(job_ids)
        replies = self._pipelined(
            RECLAIM,
            [
                (
                    {
                        **keys.of_running_job(j),
                        **self.release_keys(j),
                        "events": keys.events(j),
                        "webhooks": keys.WEBHOOKS,
                    },
                    {"job_id": j, "max_attempts": self.settings.max_attempts, **self.release_args(j)},
                )
                for j in ids
            ],
        )
        requeued: list[Dispatch] = []
        failed: list[str] = []
        dispatches: list[Dispatch] = []
        cancelled_unstarted: Counter[str] = Counter()
        for job_id, reply in zip(ids, replies, strict=True):
            if reply.code != Reply.OK:
                continue
            if reply.requeued:
                requeued.append(Dispatch(job_id, reply.model, priority=reply.priority))
            else:
                failed.append(job_id)
                dispatches += reply.released
                cancelled_unstarted.update(reply.cancelled_unstarted)
        return Reclaimed(requeued, failed, dispatches, dict(cancelled_unstarted))

    def republish(self, job_ids: Iterable[str]) -> list[Dispatch]:
        ids = list(job_ids)
        replies = self._pipelined(
            REPUBLISH,
            [({"job": keys.job(j), "queued": keys.QUEUED}, {"job_id": j, "requeue_ms": self.requeue_ms}) for j in ids],
        )
        return [
            Dispatch(j, r.model, priority=r.priority) for j, r in zip(ids, replies, strict=True) if r.code == Reply.OK
        ]

    def release(self, parent_ids: Iterable[str]) -> list[Dispatch]:
        """Releases the parents' held children, tenants taking turns; the dispatches in that fair order."""
        parent_ids = fair_share.round_robin(parent_ids, lambda p: p)
        replies = self._pipelined(
            RELEASE,
            [
                (
                    {
                        **self.release_keys(p),
                        "events": keys.events(p),
                        "webhooks": keys.WEBHOOKS,
                        **keys.roots_by_status(p, JobKind.PARENT),
                    },
                    {"parent_id": p, **self.release_args(p)},
                )
                for p in parent_ids
            ],
        )
        return fair_share.fair_order(d for r in replies for d in r.released)

    def due_to_expire(self, now_ms: int, limit: int) -> list[str]:
        """Ended roots whose retention (``result_ttl``) is over at ``now_ms``, the longest ended first.

        The expiring index is scored by when each root ended, not by when it is
        due, so the transitions that end a job need no retention of their own and
        a changed OCRGW_RESULT_TTL applies to the jobs already ended.
        """
        return self.due_in(keys.EXPIRING, now_ms - self.settings.result_ttl_ms, limit)

    def expire(self, root_ids: Iterable[str]) -> int:
        """Deletes each root with every key of its group and its index entries; returns how many went."""
        ids = list(root_ids)
        if not ids:
            return 0
        # A root's kind names its listing sets; it never changes, so reading it first is safe.
        pipe = self.redis.pipeline(transaction=False)
        for root in ids:
            pipe.hget(keys.job(root), Field.KIND.value)
        kinds = [JobKind.PARENT if k == JobKind.PARENT.value.encode() else JobKind.SINGLE for k in pipe.execute()]
        replies = self._pipelined(
            EXPIRE,
            [
                (
                    {
                        "root": keys.job(root),
                        "events": keys.events(root),
                        "due": keys.DUE_PARENTS,
                        "webhooks": keys.WEBHOOKS,
                        **keys.roots_by_status(root, kind),
                    },
                    {
                        "root_id": root,
                        "prefix": keys.group_prefix(root),
                        "ttl_ms": self.settings.result_ttl_ms,
                        "owed_ms": self.settings.webhook_owed_ms,
                    },
                )
                for root, kind in zip(ids, kinds, strict=True)
            ],
        )
        return sum(1 for reply in replies if reply.code == Reply.OK)

    def active_parent_count(self) -> int:
        """Parents not yet terminal, from the listing's index."""
        pipe = self.redis.pipeline(transaction=False)
        for status in (JobStatus.QUEUED, JobStatus.PROCESSING):
            pipe.zcard(keys.roots(JobKind.PARENT.value, status.value))
        return sum(pipe.execute())
