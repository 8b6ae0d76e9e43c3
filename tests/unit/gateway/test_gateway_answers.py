"""Each answer is dumped through the schema that documents it: what a view gathers and the schema does not
name is left out of the answer, so a result must lose nothing on its way through its schema."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import Schema

from gateway import views
from gateway.responses import (
    AnyResultSchema,
    ChildrenPageSchema,
    EventSchema,
    EventsSchema,
    JobListSchema,
    ModelsSchema,
    ResultSchema,
    StatusSchema,
    UsageSchema,
)
from jobs import public_view
from jobs.links import Links
from jobs.public_view import JOB_VIEW, JobViewSchema
from jobs.queries import ChildrenPage, JobList
from jobs.usage import Period
from tests.unit.documents.structured_pages import structured_page

CREATED_US = "1796237456987096"
RECORD: dict[str, str | None] = {
    "id": "j1",
    "kind": "single",
    "status": "queued",
    "model": "echo",
    "doc_hash": "h",
    "content_type": "text/plain",
    "created_at": CREATED_US,
    "started_at": "",
    "finished_at": "",
    "intervals": f"1:{CREATED_US}:{int(CREATED_US) + 1500000}:reclaimed",
}


def test_a_result_with_layout_is_dumped_whole():
    pages = [{**structured_page(1), "dpi": 300.0, "dpi_source": "content", "child_index": 0}]
    tables = [{"number": 1, "page": 1, "block": 7, "rows": 2, "cols": 2, "caption": "Table 1: Ships per quarter"}]
    result = {"text": "x", "pages": pages, "tables": tables}
    merged = {**result, "children": [{"index": 0, "id": "c", "status": "completed", "text": "x", "error_code": None}]}

    assert AnyResultSchema().dump(result) == result
    assert AnyResultSchema().dump(merged) == merged


def test_a_view_s_times_are_the_store_s_microseconds_as_rfc3339_and_unset_ones_null():
    dumped = JOB_VIEW.dump(public_view.single(None, RECORD))  # type: ignore[arg-type]  # queued: no result read

    assert dumped["created_at"] == "2026-12-02T18:50:56.987096Z"
    assert (dumped["started_at"], dumped["finished_at"]) == (None, None)
    assert dumped["runs"] == [
        {
            "attempt": 1,
            "started_at": "2026-12-02T18:50:56.987096Z",
            "finished_at": "2026-12-02T18:50:58.487096Z",
            "outcome": "reclaimed",
        }
    ]


def test_what_a_view_gathers_beyond_its_schema_is_not_answered():
    gathered = {**public_view.single(None, RECORD), "undocumented": 1, "max_parallel": 3}  # type: ignore[arg-type]

    dumped = JOB_VIEW.dump(gathered)

    assert "undocumented" not in dumped and "max_parallel" not in dumped  # a parent's field, not a single job's
    assert dumped["id"] == "j1"


def test_a_parent_is_dumped_through_the_parent_s_schema():
    record = {**RECORD, "kind": "parent", "total": "2", "max_parallel": "1", "count_queued": "2"}

    dumped = JOB_VIEW.dump(public_view.parent(record, None, Links()))

    assert dumped["kind"] == "parent" and dumped["max_parallel"] == 1 and dumped["total"] == 2
    assert "doc_hash" not in dumped  # a single job's field


def _samples() -> list[tuple[Schema, Any]]:
    """Each answer's schema with what its view gathers, the optional and null members included."""
    child: dict[str, str | None] = {
        **RECORD,
        "id": "p-0",
        "kind": "child",
        "index": "0",
        "parent_id": "p",
        "stage": "",
        "progress": "",
    }
    child.update(attempts="2", error_code="timeout", last_error_code="lease_expired", last_error="lost")
    parent = {**RECORD, "id": "p", "kind": "parent", "total": "2", "max_parallel": "1", "count_completed": "1"}
    parent.update(status="completed", finished_at=CREATED_US, fail_fast="1", error_code="child_failed")
    children: list[dict[str, str | None]] = [child, {**child, "id": "p-1", "index": "1", "intervals": ""}]
    page = ChildrenPage(children, 0, 1, 2)
    events = [
        {"id": "1-0", "time": CREATED_US, "operation": "job", "job_id": "j1", "status": "completed", "tenant": "t"},
        {"id": "2-0", "time": CREATED_US, "operation": "webhook", "job_id": "j1", "status": "completed"}
        | {"attempt": "1", "outcome": "retrying", "response_status": "", "error": "refused", "retry_at": CREATED_US},
    ]
    start = datetime(2026, 12, 2, 18, tzinfo=UTC)
    periods = [Period(start, "echo", {"jobs": 2, "ocr_pages": 3, "engine_us": 1500})]
    listing = JobList([{**RECORD, "error_code": ""}, {**parent, "error_code": ""}], "cursor")
    result = {"text": "x", "pages": [{**structured_page(1), "dpi": 300.0, "width": 10, "height": 20}]}
    return [
        (JOB_VIEW, public_view.single(None, child)),  # type: ignore[arg-type]  # queued: no result read
        (JOB_VIEW, public_view.parent(parent, page, Links())),
        (ChildrenPageSchema(), public_view.children_page("p", page, "failed", Links())),
        (JobListSchema(), views.job_list(listing, Links())),
        (EventsSchema(), views.events(events)),
        (EventSchema(), views.event(events[1])),
        (UsageSchema(), views.usage("t", start, start + timedelta(days=1), "hour", periods)),
        (ModelsSchema(), {"models": [{"name": "echo", "engine": "e", "location": "on_prem", "content_types": ["a"]}]}),
        (StatusSchema(), views.status("ok")),
        (ResultSchema(), result),
    ]


def test_the_compiled_dump_of_every_answer_is_marshmallow_s():
    for schema, gathered in _samples():
        if isinstance(schema, JobViewSchema):
            schema = schema._parent if gathered["kind"] == "parent" else schema._single
        # marshmallow's own dump (a nested answer schema, EventsSchema's EventSchema, is compared on its own)
        assert schema.dump(gathered) == Schema.dump(schema, gathered), type(schema).__name__
