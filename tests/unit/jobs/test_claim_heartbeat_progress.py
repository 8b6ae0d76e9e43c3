"""claim, heartbeat and progress: the attempt of a worker, and each script's return code."""

from tests.keyspace import keys

SLACK_MS = 5_000


def test_claim_takes_a_queued_single_job_for_one_attempt(kit, settings, replies):
    created = kit.store.create_single(kit.doc(0, lang="deu"))
    job_id = created.job_id
    before = kit.now_ms()

    claim = kit.store.claim(job_id)
    assert replies.last("claim").code == 1
    assert (claim.job_id, claim.attempt, claim.model, claim.content_type) == (job_id, 1, "echo", "text/plain")
    assert claim.options == {"lang": "deu"}
    assert claim.payload == b"page 0"

    job = kit.job(job_id)
    assert job["status"] == "processing"
    assert job["attempts"] == "1"
    assert job["stage"] == "started"
    assert int(job["started_at"]) >= int(job["created_at"])
    lease = kit.score(keys.leases, job_id)
    assert before + settings.lease_ms - SLACK_MS <= lease <= kit.now_ms() + settings.lease_ms
    assert kit.members(keys.queued) == set()


def test_first_child_claim_starts_the_parent_and_moves_its_counts(kit):
    created = kit.group(3, max_parallel=2)
    parent = created.job_id
    first, second, _ = kit.child_ids(parent, 3)

    kit.claim(first)
    p = kit.job(parent)
    assert (p["status"], p["stage"]) == ("processing", "processing")
    started = p["started_at"]
    assert started == kit.job(first)["started_at"]
    assert kit.counts(parent) == {
        "held": 1, "queued": 1, "processing": 1, "completed": 0, "failed": 0, "cancelled": 0,
    }  # fmt: skip
    assert kit.members(keys.queued) == {second}
    assert kit.members(keys.leases) == {first}

    kit.claim(second)
    assert kit.job(parent)["started_at"] == started  # the first start stays
    assert kit.counts(parent)["processing"] == 2
    assert kit.counts(parent)["queued"] == 0


def test_a_duplicate_claim_returns_none_and_changes_nothing(kit, replies):
    job_id = kit.single().job_id
    kit.claim(job_id)
    before = kit.snapshot()
    assert kit.store.claim(job_id) is None
    assert (replies.last("claim").code, replies.last("claim").status) == (-2, "processing")
    assert kit.snapshot() == before


def test_claiming_an_unknown_job_returns_none_and_writes_nothing(kit, replies):
    kit.single()
    before = kit.snapshot()
    assert kit.store.claim("f" * 32) is None
    assert replies.last("claim").code == -1
    assert kit.snapshot() == before


def test_a_held_child_cannot_be_claimed(kit, replies):
    parent = kit.group(2, max_parallel=1).job_id
    held = keys.child_id(parent, 1)
    before = kit.snapshot()
    assert kit.store.claim(held) is None
    assert (replies.last("claim").code, replies.last("claim").status) == (-2, "held")
    assert kit.snapshot() == before


def test_a_finished_job_cannot_be_claimed(kit, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {})
    before = kit.snapshot()
    assert kit.store.claim(job_id) is None
    assert (replies.last("claim").code, replies.last("claim").status) == (-2, "completed")
    assert kit.snapshot() == before


def test_claim_of_a_job_whose_payload_is_gone_says_so(kit, r):
    job_id = kit.single().job_id
    r.delete(keys.payload(job_id))
    assert kit.claim(job_id).payload is None


# -- heartbeat -----------------------------------------------------------------------


