"""Fan-out groups end to end: real gunicorn, real Celery worker, coordinator and beat, real Redis.

What a group promises (see the design's invariants) is checked from what
the system recorded, never from how long anything took: the cap from the
children's ``started_at``/``finished_at`` (Redis time), exactly-once from the
audit stream, atomicity and idempotency from the Redis keyspace itself.

Most tests share the session stack (sweep every 0.2 s).  Two need a
deployment of their own: the hand-off test runs with a sweep so rare that
only completions can release children, and the safety-net tests run with a
short requeue delay so that the sweep re-publishes an unpublished job soon.
"""

from __future__ import annotations

import pytest

from jobs.config import Settings
from jobs.ids import DEFAULT_TENANT, tenant_tag
from jobs.records import GroupRules
from jobs.store import JobStore, NewJob
from tests.integration.fanout_support import (
    STATUSES,
    Gateway,
    assert_audited_once,
    describe_gaps,
    echo_child,
    echo_children,
    events_of,
    group_body,
    handoff_gaps,
    in_flight_of,
    intervals,
    job_keys,
    keyspace,
    micros,
    peak_overlap,
    recorded_micros,
    submit_group,
)
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration


def cap_checker(max_parallel: int):
    """An ``on_poll`` that fails on any snapshot with more children in flight than the cap.

    Each snapshot is one HGETALL of the parent's counters, so it is consistent.
    """

    def check(view):
        n = in_flight_of(view)
        assert n <= max_parallel, f"{n} children in flight, max_parallel {max_parallel}: {_counts(view)}"

    return check


def _counts(view) -> dict:
    return view.get("counts") or {k: v for k, v in view.items() if k.startswith("n_")}


def only_counts(**nonzero: int) -> dict[str, int]:
    return {status: nonzero.get(status, 0) for status in STATUSES}


# -- the measuring tool itself --------------------------------------------------------


def test_peak_overlap_counts_half_open_intervals():
    assert peak_overlap([]) == 0
    assert peak_overlap([(0, 10)]) == 1
    assert peak_overlap([(0, 10), (10, 20)]) == 1  # one ends as the next starts
    assert peak_overlap([(0, 10), (9, 20)]) == 2
    assert peak_overlap([(0, 100), (10, 20), (15, 30), (25, 40)]) == 3
    assert handoff_gaps([(0, 10), (12, 20), (20, 30)]) == [2, 0]
    assert micros("1970-01-01T00:00:01.000002Z") == 1_000_002
    assert micros("1796237456987096") == 1796237456987096


# -- the cap ------------------------------------------------------------------------------


def test_max_parallel_caps_running_children_below_free_worker_slots(gateway):
    """4 children, max_parallel 2, 4 worker processes free: never more than 2 run, and 2 do."""
    # 1.5 s children: child 1 still overlaps child 0 (or the next) when its message is late on a slow machine.
    children = echo_children(4, delay_ms=1500)
    parent_id = submit_group(gateway, children, max_parallel=2).json()["id"]
    cap = cap_checker(2)

    view = wait_for_job(gateway.job, parent_id, timeout=60, on_poll=cap)

    spans = intervals(view["children"])
    assert peak_overlap(spans) == 2, f"peak overlap {peak_overlap(spans)} of {spans}"
    assert view["status"] == "completed"
    assert view["counts"] == only_counts(completed=4)
    assert view["progress"] == 1
    assert [c["index"] for c in view["children"]] == [0, 1, 2, 3]
    assert [c["id"] for c in view["children"]] == [keys.child_id(parent_id, i) for i in range(4)]
    assert all(c["status"] == "completed" and c["attempts"] == 1 for c in view["children"])
    assert view["result"]["text"] == "\n\n".join(f"child-{i}" for i in range(4))
    assert_audited_once(gateway, parent_id, [c["id"] for c in view["children"]], "completed")
    jobs, child_events = events_of(gateway, parent_id)
    assert len(jobs) == 1 and len(child_events) == 4


def test_200_children_complete_in_index_order_under_the_cap(gateway):
    n, max_parallel = 200, 8
    parent_id = submit_group(gateway, echo_children(n), max_parallel).json()["id"]
    cap = cap_checker(max_parallel)

    view = wait_for_job(gateway.job, parent_id, timeout=120, on_poll=cap)

    assert view["status"] == "completed", view["counts"]
    assert view["counts"] == only_counts(completed=n)
    assert peak_overlap(intervals(view["children"])) <= max_parallel
    result = view["result"]
    assert result["text"] == "\n\n".join(f"child-{i}" for i in range(n))
    assert [c["text"] for c in result["children"]] == [f"child-{i}" for i in range(n)]
    assert [p["child_index"] for p in result["pages"]] == list(range(n))
    assert [p["page"] for p in result["pages"]] == list(range(1, n + 1))
    jobs, child_events = events_of(gateway, parent_id)
    assert len(jobs) == 1 and len(child_events) == n


