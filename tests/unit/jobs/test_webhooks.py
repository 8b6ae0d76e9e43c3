"""The store's side of webhooks: due, claimed once, every attempt an event, retried with backoff, given up."""

from __future__ import annotations

import pytest

from jobs import controls, webhooks
from jobs.contract import WebhookOutcome
from jobs.errors import JobNotFound
from jobs.records import GroupRules, NewJob, Owner
from jobs.webhooks import Answer, WebhookClaim, backoff_seconds
from tests.keyspace import keys

from .conftest import make_kit

URL = "https://hooks.example/ocr"
DAY_MS = 24 * 3600 * 1000


@pytest.fixture
def kit():
    # The schedule's tests claim more than a tenant's share at once: the share has tests of its own (capped).
    return make_kit(
        webhook_backoff=10.0, webhook_backoff_max=60.0, webhook_give_up_after=3600.0, webhook_tenant_concurrency=100
    )


@pytest.fixture
def capped():
    """A store where a tenant may have two webhooks in flight, as by default."""
    return make_kit(webhook_backoff=10.0, webhook_tenant_concurrency=2)


def finished_single(kit, callback_url: str = URL, fail: bool = False) -> str:
    job = NewJob(model="echo", content_type="text/plain", payload=b"hi", callback_url=callback_url)
    job_id = kit.store.create_single(job).job_id
    claim = kit.claim(job_id)
    if fail:
        kit.store.fail(job_id, claim.attempt, "echo_failed", "asked to")
    else:
        kit.store.complete(job_id, claim.attempt, {"text": "hi", "pages": []})
    return job_id


def claims_key(job_id: str) -> str:
    """Where the job's tenant's webhook claims are counted: its bucket (one bucket), else its own slot."""
    if keys.bucket_count == 1:
        return keys.tenant_webhooks(keys.tag_of(job_id), keys.bucket_of(job_id))
    return keys.tenant_webhook_claims(keys.tag_of(job_id))


def webhook_events(kit, job_id: str) -> list[dict[str, str]]:
    return [e for e in kit.events_of(job_id) if e["operation"] == "webhook"]


# -- the schedule -------------------------------------------------------------------------------


def test_the_backoff_starts_at_its_first_wait_and_doubles_up_to_its_cap():
    waits = [backoff_seconds(n, 10.0, 3600.0) for n in range(1, 12)]

    assert waits == [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600]
    assert backoff_seconds(10_000, 10.0, 3600.0) == 3600  # no overflow however long it went on
    with pytest.raises(ValueError):
        backoff_seconds(0, 10.0, 3600.0)


# -- due and claimed -------------------------------------------------------------------------------


def test_a_terminal_job_with_a_callback_is_due_at_once_and_one_without_is_not(kit):
    with_callback = finished_single(kit)
    without = finished_single(kit, callback_url="")

    assert webhooks.due(kit.store, kit.now_ms(), 10) == [with_callback]
    assert without not in webhooks.pending(kit.store)


def test_a_failed_job_is_due_too(kit):
    job_id = finished_single(kit, fail=True)

    assert webhooks.due(kit.store, kit.now_ms(), 10) == [job_id]


def test_a_claim_takes_the_webhook_once_and_moves_it_past_the_claim_window(kit):
    job_id = finished_single(kit)
    now = kit.now_ms()

    first = webhooks.claim_due(kit.store, now, 10)
    again = webhooks.claim_due(kit.store, kit.now_ms(), 10)

    assert first == [WebhookClaim(job_id, 1)]
    assert again == []  # a second sweep finds nothing due: it cannot send it a second time
    window = webhooks.claim_window_seconds(kit.store.settings) * 1000
    assert webhooks.pending(kit.store)[job_id] >= now + window
    assert kit.job(job_id)["webhook_attempts"] == "1"


def test_a_claim_that_runs_out_unrecorded_is_claimed_again_as_the_next_attempt(kit):
    job_id = finished_single(kit)
    webhooks.claim_due(kit.store, kit.now_ms(), 10)

    kit.r.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})  # the claim window is over: its deliverer died

    assert webhooks.claim_due(kit.store, kit.now_ms(), 10) == [WebhookClaim(job_id, 2)]


