"""Renders the store's records (flat string hashes) as the API's JSON documents.

The store keeps what its Lua scripts can write cheaply: integer microseconds
since the epoch as strings, '' for unset, per-status counters on a parent.
Here they become RFC 3339 times, nulls and a parent status derived live
from the counters, so a poll is fresh without waiting for any sweep.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from jobs.contract import TERMINAL, JobKind, JobStatus
from jobs.store import JobStore

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def rfc3339(micros: str | None) -> str | None:
    """``"1796237456987096"`` -> ``"2026-12-02T18:37:36.987096Z"``; '' (unset) -> None.

    Integer arithmetic throughout: a float timestamp would lose the last microseconds.
    """
    if not micros:
        return None
    return (_EPOCH + timedelta(microseconds=int(micros))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def job(store: JobStore, record: dict[str, str]) -> dict[str, Any]:
    if record["kind"] == JobKind.PARENT.value:
        return parent(store, record)
    return single(store, record)


def single(store: JobStore, record: dict[str, str]) -> dict[str, Any]:
    """A single job or a child."""
    status = record["status"]
    view = {
        "id": record["id"],
        "kind": record["kind"],
        "status": status,
        "model": record["model"],
        "doc_hash": record["doc_hash"],
        "pages": int(record.get("pages") or 0),
        "content_type": record["content_type"],
        "stage": record.get("stage", ""),
        "progress": float(record.get("progress") or 0),
        "attempts": int(record.get("attempts") or 0),
        "created_at": rfc3339(record.get("created_at")),
        "started_at": rfc3339(record.get("started_at")),
        "finished_at": rfc3339(record.get("finished_at")),
        "result": store.result(record["id"]) if status == JobStatus.COMPLETED.value else None,
        "error_code": _null(record.get("error_code")) if status == JobStatus.FAILED.value else None,
        "error": _null(record.get("error")) if status == JobStatus.FAILED.value else None,
        "idempotency_key": _null(record.get("idempotency_key")),
    }
    # Why the current attempt is a retry (a lost lease, a transient engine error).
    for name in ("last_error_code", "last_error"):
        if record.get(name):
            view[name] = record[name]
    if record["kind"] == JobKind.CHILD.value:
        view["parent_id"] = record["parent_id"]
        view["index"] = int(record["index"])
    return view


def parent(store: JobStore, record: dict[str, str]) -> dict[str, Any]:
    total = int(record["total"])
    counts = {s.value: int(record.get(f"n_{s.value}") or 0) for s in JobStatus}
    status = parent_status(record, counts, total)
    children = store.children(record["id"], total)
    error_code = _null(record.get("error_code"))
    if status == JobStatus.FAILED.value and error_code is None:
        error_code = "child_failed"  # what the finalizing transition records
    return {
        "id": record["id"],
        "kind": JobKind.PARENT.value,
        "status": status,
        "progress": _terminal(counts) / total,
        "model": record["model"],
        "max_parallel": int(record["max_parallel"]),
        "created_at": rfc3339(record.get("created_at")),
        "started_at": rfc3339(record.get("started_at")),
        "finished_at": rfc3339(record.get("finished_at")),
        "idempotency_key": _null(record.get("idempotency_key")),
        "counts": counts,
        "total": total,
        "children": [_child_summary(c) for c in children],
        "result": _merged_result(store, children) if JobStatus(status).terminal else None,
        "error_code": error_code,
    }


def parent_status(record: dict[str, str], counts: dict[str, int], total: int) -> str:
    """The parent's status from its counters (collect-all: one failure fails the group, at the end)."""
    stored = record["status"]
    if JobStatus(stored).terminal:
        return stored
    if _terminal(counts) == total:
        return JobStatus.FAILED.value if counts[JobStatus.FAILED.value] else JobStatus.COMPLETED.value
    if record.get("started_at") or counts[JobStatus.PROCESSING.value] or _terminal(counts):
        return JobStatus.PROCESSING.value
    return JobStatus.QUEUED.value


def _terminal(counts: dict[str, int]) -> int:
    return sum(counts[s.value] for s in TERMINAL)


def _child_summary(child: dict[str, str | None]) -> dict[str, Any]:
    return {
        "id": child["id"],
        "index": int(child["index"]),
        "status": child["status"],
        "model": child["model"],
        "doc_hash": child["doc_hash"],
        "stage": child["stage"],
        "progress": float(child["progress"] or 0),
        "attempts": int(child["attempts"] or 0),
        "started_at": rfc3339(child["started_at"]),
        "finished_at": rfc3339(child["finished_at"]),
        "error_code": _null(child["error_code"]),
    }


def _merged_result(store: JobStore, children: list[dict[str, str | None]]) -> dict[str, Any]:
    """The completed children's results in index order; a failed child leaves a gap, not a void."""
    results = store.results([c["id"] for c in children])
    texts, pages, summary = [], [], []
    for child, result in zip(children, results):
        completed = child["status"] == JobStatus.COMPLETED.value and result is not None
        index = int(child["index"])
        if completed:
            texts.append(result.get("text", ""))
            for page in result.get("pages", []):
                pages.append({**page, "page": len(pages) + 1, "child_index": index})
        summary.append({
            "index": index,
            "id": child["id"],
            "status": child["status"],
            "text": result.get("text", "") if completed else None,
            "error_code": _null(child["error_code"]),
        })
    return {"text": "\n\n".join(texts), "pages": pages, "children": summary}


def events(records: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "events": [
            {
                "id": e["id"],
                "time": rfc3339(e["time"]),
                "operation": e["operation"],
                "job_id": e["job_id"],
                "parent_job_id": _null(e.get("parent_job_id")),
                "status": e["status"],
                "model": e.get("model", ""),
                "error_code": _null(e.get("error_code")),
            }
            for e in records
        ]
    }


def _null(value: str | None) -> str | None:
    return value or None
