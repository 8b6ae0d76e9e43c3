"""A job's public view: what ``GET /jobs/{id}`` answers and what a webhook sends, built in one place.

The store keeps what its Lua scripts can write cheaply: integer microseconds
since the epoch as strings, '' for unset, per-status counters on a parent.
Here they become RFC 3339 times and nulls; a parent's status is the one its
scripts store (they move it as its children move, so a poll is fresh without
waiting for any sweep), and its progress comes from its per-status counts.

A view is built from the records (``job_view``) and dumped through the
marshmallow schema that documents it in the OpenAPI document
(``JobViewSchema``: a ``SingleJobView`` or a ``ParentView``, as its kind
says, on the compiled path of ``jobs.dumping``), so the answer has the
fields the document names and no other.  The
schema's time fields turn the store's microseconds into RFC 3339
(``Moment``).

It lives below both the gateway and the coordinator, which render it alike:
the gateway for its routes, the webhook deliverer for a body it signs and
POSTs, with no Flask app and no request.  The URLs in a view come from the
``Links`` it is given (``jobs.links``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from marshmallow import Schema, fields
from marshmallow.validate import OneOf

from jobs.contract import TERMINAL, JobKind, JobStatus, count_field
from jobs.dumping import AnswerSchema
from jobs.links import Links
from jobs.queries import ChildrenPage, JobQueries
from jobs.usage import job_units

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
#: A job hash as read: field -> value ('' or absent when unset; None in a row of an HMGET).
Record = Mapping[str, Any]
#: A page of a parent's children when the request names no size.
DEFAULT_PAGE_LIMIT = 20
_MOMENT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
_STATUSES = [s.value for s in JobStatus]
#: The named schema of a job's ``error_code`` (``jobs.contract.ErrorCode``), declared once in the OpenAPI
#: document (``gateway.openapi`` registers it), so a generated client has one enum of it.
ERROR_CODE_SCHEMA = "ErrorCode"
#: The named schema of a job's status (``jobs.contract.JobStatus``), which every status field refers to.
JOB_STATUS_SCHEMA = "JobStatus"
#: The named schema of a completed job's result (``gateway.responses.ResultSchema``).
RESULT_SCHEMA = "Result"


def rfc3339(micros: str | None) -> str | None:
    """``"1796237456987096"`` -> ``"2026-12-02T18:37:36.987096Z"``; '' (unset) -> None.

    Integer arithmetic throughout: a float timestamp would lose the last microseconds.
    """
    if not micros:
        return None
    return (_EPOCH + timedelta(microseconds=int(micros))).strftime(_MOMENT_FORMAT)


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
    """What ``GET /jobs/{id}`` answers, gathered for ``JOB_VIEW`` to dump: a single job or a child; a parent
    with a page of its children (none with ``children="none"``)."""
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
        "created_at": record.get("created_at"),
        "started_at": record.get("started_at"),
        "finished_at": record.get("finished_at"),
        "result": queries.result(record["id"]) if status == JobStatus.COMPLETED.value else None,
        "error_code": null(record.get("error_code")) if ended_short else None,
        "error": null(record.get("error")) if ended_short else None,
        "idempotency_key": null(record.get("idempotency_key")),
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
        "progress": terminal_count(counts) / total,
        "model": record["model"],
        "max_parallel": int(record["max_parallel"]),
        "created_at": record.get("created_at"),
        "started_at": record.get("started_at"),
        "finished_at": record.get("finished_at"),
        "idempotency_key": null(record.get("idempotency_key")),
        "counts": counts,
        "total": total,
        "tolerated_failures": int(record.get("tolerated_failures") or 0),
        "fail_fast": record.get("fail_fast") == "1",
        "cancel_requested": record.get("cancel_requested") == "1",
        "redrives": int(record.get("redrives") or 0),
        "error_code": null(record.get("error_code")),
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


def terminal_count(counts: dict[str, int]) -> int:
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
        "started_at": child["started_at"],
        "finished_at": child["finished_at"],
        "error_code": null(child["error_code"]),
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
        out.append({"attempt": int(attempt), "started_at": started, "finished_at": ended, "outcome": outcome})
    return out


def null(value: str | None) -> str | None:
    """'' (the store's unset) as the API's null."""
    return value or None


# -- the schemas that document a view and dump it -------------------------------------------------


class Moment(fields.DateTime):
    """A time as the API gives it: RFC 3339 in UTC with microseconds (``2026-12-02T18:37:36.987096Z``).

    Dumped from the store's integer microseconds since the epoch ('' while unset: null), as a view carries
    them, or from an aware datetime.
    """

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> str | None:
        if isinstance(value, datetime):
            return value.astimezone(UTC).strftime(_MOMENT_FORMAT)
        return rfc3339(value)


def named(schema_name: str) -> dict:
    """A field's OpenAPI 3.0 shape for "the named schema" (beside a bare $ref, nullable would be ignored)."""
    return {"allOf": [{"$ref": f"#/components/schemas/{schema_name}"}]}


def moment(**kwargs: Any) -> Moment:
    """RFC 3339 UTC with microseconds; null until it happened."""
    return Moment(required=True, allow_none=True, **kwargs)


def status_field(**kwargs: Any) -> fields.Raw:
    """A job's status: the one named enum of them (``JOB_STATUS_SCHEMA``), so a client has one type of it."""
    return fields.Raw(required=True, metadata=named(JOB_STATUS_SCHEMA), **kwargs)


def nullable_string(**kwargs: Any) -> fields.String:
    return fields.String(required=True, allow_none=True, **kwargs)


def named_or_null(schema_name: str, *, metadata: dict | None = None, **kwargs: Any) -> fields.Raw:
    """The named schema, or null.  ``nullable`` is given as is: apispec would spell ``allow_none`` beside a
    reference as an ``anyOf`` with any object, which a generated client turns into a type of its own."""
    return fields.Raw(metadata={**named(schema_name), "nullable": True, **(metadata or {})}, **kwargs)


def job_error_code(**kwargs: Any) -> fields.Raw:
    """A job's ``error_code``: one of the catalogue's (jobs.contract.ErrorCode), or null."""
    return named_or_null(ERROR_CODE_SCHEMA, **kwargs)


class RunSchema(Schema):
    """One ended attempt at a job: every attempt that held a slot, however it ended."""

    attempt = fields.Integer(required=True)
    started_at = moment()
    finished_at = moment()
    outcome = fields.String(
        required=True,
        metadata={
            "description": "completed, failed, cancelled, retrying (a transient error) or reclaimed "
            "(its lease expired)."
        },
    )


def _runs() -> fields.List:
    return fields.List(
        fields.Nested(RunSchema), required=True, metadata={"description": "Ended attempts, oldest first."}
    )


class JobUsageSchema(Schema):
    """What a job used (jobs.usage); a parent's is the sum of its children's."""

    ocr_pages = fields.Integer(required=True, metadata={"description": "Pages its engine read, once completed."})
    text_layer_pages = fields.Integer(
        required=True, metadata={"description": "Pages answered from the PDF's own text layer, once completed."}
    )
    engine_seconds = fields.Float(
        required=True, metadata={"description": "Every ended attempt's run, its start to its end (its runs)."}
    )
    input_bytes = fields.Integer(
        required=True,
        metadata={"description": "Its document's bytes, once completed (a split PDF's: with its first pages)."},
    )


def _usage() -> fields.Nested:
    return fields.Nested(JobUsageSchema, required=True)


class SingleJobViewSchema(AnswerSchema):
    """A single job, or a child of a group (then with ``parent_id`` and ``index``)."""

    id = fields.String(required=True)
    kind = fields.String(required=True, validate=OneOf([JobKind.SINGLE.value, JobKind.CHILD.value]))
    status = status_field()
    model = fields.String(required=True)
    doc_hash = fields.String(required=True)
    pages = fields.Integer(required=True)
    content_type = fields.String(required=True)
    stage = fields.String(required=True)
    progress = fields.Float(required=True)
    attempts = fields.Integer(required=True)
    created_at = moment()
    started_at = moment()
    finished_at = moment()
    result = named_or_null(RESULT_SCHEMA, required=True, metadata={"description": "Once completed."})
    error_code = job_error_code(required=True, metadata={"description": "Once failed."})
    error = nullable_string(metadata={"description": "Once failed or cancelled."})
    idempotency_key = nullable_string()
    cancel_requested = fields.Boolean(
        required=True, metadata={"description": "A client asked to cancel it; a running job stops at its next page."}
    )
    runs = _runs()
    usage = _usage()
    last_error_code = job_error_code(metadata={"description": "Why the current attempt is a retry."})
    last_error = fields.String()
    parent_id = fields.String()
    index = fields.Integer()


#: A parent's children per status.
CountsSchema = Schema.from_dict({s: fields.Integer(required=True) for s in _STATUSES}, name="Counts")


class ChildSummarySchema(Schema):
    id = fields.String(required=True)
    index = fields.Integer(required=True)
    status = status_field()
    model = fields.String(required=True)
    doc_hash = fields.String(required=True)
    stage = fields.String(required=True)
    progress = fields.Float(required=True)
    attempts = fields.Integer(required=True)
    started_at = moment()
    finished_at = moment()
    error_code = job_error_code(required=True)
    runs = _runs()


class ChildrenPagingSchema(Schema):
    offset = fields.Integer(required=True)
    limit = fields.Integer(required=True)
    total = fields.Integer(required=True, metadata={"description": "Children matching the filter."})
    next = nullable_string(metadata={"description": "The URL of the next page; null on the last."})


class ParentViewSchema(AnswerSchema):
    """A fan-out group: counts per status, a page of children, and once terminal where its result is."""

    id = fields.String(required=True)
    kind = fields.String(required=True, validate=OneOf([JobKind.PARENT.value]))
    status = status_field()
    progress = fields.Float(required=True, metadata={"description": "Terminal children / total."})
    model = fields.String(required=True, metadata={"description": "The children's model, or 'mixed'."})
    max_parallel = fields.Integer(required=True)
    created_at = moment()
    started_at = moment()
    finished_at = moment()
    idempotency_key = nullable_string()
    counts = fields.Nested(CountsSchema, required=True)
    total = fields.Integer(required=True)
    tolerated_failures = fields.Integer(
        required=True, metadata={"description": "Children that may fail (or be cancelled) and the group complete."}
    )
    fail_fast = fields.Boolean(
        required=True, metadata={"description": "Past the tolerance, held children are cancelled."}
    )
    cancel_requested = fields.Boolean(required=True)
    redrives = fields.Integer(required=True, metadata={"description": "Times its failed children were retried."})
    error_code = job_error_code(
        required=True, metadata={"description": "child_failed or child_cancelled, past its tolerance."}
    )
    result_url = nullable_string(metadata={"description": "GET it for the merged result, once terminal."})
    usage = _usage()
    children = fields.List(
        fields.Nested(ChildSummarySchema), metadata={"description": "A page of children (absent with children=none)."}
    )
    children_page = fields.Nested(ChildrenPagingSchema)


class JobViewSchema(Schema):
    """A job's view, dumped through the schema of its kind: a parent's ``ParentView``, any other's
    ``SingleJobView``; documented as the one or the other (``documented_as``)."""

    documented_as = {
        "oneOf": [{"$ref": "#/components/schemas/SingleJobView"}, {"$ref": "#/components/schemas/ParentView"}]
    }
    _single = SingleJobViewSchema()
    _parent = ParentViewSchema()

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        if many:
            return [self.dump(one) for one in obj]
        return (self._parent if obj["kind"] == JobKind.PARENT.value else self._single).dump(obj)


JOB_VIEW = JobViewSchema()


def public_job(queries: JobQueries, record: Record, links: Links) -> dict[str, Any]:
    """A job's view as ``GET /jobs/{id}`` answers it by default (a parent with its first page of children),
    dumped: for a document sent outside a request, a webhook's body."""
    return JOB_VIEW.dump(job_view(queries, record, links))