def test_the_batch_bounds_how_many_are_claimed_the_longest_waiting_first(kit):
    ids = [finished_single(kit) for _ in range(3)]

    claimed = webhooks.claim_due(kit.store, kit.now_ms(), 2)

    assert [c.job_id for c in claimed] == ids[:2]
    assert webhooks.claim_due(kit.store, kit.now_ms(), 2) == [WebhookClaim(ids[2], 1)]


def test_a_webhook_no_longer_wanted_leaves_the_index_when_claimed(kit):
    gone = finished_single(kit)
    kit.r.delete(keys.job(gone))
    running = kit.store.create_single(kit.doc()).job_id
    kit.r.zadd(keys.webhooks(keys.bucket_of(running)), {running: 1})  # not terminal: e.g. a parent redriven meanwhile

    assert webhooks.claim_due(kit.store, kit.now_ms(), 10) == []
    assert webhooks.pending(kit.store) == {}


def test_a_parent_and_a_child_each_have_their_own_webhook(kit):
    children = [
        NewJob(model="echo", content_type="text/plain", payload=b"a", callback_url=URL + "/child"),
        NewJob(model="echo", content_type="text/plain", payload=b"b"),
    ]
    parent = kit.store.create_group(children, GroupRules(max_parallel=2, callback_url=URL)).job_id
    first, second = kit.child_ids(parent, 2)
    kit.store.complete(first, kit.claim(first).attempt, {"text": "a"})

    assert set(webhooks.pending(kit.store)) == {first}
    kit.store.complete(second, kit.claim(second).attempt, {"text": "b"})
    assert set(webhooks.pending(kit.store)) == {first, parent}


# -- recorded --------------------------------------------------------------------------------------


def test_a_2xx_ends_the_webhook_and_is_recorded_as_delivered(kit):
    job_id = finished_single(kit)
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 10)

    recorded = webhooks.record(kit.store, job_id, claim.attempt, Answer(204))

    assert (recorded.outcome, recorded.retry_at_ms) == (WebhookOutcome.DELIVERED, None)
    assert webhooks.pending(kit.store) == {}
    [event] = webhook_events(kit, job_id)
    # Its delivery lag: from the job's end to this record, both Redis times (µs).
    assert recorded.lag_seconds == (int(event["time"]) - int(kit.job(job_id)["finished_at"])) / 1_000_000
    assert {k: v for k, v in event.items() if k != "time"} == {
        "operation": "webhook",
        "job_id": job_id,
        "parent_job_id": "",
        "status": "completed",
        "model": "echo",
        "error_code": "",
        "attempt": "1",
        "outcome": "delivered",
        "response_status": "204",
        "error": "",
        "retry_at": "",
    }


def test_a_failed_attempt_is_due_again_after_the_backoff_and_each_attempt_is_an_event(kit):
    job_id = finished_single(kit)
    retry_times_ms: list[int] = []
    for attempt, answer in enumerate(
        [Answer(500, "http_error", "answered 500"), Answer(None, "timeout", "no answer within 10 s")], start=1
    ):
        kit.r.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})  # its retry time has come
        assert webhooks.claim_due(kit.store, kit.now_ms(), 10) == [WebhookClaim(job_id, attempt)]
        before = kit.now_ms()
        recorded = webhooks.record(kit.store, job_id, attempt, answer)
        wait = backoff_seconds(attempt, 10.0, 60.0) * 1000
        assert recorded.outcome is WebhookOutcome.RETRYING
        assert recorded.retry_at_ms is not None
        assert before + wait <= recorded.retry_at_ms <= kit.now_ms() + wait
        assert webhooks.pending(kit.store)[job_id] == recorded.retry_at_ms
        retry_times_ms.append(recorded.retry_at_ms)

    events = webhook_events(kit, job_id)
    assert [(e["attempt"], e["outcome"], e["response_status"], e["error_code"]) for e in events] == [
        ("1", "retrying", "500", "http_error"),
        ("2", "retrying", "", "timeout"),
    ]
    assert [int(e["retry_at"]) for e in events] == [ms * 1000 for ms in retry_times_ms]
    assert events[1]["error"] == "no answer within 10 s"


