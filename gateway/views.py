"""Gathers the API's answers from the store's records (flat string hashes), besides a job's view.

A job's view (a single job, a child, a parent and a page of its children)
is ``jobs.public_view``'s, which the webhook deliverer renders too; the
answers only the API's routes give are gathered here: a merged result, the
listing, events, models, usage, a probe's word.  Each is dumped through the
schema of ``gateway.responses`` that documents it (the route's
``@blueprint.response``), whose time fields turn the store's microseconds
and datetimes into RFC 3339; '' (unset) becomes null here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from documents.structure import tables_of
from jobs.contract import JobKind, JobStatus, Operation
from jobs.links import Links
from jobs.public_view import Record, counts_of, null, terminal_count
from jobs.queries import JobList, JobQueries
from jobs.registry import MODELS
from jobs.usage import Period, reported, totals


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
                "error_code": null(child["error_code"]),
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


# -- the listing, events, models, probes -----------------------------------------------------------


def job_list(listing: JobList, links: Links) -> dict[str, Any]:
    return {"jobs": [_summary(row, links) for row in listing.jobs], "next_cursor": listing.next_cursor}


def _summary(row: Record, links: Links) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": row["id"],
        "kind": row["kind"],
        "status": row["status"],
        "model": row["model"],
        "created_at": row["created_at"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "error_code": null(row["error_code"]),
        "url": links.job(row["id"]),
    }
    if row["kind"] == JobKind.PARENT.value:
        total, counts = int(row["total"]), counts_of(row)
        view["total"] = total
        view["progress"] = terminal_count(counts) / total
    return view


def events(records: list[dict[str, str]]) -> dict[str, Any]:
    return {"events": [event(e) for e in records]}


def event(e: Record) -> dict[str, Any]:
    view = {
        "id": e["id"],
        "time": e["time"],
        "operation": e["operation"],
        "job_id": e["job_id"],
        "parent_job_id": null(e.get("parent_job_id")),
        "status": e["status"],
        "model": e.get("model", ""),
        "error_code": null(e.get("error_code")),
    }
    if e.get("tenant"):  # whose job it is (a terminal event): the tenant, the submitting key's id
        view.update(tenant=e["tenant"], key_id=null(e.get("key_id")))
    if e["operation"] == Operation.WEBHOOK.value:
        view.update(
            attempt=int(e["attempt"]),
            outcome=e["outcome"],
            response_status=int(e["response_status"]) if e.get("response_status") else None,
            error=null(e.get("error")),
            retry_at=e.get("retry_at"),
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


# -- usage -----------------------------------------------------------------------------------------


def usage(tenant: str, start: datetime, end: datetime, granularity: str, periods: Sequence[Period]) -> dict[str, Any]:
    """What ``GET /usage`` answers: the tenant's usage per period and model, and per model over the range."""
    return {
        "tenant": tenant,
        "from_": start,  # the schema's attribute, dumped as "from"
        "to": end,
        "granularity": granularity,
        "periods": [{"start": p.start, "model": p.model, **reported(p.amounts)} for p in periods],
        "totals": [{"model": model, **reported(amounts)} for model, amounts in totals(periods).items()],
    }
