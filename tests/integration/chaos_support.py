"""Helpers of the reliability and chaos tests: settings that make failures
come back in seconds, requests built around the echo model's fault
options, and the one check every group must pass at the end, whatever was
killed on the way (its waits poll through a process or Redis being away).

That check reads only what the system recorded: statuses, stored results,
the children's ``started_at``/``finished_at`` (Redis ``TIME``, one clock per
group) for the cap, and the audit stream for exactly-once.  Nothing here
asserts how long anything took; the timeouts only bound a hang.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

from tests.integration.fanout_support import Gateway, attempt_spans, peak_overlap
from tests.integration.polling import WAIT, brief, wait_for_job
from tests.keyspace import keys

#: Short leases and a fast sweep, so that a dead worker's job comes back in
#: about two seconds.  The lease is renewed every third of it; 2 s leaves a
#: loaded two-core machine room for a late heartbeat without a false reclaim.
FAST: dict[str, str] = {
    "OCRGW_LEASE_SECONDS": "2",
    "OCRGW_SWEEP_INTERVAL": "0.2",
    "OCRGW_REQUEUE_SECONDS": "2",
    "OCRGW_RETRY_BACKOFF": "0.2",
    "OCRGW_MAX_ATTEMPTS": "3",
    "OCRGW_ECHO_ALLOW_CRASH": "1",
}

# -- requests ---------------------------------------------------------------------------


def b64(data: str | bytes) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def echo(text: str, **options: Any) -> dict[str, Any]:
    """One echo job (or child) whose result text is ``text``; ``options`` as the echo model reads them."""
    job: dict[str, Any] = {
        "model": "echo",
        "content_type": "text/plain",
        "payload": b64(text),
        "doc_hash": f"doc-{text}",
        "pages": 1,
    }
    if options:
        job["options"] = options
    return job


def group(children: Sequence[Any], max_parallel: Any) -> dict[str, Any]:
    """A group's body; any JSON goes, for the tests that send the gateway what it must refuse."""
    return {"fanout": {"max_parallel": max_parallel, "children": list(children)}}


def texts(n: int, prefix: str = "child") -> list[str]:
    return [f"{prefix}-{i}" for i in range(n)]


# -- the end state -------------------------------------------------------------------------------


def assert_group_settled(
    gateway: Gateway,
    parent_id: str,
    child_texts: Sequence[str],
    max_parallel: int,
    failed: Mapping[int, str] | None = None,
    timeout: float = WAIT,
) -> Mapping[str, Any]:
    """Waits for the parent to be terminal, then checks what every group must hold.

    * every child is terminal: ``failed`` maps the indexes expected to fail to
      their ``error_code``, every other child completed with its own text as
      its stored result, and the parent's merged result agrees;
    * the parent's status follows (completed, or failed ``child_failed``);
    * the cap: every attempt's recorded run (retried and reclaimed ones too) never overlaps more than
      ``max_parallel`` deep;
    * exactly one terminal audit event per job: one ``job`` for the parent,
      one ``job_child`` per child, and nothing else.

    Returns the parent's final view.
    """
    failed = dict(failed or {})
    view = wait_for_job(gateway.job, parent_id, timeout=timeout, through_outages=True)
    children = view["children"]
    assert len(children) == len(child_texts) == view["total"], brief(view)

    for child, text in zip(children, child_texts, strict=True):
        index = child["index"]
        if index in failed:
            assert (child["status"], child["error_code"]) == ("failed", failed[index]), brief(view)
        else:
            assert child["status"] == "completed", f"child {index}: {brief(view)}"
            own = gateway.job(child["id"])
            assert own["result"] is not None and own["result"]["text"] == text, own
    expected_status = "failed" if failed else "completed"
    assert view["status"] == expected_status, brief(view)
    assert view["error_code"] == ("child_failed" if failed else None), brief(view)
    result = gateway.get(view["result_url"])  # a parent's merged result is served apart from its view
    merged = {c["index"]: c["text"] for c in result["children"]}
    assert merged == {i: (None if i in failed else t) for i, t in enumerate(child_texts)}, result

    if max_parallel > 0:
        peak = peak_overlap(attempt_spans(children))
        assert peak <= max_parallel, f"{peak} children ran at once, max_parallel {max_parallel}"

    assert_audited_once(gateway, parent_id, view)
    return view


def assert_audited_once(gateway: Gateway, parent_id: str, view: Mapping[str, Any]) -> None:
    events = gateway.events(parent_id)
    by_job: dict[str, list[dict]] = {}
    for event in events:
        by_job.setdefault(event["job_id"], []).append(event)
    parent_events = by_job.pop(parent_id, [])
    assert [(e["operation"], e["status"]) for e in parent_events] == [("job", view["status"])], parent_events
    child_ids = {c["id"] for c in view["children"]}
    assert set(by_job) == child_ids, f"events for {sorted(by_job)}, children {sorted(child_ids)}"
    for child in view["children"]:
        mine = by_job[child["id"]]
        assert [(e["operation"], e["status"], e["parent_job_id"]) for e in mine] == [
            ("job_child", child["status"], parent_id)
        ], mine


def assert_single_settled(
    gateway: Gateway, job_id: str, text: str | None = None, error_code: str | None = None, timeout: float = WAIT
) -> Mapping[str, Any]:
    """A single job ends completed with ``text``, or failed with ``error_code``, audited once."""
    view = wait_for_job(gateway.job, job_id, timeout=timeout, through_outages=True)
    if error_code is None:
        assert view["status"] == "completed", brief(view)
        assert view["result"]["text"] == text, view["result"]
    else:
        assert (view["status"], view["error_code"]) == ("failed", error_code), brief(view)
    # Its terminal audit event, once; a webhook's delivery attempts are events of their own.
    events = [e for e in gateway.events(job_id) if e["operation"] != "webhook"]
    assert [(e["operation"], e["status"]) for e in events] == [("job", view["status"])], events
    return view


# -- the keyspace -----------------------------------------------------------------------------------


def job_ids(client) -> list[str]:
    """The ids of every job record, from the keys themselves."""
    marker = ":job:"
    return sorted(
        k.decode().split(marker, 1)[1] for k in client.scan_iter(match=f"{keys.NAMESPACE}:*{marker}*", count=1000)
    )


def root_ids(client) -> list[str]:
    """Single jobs and parents: the records a submission creates one of."""
    return [j for j in job_ids(client) if keys.CHILD_SEPARATOR not in j]


def idempotency_records(client) -> int:
    return sum(1 for _ in client.scan_iter(match=f"{keys.NAMESPACE}:{{*}}:{keys.IDEMPOTENCY}*", count=1000))