def test_retries_stop_at_the_end_of_the_retry_window_and_then_it_is_given_up(kit):
    job_id = finished_single(kit)
    # Terminal 3595 s ago: the next wait (10 s) would end past the window (3600 s).
    kit.r.hset(keys.job(job_id), "finished_at", str((kit.now_ms() - 3_595_000) * 1000))
    window_end = int(kit.job(job_id)["finished_at"]) // 1000 + 3_600_000
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 10)

    last_but_one = webhooks.record(kit.store, job_id, claim.attempt, Answer(503, "http_error", "answered 503"))

    assert last_but_one == webhooks.Recorded(WebhookOutcome.RETRYING, window_end)  # the last falls on the end
    kit.r.hset(keys.job(job_id), "finished_at", str((kit.now_ms() - 3_600_000) * 1000))
    kit.r.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 10)
    last = webhooks.record(kit.store, job_id, claim.attempt, Answer(None, "connection_failed", "refused"))

    assert last == webhooks.Recorded(WebhookOutcome.GIVEN_UP, None)
    assert webhooks.pending(kit.store) == {}
    assert [e["outcome"] for e in webhook_events(kit, job_id)] == ["retrying", "given_up"]


def test_an_attempt_recorded_after_a_later_claim_changes_nothing_but_its_event(kit):
    job_id = finished_single(kit)
    webhooks.claim_due(kit.store, kit.now_ms(), 10)
    kit.r.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})
    [later] = webhooks.claim_due(kit.store, kit.now_ms(), 10)
    schedule = webhooks.pending(kit.store)

    late = webhooks.record(kit.store, job_id, 1, Answer(200))

    assert late == webhooks.Recorded(WebhookOutcome.SUPERSEDED, None)
    assert webhooks.pending(kit.store) == schedule  # attempt 2 still decides
    assert webhooks.record(kit.store, job_id, later.attempt, Answer(200)).outcome is WebhookOutcome.DELIVERED
    assert [(e["attempt"], e["outcome"]) for e in webhook_events(kit, job_id)] == [
        ("1", "superseded"),
        ("2", "delivered"),
    ]


def test_is_current_tells_a_stale_claim_from_the_current_one(kit):
    job_id = finished_single(kit)
    webhooks.claim_due(kit.store, kit.now_ms(), 10)

    assert webhooks.is_current(kit.job(job_id), 1)
    assert not webhooks.is_current(kit.job(job_id), 2)
    assert webhooks.callback_url(kit.job(job_id)) == URL


def test_recording_for_a_job_that_is_gone_raises_and_drops_the_webhook(kit):
    job_id = finished_single(kit)
    kit.r.delete(keys.job(job_id))

    with pytest.raises(JobNotFound):
        webhooks.record(kit.store, job_id, 1, Answer(200))
    assert webhooks.pending(kit.store) == {}


def test_webhook_events_leave_the_terminal_audit_events_as_they_were(kit):
    job_id = finished_single(kit)
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 10)
    webhooks.record(kit.store, job_id, claim.attempt, Answer(500, "http_error", "answered 500"))

    audit = [e for e in kit.events_of(job_id) if e["operation"] in ("job", "job_child")]
    assert [(e["operation"], e["status"]) for e in audit] == [("job", "completed")]


def test_a_failed_child_s_webhook_event_names_its_parent(kit):
    child = NewJob(model="echo", content_type="text/plain", payload=b"a", callback_url=URL)
    parent = kit.store.create_group([child], GroupRules(max_parallel=1)).job_id
    child_id = keys.child_id(parent, 0)
    kit.store.fail(child_id, kit.claim(child_id).attempt, "echo_failed", "asked to")
    [claim] = webhooks.claim_due(kit.store, kit.now_ms(), 10)

    webhooks.record(kit.store, child_id, claim.attempt, Answer(200))

    [event] = webhook_events(kit, child_id)
    assert (event["job_id"], event["parent_job_id"], event["status"]) == (child_id, parent, "failed")


