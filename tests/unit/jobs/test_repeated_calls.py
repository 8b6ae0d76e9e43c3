"""A call whose reply was lost: the client sends it again, and it answers as the first time.

When a connection drops after Redis ran a script but before its reply
arrived, the store's client (redis-py's retry) sends the very same call again,
its token included.  ``resent`` below does exactly that: it runs a
transition twice with the same arguments and hands back the second reply.
"""

import pytest

from jobs.errors import NotProcessing
from jobs.records import GroupRules
from jobs.transitions.claim import CLAIM
from jobs.transitions.complete import COMPLETE


def resend(store, name: str) -> list:
    """From now on each call of transition ``name`` runs twice, and the first
    reply is lost: returns the list the lost replies go to."""
    script = store.scripts.by_name[name]
    lost = []

    def twice(keys=None, args=None, client=None):
        lost.append(script(keys=keys, args=args, client=client))
        return script(keys=keys, args=args, client=client)

    store.scripts.by_name[name] = twice
    return lost


def test_a_claim_sent_again_answers_with_the_same_claim(kit, store):
    job_id = kit.single().job_id
    lost = resend(store, "claim")

    claim = store.claim(job_id)

    assert claim is not None and claim.attempt == 1 and claim.payload == b"page 0"
    first = CLAIM.decode(lost[0])
    assert (first.code, first.attempt) == (1, 1)
    job = kit.job(job_id)
    assert (job["status"], job["attempts"]) == ("processing", "1")


def test_a_claim_of_another_call_still_finds_the_job_taken(kit, store):
    job_id = kit.single().job_id
    assert store.claim(job_id) is not None

    assert store.claim(job_id) is None  # a duplicate message: a call of its own
    assert kit.job(job_id)["attempts"] == "1"


def test_a_complete_sent_again_answers_as_the_first_time_did(kit, store):
    parent = kit.group(5, max_parallel=2).job_id
    c = kit.child_ids(parent, 5)
    first = kit.claim(c[0])
    kit.claim(c[1])
    lost = resend(store, "complete")

    done = store.complete(c[0], first.attempt, {"text": "a"}, take_next="echo")

    first = COMPLETE.decode(lost[0])
    assert (first.code, first.finalized, first.next_job_id) == (1, False, c[2])  # it did the work, and claimed child 2
    assert done.next_claim is not None and done.next_claim.job_id == c[2]
    assert (done.next_claim.attempt, done.next_claim.payload) == (1, b"page 2")
    assert done.dispatches == [] and done.finalized is False
    assert kit.statuses(parent, 5) == ["completed", "processing", "processing", "held", "held"]
    assert len(kit.events_of(c[0])) == 1


def test_a_fail_sent_again_gives_back_the_children_its_lost_reply_held(new_kit):
    """An uncapped group released two at a time: failing child 0 released 2 and 3."""
    kit = new_kit(release_batch=2)
    parent = kit.group(4, max_parallel=0).job_id
    c = kit.child_ids(parent, 4)
    first = kit.claim(c[0])
    resend(kit.store, "complete")

    done = kit.store.fail(c[0], first.attempt, "echo_failed", "asked to fail")

    assert done.next_claim is None
    # The wake-up its lost reply asked for (the two children it released, less the one wake-up of the
    # creation not yet started), never sent: it is answered again.
    assert done.dispatches == kit.wake_ups(1)
    assert kit.ready() == [c[1], c[2], c[3]]
    assert kit.status(c[0]) == "failed" and len(kit.events_of(c[0])) == 1


def test_the_last_child_s_complete_sent_again_still_says_it_finalized_the_parent(kit, store):
    parent = kit.group(1, max_parallel=1).job_id
    child = kit.child_ids(parent, 1)[0]
    claim = kit.claim(child)
    resend(store, "complete")

    assert store.complete(child, claim.attempt, {}).finalized is True
    assert [e["operation"] for e in kit.events(parent)] == ["job_child", "job"]


def test_a_repeat_leaves_out_what_others_took_since(kit, store):
    parent = kit.group(3, max_parallel=1).job_id
    c = kit.child_ids(parent, 3)
    first = kit.claim(c[0])
    script = store.scripts.by_name["complete"]
    replies = []

    def then_reclaimed_then_resent(keys=None, args=None, client=None):
        replies.append(script(keys=keys, args=args, client=client))
        # Before the repeat: the kept child's lease ran out and another worker took it.
        kit.expire_lease(c[1])
        store.reclaim([c[1]])
        assert store.claim(c[1]).attempt == 2
        return script(keys=keys, args=args, client=client)

    store.scripts.by_name["complete"] = then_reclaimed_then_resent

    done = store.complete(c[0], first.attempt, {}, take_next="echo")

    assert COMPLETE.decode(replies[0]).next_job_id == c[1]  # the first run claimed child 1 for this worker
    assert done.next_claim is None and done.dispatches == []


def test_a_complete_of_another_call_still_finds_the_job_finished(kit, store):
    job_id = kit.single().job_id
    claim = kit.claim(job_id)
    store.complete(job_id, claim.attempt, {"text": "first"})

    with pytest.raises(NotProcessing):
        store.fail(job_id, claim.attempt, "timeout", "late")  # the time limit, after the result was written
    assert store.queries.result(job_id) == {"text": "first"}


def test_a_fail_sent_again_answers_the_held_children_its_lost_reply_cancelled(kit, store):
    """A fail-fast group: failing child 0 cancelled the held ones, which the lost reply told; the
    second answer tells them again, so that the worker counts them (no other answer ever will)."""
    parent = store.create_group(kit.docs(4), GroupRules(max_parallel=1, fail_fast=True)).job_id
    c = kit.child_ids(parent, 4)
    first = kit.claim(c[0])
    lost = resend(store, "complete")

    done = store.fail(c[0], first.attempt, "echo_failed", "asked to fail")

    assert COMPLETE.decode(lost[0]).cancelled_unstarted == {"echo": 3}
    assert done.cancelled_unstarted == {"echo": 3}
    assert kit.statuses(parent, 4) == ["failed", "cancelled", "cancelled", "cancelled"]
