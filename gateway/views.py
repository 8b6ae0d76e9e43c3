"""Renders the store's records (flat string hashes) as the API's JSON documents.

The store keeps what its Lua scripts can write cheaply: integer microseconds
since the epoch as strings, '' for unset, per-status counters on a parent.
Here they become RFC 3339 times and nulls; a parent's status is the one its
scripts store (they move it as its children move, so a poll is fresh without
waiting for any sweep), and its progress comes from its per-status counts.
``gateway.responses`` describes each document for the OpenAPI document.

Each kind of document is built here and nowhere else, for the API's routes
(``gateway.api``) and for the webhook deliverer alike; the URLs in them come
from the ``Links`` they are given, so that rendering one needs no Flask app.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from documents.structure import tables_of
from gateway.links import Links
from gateway.schemas import DEFAULT_PAGE_LIMIT
from jobs.contract import TERMINAL, JobKind, JobStatus, Operation, count_field
from jobs.queries import ChildrenPage, JobList, JobQueries
from jobs.registry import MODELS
from jobs.usage import Period, job_units, reported, totals

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: A job hash as read: field -> value ('' or absent when unset; None in a row of an HMGET).
Record = Mapping[str, Any]


def rfc3339(micros: str | None) -> str | None:
    """``"1796237456987096"`` -> ``"2026-12-02T18:37:36.987096Z"``; '' (unset) -> None.

    Integer arithmetic throughout: a float timestamp would lose the last microseconds.
    """
    if not micros:
        return None
    return (_EPOCH + timedelta(microseconds=int(micros))).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# -- a job's view ---------------------------------------------------------------------------------


def job_view(
    queries: JobQueries,
    record: Record,
    links: Links,
    *,
    children: str = "page",
    offset: int = 0,
    limit: int = DEFAULT_PAGE_LIMIT,
) -> dict[str, Any]:
    """What ``GET /jobs/{id}`` answers: a single job or a child; a parent with a page of its children
    (none with ``children="none"``)."""
    if record["kind"] != JobKind.PARENT.value:
        return single(queries, record)
    page = queries.children_page(record["id"], offset, limit) if children == "page" else None
    return parent(record, page, links)


# -- single jobs and children ------------------------------------------------------------------


def single(queries: JobQueries, record: Record) -> dict[str, Any]:
    """A single job or a child, its result inline once completed."""
    status = record["status"]
    # A failed job says why; a cancelled one says who (its error_code stays null).
    ended_short = status in (JobStatus.FAILED.value, JobStatus.CANCELLED.value)
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
        "result": queries.result(record["id"]) if status == JobStatus.COMPLETED.value else None,
        "error_code": _null(record.get("error_code")) if ended_short else None,
        "error": _null(record.get("error")) if ended_short else None,
        "idempotency_key": _null(record.get("idempotency_key")),
        "cancel_requested": record.get("cancel_requested") == "1",
        "runs": runs(record.get("intervals")),
        "usage": job_units(record, _run_us(record.get("intervals"))),
    }
    # Why the current attempt is a retry (a lost lease, a transient engine error).
    for name in ("last_error_code", "last_error"):
        if record.get(name):
            view[name] = record[name]
    if record["kind"] == JobKind.CHILD.value:
        view["parent_id"] = record["parent_id"]
        view["index"] = int(record["index"])
    return view


# -- parents ---------------------------------------------------------------------------------------


def parent(record: Record, page: ChildrenPage | None, links: Links) -> dict[str, Any]:
    """A parent with its counts and, unless left out, a page of its children; never its merged result."""
    total, counts = int(record["total"]), counts_of(record)
    # As the transitions keep it: processing from the first child's claim, terminal from the step
    # that ends the last child (cancelled, failed past its tolerance, or completed), processing
    # again after a redrive.
    status = record["status"]
    view: dict[str, Any] = {
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
        "tolerated_failures": int(record.get("tolerated_failures") or 0),
        "fail_fast": record.get("fail_fast") == "1",
        "cancel_requested": record.get("cancel_requested") == "1",
        "redrives": int(record.get("redrives") or 0),
        "error_code": _null(record.get("error_code")),
        "result_url": links.result(record["id"]) if JobStatus(status).terminal else None,
        "usage": job_units(record, ()),
    }
    if page is not None:
        view["children"] = [_child_summary(c) for c in page.children]
        view["children_page"] = paging(record["id"], page, None, links)
    return view


def children_page(parent_id: str, page: ChildrenPage, status: str | None, links: Links) -> dict[str, Any]:
    return {
        "parent_id": parent_id,
        "status": status,
        "children": [_child_summary(c) for c in page.children],
        "children_page": paging(parent_id, page, status, links),
    }


def paging(parent_id: str, page: ChildrenPage, status: str | None, links: Links) -> dict[str, Any]:
    following = page.next_offset
    next_url = None
    if following is not None:
        next_url = links.children(parent_id, status=status, offset=following, limit=page.limit)
    return {"offset": page.offset, "limit": page.limit, "total": page.total, "next": next_url}


def counts_of(record: Record) -> dict[str, int]:
    return {s.value: int(record.get(count_field(s)) or 0) for s in JobStatus}


def merged_result(queries: JobQueries, record: Record) -> dict[str, Any]:
    """The completed children's results in index order; a failed child leaves a gap, not a void.

    Pages are numbered 1, 2, ... across the children, except those of a
    child that names its place in a larger document (``options.first_page``:
    a part of a split PDF), which keep their numbers in that document.
    """
    texts: list[str] = []
    pages: list[dict[str, Any]] = []
    summary: list[dict[str, Any]] = []
    children: Sequence[tuple[Record, dict[str, Any] | None]] = queries.children_with_results(
        record["id"], int(record["total"])
    )
    for child, result in children:
        index = int(child["index"])
        text = None
        if child["status"] == JobStatus.COMPLETED.value and result is not None:
            text = result.get("text", "")
            texts.append(text)
            numbered_in_document = "first_page" in json.loads(child.get("options") or "{}")
            for page in result.get("pages", []):
                number = page["page"] if numbered_in_document else len(pages) + 1
                pages.append({**page, "page": number, "child_index": index})
        summary.append(
            {
                "index": index,
                "id": child["id"],
                "status": child["status"],
                "text": text,
                "error_code": _null(child["error_code"]),
            }
        )
    return with_tables({"text": "\n\n".join(texts), "pages": pages, "children": summary})


def with_tables(result: dict[str, Any]) -> dict[str, Any]:
    """The result, with the tables of its pages listed (``tables``) when a page was laid out (has ``blocks``, even
    none: a page without text), as a worker lists them.

    Listed from the pages as they are answered, so that a parent's numbers are the whole document's, as
    ``GET /jobs/{id}/tables/{n}.csv`` counts them, whatever its children's results say of their own.
    """
    pages = result.get("pages") or []
    if all(page.get("blocks") is None for page in pages):
        return result
    return {**result, "tables": tables_of(pages)}


def _terminal(counts: dict[str, int]) -> int:
    return sum(counts[s.value] for s in TERMINAL)


def _child_summary(child: Record) -> dict[str, Any]:
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
        "runs": runs(child["intervals"]),
    }


def _run_us(intervals: str | None) -> list[int]:
    """Each ended attempt's run in µs (see jobs.contract.Field.INTERVALS): a child's engine time."""
    return [int(ended) - int(started) for _, started, ended, _ in (run.split(":") for run in _runs_of(intervals))]


def _runs_of(intervals: str | None) -> list[str]:
    return [run for run in (intervals or "").split(",") if run]


def runs(intervals: str | None) -> list[dict[str, Any]]:
    """Every ended attempt, from the job's ``intervals`` (see jobs.contract.Field.INTERVALS)."""
    out = []
    for run in filter(None, (intervals or "").split(",")):
        attempt, started, ended, outcome = run.split(":")
        out.append(
            {"attempt": int(attempt), "started_at": rfc3339(started), "finished_at": rfc3339(ended), "outcome": outcome}
        )
    return out


