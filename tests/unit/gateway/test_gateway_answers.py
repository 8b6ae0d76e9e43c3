"""Each answer is dumped through the schema that documents it: what a view gathers and the schema does not
name is left out of the answer, so a result must lose nothing on its way through its schema."""

from __future__ import annotations

from gateway.responses import AnyResultSchema
from jobs import public_view
from jobs.links import Links
from jobs.public_view import JOB_VIEW
from tests.unit.documents.structured_pages import structured_page

CREATED_US = "1796237456987096"
RECORD = {
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
