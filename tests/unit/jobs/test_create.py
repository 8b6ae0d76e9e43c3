"""create: a single job, a group with its first release, idempotency."""

import hashlib
import json

import pytest

from jobs.contract import Reply
from jobs.errors import IdempotencyKeyReused
from jobs.records import GroupRules, Idempotency, NewJob
from tests.keyspace import keys

SLACK_MS = 5_000  # tolerance for "about now" against Redis TIME


def test_single_job_is_queued_indexed_and_dispatched_once(kit, settings, r):
    before = kit.now_ms()
    doc = NewJob("echo", "text/plain", b"hello", pages=1, options={"lang": "eng"})
    created = kit.store.create_single(doc)

    assert created.replayed is False
    assert created.dispatches == kit.wake_ups(1)
    assert kit.ready() == [created.job_id]
    job = kit.job(created.job_id)
    assert job["kind"] == "single"
    assert job["status"] == "queued"
    assert job["id"] == created.job_id
    assert job["model"] == "echo"
    assert job["content_type"] == "text/plain"
    assert job["doc_hash"] == hashlib.sha256(b"hello").hexdigest()
    assert job["pages"] == "1"
    assert json.loads(job["options"]) == {"lang": "eng"}
    assert job["attempts"] == "0"
    assert job["started_at"] == job["finished_at"] == job["error_code"] == ""
    assert int(job["created_at"]) // 1000 >= before - SLACK_MS
    assert r.get(keys.payload(created.job_id)) == b"hello"

    # Published now; the sweep re-publishes it if nobody claims it within requeue_seconds.
    deadline = kit.score(keys.queued, created.job_id)
    requeue_ms = settings.requeue_seconds * 1000
    assert before + requeue_ms - SLACK_MS <= deadline <= kit.now_ms() + requeue_ms
    assert kit.active_parents() == set()
    assert kit.members(keys.due_parents) == set()


def test_group_holds_its_children_and_releases_the_first_max_parallel_in_index_order(kit, r):
    created = kit.group(5, max_parallel=2)
    parent = created.job_id
    children = kit.child_ids(parent, 5)

    assert kit.ready() == children[:2]
    assert created.dispatches == kit.wake_ups(2)
    assert kit.statuses(parent, 5) == ["queued", "queued", "held", "held", "held"]
    assert kit.members(keys.queued) == set(children[:2])

    p = kit.job(parent)
    assert p["kind"] == "parent"
    assert p["status"] == "queued"  # until a child starts
    assert p["total"] == "5"
    assert p["max_parallel"] == "2"
    assert kit.members(keys.children(parent, "held")) == set(kit.child_ids(parent, 5)[2:])
    assert p["model"] == "echo"
    assert kit.counts(parent) == {
        "held": 3, "queued": 2, "processing": 0, "completed": 0, "failed": 0, "cancelled": 0,
    }  # fmt: skip
    assert kit.active_parents() == {parent}
    assert kit.members(keys.due_parents) == set()  # cap reached: nothing for the sweep

    for i, child in enumerate(children):
        c = kit.job(child)
        assert (c["kind"], c["parent_id"], c["index"], c["attempts"]) == ("child", parent, str(i), "0")
        assert r.get(keys.payload(child)) == f"page {i}".encode()


def test_group_of_mixed_models_has_a_mixed_parent(kit):
    created = kit.store.create_group([kit.doc(0, "echo"), kit.doc(1, "tesseract")], GroupRules(1))
    assert kit.job(created.job_id)["model"] == "mixed"
    assert created.dispatches == kit.wake_ups(1)
    assert kit.ready() == [keys.child_id(created.job_id, 0)]
    assert kit.job(keys.child_id(created.job_id, 1))["model"] == "tesseract"


def test_max_parallel_above_the_group_size_releases_everything(kit):
    created = kit.group(3, max_parallel=5)
    assert len(created.dispatches) == 3
    assert kit.counts(created.job_id)["queued"] == 3
    assert kit.members(keys.due_parents) == set()


@pytest.mark.parametrize("max_parallel", [0, -1])
def test_uncapped_group_releases_all_children_within_the_batch(kit, settings, max_parallel):
    n = settings.release_batch
    created = kit.group(n, max_parallel=max_parallel)
    assert kit.ready() == kit.child_ids(created.job_id, n)
    assert created.dispatches == kit.wake_ups(n)
    assert kit.counts(created.job_id)["held"] == 0
    assert kit.members(keys.due_parents) == set()


@pytest.mark.parametrize("max_parallel", [0, -1])
def test_uncapped_group_beyond_the_batch_leaves_the_rest_to_the_sweep(kit, settings, max_parallel):
    batch = settings.release_batch
    created = kit.group(batch + 2, max_parallel=max_parallel)
    parent = created.job_id
    children = kit.child_ids(parent, batch + 2)
    assert kit.ready() == children[:batch]
    assert kit.statuses(parent, batch + 2)[batch:] == ["held", "held"]
    assert kit.members(keys.due_parents) == {parent}
    assert kit.store.due_parents(kit.now_ms(), 10) == [parent]

    assert kit.store.release([parent]) == kit.wake_ups(2)
    assert kit.ready() == children
    assert kit.counts(parent)["held"] == 0
    assert kit.members(keys.due_parents) == set()