def test_a_delivery_of_a_group_s_first_ending_cannot_settle_the_webhook_of_its_ending_after_a_redrive(kit):
    child = NewJob(model="echo", content_type="text/plain", payload=b"a")
    parent = kit.store.create_group([child], GroupRules(max_parallel=1, callback_url=URL)).job_id
    child_id = keys.child_id(parent, 0)
    kit.store.fail(child_id, kit.claim(child_id).attempt, "echo_failed", "asked to")
    [first_ending] = webhooks.claim_due(kit.store, kit.now_ms(), 10)  # in flight, carrying "failed"
    controls.redrive(kit.store, parent)
    kit.store.complete(child_id, kit.claim(child_id).attempt, {"text": "a", "pages": []})

    late = webhooks.record(kit.store, parent, first_ending.attempt, Answer(200))

    assert late.outcome is WebhookOutcome.SUPERSEDED
    assert parent in webhooks.pending(kit.store)  # the "completed" view is still to be sent
    [second_ending] = webhooks.claim_due(kit.store, kit.now_ms(), 10)
    failed = webhooks.record(kit.store, parent, second_ending.attempt, Answer(500, "http_error", "answered 500"))
    # its backoff starts again from the first step, as for any job that just ended
    assert failed.retry_at_ms - kit.now_ms() == pytest.approx(10_000, abs=1_000)


# -- one tenant's share of the deliverers ---------------------------------------------------------------


def tenant_single(kit, tenant: str) -> str:
    job = NewJob(model="echo", content_type="text/plain", payload=b"hi", callback_url=URL)
    job_id = kit.store.create_single(job, owner=Owner(tenant)).job_id
    kit.store.complete(job_id, kit.claim(job_id).attempt, {"text": "hi", "pages": []})
    return job_id


def test_a_tenant_has_at_most_its_concurrency_of_webhooks_in_flight_and_its_others_wait_unattempted(capped):
    busy = [tenant_single(capped, "alpha") for _ in range(5)]
    now = capped.now_ms()

    claimed = webhooks.claim_due(capped.store, now, 10)

    assert len(claimed) == 2 and {c.attempt for c in claimed} == {1}
    waiting = [job_id for job_id in busy if job_id not in {c.job_id for c in claimed}]
    for job_id in waiting:
        # Not attempted (no attempt counted, no event), not lost: due again, after the sweep's next tick.
        assert "webhook_attempts" not in capped.job(job_id)
        assert webhook_events(capped, job_id) == []
        assert webhooks.pending(capped.store)[job_id] >= now + capped.store.settings.sweep_interval * 1000
    assert webhooks.claim(capped.store, waiting) == []  # still two in flight


def test_a_busy_tenant_does_not_hold_back_another_s_webhook_due_after_its_own(capped):
    busy = [tenant_single(capped, "alpha") for _ in range(6)]
    other = tenant_single(capped, "beta")
    pending = webhooks.pending(capped.store)
    assert pending[other] >= max(pending[job_id] for job_id in busy)  # due last

    claimed = webhooks.claim_due(capped.store, capped.now_ms(), 10)

    assert len([c for c in claimed if c.job_id in busy]) == 2
    assert WebhookClaim(other, 1) in claimed


def next_tick(kit, job_id: str) -> None:
    """The sweep's next tick, when a webhook its tenant's share held back (or a retry) is due again."""
    kit.r.zadd(keys.webhooks(keys.bucket_of(job_id)), {job_id: 1})


def in_flight_and_waiting(kit, job_ids: list[str]) -> tuple[list[str], list[str]]:
    claimed = {c.job_id for c in webhooks.claim_due(kit.store, kit.now_ms(), 10)}
    return [j for j in job_ids if j in claimed], [j for j in job_ids if j not in claimed]


