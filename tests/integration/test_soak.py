"""The chaos soak at CI length: a mixed load of three tenants while a process is SIGKILLed every few seconds.

What it sends, kills and checks is described in
``tests/integration/soak_support.py`` and ``soak_checks.py``.  In CI the
load runs ``OCRGW_SOAK_SECONDS`` (default 45) seconds, in which each kind of
process is killed about twice; by hand, for ten minutes::

    OCRGW_SOAK_SECONDS=600 .venv/bin/pytest -s tests/integration/test_soak.py

The numbers are printed and written to ``soak.json`` in the test's
temporary directory.  The test fails on any violation; nothing asserts
how long anything took.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import pytest

from tests.harness import find_redis_server, in_ci
from tests.integration.soak_checks import Root, check_root, received_key
from tests.integration.soak_support import KINDS, format_report, run_soak

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

SECONDS = float(os.environ.get("OCRGW_SOAK_SECONDS", "45"))


def test_every_invariant_holds_through_a_chaos_soak(tmp_path):
    if find_redis_server() is None:
        if in_ci():
            pytest.fail("redis-server is not installed", pytrace=False)
        pytest.skip("redis-server is not installed")

    report = run_soak(tmp_path, SECONDS)

    (tmp_path / "soak.json").write_text(json.dumps(report.summary(), indent=2) + "\n")
    print(format_report(report))
    assert report.violations == [], format_report(report)
    assert set(report.kills) == set(KINDS), f"not every kind of process was killed: {dict(report.kills)}"
    assert report.load.groups and report.load.singles and report.checked.get("redrives"), report.summary()


# -- the checker catches what it must ------------------------------------------------------------------


def child(index: int, status: str, runs: Sequence[tuple[str, str]] = (), error_code: str | None = None) -> dict:
    return {
        "id": f"p-{index}",
        "index": index,
        "status": status,
        "error_code": error_code,
        "runs": [{"started_at": s, "finished_at": f} for s, f in runs],
    }


def event(operation: str, job_id: str, status: str) -> dict:
    return {"operation": operation, "job_id": job_id, "status": status}


def at(second: int) -> str:
    return f"2026-12-04T18:00:{second:02d}.000000Z"


def redriven_group() -> tuple[Root, dict, list[dict], dict]:
    root = Root("p", "acme", "group", ["a", "b"], [True, False], False, set(), caps={1})
    view = {
        "status": "completed",
        "redrives": 1,
        "children": [child(0, "completed", [(at(0), at(1)), (at(5), at(6))]), child(1, "completed", [(at(1), at(2))])],
    }
    events = [
        event("job_child", "p-0", "failed"),
        event("job_child", "p-1", "completed"),
        event("job", "p", "failed"),
        event("webhook", "p", "failed"),
        event("job_child", "p-0", "completed"),
        event("job", "p", "completed"),
    ]
    result = {"children": [{"index": 0, "text": "a"}, {"index": 1, "text": "b"}]}
    return root, view, events, result


def test_the_checker_passes_a_group_that_ended_once_per_run():
    assert check_root(*redriven_group()) == []


def test_the_checker_flags_a_child_that_ended_twice_in_one_run():
    root, view, events, result = redriven_group()
    events.insert(1, event("job_child", "p-0", "failed"))
    assert check_root(root, view, events, result) == ["child 0 ended ['failed', 'failed'] in run 0 (before it: None)"]


def test_the_checker_flags_a_child_run_again_without_a_redrive_and_an_end_after_the_last():
    root, view, events, result = redriven_group()
    events.insert(4, event("job_child", "p-1", "completed"))
    events.append(event("job_child", "p-0", "completed"))
    found = check_root(root, view, events, result)
    assert found == [
        "child 0 ended ['completed'] in run 2 (before it: completed)",
        "child 1 ended ['completed'] in run 1 (before it: completed)",
    ]


def test_the_checker_flags_a_broken_cap_a_wrong_result_and_a_cancel_nobody_asked_for():
    root, view, events, result = redriven_group()
    view["children"][1]["runs"] = [{"started_at": at(5), "finished_at": at(7)}]
    result["children"][1]["text"] = "not b"
    assert check_root(root, view, events, result) == [
        "child 1 completed with 'not b', sent 'b'",
        "2 children ran at once, its largest max_parallel was 1",
    ]
    single = Root("s", "acme", "single", ["x"], [False], False, set())
    found = check_root(single, {"status": "cancelled"}, [event("job", "s", "cancelled")], None)
    assert found == ["cancelled, and no cancel was asked"]
    failed = {"status": "failed", "error_code": "echo_failed"}
    assert check_root(single, failed, [event("job", "s", "failed")], None) == [
        "failed with echo_failed, and no fault was asked"
    ]


def test_webhooks_are_told_apart_by_job_status_and_run():
    assert received_key(b'{"id": "p", "kind": "parent", "status": "failed", "redrives": 1}') == ("p", "failed", 1)
    assert received_key(b'{"id": "p-1", "kind": "child", "status": "completed"}') == ("p-1", "completed", 0)
