"""Marshmallow schemas of what the API answers: each documents an answer and dumps it.

The views (``gateway.views``, ``jobs.public_view``) gather an answer's values;
the route's ``@blueprint.response`` dumps them through the schema the
OpenAPI document is made from, so an answer holds the fields its schema
names and no other.  A job's view and its parts are ``jobs.public_view``'s,
which the webhook deliverer dumps too.  The tests check every answer of the
test suite against the document.
"""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields
from marshmallow.validate import OneOf, Range

from documents.resolution import DPI_SOURCES
from documents.structure import BLOCK_TYPES, MAX_LEVEL, TITLE_LEVEL
from jobs.contract import Operation, WebhookOutcome
from jobs.dumping import AnswerSchema
from jobs.public_view import (
    ERROR_CODE_SCHEMA,
    JOB_STATUS_SCHEMA,
    ChildrenPagingSchema,
    ChildSummarySchema,
    JobUsageSchema,
    Moment,
    job_error_code,
    moment,
    named,
    named_or_null,
    nullable_string,
    status_field,
)
from jobs.queries import ROOT_KINDS
from jobs.registry import ORIENTATION_DECIDERS, Location

#: The named schemas of the catalogues (``gateway.openapi`` registers them): a problem's ``code``
#: (``gateway.problems.CATALOGUE``), and, in a job's events, a webhook attempt's ``error_code``
#: (``jobs.contract.WebhookErrorCode``).  Each is declared once, so a generated client has one enum of each;
#: a job's ``error_code`` is ``jobs.public_view.ERROR_CODE_SCHEMA``.
PROBLEM_CODE_SCHEMA = "ProblemCode"
WEBHOOK_ERROR_CODE_SCHEMA = "WebhookErrorCode"


class ProblemSchema(Schema):
    """RFC 9457 problem details; ``code`` is stable, and the other members depend on it."""

    type = fields.String(
        required=True,
        metadata={
            "description": "The code's page in the manual this gateway serves, a relative URI reference "
            "(`/manual/problems/<code>/`); or about:blank."
        },
    )
    title = fields.String(required=True)
    status = fields.Integer(required=True)
    detail = fields.String(required=True)
    code = fields.Raw(required=True, metadata=named(PROBLEM_CODE_SCHEMA))
    errors = fields.Dict(metadata={"description": "invalid_field: the messages of each invalid field."})
    child_index = fields.Integer(metadata={"description": "The child of a group that the problem is about."})
    accepted = fields.List(fields.String(), metadata={"description": "The content types the model accepts."})
    models = fields.List(fields.String(), metadata={"description": "The known models."})
    max_children = fields.Integer()
    max_pages = fields.Integer(metadata={"description": "too_many_pages: the most a document may have."})
    page_count = fields.Integer(
        metadata={"description": "too_many_pages: how many the document has (absent: more than could be counted)."}
    )
    declared = fields.String(metadata={"description": "content_type_mismatch: the content type the request gave."})
    detected = fields.String(
        allow_none=True,
        metadata={"description": "content_type_mismatch: the type the bytes are (null: none ocrgw knows)."},
    )
    page = fields.Integer(metadata={"description": "too_many_pixels: the page (1-based) that is too large."})
    width = fields.Integer(metadata={"description": "too_many_pixels: its width in pixels (as drawn, for a PDF)."})
    height = fields.Integer(metadata={"description": "too_many_pixels: its height in pixels."})
    max_image_pixels = fields.Integer(metadata={"description": "too_many_pixels: the most pixels a page may have."})
    max_body_bytes = fields.Integer()
    inspection_seconds = fields.Float(
        metadata={"description": "inspection_budget_exceeded: the seconds a request's document checks may take."}
    )
    max_inspections = fields.Integer(
        metadata={"description": "inspection_budget_exceeded: the distinct documents a request may have checked."}
    )
    in_use = fields.Integer(
        metadata={"description": "interactive_limit_reached: the tenant's interactive places held now."}
    )
    interactive_max_inflight = fields.Integer(
        metadata={"description": "interactive_limit_reached: how many the key allows."}
    )
    job_id = fields.String()
    job_status = fields.String(
        metadata={"description": "no_result, result_not_ready, job_finished: the job's status (how it ended)."}
    )
    error_code = job_error_code(metadata={"description": "no_result: why the job failed."})
    missing_languages = fields.List(
        fields.String(), metadata={"description": "unsupported_language: the languages no live worker has."}
    )
    installed_languages = fields.List(
        fields.String(), metadata={"description": "unsupported_language: the languages the live workers have."}
    )
    options = fields.List(fields.String(), metadata={"description": "invalid_options: the options refused."})
    tables = fields.Integer(metadata={"description": "table_not_found: how many tables the result has."})
    limit = fields.String(
        validate=OneOf(["tenant", "process"]),
        metadata={"description": "too_many_streams: the limit reached, the tenant's or the gateway process's."},
    )
    max_streams = fields.Integer(metadata={"description": "too_many_streams: the most open streams that limit allows."})


