"""Random interleavings of transitions on one group keep the invariants of design.md.

Each example creates a group, runs a random list of operations (each picks
its child with a drawn number), checks the invariants after every step,
then drives every child to a terminal status and checks the end state.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from jobs.errors import LeaseLost, NotProcessing
from jobs.records import Dispatch, GroupRules
from jobs.transitions.spec import PULL
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.jobs.conftest import ACTIVE_PARENTS

OPERATIONS = ("claim", "complete", "fail", "retry", "reclaim", "release", "duplicate", "late")
TERMINAL = {"completed", "failed", "cancelled"}
COUNTED = ("held", "queued", "processing", "completed", "failed", "cancelled")
MAX_ATTEMPTS = 2
BACKOFF_SECONDS = 60.0


class GroupRun:
    """One group under test, with what the test itself knows about it."""

    def __init__(self, kit, n: int, max_parallel: int, release_batch: int):
        self.kit, self.store = kit, kit.store
        self.n, self.cap, self.batch = n, max_parallel, release_batch
        created = self.store.create_group(kit.docs(n), GroupRules(max_parallel))
        self.parent = created.job_id
        self.ids = kit.child_ids(self.parent, n)
        self.live: dict[str, int] = {}  # child -> attempt of its current claim
        self.dead: dict[str, list[int]] = {c: [] for c in self.ids}  # superseded attempts
        self.last_attempt: dict[str, int] = {}
        self.claims: Counter[str] = Counter()
        self.published: set[str] = set()  # queued children with a message out
        self.backoff: set[str] = set()  # queued by retry, waiting for the sweep
        self.failed: set[str] = set()
        self.dispatched(created.dispatches)
        self.check()

    # -- helpers ---------------------------------------------------------------------

    def dispatched(self, dispatches: list[Dispatch]) -> None:
        for d in dispatches:
            if d.task == PULL:  # a wake-up: a worker takes the model's next ready job
                assert (d.job_id, d.model) == ("", "echo"), d
                continue
            assert d.job_id in self.ids and d.model == "echo", d
            assert self.kit.status(d.job_id) == "queued", d
            self.published.add(d.job_id)

    def statuses(self) -> list[str]:
        return self.kit.statuses(self.parent, self.n)

    def pick(self, status: str, k: int) -> str | None:
        candidates = [c for c, s in zip(self.ids, self.statuses(), strict=True) if s == status]
        return candidates[k % len(candidates)] if candidates else None

    def pick_processing(self, k: int) -> str | None:
        """A processing child; when there is none, one claimed for the occasion."""
        child = self.pick("processing", k)
        if child is None and self.pick("queued", k) is not None:
            child = self.claim(k)
        return child

    def all_terminal(self) -> bool:
        return all(s in TERMINAL for s in self.statuses())

    # -- operations ------------------------------------------------------------------

    def claim(self, k: int) -> str | None:
        child = self.pick("queued", k)
        return None if child is None else self.claim_child(child)

    def claim_child(self, child: str) -> str:
        claim = self.store.claim(child)
        assert claim is not None
        self.claims[child] += 1
        assert claim.attempt == self.claims[child]
        self.live[child] = self.last_attempt[child] = claim.attempt
        self.published.discard(child)
        self.backoff.discard(child)
        return child

    def finish(self, k: int, ok: bool) -> None:
        child = self.pick_processing(k)
        if child is None:
            return
        attempt = self.live.pop(child)
        # Every third finish keeps its slot: the next child is claimed for the same worker.
        take_next = "echo" if k % 3 == 0 else None
        if ok:
            done = self.store.complete(child, attempt, {"child": child}, take_next)
        else:
            done = self.store.fail(child, attempt, "echo_failed", "asked to fail", take_next)
            self.failed.add(child)
        self.dispatched(done.dispatches)
        if done.next_claim is not None:
            taken = done.next_claim
            assert take_next and taken.job_id in self.ids
            self.published.discard(taken.job_id)  # a message of its own, if any, finds it claimed
            assert self.kit.status(taken.job_id) == "processing"
            self.claims[taken.job_id] += 1
            assert taken.attempt == self.claims[taken.job_id]
            self.live[taken.job_id] = self.last_attempt[taken.job_id] = taken.attempt
            event("finish: the slot kept for the next child")
        assert done.finalized == self.all_terminal()

    def retry(self, k: int) -> None:
        child = self.pick_processing(k)
        if child is None:
            return
        self.store.retry(child, self.live[child], BACKOFF_SECONDS, "engine_unavailable", "transient")
        self.dead[child].append(self.live.pop(child))
        self.backoff.add(child)
        self.check()
        assert self.store.republish([child]) == []  # the backoff has not passed
        self.kit.make_stale(child)
        assert self.store.republish([child]) == [Dispatch(child, "echo")]
        self.backoff.discard(child)
        self.published.add(child)
        event("retry, then republish after the backoff")

    def reclaim(self, k: int) -> None:
        child = self.pick_processing(k)
        if child is None:
            return
        self.kit.expire_lease(child)
        attempt = self.live.pop(child)
        self.dead[child].append(attempt)
        reclaimed = self.store.reclaim([child])
        if attempt < MAX_ATTEMPTS:
            assert reclaimed.requeued == [Dispatch(child, "echo")]
            assert reclaimed.failed == [] and reclaimed.dispatches == []
            self.published.add(child)
            event("reclaim: requeued")
        else:
            assert reclaimed.requeued == [] and reclaimed.failed == [child]
            self.failed.add(child)
            self.dispatched(reclaimed.dispatches)
            event("reclaim: failed lease_expired" + (", finalized the parent" if self.all_terminal() else ""))

    def release(self) -> None:
        self.dispatched(self.store.release([self.parent]))

    def duplicate(self, k: int) -> None:
        """A repeated message: a claim of a job not queued, or a completion of a job not processing."""
        child = self.ids[k % self.n]
        status = self.kit.status(child)
        before = self.kit.snapshot()
        if status == "queued" or (status != "processing" and (k // self.n) % 2):
            attempt = self.last_attempt.get(child, 1)
            with pytest.raises(NotProcessing):
                self.store.complete(child, attempt, {"late": True})
            event(f"duplicate: complete of a {status} child -> NotProcessing")
        else:
            assert self.store.claim(child) is None
            event(f"duplicate: claim of a {status} child")
        assert self.kit.snapshot() == before

    def late(self, k: int) -> None:
        """An attempt that was given up on (retried or reclaimed) reports at last."""
        superseded = [c for c in self.ids if self.dead[c]]
        if not superseded:
            return
        statuses = dict(zip(self.ids, self.statuses(), strict=True))
        rerunning = [c for c in superseded if statuses[c] == "processing"]
        waiting = [c for c in superseded if statuses[c] == "queued"]
        if not rerunning and waiting and k % 2:
            # Most often the dead attempt reports after a new one has started.
            rerunning = [self.claim_child(waiting[k % len(waiting)])]
        child = (rerunning or superseded)[k % len(rerunning or superseded)]
        status = self.kit.status(child)
        expected = LeaseLost if status == "processing" else NotProcessing
        before = self.kit.snapshot()
        with pytest.raises(expected):
            self.store.complete(child, self.dead[child][-1], {"late": True})
        with pytest.raises(expected):
            self.store.fail(child, self.dead[child][-1], "late", "late")
        assert self.kit.snapshot() == before
        event(f"late: a dead attempt of a {status} child -> {expected.__name__}")

    def run(self, op: str, k: int) -> None:
        if op == "complete":
            self.finish(k, ok=True)
        elif op == "fail":
            self.finish(k, ok=False)
        elif op == "release":
            self.release()
        else:
            getattr(self, op)(k)

    # -- invariants ----------------------------------------------------------------------

    def check(self) -> None:
        parent_id = self.parent
        state = self.kit.group_state(parent_id, self.n)
        parent, statuses, indexes, events = state["parent"], state["statuses"], state["indexes"], state["events"]
        by_status = Counter(statuses)
        having = lambda status: {c for c, s in zip(self.ids, statuses, strict=True) if s == status}  # noqa: E731

        # The parent's counts are the counts of its children's statuses.
        assert {s: int(parent[f"n_{s}"]) for s in COUNTED} == {s: by_status[s] for s in COUNTED}

        # Never more than max_parallel in flight.
        in_flight = by_status["queued"] + by_status["processing"]
        if self.cap > 0:
            assert in_flight <= self.cap, statuses

        # Release is in index order: the held children are the last ones.
        first_held = statuses.index("held") if "held" in statuses else self.n
        assert [s == "held" for s in statuses] == [i >= first_held for i in range(self.n)], statuses

        # No child waits held beside a free slot, except while the parent is due
        # for the sweep (a batch limit cut its release short); and only then is it due.
        slot_free = self.cap <= 0 or in_flight < self.cap
        waiting = by_status["held"] > 0 and slot_free
        assert (parent_id in indexes[keys.due_parents(PINNED_BUCKET)]) == waiting, (statuses, self.batch)
        if waiting:
            assert self.batch < self.n
            event("a parent left due by the batch limit")

        # The tenant's in-flight count is its queued + processing children.
        self.kit.assert_tenant_in_flight()

        # The indexes agree with the statuses.
        assert indexes[keys.queued(PINNED_BUCKET)] == having("queued")
        assert indexes[keys.leases(PINNED_BUCKET)] == having("processing")
        # Every queued child is in the ready index (a worker takes it from there), or has a message out.
        assert having("queued") <= set(self.kit.ready()) | self.published | self.backoff

        # The parent's per-status children sets hold exactly the children in each status,
        # and the listing holds the parent under its status alone.
        assert state["children_by_status"] == {s: having(s) for s in COUNTED}
        assert state["parent_listed_as"] == {parent["status"]}

        # Every ended attempt left its interval, in order, each within the one after it;
        # only a processing child has an attempt still running.
        for child, status, attempts, runs in zip(
            self.ids, statuses, state["attempts"], state["intervals"], strict=True
        ):
            ended = attempts - 1 if status == "processing" else attempts
            assert [run[0] for run in runs] == list(range(1, ended + 1)), (child, status, runs)
            assert all(start <= end for _, start, end, _ in runs)
            assert all(a[2] <= b[1] for a, b in zip(runs, runs[1:], strict=False))

        # Attempts count claims; failures are those the test caused.
        assert state["attempts"] == [self.claims[c] for c in self.ids]
        assert having("failed") == self.failed

        # Each child has one job_child event once terminal, none before.
        for child, status in zip(self.ids, statuses, strict=True):
            mine = [e for e in events if e["job_id"] == child]
            if status in TERMINAL:
                assert [(e["operation"], e["status"], e["parent_job_id"]) for e in mine] == [
                    ("job_child", status, parent_id)
                ]
            else:
                assert mine == []

        # The parent is terminal exactly when all children are, with one event.
        parent_events = [e for e in events if e["job_id"] == parent_id]
        if all(s in TERMINAL for s in statuses):
            expected = ("failed", "child_failed") if self.failed else ("completed", "")
            assert (parent["status"], parent["error_code"]) == expected
            assert [(e["operation"], e["status"], e["error_code"]) for e in parent_events] == [("job", *expected)]
            assert events[-1]["job_id"] == parent_id
            assert parent["finished_at"] != ""
            assert all(parent_id not in indexes[index(PINNED_BUCKET)] for index in ACTIVE_PARENTS)
        else:
            assert parent["status"] == ("processing" if sum(self.claims.values()) else "queued")
            assert parent_events == []
            assert parent["finished_at"] == ""
            assert any(parent_id in indexes[index(PINNED_BUCKET)] for index in ACTIVE_PARENTS)

    def drain(self, fail_indexes: set[int]) -> None:
        """Drives every child to a terminal status, as workers and the sweep would."""
        for _ in range(3 * self.n + 3):
            if self.all_terminal():
                return
            self.release()
            for retried in sorted(self.backoff):
                self.kit.make_stale(retried)
                self.dispatched(self.store.republish([retried]))
                self.backoff.discard(retried)
            while (child := self.pick("queued", 0)) is not None:
                self.claim(0)
            while (child := self.pick("processing", 0)) is not None:
                self.finish(0, ok=self.ids.index(child) not in fail_indexes)
            self.check()
        assert self.all_terminal(), f"stuck: {self.statuses()}"


@hypothesis_settings(max_examples=150, deadline=None)
@given(
    n=st.integers(1, 12),
    max_parallel=st.integers(-1, 5),
    release_batch=st.sampled_from([1, 3, 256]),
    steps=st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 1 << 16)), min_size=5, max_size=30),
    fail_indexes=st.sets(st.integers(0, 11), max_size=3),
)
def test_random_interleavings_keep_the_group_invariants(new_kit, n, max_parallel, release_batch, steps, fail_indexes):
    kit = new_kit(release_batch=release_batch, max_attempts=MAX_ATTEMPTS)
    run = GroupRun(kit, n, max_parallel, release_batch)
    for op, k in steps:
        run.run(op, k)
        run.check()
    if run.all_terminal():
        event("the parent was finalized by the random steps")
    run.drain(fail_indexes)
    run.check()

    # The end state: every child terminal once, the parent terminal once, by collect-all.
    events = kit.events(run.parent)
    assert Counter(e["job_id"] for e in events) == Counter(run.ids + [run.parent])
    assert [e["operation"] for e in events].count("job") == 1
    expected = "failed" if run.failed else "completed"
    assert kit.job(run.parent)["status"] == expected
    assert kit.active_parents() == kit.members(keys.due_parents) == set()
    assert kit.members(keys.queued) == kit.members(keys.leases) == set()
