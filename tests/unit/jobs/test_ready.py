"""The ready index and its wake-ups: a finishing worker (``complete``) or a woken one (``claim_next``)
takes the model's next due job, interactive first, then in the order jobs were queued, whichever group
or single job it is; a wake-up is published only for a ready job that none on its way counts for."""

from dataclasses import replace

from jobs import controls
from jobs.contract import Priority
from jobs.records import Dispatch, GroupRules
from jobs.transitions.spec import PULL
from tests.keyspace import keys
from tests.unit.conftest import PINNED_BUCKET
from tests.unit.jobs.conftest import roots_of

INTERACTIVE = Priority.INTERACTIVE.value
BATCH = Priority.BATCH.value


def wake(model: str = "echo", lane: str = BATCH) -> Dispatch:
    return Dispatch("", model, PULL, lane, PINNED_BUCKET)


def ready(kit, model: str = "echo", lane: str = BATCH) -> list[str]:
    return [m.decode() for m in kit.r.zrange(keys.ready(PINNED_BUCKET, model, lane), 0, -1)]


def pending(kit, model: str = "echo", lane: str = BATCH) -> int:
    return kit.r.zcard(keys.wakeups(PINNED_BUCKET, model, lane))


def test_a_release_asks_for_one_wake_up_per_ready_job_not_yet_counted(kit):
    first = kit.group(3, max_parallel=2)
    assert first.dispatches == [wake(), wake()]
    assert ready(kit) == kit.child_ids(first.job_id, 2)

    second = kit.single()
    assert second.dispatches == [wake()]
    assert pending(kit) == 3

    # A woken worker takes one: its wake-up stops counting, and the jobs left are counted for already.
    claim, wake_ups = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
    assert claim.job_id == kit.child_ids(first.job_id, 1)[0]
    assert wake_ups == [] and pending(kit) == 2


def test_a_wake_up_counts_only_until_it_expires(kit, r):
    kit.single()
    assert pending(kit) == 1
    # The message was lost: once its time is over it no longer counts, and the next change asks again.
    (member,) = r.zrange(keys.wakeups(PINNED_BUCKET, "echo", BATCH), 0, -1)
    r.zadd(keys.wakeups(PINNED_BUCKET, "echo", BATCH), {member: 1})

    assert kit.single().dispatches == [wake(), wake()]


def test_the_next_job_is_the_first_queued_of_any_group_or_single_job(kit):
    a = kit.child_ids(kit.group(3, max_parallel=1).job_id, 3)
    b = kit.child_ids(kit.group(2, max_parallel=1).job_id, 2)
    single = kit.single().job_id
    running = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0]
    assert running.job_id == a[0]

    done = kit.store.complete(a[0], running.attempt, {}, take_next="echo")

    # a[1] was released just now, behind b[0] and the single job: b[0] is next.
    assert done.next_claim.job_id == b[0]
    assert done.dispatches == []
    assert ready(kit) == [single, a[1]]
    taken = kit.store.complete(b[0], done.next_claim.attempt, {}, take_next="echo").next_claim
    assert taken.job_id == single
    assert kit.status(single) == "processing"
    assert kit.store.complete(single, taken.attempt, {}, take_next="echo").next_claim.job_id == a[1]


def test_interactive_work_is_taken_before_batch(kit):
    batch = kit.single().job_id
    group = kit.store.create_group(kit.docs(2), GroupRules(max_parallel=1, priority=INTERACTIVE))
    assert group.dispatches == [wake(lane=INTERACTIVE)]
    interactive = kit.child_ids(group.job_id, 1)[0]

    claim, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)

    assert claim.job_id == interactive
    assert kit.status(batch) == "queued"


def test_a_cancelled_job_s_entry_is_skipped(kit):
    cancelled = kit.single().job_id
    kept = kit.single().job_id
    controls.cancel(kit.store, cancelled)
    assert kit.status(cancelled) == "cancelled"

    claim, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)

    assert claim.job_id == kept
    assert ready(kit) == []


def test_a_job_claimed_by_its_own_message_leaves_the_index(kit):
    job = kit.single().job_id
    kit.claim(job)

    assert ready(kit) == []
    assert kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0] is None


