"""A tenant's cap across buckets: its quota ledger.

With one bucket a tenant's in-flight count is in one place and the release
compares it with OCRGW_TENANT_MAX_INFLIGHT; this module is not used.  With
more, each bucket counts only the tenant's children in flight there, so the
cap is dealt out: each bucket holds a *quota* of the tenant's
(``keys.tenant_quota``), which its releases never exceed (includes/release.lua,
``tenant_room``), and the tenant's *ledger* (``keys.ledger``, a slot of its
own) records what it granted each bucket.  At all times

    sum over buckets of quota_b  <=  sum of the ledger's grants  <=  cap

(per bucket even: quota_b <= the ledger's grant to b), and the in-flight
count of a bucket never exceeds its quota, so the tenant never has more than
its cap in flight, whatever crashes.

* A *grant* of k to bucket b: the ledger first (``ledger_grant``: as much of k
  as keeps its grants within the cap; it answers its epoch e), then the bucket
  (``quota_grant``: + what was granted, unless the bucket was fenced with an
  epoch later than e).
* A *return* from bucket b: the bucket first (``quota_return``: no more than
  its in-flight children leave unused), then the ledger (``ledger_return``:
  only if its epoch is still the one read before the bucket's step).
* A crash between the two steps of either leaves the ledger above the bucket:
  the tenant runs below its cap until a *reconcile* (``ledger_open``: a new
  epoch; ``quota_fence`` of each bucket with it, reading its quota;
  ``ledger_settle``: the ledger's grants set to what was read, if nothing moved
  in the ledger meanwhile; the epoch then moves on once more).

Who moves quota: a creation of a group, for its root's bucket, when the
bucket's free quota is short of what the group could start (``ensure_room``:
one ledger call per creation, none per child); and the coordinator's sweep,
each tick (``rebalance``): it takes back the unused quota of the buckets
where none of the tenant's groups waits, shares the cap among the buckets
where some do (in proportion to how many wait there), and reconciles when
the ledger and the buckets disagree.  A child's completion frees quota in its
own bucket, which the tenant's other groups there use at once.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from jobs import keys
from jobs.config import Settings
from jobs.connections import StoreClient, text_of
from jobs.contract import Reply
from jobs.keys import Keyspace
from jobs.transitions import (
    ledger_forget,
    ledger_grant,
    ledger_open,
    ledger_return,
    ledger_settle,
    quota_fence,
    quota_grant,
    quota_return,
    unlock_sweep,
)
from jobs.transitions.context import StoreContext
from jobs.transitions.scripts import Scripts

log = logging.getLogger(__name__)

#: How long a rebalance of one tenant holds its lock at most (a dead holder's lapses).
LOCK_MS = 10_000


def field(bucket: int) -> str:
    """A bucket's field in a ledger."""
    return f"b{bucket}"


def in_use(cap: int, keyspace: Keyspace) -> bool:
    """Whether tenants' caps are dealt out by ledgers: a cap, and more than one bucket."""
    return cap > 0 and keyspace.bucket_count > 1


@dataclass(frozen=True)
class BucketQuota:
    """What a bucket holds of a tenant's: its quota, its children in flight, its groups waiting for room."""

    quota: int = 0
    in_flight: int = 0
    waiting: int = 0
    ceiling: int | None = None


@contextmanager
def room_for(ctx: StoreContext, root_id: str, could_start: int) -> Iterator[bool]:
    """Around a transition that may release up to ``could_start`` children of the group: with a tenant cap
    across buckets, grants the root's bucket the quota it lacks for them first (one ledger call, when short),
    and touches the tenant again after, now that its group is as the transition left it, so that the sweep
    keeps rebalancing its quota.  Yields whether the ledger is in use."""
    cap = ctx.settings.tenant_max_inflight
    if not in_use(cap, ctx.keyspace):
        yield False
        return
    quota = TenantQuota(ctx.redis, ctx.scripts, cap, ctx.keyspace, ctx.settings)
    quota.ensure_room(keys.tag_of(root_id), ctx.keyspace.bucket_of(root_id), could_start)
    yield True
    quota.touch(keys.tag_of(root_id))


def _int(value: int | bytes | str | None) -> int:
    return int(value) if value is not None else 0


