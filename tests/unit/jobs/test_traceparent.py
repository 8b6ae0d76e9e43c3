"""The creating request's trace context, kept with its jobs while tracing is on, and handed to every attempt."""

from jobs.contract import Field

TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_a_single_job_keeps_the_traceparent_and_its_claim_answers_it(kit):
    job_id = kit.single(traceparent=TRACEPARENT).job_id
    assert kit.job(job_id)[Field.TRACEPARENT.value] == TRACEPARENT
    assert kit.claim(job_id).traceparent == TRACEPARENT


def test_a_group_keeps_it_on_the_parent_and_every_child_and_a_kept_slot_gets_it_too(kit):
    parent_id = kit.group(3, 1, traceparent=TRACEPARENT).job_id
    children = kit.child_ids(parent_id, 3)
    assert kit.job(parent_id)[Field.TRACEPARENT.value] == TRACEPARENT
    assert [f.decode() for f in kit.fields(children, Field.TRACEPARENT.value)] == [TRACEPARENT] * 3
    first = kit.claim(children[0])
    assert first.traceparent == TRACEPARENT
    done = kit.store.complete(children[0], first.attempt, {"text": "a"}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.job_id == children[1]
    assert done.next_claim.traceparent == TRACEPARENT


def test_without_one_no_field_is_stored_and_claims_answer_none(kit):
    single = kit.single().job_id
    parent_id = kit.group(2, 1).job_id
    children = kit.child_ids(parent_id, 2)
    for job_id in (single, parent_id, *children):
        assert Field.TRACEPARENT.value not in kit.job(job_id)
    assert kit.claim(single).traceparent == ""
    first = kit.claim(children[0])
    assert first.traceparent == ""
    done = kit.store.complete(children[0], first.attempt, {"text": "a"}, take_next="echo")
    assert done.next_claim is not None and done.next_claim.traceparent == ""