def test_a_job_of_another_model_is_not_taken(kit):
    tesseract = kit.store.create_single(kit.doc(model="tesseract")).job_id

    assert kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0] is None
    assert kit.store.claim_next("tesseract", BATCH, PINNED_BUCKET)[0].job_id == tesseract


def test_a_retry_waits_out_its_backoff_before_it_enters_the_index(kit, r):
    job = kit.single().job_id
    claim = kit.claim(job)
    kit.store.retry(job, claim.attempt, 60.0, "engine_unavailable", "try later")

    assert ready(kit) == []
    assert kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0] is None
    assert r.zrange(keys.later(PINNED_BUCKET), 0, -1) == [job.encode()]  # not due: it stays

    r.zadd(keys.later(PINNED_BUCKET), {job: 1})  # the backoff is over
    assert kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0].job_id == job
    assert r.zcard(keys.later(PINNED_BUCKET)) == 0


def test_a_retry_whose_job_was_claimed_meanwhile_is_dropped_from_the_later_set(kit, r):
    job = kit.single().job_id
    kit.store.retry(job, kit.claim(job).attempt, 60.0, "engine_unavailable", "try later")
    kit.claim(job)  # the sweep's own message for it
    r.zadd(keys.later(PINNED_BUCKET), {job: 1})

    assert kit.store.claim_next("echo", BATCH, PINNED_BUCKET)[0] is None
    assert r.zcard(keys.later(PINNED_BUCKET)) == 0 and ready(kit) == []


def test_taking_a_job_moves_its_own_group_and_tenant(kit):
    parent = kit.group(2, max_parallel=2, tenant="acme").job_id
    other = kit.single(tenant="globex").job_id
    c = kit.child_ids(parent, 2)
    first = kit.claim(c[0])
    kit.claim(c[1])

    taken = kit.store.complete(c[0], first.attempt, {}, take_next="echo").next_claim

    assert taken.job_id == other
    assert kit.status(other) == "processing"
    tag = keys.tag_of(other)
    assert other in kit.members(roots_of("single", "processing", tag))
    assert other not in kit.members(roots_of("single", "queued", tag))
    assert kit.members(keys.leases) == {c[1], other}


def test_a_replayed_claim_next_answers_the_same_claim(kit, monkeypatch):
    job = kit.single().job_id
    monkeypatch.setattr("jobs.transitions.claim_next.call_token", lambda: "same-token")

    first, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
    again, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)

    assert first.job_id == again.job_id == job
    assert (again.attempt, again.payload) == (first.attempt, first.payload)
    assert kit.job(job)["attempts"] == "1"


def test_a_replayed_complete_answers_the_same_next_claim(kit, monkeypatch):
    a = kit.single().job_id
    b = kit.single().job_id
    claim = kit.claim(a)
    monkeypatch.setattr("jobs.transitions.complete.call_token", lambda: "same-token")

    first = kit.store.complete(a, claim.attempt, {}, take_next="echo")
    again = kit.store.complete(a, claim.attempt, {}, take_next="echo")

    assert first.next_claim.job_id == again.next_claim.job_id == b
    assert again.next_claim.attempt == first.next_claim.attempt
    assert kit.job(b)["attempts"] == "1"


def test_a_finishing_single_job_takes_the_next_one(kit):
    a = kit.store.create_single(replace(kit.doc(), priority=BATCH)).job_id
    b = kit.single().job_id
    claim = kit.claim(a)

    done = kit.store.complete(a, claim.attempt, {"text": "x"}, take_next="echo")

    assert done.finalized and done.next_claim.job_id == b
    assert done.next_claim.payload == b"page 0"


def test_wake_ups_a_publish_never_sent_are_withdrawn_so_the_next_change_asks_again(kit):
    first = kit.group(2, max_parallel=2)
    assert pending(kit) == 2

    # The broker refused them: taken off the count, the next change answers wake-ups for every ready job.
    kit.store.withdraw_wakeups(first.dispatches)
    assert pending(kit) == 0
    assert kit.single().dispatches == [wake(), wake(), wake()]