# -- results ----------------------------------------------------------------------------------


class WordSchema(Schema):
    text = fields.String(required=True)
    confidence = fields.Float(required=True, metadata={"description": "0 to 1."})
    bbox = fields.List(fields.Integer(), required=True, metadata={"description": "x0, y0, x1, y1 in pixels."})


class LineSchema(WordSchema):
    words = fields.List(
        fields.Nested(WordSchema),
        metadata={"description": "The line's words, in reading order, each inside the line's box."},
    )
    source = fields.String(
        validate=OneOf(["text_layer"]),
        metadata={
            "description": "Present on an OCRed page only for a line taken from the PDF's own visible text "
            "(options.text_layer 'redo'); otherwise the line comes from the page's source."
        },
    )


def _box(description: str) -> fields.List:
    return fields.List(fields.Integer(), required=True, metadata={"description": description})


class CellSchema(Schema):
    row = fields.Integer(required=True, metadata={"description": "The cell's first row, from 0."})
    col = fields.Integer(required=True, metadata={"description": "Its first column, from 0."})
    row_span = fields.Integer(required=True, metadata={"description": "How many rows it covers (1 or more)."})
    col_span = fields.Integer(required=True, metadata={"description": "How many columns it covers (1 or more)."})
    bbox = _box("x0, y0, x1, y1 in pixels of the page, as the lines' boxes.")
    text = fields.String(required=True, metadata={"description": "The page's words that fall in the cell."})


class TableSchema(Schema):
    """A table's structure: its grid and its cells, read from the page's own words (no second OCR)."""

    rows = fields.Integer(required=True)
    cols = fields.Integer(required=True)
    cells = fields.List(fields.Nested(CellSchema), required=True)
    html = fields.String(required=True, metadata={"description": "The table as an HTML <table>, spans included."})


class BlockSchema(Schema):
    """A region of the page as a person sees it (options.layout), in reading order."""

    order = fields.Integer(required=True, metadata={"description": "Its place in the page's reading order, from 0."})
    type = fields.String(required=True, validate=OneOf(BLOCK_TYPES))
    bbox = _box("x0, y0, x1, y1 in pixels of the page, as the lines' boxes.")
    lines = fields.List(
        fields.Integer(),
        required=True,
        metadata={
            "description": "Its lines, indices into the page's lines, in reading order (top to bottom, column by "
            "column where the block holds two); every line is in exactly one block."
        },
    )
    text = fields.String(
        required=True,
        metadata={
            "description": "Its lines as one paragraph (a word hyphenated at a line's end joined back); a table's: "
            "its rows, one a line, its cells apart by tabs."
        },
    )
    level = fields.Integer(
        validate=Range(min=TITLE_LEVEL, max=MAX_LEVEL),
        metadata={"description": "Headings only: 1 for a title, 2 or 3 for a section header."},
    )
    table = fields.Nested(TableSchema, metadata={"description": "Tables only, once their structure was read."})
    caption = fields.Integer(metadata={"description": "A figure's or table's: the order of its caption's block."})
    caption_of = fields.Integer(metadata={"description": "A caption's: the order of the block it describes."})


class TableSummarySchema(Schema):
    """A table of the result, by the number ``GET /jobs/{id}/tables/{number}.csv`` gives it."""

    number = fields.Integer(required=True, metadata={"description": "From 1, over the whole document."})
    page = fields.Integer(required=True, metadata={"description": "The page it is on."})
    block = fields.Integer(required=True, metadata={"description": "Its block's order on that page."})
    rows = fields.Integer(required=True)
    cols = fields.Integer(required=True)
    caption = nullable_string(metadata={"description": "Its caption's text, if it has one."})


