"""The coordinator's sweep: the safety net under the transitions.

Creation and completion already release children and finalize parents in
their own scripts, so a healthy system gives the sweep almost nothing to do.
It repairs what a crash leaves behind: jobs whose worker died (expired
leases), jobs whose message was lost or whose retry backoff has passed
(queued past their publish deadline), and parents a release left due.  Each
pass reads only those three indexes, in bounded batches, so its cost grows
with the work there is, not with the number of jobs or parents.  What it
releases and re-publishes goes out with tenants taking turns (and each
tenant's groups), so one tenant's backlog does not queue ahead of all
another's.

It also hands due webhooks to their deliverer: it claims them (so that no
other sweep sends them meanwhile) and sends one message each; the delivery
itself runs elsewhere, so a slow receiver never holds a sweep up.

With a tenant cap and more than one bucket, each tick first moves each
tenant's quota to the buckets where its groups wait (jobs.tenant_quota).

Last, it deletes the ended roots whose retention (OCRGW_RESULT_TTL) is over,
each with every key of its group, from a fifth time index: with nothing due,
that is one more read.

The indexes are per bucket (``jobs.keys``, OCRGW_STORE_BUCKETS): a tick goes
over every bucket, each under the bucket's own lock, and leaves the buckets
whose lock another coordinator holds, so several coordinators share the
buckets and none is swept twice at once.  Its report sums over the buckets
it swept; it is ``skipped`` when it swept none.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from jobs import observed, tenant_quota, webhooks
from jobs.fair_share import fair_order
from jobs.records import Dispatch, Reclaimed
from jobs.store import JobStore
from jobs.webhooks import WebhookClaim
from observability import metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SweepReport:
    skipped: bool = False
    reclaimed: int = 0
    lease_expired: int = 0
    republished: int = 0
    released: int = 0  # children released (the messages that go out for them are wake-ups: fewer)
    published: int = 0
    webhooks: int = 0  # webhooks claimed and handed to their deliverer
    expired: int = 0  # ended roots deleted with their groups, their retention over


@dataclass
class Sweeper:
    store: JobStore
    publish: Callable[[list[Dispatch]], int]
    # Sends each claimed webhook to its deliverer; None: this sweeper leaves webhooks alone.
    hand_off_webhooks: Callable[[list[WebhookClaim]], int] | None = None
    # The ticks so far: which bucket goes first when the tenants' quota is shared (jobs.tenant_quota).
    turn: int = field(default=0, init=False)

    def sweep(self) -> SweepReport:
        began = time.perf_counter()
        report = self._sweep()
        metrics.swept(report.skipped, time.perf_counter() - began, repairs(report))
        return report

    def _sweep(self) -> SweepReport:
        if tenant_quota.in_use(self.store.settings.tenant_max_inflight, self.store.keyspace):
            # With a cap across buckets: each tenant's quota goes where its groups wait, before the
            # buckets' releases use it.
            self.store.tenant_quota.rebalance_all(self.turn)
            self.turn += 1
        reports = [
            report for bucket in self.store.keyspace.buckets() if (report := self.sweep_bucket(bucket)) is not None
        ]
        if not reports:
            return SweepReport(skipped=True)
        return SweepReport(
            reclaimed=sum(r.reclaimed for r in reports),
            lease_expired=sum(r.lease_expired for r in reports),
            republished=sum(r.republished for r in reports),
            released=sum(r.released for r in reports),
            published=sum(r.published for r in reports),
            webhooks=sum(r.webhooks for r in reports),
            expired=sum(r.expired for r in reports),
        )

    def sweep_bucket(self, bucket: int) -> SweepReport | None:
        """Sweeps one bucket's indexes; None when another sweep holds its lock."""
        settings = self.store.settings
        token = uuid.uuid4().hex
        # The lock outlives a normal pass by far; if the holder dies, it expires.
        lock_ms = int(max(10.0, settings.sweep_interval * 20) * 1000)
        if not self.store.try_lock_sweep(token, lock_ms, bucket):
            return None
        try:
            now = self.store.now_ms()
            batch = settings.sweep_batch
            reclaimed = self.store.reclaim(self.store.expired_leases(now, batch, bucket))
            republished = self.store.republish(self.store.stale_queued(now, batch, bucket))
            released, children_released = self.store.release_counted(self.store.due_parents(now, batch, bucket))
            # The broker serves first in, first out: tenants take turns in what this tick sends.
            dispatches = fair_order(reclaimed.requeued + reclaimed.dispatches + republished + released)
            published = self.publish(dispatches)
            handed_off = 0
            if self.hand_off_webhooks is not None:
                handed_off = self.hand_off_webhooks(webhooks.claim_due(self.store, now, batch, bucket))
            expired = self.store.expire(self.store.due_to_expire(now, batch, bucket))
        finally:
            self.store.unlock_sweep(token, bucket)
        report = SweepReport(
            reclaimed=len(reclaimed.requeued),
            lease_expired=len(reclaimed.failed),
            republished=len(republished),
            released=children_released + reclaimed.children_released,
            published=published,
            webhooks=handed_off,
            expired=expired,
        )
        if dispatches or reclaimed.failed:
            log.warning("sweep repaired: %s", report)
        self._record_reclaims(reclaimed)
        return report

    def _record_reclaims(self, reclaimed: Reclaimed) -> None:
        """The attempts whose lease ran out: run again, or ended (failed, or cancelled as a client asked);
        and the held children fail-fast groups cancelled as those failed."""
        metrics.cancelled_unstarted(reclaimed.cancelled_unstarted)
        for dispatch in reclaimed.requeued:
            metrics.lease_ran_out(dispatch.model, None)
        if reclaimed.failed:
            try:
                ended = observed.models_and_statuses(self.store.redis, self.store.keyspace, reclaimed.failed)
            except Exception:  # metrics must not fail a sweep whose repairs are done
                log.warning("could not read the jobs whose lease ran out", exc_info=True)
                return
            for model, status in ended:
                metrics.lease_ran_out(model, status)


def repairs(report: SweepReport) -> dict[str, int]:
    """What a sweep repaired, by the action the metrics name."""
    return {
        "reclaimed": report.reclaimed,
        "lease_expired": report.lease_expired,
        "republished": report.republished,
        "released": report.released,
        "webhooks_claimed": report.webhooks,
    }