def test_withdrawing_touches_only_wake_ups_of_their_model_and_lane(kit):
    kit.group(2, max_parallel=2)
    kit.store.withdraw_wakeups([wake("echo", INTERACTIVE), Dispatch("job", "echo"), wake("other", BATCH)])
    assert pending(kit) == 2


def test_an_interactive_job_of_another_model_the_worker_serves_comes_before_its_own_batch_job(kit):
    ran = kit.single().job_id
    batch = kit.single().job_id
    interactive = kit.store.create_single(replace(kit.doc(model="tesseract"), priority=INTERACTIVE)).job_id
    claim = kit.claim(ran)

    done = kit.store.complete(ran, claim.attempt, {}, take_next="echo", interactive_first=("echo", "tesseract"))

    assert done.next_claim.job_id == interactive
    assert kit.status(batch) == "queued"


def test_of_several_models_interactive_jobs_the_first_queued_is_taken(kit):
    ran = kit.single().job_id
    first = kit.store.create_single(replace(kit.doc(model="tesseract"), priority=INTERACTIVE)).job_id
    kit.store.create_single(replace(kit.doc(), priority=INTERACTIVE))
    claim = kit.claim(ran)

    done = kit.store.fail(ran, claim.attempt, "x", "y", take_next="echo", interactive_first=("tesseract",))

    assert done.next_claim.job_id == first


def test_another_model_s_batch_job_is_never_taken_nor_its_interactive_one_unless_served(kit):
    ran = kit.single().job_id
    kit.store.create_single(kit.doc(model="tesseract"))
    kit.store.create_single(replace(kit.doc(model="tesseract"), priority=INTERACTIVE))
    claim = kit.claim(ran)

    assert kit.store.complete(ran, claim.attempt, {}, take_next="echo").next_claim is None


def test_a_replayed_claim_next_answers_the_wake_ups_its_lost_answer_held(kit, monkeypatch):
    kit.group(3, max_parallel=3)
    kit.r.delete(keys.wakeups(PINNED_BUCKET, "echo", BATCH))  # as if all three had lapsed
    monkeypatch.setattr("jobs.transitions.claim_next.call_token", lambda: "same-token")

    first = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
    again = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)

    assert first[1] == again[1] == [wake(), wake()]
    assert again[0].job_id == first[0].job_id


def test_a_woken_worker_s_own_wake_up_stops_counting_not_a_lapsed_one(kit, r):
    kit.group(2, max_parallel=2)
    lost, delivered = r.zrange(keys.wakeups(PINNED_BUCKET, "echo", BATCH), 0, -1)
    r.zadd(keys.wakeups(PINNED_BUCKET, "echo", BATCH), {lost: 1})  # lost in the broker: it has lapsed

    claim, wake_ups = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)

    # Its own wake-up gone, the lapsed one too: the job left gets a wake-up of its own.
    assert claim is not None and wake_ups == [wake()]


def test_one_script_answers_a_bounded_number_of_wake_ups(kit, r):
    for _ in range(150):
        kit.single()
    r.delete(keys.wakeups(PINNED_BUCKET, "echo", BATCH))  # a backlog whose wake-ups lapsed while they waited

    # Whoever runs the next script publishes what it answers: 100 at most, the next scripts top up.
    assert len(kit.single().dispatches) == 100
    assert len(kit.single().dispatches) == 52


def test_a_wake_up_whose_job_a_kept_slot_took_counts_until_it_arrives_and_takes_the_next_ready_job(kit):
    a, b = kit.single().job_id, kit.single().job_id
    assert pending(kit) == 2
    first, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
    kept = kit.store.complete(a, first.attempt, {}, take_next="echo").next_claim
    assert kept.job_id == b
    kit.store.complete(b, kept.attempt, {}, take_next="echo")

    # Every job is done, and b's wake-up is still on its way: the count says so (capacity's bench waits on it
    # before its dead worker creates jobs only it may claim).
    assert pending(kit) == 1
    created = kit.single()
    c = created.job_id
    assert created.dispatches == [] and pending(kit) == 1  # b's wake-up counts for c: none of its own

    late, _ = kit.store.claim_next("echo", BATCH, PINNED_BUCKET)
    assert late.job_id == c and pending(kit) == 0
    assert kit.store.claim(c) is None