def test_release_false_leaves_every_child_held_and_the_parent_due(kit):
    created = kit.group(3, max_parallel=2, release=False)
    parent = created.job_id
    assert created.dispatches == []
    assert kit.statuses(parent, 3) == ["held"] * 3
    assert kit.counts(parent)["held"] == 3
    assert kit.members(keys.queued) == set()
    assert kit.active_parents() == {parent}
    assert kit.store.due_parents(kit.now_ms(), 10) == [parent]

    released = kit.store.release([parent])
    assert released == kit.wake_ups(2)
    assert kit.ready() == kit.child_ids(parent, 2)
    assert kit.members(keys.due_parents) == set()


def test_a_group_needs_children(kit, r):
    with pytest.raises(ValueError):
        kit.store.create_group([], GroupRules(1))
    assert r.dbsize() == 0


# -- idempotency ---------------------------------------------------------------------------


def test_single_replay_returns_the_same_job_and_writes_nothing(kit, settings, r):
    idem = Idempotency("key-1", "fp-1")
    first = kit.single(idempotency=idem)
    assert first.replayed is False
    before, size = kit.snapshot(), r.dbsize()

    again = kit.single(idempotency=idem)
    assert (again.job_id, again.replayed, again.dispatches) == (first.job_id, True, [])
    assert r.dbsize() == size
    assert kit.snapshot() == before

    record = {k.decode(): v.decode() for k, v in r.hgetall(keys.idempotency("default", "key-1")).items()}
    assert record == {"id": first.job_id, "fingerprint": "fp-1"}
    assert settings.idempotency_ttl - 5 <= r.ttl(keys.idempotency("default", "key-1")) <= settings.idempotency_ttl
    assert kit.job(first.job_id)["idempotency_key"] == "key-1"


def test_group_replay_returns_the_same_parent_and_creates_no_children(kit, r):
    idem = Idempotency("key-g", "fp-g")
    first = kit.group(3, max_parallel=1, idempotency=idem)
    before, size = kit.snapshot(), r.dbsize()

    again = kit.group(3, max_parallel=1, idempotency=idem)
    assert (again.job_id, again.replayed, again.dispatches) == (first.job_id, True, [])
    assert r.dbsize() == size
    assert kit.snapshot() == before


def test_replay_of_an_unreleased_group_does_not_put_it_back_on_the_due_index(kit):
    idem = Idempotency("key-u", "fp-u")
    first = kit.group(2, max_parallel=1, idempotency=idem, release=False)
    kit.store.release([first.job_id])
    assert kit.members(keys.due_parents) == set()
    again = kit.group(2, max_parallel=1, idempotency=idem, release=False)
    assert again.replayed is True
    assert kit.members(keys.due_parents) == set()


@pytest.mark.parametrize("kind", ["single", "group"])
def test_same_key_with_a_different_request_raises_and_writes_nothing(kit, r, replies, kind):
    first = kit.single(idempotency=Idempotency("key-2", "fp-a"))
    before = kit.snapshot()
    with pytest.raises(IdempotencyKeyReused) as raised:
        if kind == "single":
            kit.single(idempotency=Idempotency("key-2", "fp-b"))
        else:
            kit.group(2, max_parallel=1, idempotency=Idempotency("key-2", "fp-b"))
    assert raised.value.code == "idempotency_key_reused"
    assert (replies.last("create").code, replies.last("create").job_id) == (Reply.KEY_REUSED, first.job_id)
    assert kit.snapshot() == before


def test_children_carry_the_key_with_their_index(kit):
    created = kit.group(3, max_parallel=1, idempotency=Idempotency("batch-7", "fp"))
    assert kit.job(created.job_id)["idempotency_key"] == "batch-7"
    for i, child in enumerate(kit.child_ids(created.job_id, 3)):
        assert kit.job(child)["idempotency_key"] == f"batch-7#{i}"


def test_without_a_key_no_record_is_written_and_children_carry_none(kit, r):
    created = kit.group(2, max_parallel=1)
    assert r.keys("ocrgw:idem:*") == []
    assert [kit.job(c)["idempotency_key"] for c in kit.child_ids(created.job_id, 2)] == ["", ""]


def test_a_retried_create_call_answers_as_a_replay_and_writes_nothing(kit, monkeypatch):
    # The client retries a call whose reply was lost: the very same keys and
    # arguments reach the script a second time.
    calls = []
    script = kit.store.scripts.by_name["create"]

    def remembering(keys=None, args=None, client=None):
        calls.append((keys, args))
        return script(keys=keys, args=args, client=client)

    monkeypatch.setitem(kit.store.scripts.by_name, "create", remembering)
    created = kit.group(3, max_parallel=2)
    before = kit.snapshot()
    call_keys, call_args = calls[0]
    assert script(keys=call_keys, args=call_args) == [Reply.REPLAYED, created.job_id.encode()]
    assert kit.snapshot() == before