# -- the listing, events, models, probes -----------------------------------------------------------


def job_list(listing: JobList, links: Links) -> dict[str, Any]:
    return {"jobs": [_summary(row, links) for row in listing.jobs], "next_cursor": listing.next_cursor}


def _summary(row: Record, links: Links) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "status": row["status"],
        "model": row["model"],
        "created_at": rfc3339(row["created_at"]),
        "started_at": rfc3339(row["started_at"]),
        "finished_at": rfc3339(row["finished_at"]),
        "error_code": _null(row["error_code"]),
        "url": links.job(row["id"]),
    }
    if row["kind"] == JobKind.PARENT.value:
        total, counts = int(row["total"]), counts_of(row)
        view["total"] = total
        view["progress"] = _terminal(counts) / total
    return view


def events(records: list[dict[str, str]]) -> dict[str, Any]:
    return {"events": [_event(e) for e in records]}


def _event(e: Record) -> dict[str, Any]:
    view = {
        "id": e["id"],
        "time": rfc3339(e["time"]),
        "operation": e["operation"],
        "job_id": e["job_id"],
        "parent_job_id": _null(e.get("parent_job_id")),
        "status": e["status"],
        "model": e.get("model", ""),
        "error_code": _null(e.get("error_code")),
    }
    if e.get("tenant"):  # whose job it is (a terminal event): the tenant, the submitting key's id
        view.update(tenant=e["tenant"], key_id=_null(e.get("key_id")))
    if e["operation"] == Operation.WEBHOOK.value:
        view.update(
            attempt=int(e["attempt"]),
            outcome=e["outcome"],
            response_status=int(e["response_status"]) if e.get("response_status") else None,
            error=_null(e.get("error")),
            retry_at=rfc3339(e.get("retry_at")),
        )
    return view


def models(options_json_schema: Callable[[type], dict[str, Any]]) -> dict[str, Any]:
    """The registry as ``GET /models`` shows it; each model's options as a JSON schema."""
    return {
        "models": [
            {
                "name": m.name,
                "engine": m.engine,
                "location": m.location.value,
                "content_types": sorted(m.content_types),
                "options": options_json_schema(m.options),
            }
            for m in sorted(MODELS.values(), key=lambda m: m.name)
        ]
    }


def with_languages(models_document: dict[str, Any], languages: frozenset[str] | None) -> dict[str, Any]:
    """``GET /models`` with the live workers' Tesseract ``languages`` on each model that reads them."""
    listed = sorted(languages or ())
    return {
        "models": [
            {**m, "languages": listed} if MODELS[m["name"]].reads_languages else m for m in models_document["models"]
        ]
    }


def status(word: str) -> dict[str, str]:
    """What a probe answers when it is well."""
    return {"status": word}


def _null(value: str | None) -> str | None:
    return value or None


# -- usage -----------------------------------------------------------------------------------------


def _utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def usage(tenant: str, start: datetime, end: datetime, granularity: str, periods: Sequence[Period]) -> dict[str, Any]:
    """What ``GET /usage`` answers: the tenant's usage per period and model, and per model over the range."""
    return {
        "tenant": tenant,
        "from": _utc(start),
        "to": _utc(end),
        "granularity": granularity,
        "periods": [{"start": _utc(p.start), "model": p.model, **reported(p.amounts)} for p in periods],
        "totals": [{"model": model, **reported(amounts)} for model, amounts in totals(periods).items()],
    }
