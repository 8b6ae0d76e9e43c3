"""What the read commands show of the gateway's documents, through a ``Printer``."""

from __future__ import annotations

from typing import Any

from cli.output import Printer, counts_text, status_text
from cli.statuses import COMPLETED, TERMINAL


def job(printer: Printer, view: dict[str, Any]) -> None:
    """``ocrgw status``: one job's fields; a group's counts and its first page of children."""
    parent = view.get("kind") == "parent"
    if parent:
        done = sum(view["counts"].get(s, 0) for s in TERMINAL)
        progress = f"{view['progress']:.0%} ({done}/{view['total']} children ended)"
    else:
        progress = f"{view.get('progress', 0):.0%} ({view.get('stage')})"
    printer.fields(
        [
            ("id", view["id"]),
            ("kind", view["kind"]),
            ("status", status_text(view["status"])),
            ("model", view.get("model")),
            ("progress", progress),
            (
                "counts",
                counts_text(view["counts"], all_statuses=True, sep="  " if printer.rich else ", ") if parent else None,
            ),
            ("max_parallel", (view["max_parallel"] if view["max_parallel"] > 0 else "no cap") if parent else None),
            ("parent_id", view.get("parent_id")),
            ("index", view.get("index")),
            ("attempts", None if parent else view.get("attempts")),
            ("created_at", view.get("created_at")),
            ("started_at", view.get("started_at")),
            ("finished_at", view.get("finished_at")),
            ("cancel_requested", True if view.get("cancel_requested") else None),
            ("error_code", view.get("error_code")),
            ("error", view.get("error")),
            ("result", f"ocrgw result {view['id']}" if _has_result(view) else None),
        ]
    )
    children = view.get("children")
    if not children:
        return
    page = view["children_page"]
    rows = [
        (c["index"], status_text(c["status"]), c["id"], c["model"], c["attempts"], c["error_code"]) for c in children
    ]
    if printer.rich:
        title = f"children {page['offset'] + 1}-{page['offset'] + len(children)} of {page['total']}"
        printer.table(("index", "status", "id", "model", "attempts", "error_code"), rows, title=title)
    else:
        for row in rows:
            printer.line("child: " + "\t".join("-" if cell is None else str(cell) for cell in row))


def _has_result(view: dict[str, Any]) -> bool:
    if view.get("kind") == "parent":
        return view["status"] in TERMINAL
    return view["status"] == COMPLETED


def events(printer: Printer, document: dict[str, Any]) -> None:
    rows = []
    for event in document["events"]:
        detail = ""
        if event["operation"] == "webhook":
            answer = event.get("response_status")
            detail = f"attempt {event.get('attempt')} {event.get('outcome')}" + (f" HTTP {answer}" if answer else "")
        rows.append(
            (
                event["time"],
                event["operation"],
                status_text(event["status"]),
                event["job_id"],
                event.get("error_code"),
                detail,
            )
        )
    printer.table(("time", "operation", "status", "job", "error_code", "detail"), rows)


def job_list(printer: Printer, document: dict[str, Any]) -> None:
    rows = []
    for job in document["jobs"]:
        if job["kind"] == "parent":
            total = job.get("total", 0)
            progress = f"{round(job.get('progress', 0) * total)}/{total}"
        else:
            progress = ""
        rows.append(
            (
                job["id"],
                job["kind"],
                status_text(job["status"]),
                job["model"],
                progress,
                job["created_at"],
                job.get("error_code"),
            )
        )
    printer.table(("id", "kind", "status", "model", "children", "created_at", "error_code"), rows)
    if printer.rich and document.get("next_cursor"):
        printer.console.print("[dim]more: --limit, or --json for next_cursor[/dim]")


def models(printer: Printer, document: dict[str, Any]) -> None:
    rows = [(m["name"], m["engine"], m["location"], m["content_types"]) for m in document["models"]]
    printer.table(("name", "engine", "location", "content types"), rows)


USAGE_COLUMNS = ("ocr_pages", "text_layer_pages", "engine_seconds", "input_bytes", "jobs")


def usage(printer: Printer, document: dict[str, Any]) -> None:
    """Per period and model, then the range's totals per model."""
    title = f"{document['tenant']}: {document['from']} to {document['to']}, by {document['granularity']}"
    rows = [(p["start"], p["model"], *(_amount(p, c) for c in USAGE_COLUMNS)) for p in document["periods"]]
    printer.table(("period", "model", *USAGE_COLUMNS), rows, title=title)
    totals = [("total", t["model"], *(_amount(t, c) for c in USAGE_COLUMNS)) for t in document["totals"]]
    if totals:
        printer.table(("", "model", *USAGE_COLUMNS), totals)


def _amount(row: dict[str, Any], column: str) -> Any:
    return f"{row[column]:.3f}" if column == "engine_seconds" else row[column]
