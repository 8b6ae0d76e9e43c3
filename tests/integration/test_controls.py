"""The controls against real processes: cancel in every state (a kept slot included), a cap raised and
lowered mid-run, a redrive after a collect-all failure, and failure tolerance with and without fail_fast.

Concurrency is read from what the transitions recorded (every attempt's run, and a child's
``queued_at``, all Redis time), never from sleeps.
"""

from __future__ import annotations

import json
import time

import pytest

from tests.integration.fanout_support import (
    attempt_spans,
    echo_child,
    events_of,
    micros,
    peak_overlap,
    recorded_micros,
    submit_group,
)
from tests.integration.polling import wait_for_job
from tests.keyspace import keys

pytestmark = pytest.mark.integration

WAIT = 60


def paged_child(text: str, n: int) -> dict:
    """An echo child of ``n`` pages (a form feed separates them), 50 ms each."""
    return echo_child("\f".join(f"{text} p{i}" for i in range(1, n + 1)), delay_ms=50, doc_hash=f"doc-{text}")


def statuses(view) -> list[str]:
    return [c["status"] for c in view["children"]]


def assert_one_event_per_job(gateway, parent_id, view, parent_status):
    jobs, children = events_of(gateway, parent_id)
    assert [(e["job_id"], e["status"]) for e in jobs] == [(parent_id, parent_status)]
    assert sorted((e["job_id"], e["status"]) for e in children) == sorted(
        (c["id"], c["status"]) for c in view["children"]
    )


# -- cancel ------------------------------------------------------------------------------------------


def test_cancel_a_running_child_a_held_child_then_the_group(gateway):
    children = [paged_child(f"c{i}", 100) for i in range(6)]
    parent_id = submit_group(gateway, children, max_parallel=2).json()["id"]
    running = wait_for_job(
        gateway.job,
        parent_id,
        lambda v: statuses(v)[:2] == ["processing"] * 2,
        what="two children running",
        timeout=WAIT,
    )
    assert statuses(running)[2:] == ["held"] * 4

    assert gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}-0").status_code == 202  # asked to stop
    assert gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}-5").status_code == 200  # never started
    # Child 0 stops at its next page; its slot goes to child 2.
    wait_for_job(
        gateway.job,
        parent_id,
        lambda v: statuses(v)[0] == "cancelled" and statuses(v)[2] != "held",
        what="child 0 cancelled and its slot handed on",
        timeout=WAIT,
    )
    cancel = gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}")
    assert cancel.status_code == 202

    view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    assert view["status"] == "cancelled" and view["counts"]["cancelled"] == 6
    again = gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}")
    assert (again.status_code, again.json()["code"]) == (409, "job_finished")
    child0 = gateway.job(f"{parent_id}-0")
    assert [r["outcome"] for r in child0["runs"]] == ["cancelled"] and child0["progress"] < 1
    assert peak_overlap(attempt_spans(view["children"])) <= 2
    assert_one_event_per_job(gateway, parent_id, view, "cancelled")


def test_cancelling_a_group_stops_the_child_in_a_kept_slot_and_keeps_no_more(gateway):
    # One slot: after child 0, its worker claims child 1 itself in the completing step.  Child 1 has 200
    # pages (10 s), so it still runs when the DELETE comes on a slow machine; the cancel stops it early.
    children = [echo_child("first", delay_ms=50)] + [paged_child(f"c{i}", 200) for i in range(1, 5)]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]
    view = wait_for_job(
        gateway.job, parent_id, lambda v: statuses(v)[1] == "processing", what="child 1 running", timeout=WAIT
    )
    first, kept = view["children"][0], view["children"][1]
    assert micros(kept["started_at"]) == micros(first["finished_at"]), "child 1 was not run in a kept slot"

    assert gateway.http.delete(f"{gateway.base_url}/jobs/{parent_id}").status_code == 202

    view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    assert statuses(view) == ["completed", "cancelled", "cancelled", "cancelled", "cancelled"]
    assert view["status"] == "cancelled"
    assert gateway.get(view["result_url"])["children"][0]["text"] == "first"  # completed work is kept
    assert [r["outcome"] for r in view["children"][1]["runs"]] == ["cancelled"]
    assert all(c["runs"] == [] for c in view["children"][2:])  # never started
    assert_one_event_per_job(gateway, parent_id, view, "cancelled")


# -- the cap -------------------------------------------------------------------------------------------


