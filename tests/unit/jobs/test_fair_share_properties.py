"""Random interleavings over several tenants and groups keep the fair-share invariants.

Each example creates groups for two tenants under a tenant cap, runs a
random list of operations (create, claim, complete with or without a kept
slot, fail, reclaim, cancel, a higher cap, the sweep, redrive), checks the
invariants after every step, then drives every job to its end.

The invariants: each tenant's in-flight count equals its queued and
processing children and never exceeds the cap; no group exceeds its own
cap; and no group is forgotten: a group that could take a child (held
children, a free slot of its own) either waits in its full tenant's line
(or is due now, its release cut short by the batch limit) or, when its
tenant has room, the sweep has some group of that tenant due now.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from jobs import controls
from jobs.errors import JobFinished, NothingToRetry
from jobs.ids import tenant_tag
from jobs.records import GroupRules, Owner
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET

TENANTS = ("tenant-a", "tenant-b")
OPERATIONS = ("create", "claim", "complete", "keep", "fail", "reclaim", "cancel", "raise_cap", "sweep", "redrive")
TERMINAL = {"completed", "failed", "cancelled"}


class Run:
    def __init__(self, kit, cap: int):
        self.kit, self.store, self.cap = kit, kit.store, cap
        self.groups: dict[str, tuple[str, int]] = {}  # parent -> (tenant, size)
        self.live: dict[str, int] = {}  # processing child -> attempt of its current claim

    # -- operations ----------------------------------------------------------------------

    def create(self, k: int) -> None:
        tenant, size, cap = TENANTS[k % 2], 1 + k % 5, (k // 2) % 3
        created = self.store.create_group(self.kit.docs(size), GroupRules(cap), owner=Owner(tenant))
        self.groups[created.job_id] = (tenant, size)

    def children(self, status: str) -> list[str]:
        return sorted(m.decode() for p in self.groups for m in self.kit.r.zrange(keys.children(p, status), 0, -1))

    def pick(self, status: str, k: int) -> str | None:
        found = self.children(status)
        return found[k % len(found)] if found else None

    def claim(self, k: int) -> None:
        child = self.pick("queued", k)
        if child is not None:
            self.live[child] = self.store.claim(child).attempt

    def finish(self, k: int, how: str) -> None:
        child = self.pick("processing", k)
        if child is None:
            return
        attempt = self.live.pop(child)
        if how == "fail":
            done = self.store.fail(child, attempt, "echo_failed", "asked to fail")
        else:
            done = self.store.complete(child, attempt, {}, take_next="echo" if how == "keep" else None)
        if done.next_claim is not None:
            self.live[done.next_claim.job_id] = done.next_claim.attempt
            event("a kept slot")

    def reclaim(self, k: int) -> None:
        child = self.pick("processing", k)
        if child is None:
            return
        self.live.pop(child)
        self.kit.expire_lease(child)
        self.store.reclaim([child])

    def cancel(self, k: int) -> None:
        targets = sorted(self.groups) + self.children("held") + self.children("queued")
        with contextlib.suppress(JobFinished):
            controls.cancel(self.store, targets[k % len(targets)])

    def raise_cap(self, k: int) -> None:
        parent = sorted(self.groups)[k % len(self.groups)]
        cap = int(self.kit.job(parent)["max_parallel"])
        with contextlib.suppress(JobFinished):
            controls.set_cap(self.store, parent, 0 if cap <= 0 or k % 3 == 0 else cap + 1)

    def sweep(self) -> None:
        self.store.release(self.store.due_parents(self.kit.now_ms(), 100))

    def redrive(self, k: int) -> None:
        parent = sorted(self.groups)[k % len(self.groups)]
        if self.kit.job(parent)["status"] in TERMINAL:
            try:
                controls.redrive(self.store, parent, include_cancelled=True)
                event("a redrive")
            except NothingToRetry:
                pass

    def run(self, op: str, k: int) -> None:
        if op in ("complete", "keep", "fail"):
            self.finish(k, op)
        elif op == "sweep":
            self.sweep()
        else:
            getattr(self, op)(k)

    # -- invariants ----------------------------------------------------------------------

    def check(self) -> None:
        kit = self.kit
        kit.assert_tenant_in_flight()
        now = kit.now_ms()
        for tenant in TENANTS:
            tag = tenant_tag(tenant)
            in_flight = int(kit.r.get(keys.tenant_in_flight(tag, PINNED_BUCKET)) or 0)
            assert in_flight <= self.cap, (tenant, in_flight)
            line = {m.decode() for m in kit.r.zrange(keys.tenant_waiting(tag, PINNED_BUCKET), 0, -1)}
            assert {p[: len(tag)] for p in line} <= {tag}
            could_take = []
            due_now: set[str] = set()
            for parent, (owner, _) in self.groups.items():
                if owner != tenant:
                    continue
                p = kit.job(parent)
                counts = kit.counts(parent)
                cap = int(p["max_parallel"])
                group_in_flight = counts["queued"] + counts["processing"]
                if cap > 0:
                    assert group_in_flight <= cap, (parent, counts)
                if p["status"] not in TERMINAL and counts["held"] and (cap <= 0 or group_in_flight < cap):
                    could_take.append(parent)
                score = kit.score(keys.due_parents, parent)
                if score is not None and score <= now:
                    due_now.add(parent)
            # The tenant's room in the bucket: its cap, and with more than one bucket its quota there (and the
            # ceiling the sweep set while taking quota back, jobs.tenant_quota).
            limit = self.cap
            if keys.bucket_count > 1:
                quota, ceiling = kit.r.hmget(keys.tenant_quota(tag, PINNED_BUCKET), "quota", "ceiling")
                limit = min(limit, int(quota or 0), int(ceiling) if ceiling is not None else limit)
            if in_flight >= limit:
                # Due now: a release that its batch limit cut short, before the tenant filled up.
                assert set(could_take) <= line | due_now, (tenant, could_take, line, due_now)
                if set(could_take) & line:
                    event("a group waits in its tenant's line")
            elif could_take:
                assert due_now, (tenant, could_take)

    def drain(self) -> None:
        for _ in range(200):
            if all(self.kit.job(p)["status"] in TERMINAL for p in self.groups):
                return
            self.sweep()
            while self.pick("queued", 0) is not None:
                self.claim(0)
            while self.pick("processing", 0) is not None:
                self.finish(0, "keep")
            self.check()
        pytest.fail("the groups never ended")


@hypothesis_settings(max_examples=60, deadline=None)
@given(
    cap=st.integers(1, 3),
    release_batch=st.sampled_from([1, 2, 256]),
    creates=st.lists(st.integers(0, 1 << 16), min_size=2, max_size=4),
    steps=st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 1 << 16)), min_size=5, max_size=30),
)
def test_random_interleavings_keep_the_fair_share_invariants(new_kit, cap, release_batch, creates, steps):
    kit = new_kit(tenant_max_inflight=cap, release_batch=release_batch, max_attempts=2)
    run = Run(kit, cap)
    for k in creates:
        run.create(k)
        run.check()
    for op, k in steps:
        run.run(op, k)
        run.check()
    run.drain()

    for tenant in TENANTS:
        tag = tenant_tag(tenant)
        assert int(kit.r.get(keys.tenant_in_flight(tag, PINNED_BUCKET)) or 0) == 0
        assert kit.r.zcard(keys.tenant_waiting(tag, PINNED_BUCKET)) == 0
    assert kit.members(keys.due_parents) == kit.members(keys.queued) == kit.members(keys.leases) == set()