class PageSchema(Schema):
    page = fields.Integer(
        required=True,
        metadata={"description": "1-based; in the whole document (a split's child, options.first_page)."},
    )
    text = fields.String(required=True)
    source = fields.String(
        validate=OneOf(["ocr", "text_layer"]),
        metadata={"description": "Where the text comes from: an engine, or the PDF's own text (text_layer)."},
    )
    lines = fields.List(fields.Nested(LineSchema), required=True)
    width = fields.Integer(
        metadata={
            "description": "The width in pixels of the page as displayed (upright and straightened): the image "
            "the engine read, the space of the bboxes."
        }
    )
    height = fields.Integer(metadata={"description": "Its height in pixels."})
    rotation = fields.Integer(
        validate=OneOf([0, 90, 180, 270]),
        metadata={"description": "Degrees clockwise the page was turned to stand upright (options.rotate_pages)."},
    )
    orientation_by = fields.String(
        allow_none=True,
        validate=OneOf(ORIENTATION_DECIDERS),
        metadata={
            "description": "Who said which way up the page stands (options.rotate_pages): the learned "
            "'classifier', or Tesseract's orientation detection, 'osd' (options.orientation, or where the "
            "classifier was unsure); null when nobody was asked."
        },
    )
    skew = fields.Float(
        metadata={
            "description": "Degrees counter-clockwise the upright page was turned about its centre to straighten "
            "it (options.deskew); 0 when it was not."
        }
    )
    dpi = fields.Float(
        metadata={
            "description": "The resolution the page was read at, in dots per inch: the scale of its bboxes "
            "(for a page answered from its text layer, the resolution it would have been drawn at)."
        }
    )
    dpi_source = fields.String(
        validate=OneOf(list(DPI_SOURCES)),
        metadata={
            "description": "Where dpi comes from: 'content' (a PDF page drawn so that its images' pixels land one "
            "to one), 'vector' (a PDF page without such an image, or with visible text, at 300 dpi), 'stated' "
            "(the image's own), 'option' (options.image_dpi), 'estimated' (from the image's text and the sheet "
            "its size fits), 'assumed' (an image with too little text to tell, at 300 dpi)."
        },
    )
    child_index = fields.Integer(metadata={"description": "In a merged result: the child it comes from."})
    blocks = fields.List(
        fields.Nested(BlockSchema),
        metadata={
            "description": "options.layout: the page's blocks in reading order (none on a page without text); "
            "absent without layout, or when it failed on this page (layout_error)."
        },
    )
    layout_error = fields.String(
        metadata={
            "description": "options.layout: why the layout of this page could not be read; the page keeps its "
            "plain lines and the job completes."
        }
    )


class ResultSchema(AnswerSchema):
    text = fields.String(
        required=True,
        metadata={
            "description": "The pages' texts; with options.layout, each page's body blocks in reading order "
            "(no running header or footer, no words of a figure)."
        },
    )
    pages = fields.List(fields.Nested(PageSchema), required=True)
    tables = fields.List(
        fields.Nested(TableSummarySchema),
        metadata={
            "description": "options.layout: the document's tables, numbered from 1 (present once a page has blocks)."
        },
    )


class MergedChildSchema(Schema):
    index = fields.Integer(required=True)
    id = fields.String(required=True)
    status = status_field()
    text = nullable_string(metadata={"description": "The child's text if it completed."})
    error_code = job_error_code(required=True)


class MergedResultSchema(ResultSchema):
    """A terminal parent's result: its completed children's texts and pages in index order, and each child."""

    children = fields.List(fields.Nested(MergedChildSchema), required=True)


class AnyResultSchema(Schema):
    """What ``GET /jobs/{id}/result`` answers, dumped through the schema of its kind: a merged result (the one
    that lists its ``children``) or a job's own; documented as the one or the other (``documented_as``)."""

    documented_as = {"anyOf": [{"$ref": f"#/components/schemas/{name}"} for name in ("Result", "MergedResult")]}
    _result = ResultSchema()
    _merged = MergedResultSchema()

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        if many:
            return [self.dump(one) for one in obj]
        return (self._merged if "children" in obj else self._result).dump(obj)


# -- jobs -------------------------------------------------------------------------------------


class UsageAmountsSchema(JobUsageSchema):
    jobs = fields.Integer(required=True, metadata={"description": "Single jobs and children completed."})


class UsagePeriodSchema(UsageAmountsSchema):
    start = Moment(required=True, metadata={"description": "The hour's or the UTC day's start."})
    model = fields.String(required=True)


class UsageTotalSchema(UsageAmountsSchema):
    model = fields.String(required=True)


