"""capacity's sides wait, before the dead worker creates its jobs, until no wake-up is on its way: one that
arrived later would take a job only the dead worker may claim."""

from __future__ import annotations

import pytest

from bench import capacity_sides
from jobs.contract import Priority
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.jobs.conftest import make_kit

BATCH = Priority.BATCH.value


@pytest.fixture
def kit():
    return make_kit()


def test_the_wait_ends_once_every_wake_up_on_its_way_has_reached_a_worker(kit, monkeypatch) -> None:
    kit.single(), kit.single()
    arrived: list[str] = []

    def a_wake_up_arrives(_seconds: float) -> None:
        claim, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
        arrived.append(claim.job_id)

    monkeypatch.setattr(capacity_sides.time, "sleep", a_wake_up_arrives)

    capacity_sides.wait_wakeups_taken(kit.r)

    assert len(arrived) == 2


def test_a_lapsed_wake_up_does_not_hold_the_wait(kit, monkeypatch) -> None:
    kit.single()
    count = keys.wakeups(PINNED_BUCKET, "echo", BATCH)
    (member,) = kit.r.zrange(count, 0, -1)
    kit.r.zadd(count, {member: 1})  # its message was lost long ago

    def never(_seconds: float) -> None:
        raise AssertionError("waited for a wake-up that no longer counts")

    monkeypatch.setattr(capacity_sides.time, "sleep", never)

    capacity_sides.wait_wakeups_taken(kit.r)
