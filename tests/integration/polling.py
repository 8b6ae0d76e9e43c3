"""Waiting for a job to reach a state: the one poll loop of the integration tests.

Every wait is on what the system recorded (a job's status, its counts, its
children), read through a gateway's ``GET /jobs/{id}`` or straight from the
store; the timeout bounds a hang and asserts no speed.  Conditions that are
not about one job (a log line, a metric) use ``tests.harness.wait_until``,
which this is built on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import requests

from tests.harness import wait_until

TERMINAL = frozenset({"completed", "failed", "cancelled"})

#: How long a test waits for an outcome by default: generous, since it bounds a hang only.
WAIT = 90.0


def terminal(view: Mapping[str, Any]) -> bool:
    return view["status"] in TERMINAL


def wait_for_job(
    fetch: Callable[[str], Mapping[str, Any] | None],
    job_id: str,
    until: Callable[[Mapping[str, Any]], Any] = terminal,
    *,
    what: str = "a terminal status",
    timeout: float = WAIT,
    on_poll: Callable[[Mapping[str, Any]], None] | None = None,
    through_outages: bool = False,
    interval: float | None = None,
) -> Mapping[str, Any]:
    """Polls ``fetch(job_id)`` until ``until(view)`` holds, and returns that view.

    ``fetch`` is a gateway client's ``job`` or a store's ``queries.get``; a
    None (no such job yet) is polled again.  ``on_poll`` sees every view, so a
    test can check an invariant all along the way.  With ``through_outages``
    a poll that fails (a gateway or Redis being killed) is retried instead of
    failing the test, and polls come half as often (every 0.1 s unless
    ``interval`` says otherwise), leaving the processes that recover the cores.
    """
    if interval is None:
        interval = 0.1 if through_outages else 0.05
    poll = tolerant(fetch) if through_outages else fetch
    last: list[Mapping[str, Any] | None] = [None]

    def reached() -> Mapping[str, Any] | None:
        view = poll(job_id)
        if view is None:
            return None
        last[0] = view
        if on_poll is not None:
            on_poll(view)
        return view if until(view) else None

    return wait_until(
        reached, timeout, interval, message=lambda: f"job {job_id} never reached {what}; last seen: {brief(last[0])}"
    )


def processing(view: Mapping[str, Any]) -> bool:
    return view["status"] == "processing"


def wait_until_processing(fetch: Callable[[str], Mapping[str, Any] | None], job_id: str) -> Mapping[str, Any]:
    """Waits until a worker runs ``job_id``: the moment a process-killing test strikes, through any outage."""
    return wait_for_job(fetch, job_id, processing, what="processing", through_outages=True)


def tolerant(call: Callable[..., Any]) -> Callable[..., Any]:
    """``call``, answering None instead of raising while a gateway or Redis is away."""

    def attempt(*args: Any) -> Any:
        try:
            return call(*args)
        except (requests.RequestException, AssertionError, ValueError):
            return None

    return attempt


def brief(view: Mapping[str, Any] | None) -> str:
    """What a failed wait shows of a job: its status and counters, and its children's, not its documents."""
    if view is None:
        return "no such job"
    keep = ("status", "attempts", "counts", "progress", "stage", "error_code", "last_error_code")
    out: dict[str, Any] = {k: view[k] for k in keep if k in view}
    out.update({k: v for k, v in view.items() if k.startswith("n_")})  # a parent's record in the store
    if "children" in view:
        out["children"] = [(c["index"], c["status"], c.get("attempts")) for c in view["children"]]
    return json.dumps(out, default=str)
