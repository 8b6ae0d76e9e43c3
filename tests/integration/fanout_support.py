"""Helpers of the fan-out integration tests: submitting groups and measuring.

Concurrency is never inferred from how long something took.  It is read
from what the transitions recorded: every child's ``started_at`` (set by
claim) and ``finished_at`` (set by complete), both taken from Redis ``TIME``
inside the scripts, so the children of one group are on one clock.  A child
is in flight from its release until it finishes, which contains
``[started_at, finished_at)``, so the peak overlap of those intervals can
never exceed the number of children in flight: a peak above ``max_parallel``
is a broken cap.
"""

from __future__ import annotations

import base64
import contextlib
import json
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import requests

from tests.keyspace import keys

STATUSES = ("held", "queued", "processing", "completed", "failed", "cancelled")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


# -- building requests ---------------------------------------------------------


def b64(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return base64.b64encode(data).decode()


def echo_child(text: str, *, delay_ms: float | None = None, fail: bool = False, **overrides: Any) -> dict[str, Any]:
    """One child for the ``echo`` model, whose result text is ``text``."""
    options: dict[str, Any] = {}
    if delay_ms is not None:
        options["delay_ms"] = delay_ms
    if fail:
        options["fail"] = True
    child: dict[str, Any] = {
        "model": "echo",
        "doc_hash": f"doc-{text}",
        "pages": 1,
        "payload": b64(text),
        "content_type": "text/plain",
    }
    if options:
        child["options"] = options
    child.update(overrides)
    return child


def echo_children(n: int, *, delay_ms: float | None = None) -> list[dict[str, Any]]:
    """``n`` echo children; child ``i`` returns the text ``child-<i>``."""
    return [echo_child(f"child-{i}", delay_ms=delay_ms) for i in range(n)]


def group_body(children: Sequence[Mapping[str, Any]], max_parallel: int) -> dict[str, Any]:
    return {"fanout": {"max_parallel": max_parallel, "children": list(children)}}


# -- talking to a gateway ------------------------------------------------------


class Gateway:
    """A small HTTP client of one gateway (a real gunicorn)."""

    def __init__(self, base_url: str, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.http = requests.Session()
        self.http.trust_env = False  # loopback: no proxy from the environment applies

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def post_json(self, body: Any, headers: Mapping[str, str] | None = None) -> requests.Response:
        data = body if isinstance(body, (bytes, str)) else json.dumps(body)
        return self.http.post(
            f"{self.base_url}/jobs",
            data=data,
            timeout=self.timeout,
            headers={"Content-Type": "application/json", **(headers or {})},
        )

    def post_raw(
        self,
        data: bytes,
        content_type: str,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> requests.Response:
        return self.http.post(
            f"{self.base_url}/jobs",
            data=data,
            params=params,
            timeout=self.timeout,
            headers={"Content-Type": content_type, **(headers or {})},
        )

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        resp = self.http.get(f"{self.base_url}{path}", params=params, timeout=self.timeout)
        assert resp.status_code == 200, f"GET {path}: {resp.status_code} {resp.text}"
        return resp.json()

    def job(self, job_id: str) -> dict[str, Any]:
        """The job's view; a parent's as a whole: every child, and once terminal its merged result.

        The API pages a parent's children and serves its merged result apart
        (``result_url``); these tests check whole groups, so the pages are
        followed and the result is fetched into ``result`` (None before the end).
        """
        view = self.get(f"/jobs/{job_id}", {"limit": 200})
        if view["kind"] != "parent":
            return view
        following = view["children_page"]["next"]
        while following:
            page = self.get(following)
            view["children"] += page["children"]
            following = page["children_page"]["next"]
        view["result"] = self.get(view["result_url"]) if view["result_url"] else None
        return view

    def events(self, job_id: str) -> list[dict[str, Any]]:
        resp = self.http.get(f"{self.base_url}/jobs/{job_id}/events", timeout=self.timeout)
        assert resp.status_code == 200, f"GET /jobs/{job_id}/events: {resp.status_code} {resp.text}"
        return resp.json()["events"]


def submit_group(
    gateway: Gateway, children: Sequence[Mapping[str, Any]], max_parallel: int, *, idempotency_key: str | None = None
) -> requests.Response:
    """POSTs a fan-out group and checks it was accepted; returns the response."""
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
    resp = gateway.post_json(group_body(children, max_parallel), headers)
    assert resp.status_code == 202, f"group refused: {resp.status_code} {resp.text}"
    view = resp.json()
    assert view["kind"] == "parent", view
    assert view["total"] == len(children) and view["max_parallel"] == max_parallel, view
    return resp


def in_flight_of(view: Mapping[str, Any]) -> int:
    """queued + processing children of a parent, from a gateway view or a raw parent record."""
    if "counts" in view:
        return view["counts"]["queued"] + view["counts"]["processing"]
    return int(view["n_queued"]) + int(view["n_processing"])


# -- events ----------------------------------------------------------------------


def events_of(gateway: Gateway, parent_id: str) -> tuple[list[dict], list[dict]]:
    """The parent's audit events split into (``job`` events, ``job_child`` events)."""
    events = gateway.events(parent_id)
    jobs = [e for e in events if e["operation"] == "job"]
    children = [e for e in events if e["operation"] == "job_child"]
    assert len(jobs) + len(children) == len(events), f"unexpected operations: {events}"
    return jobs, children


def assert_audited_once(gateway: Gateway, parent_id: str, child_ids: Iterable[str], parent_status: str) -> None:
    """Exactly one ``job`` event for the parent and one ``job_child`` per child, each linked to it."""
    jobs, children = events_of(gateway, parent_id)
    assert [(e["job_id"], e["status"]) for e in jobs] == [(parent_id, parent_status)], jobs
    assert jobs[0]["parent_job_id"] is None, jobs
    ids = sorted(e["job_id"] for e in children)
    assert ids == sorted(child_ids), f"job_child events {ids} != children"
    for event in children:
        assert event["parent_job_id"] == parent_id, event


# -- recorded times ----------------------------------------------------------------


def micros(value: str | int | None) -> int | None:
    """A recorded time as integer microseconds: raw store digits or the API's RFC 3339."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    if value.isdigit():
        return int(value)
    moment = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    delta = moment - _EPOCH  # integer arithmetic: a float timestamp would round
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def recorded_micros(value: str | int | None) -> int:
    """``micros`` of a time that must have been recorded: a missing one fails, naming what was there."""
    moment = micros(value)
    assert moment is not None, f"no time recorded: {value!r}"
    return moment


def intervals(children: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Each child's ``[started_at, finished_at)`` in microseconds, in index order."""
    out = []
    for child in sorted(children, key=lambda c: int(c["index"])):
        start, end = micros(child["started_at"]), micros(child["finished_at"])
        assert start is not None and end is not None, f"child without recorded times: {child}"
        assert start <= end, f"child finished before it started: {child}"
        out.append((start, end))
    return out


def attempt_spans(children: Sequence[Mapping[str, Any]]) -> list[tuple[int, int]]:
    """Every attempt's ``[started, ended)`` in microseconds, from the children's recorded ``runs``.

    This is what a cap check must count: an attempt that lost its lease, was
    retried or was cancelled held a slot while it ran, not only each child's
    last attempt.  A child still processing counts from its start on.
    """
    spans = []
    for child in children:
        for run in child["runs"]:
            start, end = micros(run["started_at"]), micros(run["finished_at"])
            assert start is not None and end is not None and start <= end, f"bad run of {child['id']}: {run}"
            spans.append((start, end))
        if child["status"] == "processing":
            spans.append((recorded_micros(child["started_at"]), 2**63))
    return spans


def peak_overlap(spans: Iterable[tuple[int, int]]) -> int:
    """The largest number of half-open intervals ``[start, end)`` covering one instant."""
    edges = []
    for start, end in spans:
        edges.append((start, 1))
        edges.append((end, -1))
    # At one instant an interval that ends there is no longer running: -1 sorts first.
    edges.sort()
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return peak


def handoff_gaps(spans: Sequence[tuple[int, int]]) -> list[int]:
    """Microseconds from each interval's end to the next one's start (index order)."""
    return [spans[i + 1][0] - spans[i][1] for i in range(len(spans) - 1)]


def describe_gaps(gaps: Sequence[int]) -> str:
    ms = [g / 1000 for g in gaps]
    return (
        f"{len(ms)} hand-offs: p50 {statistics.median(ms):.1f} ms, "
        f"p90 {statistics.quantiles(ms, n=10)[-1]:.1f} ms, max {max(ms):.1f} ms"
    )


# -- the keyspace ---------------------------------------------------------------------


def keyspace(client) -> dict[bytes, bytes]:
    """Every ``ocrgw:*`` key with its serialized value, to compare before and after."""
    out = {}
    for key in client.scan_iter(match=f"{keys.NAMESPACE}:*", count=1000):
        name = key.decode()
        if name in (keys.GAUGES, keys.LAYOUT) or any(
            is_(name) for is_ in (keys.is_sweep_lock, keys.is_call_record, keys.is_worker_report, keys.is_wakeup_count)
        ):
            # They come and go on their own: a sweep lock is set and deleted by every tick, the gauges
            # rewritten by every count, and a wake-up stops counting when a worker starts from it, however late;
            # the store's layout is recorded by a process starting on a store emptied for the test.
            continue
        value = client.dump(key)
        if value is not None:
            out[key] = value
    return out


def job_keys(client) -> list[bytes]:
    """The keys of job records (single, parent and child), however many groups exist."""
    return sorted(k for k in client.scan_iter(match=f"{keys.NAMESPACE}:*", count=1000) if b":job:" in k)


@contextlib.contextmanager
def store_of(stack: Any, env: Mapping[str, str], monkeypatch: Any) -> Iterator[Any]:
    """A ``JobStore`` of ``stack``'s store (its Redis or its cluster, with ``env``'s settings), this process
    publishing what its creates release to the stack's broker; closed, and the bucket count unset, after."""
    from jobs.config import Settings
    from jobs.store import JobStore
    from workers import dispatch
    from workers.celery_app import make_celery

    store = JobStore.from_settings(Settings.from_env({**stack.store_env, **env}))
    keys.use_bucket_count(store.keyspace.bucket_count)  # the test names the store's keys
    monkeypatch.setattr(dispatch, "app", make_celery(Settings(redis_url=stack.redis_url, broker_url=stack.redis_url)))
    try:
        yield store
    finally:
        dispatch.app.close()
        store.redis.close()
        keys.use_bucket_count(None)