# -- collect-all ---------------------------------------------------------------------------


def test_a_failed_child_fails_the_parent_and_every_sibling_still_runs(gateway):
    """The first child fails while all its siblings are still held: they run and their results stay."""
    children = [echo_child("child-0", fail=True)] + [echo_child(f"child-{i}", delay_ms=20) for i in (1, 2, 3)]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]

    view = wait_for_job(gateway.job, parent_id, timeout=60)

    assert view["status"] == "failed"
    assert view["error_code"] == "child_failed"
    assert view["counts"] == only_counts(completed=3, failed=1)
    assert view["progress"] == 1
    by_index = {c["index"]: c for c in view["children"]}
    assert by_index[0]["status"] == "failed" and by_index[0]["error_code"] == "echo_failed"
    assert all(by_index[i]["status"] == "completed" and by_index[i]["error_code"] is None for i in (1, 2, 3))
    result = view["result"]
    assert result["text"] == "child-1\n\nchild-2\n\nchild-3"
    assert [(c["index"], c["status"], c["text"], c["error_code"]) for c in result["children"]] == [
        (0, "failed", None, "echo_failed"),
        (1, "completed", "child-1", None),
        (2, "completed", "child-2", None),
        (3, "completed", "child-3", None),
    ]
    assert peak_overlap(intervals(view["children"])) == 1
    child = gateway.job(keys.child_id(parent_id, 0))
    assert (child["kind"], child["status"], child["error_code"]) == ("child", "failed", "echo_failed")
    assert_audited_once(gateway, parent_id, [c["id"] for c in view["children"]], "failed")
    _, child_events = events_of(gateway, parent_id)
    assert sorted((e["job_id"], e["status"], e["error_code"]) for e in child_events) == sorted(
        [(keys.child_id(parent_id, 0), "failed", "echo_failed")]
        + [(keys.child_id(parent_id, i), "completed", None) for i in (1, 2, 3)]
    )


# -- idempotency --------------------------------------------------------------------------


def test_idempotent_resubmit_returns_the_same_parent_and_creates_no_children(gateway, db):
    body = group_body(echo_children(3, delay_ms=20), max_parallel=2)
    headers = {"Idempotency-Key": "fanout-resubmit-1"}

    first = gateway.post_json(body, headers)
    assert first.status_code == 202, first.text
    assert "Idempotent-Replayed" not in first.headers
    parent_id = first.json()["id"]
    created = job_keys(db)
    assert len(created) == 1 + 3

    for _ in range(2):
        again = gateway.post_json(body, headers)
        assert again.status_code == 202, again.text
        assert again.headers.get("Idempotent-Replayed") == "true"
        assert again.json()["id"] == parent_id
        assert again.headers["Location"].endswith(f"/jobs/{parent_id}")
        assert job_keys(db) == created

    view = wait_for_job(gateway.job, parent_id, timeout=60)
    assert view["status"] == "completed" and view["total"] == 3
    assert view["idempotency_key"] == "fanout-resubmit-1"
    assert_audited_once(gateway, parent_id, [c["id"] for c in view["children"]], "completed")

    before = keyspace(db)
    other = group_body(echo_children(4), max_parallel=2)
    refused = gateway.post_json(other, headers)
    assert refused.status_code == 422, refused.text
    assert refused.json()["code"] == "idempotency_key_reused"
    assert keyspace(db) == before
    assert job_keys(db) == created


# -- the single-job path ----------------------------------------------------------------------