class TenantQuota:
    """The ledger's moves for one store (its client, scripts and cap)."""

    def __init__(
        self, client: StoreClient, scripts: Scripts, cap: int, keyspace: Keyspace, settings: Settings | None = None
    ):
        """``settings``: the store's, whose cap is ``cap`` (settings of that cap and of the keyspace's bucket count
        alone when not given)."""
        self.redis = client
        self.keyspace = keyspace
        self.scripts = scripts
        self.cap = cap
        self.context = StoreContext(
            client,
            scripts,
            settings or Settings(tenant_max_inflight=cap, store_buckets=keyspace.bucket_count),
            keyspace,
        )
        # The ledger's ``seq`` of each tenant whose ledger and buckets disagreed at the last rebalance.
        self._suspect: dict[str, int] = {}

    # -- reads ---------------------------------------------------------------------------------

    def buckets(self, tag: str) -> list[BucketQuota]:
        """Every bucket's share of the tenant's, in one round trip (a pipeline)."""
        pipe = self.redis.pipeline(transaction=False)
        for b in self.keyspace.buckets():
            pipe.hmget(self.keyspace.tenant_quota(tag, b), keys.QUOTA_FIELD, keys.CEILING_FIELD)
            pipe.get(self.keyspace.tenant_in_flight(tag, b))
            pipe.zcard(self.keyspace.tenant_waiting(tag, b))
        raw = pipe.execute()
        out = []
        for i in range(0, len(raw), 3):
            (quota, ceiling), in_flight, waiting = raw[i], raw[i + 1], raw[i + 2]
            out.append(
                BucketQuota(_int(quota), _int(in_flight), _int(waiting), None if ceiling is None else int(ceiling))
            )
        return out

    def bucket(self, tag: str, bucket: int) -> BucketQuota:
        pipe = self.redis.pipeline(transaction=False)
        pipe.hmget(self.keyspace.tenant_quota(tag, bucket), keys.QUOTA_FIELD, keys.CEILING_FIELD)
        pipe.get(self.keyspace.tenant_in_flight(tag, bucket))
        (quota, ceiling), in_flight = pipe.execute()
        return BucketQuota(_int(quota), _int(in_flight), 0, None if ceiling is None else int(ceiling))

    def ledger(self, tag: str) -> dict[str, int]:
        """The ledger's fields: ``epoch``, ``seq``, ``b<i>``."""
        return {text_of(k): int(v) for k, v in self.redis.hgetall(keys.ledger(tag)).items()}

    # -- the two-step moves --------------------------------------------------------------------

    def grant_ledger(self, tag: str, bucket: int, k: int) -> tuple[int, int]:
        """A grant's first step: (granted, epoch)."""
        reply = ledger_grant.call(self.context, tag, field(bucket), k, self.cap)
        return reply.granted, reply.epoch

    def grant_bucket(self, tag: str, bucket: int, k: int, epoch: int) -> bool:
        """A grant's second step: whether the bucket took it (a reconcile's fence refuses an older epoch)."""
        return quota_grant.call(self.context, tag, bucket, k, epoch).code == Reply.OK

    def grant(self, tag: str, bucket: int, k: int) -> int:
        """Grants up to ``k`` of the tenant's cap to ``bucket``; what the bucket got."""
        if k <= 0:
            return 0
        granted, epoch = self.grant_ledger(tag, bucket, k)
        if granted <= 0:
            return 0
        return granted if self.grant_bucket(tag, bucket, granted, epoch) else 0

    def epoch(self, tag: str) -> int:
        return _int(self.redis.hget(keys.ledger(tag), "epoch"))

    def return_bucket(self, tag: str, bucket: int, k: int, ceiling: int | None) -> int:
        """A return's first step: what the bucket gave back (at most ``k``); sets or clears its ceiling."""
        return quota_return.call(self.context, tag, bucket, k, ceiling).returned

    def return_ledger(self, tag: str, bucket: int, k: int, epoch: int) -> bool:
        """A return's second step: whether the ledger took it (refused once a reconcile moved the epoch)."""
        return ledger_return.call(self.context, tag, field(bucket), k, epoch).code == Reply.OK

    def give_back(self, tag: str, bucket: int, k: int, ceiling: int | None = None) -> int:
        """Takes up to ``k`` of the bucket's unused quota back to the ledger; what the bucket gave back."""
        epoch = self.epoch(tag)
        returned = self.return_bucket(tag, bucket, k, ceiling)
        if returned > 0:
            self.return_ledger(tag, bucket, returned, epoch)
        return returned

    def reconcile(self, tag: str) -> bool:
        """Sets the ledger's grants to the buckets' quotas (what crashed moves leaked); False when the ledger
        moved meanwhile (nothing written: the next try does it)."""
        opened = ledger_open.call(self.context, tag)
        grants = {}
        for b in self.keyspace.buckets():
            read = quota_fence.call(self.context, tag, b, opened.epoch)
            if read.quota > 0:
                grants[field(b)] = read.quota
        return ledger_settle.call(self.context, tag, opened.epoch, opened.seq, grants).code == Reply.OK

    # -- who moves quota -----------------------------------------------------------------------

    def ensure_room(self, tag: str, bucket: int, need: int) -> int:
        """Before a creation of a group that could start ``need`` children at once: grants the bucket what
        its free quota lacks of that (within the cap).  Marks the tenant for the sweep's rebalance."""
        self.touch(tag)
        need = min(need, self.cap)
        state = self.bucket(tag, bucket)
        free = state.quota - state.in_flight
        if state.ceiling is not None:
            free = min(free, state.ceiling - state.in_flight)
        if free >= need:
            return 0
        return self.grant(tag, bucket, need - max(free, 0))

    def touch(self, tag: str) -> None:
        """Puts the tenant among those the sweep rebalances (``keys.LEDGERS``; each touch adds 1 to its score,
        so that the sweep does not take out a tenant touched since it read it)."""
        self.redis.zincrby(keys.LEDGERS, 1, tag)

    def tenants(self) -> list[tuple[str, int]]:
        scored = cast(list[tuple[bytes, float]], self.redis.zrange(keys.LEDGERS, 0, -1, withscores=True))
        return [(m.decode(), int(score)) for m, score in scored]

    def rebalance_all(self, turn: int = 0) -> None:
        """The sweep's: each tenant with a ledger, under its lock (another coordinator's tenants are left)."""
        for tag, touched in self.tenants():
            try:
                self.rebalance(tag, turn, touched)
            except Exception:  # one tenant's trouble must not stop the others' nor the sweep
                log.warning("could not rebalance the quota of tenant %s", tag, exc_info=True)

    def rebalance(self, tag: str, turn: int = 0, touched: int | None = None) -> bool:
        """Moves the tenant's quota to where its groups wait; False when another holds its lock."""
        token = uuid.uuid4().hex
        lock = keys.ledger_lock(tag)
        if not self.redis.set(lock, token, nx=True, px=LOCK_MS):
            return False
        try:
            self._rebalance(tag, turn, touched)
        finally:
            unlock_sweep.call(self.context, lock, token)
        return True

    def _rebalance(self, tag: str, turn: int, touched: int | None) -> None:
        ledger = self.ledger(tag)
        state = self.buckets(tag)
        if any(ledger.get(field(b), 0) != s.quota for b, s in enumerate(state)):
            # A move in progress, or one a crash cut short.  Seen with the ledger as it was at the last
            # tick (no grant or return since: none is in progress), the reconcile settles the ledger on
            # the buckets; a reconcile sooner would void the grants of creations under way.
            if self._suspect.get(tag) == ledger.get("seq", 0) and self.reconcile(tag):
                state = self.buckets(tag)
                self._suspect.pop(tag, None)
            else:
                self._suspect[tag] = ledger.get("seq", 0)
        else:
            self._suspect.pop(tag, None)
        targets = shares(self.cap, state, turn)
        for b, s in enumerate(state):
            target = targets[b]
            ceiling = target if s.waiting > 0 else None
            if s.quota > target or s.ceiling != ceiling:
                self.give_back(tag, b, max(0, s.quota - target), ceiling)
        state = self.buckets(tag)
        for b, s in enumerate(state):
            if targets[b] > s.quota:
                self.grant(tag, b, targets[b] - s.quota)
        idle = not any(s.quota or s.in_flight or s.waiting for s in state)
        if touched is not None and idle and not any(k.startswith("b") and v for k, v in self.ledger(tag).items()):
            # Nothing of the tenant's anywhere: out of the rebalanced tenants, unless touched since read.
            ledger_forget.call(self.context, tag, touched)


def shares(cap: int, state: list[BucketQuota], turn: int = 0) -> list[int]:
    """What quota each bucket should hold: a bucket where none of the tenant's groups waits keeps what its
    children in flight use; the rest of the cap goes to the buckets where some wait, in proportion to how
    many do, what the division leaves one each in turn (``turn``, the sweep's tick, rotates who is first)."""
    waiting = [b for b, s in enumerate(state) if s.waiting > 0]
    targets = [s.in_flight for s in state]
    if not waiting:
        return targets
    room = max(0, cap - sum(s.in_flight for b, s in enumerate(state) if s.waiting == 0))
    total = sum(state[b].waiting for b in waiting)
    for b in waiting:
        targets[b] = room * state[b].waiting // total
    left = room - sum(targets[b] for b in waiting)
    start = turn % len(waiting)
    for b in (waiting[start:] + waiting[:start])[:left]:
        targets[b] += 1
    return targets