class UsageSchema(AnswerSchema):
    """A tenant's usage per model: per period, and over the whole range."""

    tenant = fields.String(required=True)
    from_ = Moment(
        required=True, data_key="from", metadata={"description": "The range's start, rounded down to its hour."}
    )
    to = Moment(required=True, metadata={"description": "The range's end, exclusive."})
    granularity = fields.String(required=True, validate=OneOf(["day", "hour"]))
    periods = fields.List(
        fields.Nested(UsagePeriodSchema),
        required=True,
        metadata={"description": "Per period and model, oldest first; a period with nothing used is left out."},
    )
    totals = fields.List(fields.Nested(UsageTotalSchema), required=True, metadata={"description": "Per model."})


class ChildrenPageSchema(AnswerSchema):
    parent_id = fields.String(required=True)
    status = named_or_null(JOB_STATUS_SCHEMA, required=True, metadata={"description": "The filter, if any."})
    children = fields.List(fields.Nested(ChildSummarySchema), required=True)
    children_page = fields.Nested(ChildrenPagingSchema, required=True)


class JobSummarySchema(Schema):
    id = fields.String(required=True)
    kind = fields.String(required=True, validate=OneOf(ROOT_KINDS))
    status = status_field()
    model = fields.String(required=True)
    created_at = moment()
    started_at = moment()
    finished_at = moment()
    error_code = job_error_code(required=True)
    url = fields.String(required=True)
    total = fields.Integer(metadata={"description": "Parents: how many children."})
    progress = fields.Float(metadata={"description": "Parents: terminal children / total."})


class JobListSchema(AnswerSchema):
    jobs = fields.List(fields.Nested(JobSummarySchema), required=True)
    next_cursor = nullable_string(metadata={"description": "Pass as cursor for the next page; null on the last."})


class EventSchema(AnswerSchema):
    """An audit event (``job``, ``job_child``: the job became terminal) or a webhook attempt (``webhook``)."""

    id = fields.String(required=True)
    time = moment()
    operation = fields.String(required=True, validate=OneOf([o.value for o in Operation]))
    job_id = fields.String(required=True)
    parent_job_id = nullable_string()
    status = status_field()
    model = fields.String(required=True)
    error_code = fields.Raw(
        required=True,
        metadata={
            "anyOf": [
                {"$ref": f"#/components/schemas/{ERROR_CODE_SCHEMA}"},
                {"$ref": f"#/components/schemas/{WEBHOOK_ERROR_CODE_SCHEMA}"},
            ],
            "nullable": True,
            "description": "job, job_child: why the job failed (an ErrorCode, /manual/errors/<code>/), null if "
            "it did not; webhook: why the attempt failed (a WebhookErrorCode, /manual/webhook-errors/<code>/), "
            "null if it did not.",
        },
    )
    # job, job_child: whose job it is
    tenant = fields.String(metadata={"description": "job, job_child: the tenant whose job it is."})
    key_id = fields.String(
        allow_none=True,
        metadata={"description": "job, job_child: the id of the API key that submitted it (never the key itself)."},
    )
    # a webhook attempt only
    attempt = fields.Integer(metadata={"description": "webhook: the attempt's number, from 1."})
    outcome = fields.String(
        validate=OneOf([o.value for o in WebhookOutcome]),
        metadata={"description": "webhook: what follows the attempt."},
    )
    response_status = fields.Integer(
        allow_none=True, metadata={"description": "webhook: the receiver's HTTP status, null if it did not answer."}
    )
    error = fields.String(allow_none=True, metadata={"description": "webhook: what went wrong, in words."})
    retry_at = Moment(allow_none=True, metadata={"description": "webhook: when the next attempt is due."})


class EventsSchema(AnswerSchema):
    events = fields.List(fields.Nested(EventSchema), required=True)


class ModelSchema(Schema):
    name = fields.String(required=True)
    engine = fields.String(required=True)
    location = fields.String(required=True, validate=OneOf([loc.value for loc in Location]))
    content_types = fields.List(fields.String(), required=True)
    options = fields.Dict(required=True, metadata={"description": "The JSON schema of the options it reads."})
    languages = fields.List(
        fields.String(),
        metadata={
            "description": "Models that read Tesseract languages (options.lang) only: the languages the live "
            "workers have, sorted; a job may name only these. Empty while no worker is live (a job is then "
            "accepted and waits for one)."
        },
    )


class ModelsSchema(AnswerSchema):
    models = fields.List(fields.Nested(ModelSchema), required=True)


class StatusSchema(AnswerSchema):
    status = fields.String(required=True)