def test_a_cap_raised_then_lowered_mid_run_holds_at_every_moment(gateway, db):
    # 20 pages (1 s) a child, so that the polls see three running at once on a slow machine.
    children = [paged_child(f"c{i}", 20) for i in range(12)]
    parent_id = submit_group(gateway, children, max_parallel=1).json()["id"]
    wait_for_job(gateway.job, parent_id, lambda v: "processing" in statuses(v), what="a child running", timeout=WAIT)

    raised = gateway.http.patch(f"{gateway.base_url}/jobs/{parent_id}", json={"max_parallel": 3})
    assert raised.status_code == 200 and raised.json()["counts"]["processing"] + raised.json()["counts"]["queued"] > 1
    wait_for_job(
        gateway.job, parent_id, lambda v: statuses(v).count("processing") == 3, what="three running", timeout=WAIT
    )
    lowered = gateway.http.patch(f"{gateway.base_url}/jobs/{parent_id}", json={"max_parallel": 1})
    assert lowered.status_code == 200
    seconds, micro = db.time()
    lowered_at = seconds * 1_000_000 + micro

    view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    assert view["status"] == "completed"
    spans = attempt_spans(view["children"])
    assert peak_overlap(spans) <= 3
    # Every child released after the cap went down to 1 ran alone.
    released_after = [c for c in view["children"] if int(db.hget(keys.job(c["id"]), "queued_at")) > lowered_at]
    assert released_after, "no child was released after the cap was lowered"
    for child in released_after:
        mine = (recorded_micros(child["started_at"]), recorded_micros(child["finished_at"]))
        overlapping = [s for s in spans if s != mine and s[0] < mine[1] and mine[0] < s[1]]
        assert overlapping == [], f"{child['id']} ran beside {overlapping}"


# -- redrive ---------------------------------------------------------------------------------------------


def test_a_redrive_after_a_collect_all_failure_ends_completed(gateway, db):
    # Child 1 fails until a moment far off, like a dependency that is down.  Once its failure is recorded, the
    # dependency comes back: its stored options now say it failed until the moment it did (its recorded
    # finished_at, Redis time), so the redriven child goes through with no clock to wait for.
    children = [echo_child(f"c{i}") for i in range(4)]
    children[1]["options"] = {"fail_until": time.time() + 3600}
    parent_id = submit_group(gateway, children, max_parallel=2).json()["id"]
    failed = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    assert (failed["status"], statuses(failed)) == ("failed", ["completed", "failed", "completed", "completed"])
    finished_before = [c["finished_at"] for c in failed["children"]]

    failing = keys.job(keys.child_id(parent_id, 1))
    options = json.loads(db.hget(failing, "options"))
    failed_at = micros(failed["children"][1]["finished_at"])
    assert failed_at is not None
    options["fail_until"] = failed_at / 1_000_000
    db.hset(failing, "options", json.dumps(options))
    retry = gateway.http.post(f"{gateway.base_url}/jobs/{parent_id}/retry", headers={"Idempotency-Key": "r1"})
    assert retry.status_code == 202 and retry.json()["status"] == "processing"

    view = wait_for_job(gateway.job, parent_id, timeout=WAIT)
    assert (view["status"], view["redrives"], view["error_code"]) == ("completed", 1, None)
    assert [c["finished_at"] for i, c in enumerate(view["children"]) if i != 1] == [
        f for i, f in enumerate(finished_before) if i != 1
    ]  # the others were not run again
    assert gateway.get(view["result_url"])["text"] == "c0\n\nc1\n\nc2\n\nc3"
    jobs, _ = events_of(gateway, parent_id)
    assert [e["status"] for e in jobs] == ["failed", "completed"]  # one per run
    replay = gateway.http.post(f"{gateway.base_url}/jobs/{parent_id}/retry", headers={"Idempotency-Key": "r1"})
    assert replay.status_code == 202 and replay.headers["Idempotent-Replayed"] == "true"


# -- failure tolerance --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "failing, tolerated, fail_fast, expected",
    [
        ({2}, 1, False, ["completed", "completed", "failed", "completed", "completed"]),
        ({1, 2}, 1, False, ["completed", "failed", "failed", "completed", "completed"]),
        ({0, 1}, 1, True, ["failed", "failed", "cancelled", "cancelled", "cancelled"]),
    ],
    ids=["within", "beyond, collect-all", "beyond, fail fast"],
)
def test_tolerance(gateway, failing, tolerated, fail_fast, expected):
    children = [echo_child(f"c{i}", fail=i in failing) for i in range(5)]
    body = {
        "fanout": {"max_parallel": 1, "tolerated_failures": tolerated, "fail_fast": fail_fast, "children": children}
    }
    resp = gateway.post_json(body)
    assert resp.status_code == 202, resp.text
    parent_id = resp.json()["id"]

    view = wait_for_job(gateway.job, parent_id, timeout=WAIT)

    assert statuses(view) == expected
    within = len(failing) <= tolerated
    assert (view["status"], view["error_code"]) == (("completed", None) if within else ("failed", "child_failed"))
    assert gateway.get(view["result_url"])["children"][2]["text"] == (
        "c2" if 2 not in failing and not fail_fast else None
    )
    assert_one_event_per_job(gateway, parent_id, view, view["status"])