def test_json_without_fanout_and_raw_documents_stay_single_jobs(gateway, db):
    as_json = gateway.post_json(echo_child("plain json"))
    assert as_json.status_code == 202, as_json.text
    raw = gateway.post_raw(b"raw body", "text/plain", params={"model": "echo"})
    assert raw.status_code == 202, raw.text

    for resp, text in ((as_json, "plain json"), (raw, "raw body")):
        assert resp.json()["kind"] == "single"
        view = wait_for_job(gateway.job, resp.json()["id"], timeout=60)
        assert (view["kind"], view["status"]) == ("single", "completed")
        assert view["result"]["text"] == text
        assert "children" not in view and "parent_id" not in view
        events = gateway.events(view["id"])
        assert [(e["operation"], e["job_id"], e["parent_job_id"]) for e in events] == [("job", view["id"], None)]
    assert len(job_keys(db)) == 2
    tag = tenant_tag(DEFAULT_TENANT)
    statuses = ("queued", "processing", "completed", "failed")
    assert all(db.zcard(keys.roots("parent", s, tag, b)) == 0 for s in statuses for b in keys.buckets())
    assert sum(db.zcard(keys.roots("single", "completed", tag, b)) for b in keys.buckets()) == 2


# -- atomic rejection ---------------------------------------------------------------------------

BAD_CHILDREN = {
    "bad_base64": ({"payload": "not base64!"}, 400, "invalid_base64"),
    "unknown_model": ({"model": "no-such-model"}, 422, "unknown_model"),
    "wrong_content_type": ({"content_type": "image/png"}, 415, "unsupported_content_type"),
}


@pytest.mark.parametrize("case", sorted(BAD_CHILDREN))
def test_a_group_with_one_bad_child_creates_nothing(gateway, db, case):
    # Something is stored already, so "nothing created" covers the shared indexes too.
    earlier = submit_group(gateway, echo_children(1), max_parallel=1).json()["id"]
    assert wait_for_job(gateway.job, earlier, timeout=60)["status"] == "completed"
    before = keyspace(db)
    assert before, "the earlier group left nothing to compare with"

    override, status, code = BAD_CHILDREN[case]
    children = echo_children(4)
    children[2] = {**children[2], **override}
    resp = gateway.post_json(group_body(children, max_parallel=2), {"Idempotency-Key": f"fanout-bad-{case}"})

    assert resp.status_code == status, resp.text
    problem = resp.json()
    assert problem["code"] == code
    assert problem["child_index"] == 2
    assert "Child 2" in problem["detail"]
    assert keyspace(db) == before


# -- hand-off ---------------------------------------------------------------------------------


@pytest.mark.parametrize("slot", ["kept", "message"])
def test_completions_hand_the_slot_to_the_next_child_without_the_sweep(procs, capsys, slot):
    """max_parallel 1 and a sweep every 30 s: only completions can release the 29 later children.

    Were the sweep the releaser, each hand-off would wait for a tick; every
    gap below 10 s proves the completing transition released the next child.
    ``kept``: the finishing worker claims the next child in the same
    transition and runs it, so that child starts at the very microsecond its
    predecessor finished.  ``message``: with kept slots off, every next child
    gets a Celery message, and starts only once a worker has taken it.
    """
    env = {"OCRGW_SWEEP_INTERVAL": "30", "OCRGW_KEEP_SLOT_SECONDS": "60" if slot == "kept" else "0"}
    stack = procs.stack(db=procs.fresh_db(), concurrency=2, web=True, env=env)
    n = 30
    with Gateway(stack.web().base_url) as gw:
        parent_id = submit_group(gw, echo_children(n, delay_ms=20), max_parallel=1).json()["id"]
        view = wait_for_job(gw.job, parent_id, timeout=90, on_poll=cap_checker(1))
        assert view["status"] == "completed", view["counts"]
        assert_audited_once(gw, parent_id, [c["id"] for c in view["children"]], "completed")

    spans = intervals(view["children"])
    gaps = handoff_gaps(spans)
    with capsys.disabled():
        print(f"\n[fan-out hand-off, max_parallel 1, sweep 30 s, slot {slot}] {describe_gaps(gaps)}")
    assert peak_overlap(spans) == 1
    assert all(g >= 0 for g in gaps), f"a child started before its predecessor finished: {gaps}"
    assert max(gaps) < 10_000_000, describe_gaps(gaps)
    if slot == "kept":
        assert set(gaps) == {0}, f"a child waited for a message: {describe_gaps(gaps)}"
        assert {c["attempts"] for c in view["children"]} == {1}
    else:
        assert min(gaps) > 0, f"a slot was kept with kept slots off: {describe_gaps(gaps)}"