def test_heartbeat_extends_the_lease_of_the_holding_attempt(kit, settings, r, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    r.zadd(keys.leases(keys.bucket_of(job_id)), {job_id: 1000})
    before = kit.now_ms()
    assert kit.store.heartbeat(job_id, claim.attempt) is True
    assert replies.last("heartbeat").code == 1
    assert kit.score(keys.leases, job_id) >= before + settings.lease_ms - SLACK_MS


def test_heartbeat_of_an_unknown_job(kit, replies):
    assert kit.store.heartbeat("e" * 32, 1) is False
    assert replies.last("heartbeat").code == -1
    assert kit.members(keys.leases) == set()


def test_heartbeat_after_the_job_finished(kit, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    kit.store.complete(job_id, claim.attempt, {})
    assert kit.store.heartbeat(job_id, claim.attempt) is False
    assert replies.last("heartbeat").code == -2
    assert kit.members(keys.leases) == set()  # no lease comes back to life


def test_heartbeat_of_an_attempt_that_a_reclaim_superseded(kit, replies):
    job_id = kit.single().job_id
    old = kit.claim(job_id)
    kit.expire_lease(job_id)
    assert [d.job_id for d in kit.store.reclaim([job_id]).requeued] == [job_id]

    # Between the reclaim and the next claim the job is queued: "not processing".
    assert kit.store.heartbeat(job_id, old.attempt) is False
    assert replies.last("heartbeat").code == -2

    new = kit.claim(job_id)
    assert new.attempt == old.attempt + 1
    lease = kit.score(keys.leases, job_id)
    before = kit.snapshot()
    assert kit.store.heartbeat(job_id, old.attempt) is False
    assert replies.last("heartbeat").code == -3
    assert kit.snapshot() == before
    assert kit.score(keys.leases, job_id) == lease
    assert kit.store.heartbeat(job_id, new.attempt) is True


# -- progress ------------------------------------------------------------------------


def test_progress_is_recorded_for_the_holding_attempt(kit, replies):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    assert kit.store.report_progress(job_id, claim.attempt, "page 2/4", 0.5) is True
    assert replies.last("progress").code == 1
    job = kit.job(job_id)
    assert (job["stage"], job["progress"]) == ("page 2/4", "0.5000")


def test_progress_of_an_unknown_job(kit, replies):
    assert kit.store.report_progress("d" * 32, 1, "page 1/1", 1.0) is False
    assert replies.last("progress").code == -1


def test_progress_of_a_job_not_processing(kit, replies):
    job_id = kit.single().job_id
    before = kit.snapshot()
    assert kit.store.report_progress(job_id, 1, "page 1/2", 0.5) is False
    assert replies.last("progress").code == -2
    assert kit.snapshot() == before


def test_progress_of_a_superseded_attempt_does_not_overwrite(kit, replies):
    job_id = kit.single().job_id
    old = kit.claim(job_id)
    kit.expire_lease(job_id)
    kit.store.reclaim([job_id])
    new = kit.claim(job_id)
    kit.store.report_progress(job_id, new.attempt, "page 1/3", 0.3333)
    before = kit.snapshot()
    assert kit.store.report_progress(job_id, old.attempt, "page 3/3", 1.0) is False
    assert replies.last("progress").code == -3
    assert kit.snapshot() == before
    assert kit.job(job_id)["stage"] == "page 1/3"


def test_a_claim_carries_the_child_s_wait_from_the_freed_slot_to_its_start(kit):
    """The hand-off latency, in Redis time, from the script that claims: the worker reads nothing more."""
    group = kit.group(2, max_parallel=1)
    first, second = kit.child_ids(group.job_id, 2)
    claim = kit.claim(first)
    kit.store.complete(first, claim.attempt, {"text": "", "pages": []})

    next_claim = kit.claim(second)

    finished, started = int(kit.job(first)["finished_at"]), int(kit.job(second)["started_at"])
    assert int(kit.job(second)["queued_at"]) == finished  # released into the slot the first one freed
    assert next_claim.waited_seconds == (started - finished) / 1_000_000
    # The first child was released with its group, at creation: no slot was handed over.
    assert claim.waited_seconds is None


def test_a_single_job_has_no_hand_off(kit):
    job_id = kit.store.create_single(kit.doc(0)).job_id

    assert kit.claim(job_id).waited_seconds is None


def test_a_kept_slot_hands_over_in_no_time(kit):
    group = kit.group(2, max_parallel=1)
    first, second = kit.child_ids(group.job_id, 2)
    claim = kit.claim(first)

    completion = kit.store.complete(first, claim.attempt, {"text": "", "pages": []}, take_next="echo")

    assert completion.next_claim is not None and completion.next_claim.job_id == second
    assert completion.next_claim.waited_seconds == 0.0


def test_a_claim_carries_the_job_s_wait_from_its_creation_to_its_start(kit):
    """The queue wait, in Redis time, from the script that claims: a held child's includes its hold."""
    group = kit.group(2, max_parallel=1)
    first, second = kit.child_ids(group.job_id, 2)
    claim = kit.claim(first)
    completion = kit.store.complete(first, claim.attempt, {"text": "", "pages": []}, take_next="echo")

    for job_id, claimed in ((first, claim), (second, completion.next_claim)):
        job = kit.job(job_id)
        assert claimed is not None
        assert claimed.queue_wait_seconds == (int(job["started_at"]) - int(job["created_at"])) / 1_000_000