def test_a_waiting_webhook_is_claimed_as_its_first_attempt_once_an_answer_frees_a_slot(capped):
    [first, second], [third] = in_flight_and_waiting(capped, [tenant_single(capped, "alpha") for _ in range(3)])

    webhooks.record(capped.store, first, 1, Answer(500, "http_error", "answered 500"))  # retrying frees it too

    next_tick(capped, third)
    assert webhooks.claim(capped.store, [third]) == [WebhookClaim(third, 1)]
    webhooks.record(capped.store, second, 1, Answer(200))
    next_tick(capped, first)
    assert webhooks.claim(capped.store, [first]) == [WebhookClaim(first, 2)]


def test_a_claim_that_ran_out_frees_its_slot(capped):
    [first, _], [third] = in_flight_and_waiting(capped, [tenant_single(capped, "alpha") for _ in range(3)])
    # first's deliverer died: its claim runs out (here, at once).
    capped.r.zadd(claims_key(first), {first: 1})

    next_tick(capped, third)
    assert webhooks.claim(capped.store, [third]) == [WebhookClaim(third, 1)]


def test_a_superseded_answer_does_not_free_the_current_attempt_s_slot(capped):
    [first, _], [third] = in_flight_and_waiting(capped, [tenant_single(capped, "alpha") for _ in range(3)])
    capped.r.zadd(
        keys.webhooks(keys.bucket_of(first)), {first: 1}
    )  # first's claim ran out on the queue and is claimed again
    assert webhooks.claim(capped.store, [first]) == [WebhookClaim(first, 2)]

    late = webhooks.record(capped.store, first, 1, Answer(200))

    assert late.outcome is WebhookOutcome.SUPERSEDED
    next_tick(capped, third)
    assert webhooks.claim(capped.store, [third]) == []  # attempt 2 of first, and the other, hold alpha's two


def test_a_tenant_s_in_flight_key_expires_when_its_latest_claim_runs_out(capped):
    """A tenant whose webhooks stop coming leaves no key behind, whatever its deliverers did."""
    [first, second], _ = in_flight_and_waiting(capped, [tenant_single(capped, "alpha") for _ in range(3)])
    key = claims_key(first)
    latest = max(score for _, score in capped.r.zrange(key, 0, -1, withscores=True))

    assert capped.r.pexpiretime(key) == int(latest)

    # first's deliverer died long ago; a later claim pushes the expiry to its own end.
    capped.r.zadd(key, {first: 1})
    webhooks.record(capped.store, second, 1, Answer(200))
    later = tenant_single(capped, "alpha")
    assert webhooks.claim(capped.store, [later]) == [WebhookClaim(later, 1)]
    assert capped.r.pexpiretime(key) == int(capped.r.zscore(key, later))


def test_a_tenant_s_backlog_held_back_by_its_share_does_not_fill_the_sweep_s_batch(capped):
    """The sweep reads on past the webhooks their tenant's share holds back, up to READS_PER_SWEEP batches."""
    batch = 4
    busy = [tenant_single(capped, "alpha") for _ in range(batch * 3)]
    other = tenant_single(capped, "beta")

    claimed = webhooks.claim_due(capped.store, capped.now_ms(), batch)

    assert WebhookClaim(other, 1) in claimed
    assert len([c for c in claimed if c.job_id in busy]) == 2
    assert webhooks.claim_due(capped.store, capped.now_ms(), batch) == []  # the rest wait for a later sweep


def test_the_sweep_claims_at_most_its_batch_however_far_it_reads(capped):
    tenants = [tenant_single(capped, f"tenant{n}") for n in range(3) for _ in range(3)]

    claimed = webhooks.claim_due(capped.store, capped.now_ms(), 5)

    assert len(claimed) == 5 and {c.job_id for c in claimed} <= set(tenants)


def test_the_sweep_reads_a_bounded_number_of_batches(capped):
    batch = 2
    busy = [tenant_single(capped, "alpha") for _ in range(batch * (webhooks.READS_PER_SWEEP + 1) + 2)]
    other = tenant_single(capped, "beta")

    claimed = webhooks.claim_due(capped.store, capped.now_ms(), batch)

    assert {c.job_id for c in claimed} <= set(busy) and other not in {c.job_id for c in claimed}