def test_a_kept_slot_gives_way_to_other_work_once_its_time_budget_is_spent(procs):
    """One worker process, a long group of short children, then a single job.

    The group's worker keeps its slot for OCRGW_KEEP_SLOT_SECONDS (1 s here,
    the default); then the group's next child is published behind the single
    job's message, so the single job runs long before the group is done.
    Were the slot kept for good, the single job would wait for the whole group.
    """
    stack = procs.stack(db=procs.fresh_db(), concurrency=1, web=True, env={"OCRGW_KEEP_SLOT_SECONDS": "1"})
    with Gateway(stack.web().base_url) as gw:
        parent_id = submit_group(gw, echo_children(100, delay_ms=30), max_parallel=1).json()["id"]
        single = gw.post_json(echo_child("single"))
        assert single.status_code == 202, single.text
        single_view = wait_for_job(gw.job, single.json()["id"], timeout=90)
        view = wait_for_job(gw.job, parent_id, timeout=90)

    assert single_view["status"] == view["status"] == "completed"
    children_before = [
        c for c in view["children"] if recorded_micros(c["finished_at"]) <= recorded_micros(single_view["started_at"])
    ]
    assert recorded_micros(single_view["finished_at"]) < recorded_micros(view["finished_at"])
    assert 0 < len(children_before) < 100, f"{len(children_before)} children ran before the single job"
    # Some hand-offs went through a message, so not every child started as its predecessor finished.
    spans = intervals(view["children"])
    assert peak_overlap(spans) == 1 and any(g > 0 for g in handoff_gaps(spans))


# -- the sweep as a safety net ------------------------------------------------------------------


@pytest.fixture(scope="module")
def requeue_stack(stack_factory):
    """Worker, coordinator and beat that re-publish an unclaimed queued job after 1 s."""
    return stack_factory(env={"OCRGW_SWEEP_INTERVAL": "0.2", "OCRGW_REQUEUE_SECONDS": "1"}, web=False)


@pytest.fixture
def requeue_store(requeue_stack):
    """A store on that database with the same settings: it creates jobs and publishes nothing."""
    store = JobStore.from_settings(Settings.from_env({"REDIS_URL": requeue_stack.redis_url, **requeue_stack.env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    try:
        yield store
    finally:
        store.redis.close()
        keys.use_bucket_count(None)  # the store set this process's count (24 on a cluster): the environment's again


def test_sweep_releases_a_group_whose_creator_released_nothing(requeue_store):
    store = requeue_store
    jobs = [NewJob("echo", "text/plain", f"child-{i}".encode(), options={"delay_ms": 30}) for i in range(6)]
    created = store.create_group(jobs, GroupRules(2), release=False)
    assert created.dispatches == [] and not created.replayed

    parent = wait_for_job(store.queries.get, created.job_id, timeout=60, on_poll=cap_checker(2))

    assert parent["status"] == "completed"
    assert (parent["n_completed"], parent["n_held"], parent["n_queued"], parent["n_processing"]) == ("6", "0", "0", "0")
    children = store.queries.children_page(created.job_id, 0, 6).children
    assert [c["status"] for c in children] == ["completed"] * 6
    assert peak_overlap(intervals(children)) <= 2
    results = store.queries.results([c["id"] for c in children])
    assert [r["text"] for r in results] == [f"child-{i}" for i in range(6)]
    events = store.queries.events(created.job_id)
    assert [(e["operation"], e["job_id"]) for e in events if e["operation"] == "job"] == [("job", created.job_id)]
    assert sorted(e["job_id"] for e in events if e["operation"] == "job_child") == sorted(c["id"] for c in children)


def test_sweep_republishes_a_queued_job_whose_message_was_never_sent(requeue_store):
    store = requeue_store
    created = store.create_single(NewJob("echo", "text/plain", b"never published"))
    # Its wake-up (no job id: a worker takes the model's next ready job) ...and we drop it.
    assert [(d.job_id, d.model) for d in created.dispatches] == [("", "echo")]

    job = wait_for_job(store.queries.get, created.job_id, timeout=60)

    assert job["status"] == "completed" and job["attempts"] == "1"
    assert store.queries.result(created.job_id)["text"] == "never published"
    # The sweep re-publishes only once the requeue deadline (created + 1 s) has passed,
    # and without a message nothing could claim it before: the claim proves the sweep sent it.
    waited = recorded_micros(job["started_at"]) - recorded_micros(job["created_at"])
    assert waited >= 999_000, f"claimed {waited} us after creation, before the requeue deadline"
    bucket = keys.bucket_of(created.job_id)
    assert store.redis.zscore(keys.queued(bucket), created.job_id) is None
    assert store.redis.zscore(keys.leases(bucket), created.job_id) is None
