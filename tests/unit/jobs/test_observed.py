"""What the metrics read from the store: jobs per model and status from the in-flight indexes."""

from __future__ import annotations

from jobs import observed
from jobs.contract import JobStatus
from jobs.records import GroupRules, NewJob
from tests.keyspace import keys


def png(i: int) -> NewJob:
    return NewJob(model="tesseract", content_type="image/png", payload=f"image {i}".encode())


def test_nothing_in_flight_reads_zero_for_every_model(store):
    now = observed.occupancy(store.redis, keys)

    assert (sum(now.held.values()), sum(now.queued.values()), sum(now.processing.values())) == (0, 0, 0)
    assert now.models == ["tesseract", "paddleocr", "echo"]


def test_a_capped_group_shows_its_held_queued_and_processing_children(kit):
    group = kit.group(5, max_parallel=2)
    kit.claim(keys.child_id(group.job_id, 0))
    kit.single()

    now = observed.occupancy(kit.r, keys)

    assert now.held == {"echo": 3}
    assert now.queued == {"echo": 2}  # child 1 and the single job
    assert now.processing == {"echo": 1}


def test_a_mixed_group_counts_each_child_under_its_own_model(kit):
    children = [kit.doc(0), png(1), kit.doc(2), png(3), png(4)]
    group = kit.store.create_group(children, GroupRules(2))
    assert kit.job(group.job_id)["model"] == observed.MIXED
    kit.claim(keys.child_id(group.job_id, 0))

    now = observed.occupancy(kit.r, keys)

    assert now.processing == {"echo": 1}
    assert now.queued == {"tesseract": 1}
    assert now.held == {"echo": 1, "tesseract": 2}


def test_held_children_of_a_group_with_nothing_in_flight_are_found_through_the_due_index(kit):
    """A group whose creator died before releasing: every child held, the parent due."""
    group = kit.group(3, max_parallel=1, release=False)
    assert kit.members(keys.queued) == set() and group.job_id in kit.members(keys.due_parents)

    assert observed.occupancy(kit.r, keys).held == {"echo": 3}


def test_counts_follow_the_transitions_to_the_end(kit):
    group = kit.group(3, max_parallel=1)
    for i in range(3):
        claim = kit.claim(keys.child_id(group.job_id, i))
        kit.store.complete(claim.job_id, claim.attempt, {"text": "", "pages": []})

    now = observed.occupancy(kit.r, keys)

    assert (now.held, now.queued, now.processing) == ({}, {}, {})
    assert kit.status(group.job_id) == JobStatus.COMPLETED.value


def test_models_and_statuses_of_jobs_that_ended(kit):
    created = kit.single()
    claim = kit.claim(created.job_id)
    kit.store.fail(created.job_id, claim.attempt, "echo_failed", "asked to")

    assert observed.models_and_statuses(kit.r, keys, [created.job_id, "0" * 32]) == [("echo", "failed"), ("", "")]


def test_a_sample_keeps_the_occupancy_in_one_key_with_the_store_s_time(kit):
    children = [kit.doc(0), png(1), kit.doc(2), png(3), png(4)]
    kit.store.create_group(children, GroupRules(2))
    kit.single()
    assert observed.last_sample(kit.r) is None  # nothing counted yet

    recorded = observed.record_sample(kit.r, keys)
    read = observed.last_sample(kit.r)

    seconds, micros = kit.r.time()
    assert 0 < recorded.sampled_at_ms <= seconds * 1000 + micros // 1000
    assert read == recorded
    assert read is not None and read.occupancy == observed.occupancy(kit.r, keys)
    assert read.occupancy.held == {"echo": 1, "tesseract": 2}
