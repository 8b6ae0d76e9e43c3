"""Marshmallow schemas of what the API accepts: the bodies of POST /jobs and the query strings.

They are the OpenAPI document's request side, and they do the checking:
unknown fields are refused (marshmallow's default), so a misspelt
``option`` fails loudly; the numeric and boolean fields take JSON's types
strictly (``jobs.fields``); a job's model, content type and options are
checked against the registry by the schema's own validator.  A check
whose failure has a code of its own (``unknown_model``, ``invalid_base64``,
...) raises that ``Problem``; every other one is an ``invalid_field``.
Limits that come from ``Settings`` are given to a schema when it is built.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from marshmallow import Schema, ValidationError, fields, post_load, validates, validates_schema
from marshmallow.validate import Length, OneOf, Range

from gateway.problems import Problem
from jobs import usage, webhook_urls
from jobs.config import default_of
from jobs.contract import DEFAULT_PRIORITY, Priority, WebhookEvent
from jobs.fields import DigitsInteger, StrictBoolean, StrictInteger, StrictNumber, Text
from jobs.pdf_outputs import OPTIMIZE_LEVELS, OUTPUT_TYPES
from jobs.public_view import DEFAULT_PAGE_LIMIT
from jobs.queries import CHILD_STATUSES, ROOT_KINDS, ROOT_STATUSES
from jobs.records import NewJob
from jobs.registry import MODEL_NAMES, MODELS, Model

PRIORITIES = [p.value for p in Priority]
MAX_DOC_HASH_CHARS = 128
MAX_CALLBACK_URL_CHARS = webhook_urls.MAX_URL_CHARS
MAX_PAGE_LIMIT = 200
# The registry's own list, so that remote models installed at start are in it too.
_MODEL_NAMES = MODEL_NAMES
_PRIORITY_DOC = (
    "'interactive': the job goes ahead of batch work of its model (its own queue, consumed first); "
    "'batch' (the default): behind interactive work. Within a lane, tenants take turns. The interactive lane is "
    "each key's to use as its interactive_max_inflight policy says (403 interactive_not_allowed, "
    "429 interactive_limit_reached)."
)


def _priority(description: str = _PRIORITY_DOC) -> Text:
    return Text(validate=OneOf(PRIORITIES), metadata={"description": description})


_ON_PREM_DOC = (
    "true: the document must stay on premises; a model whose location is cloud refuses it "
    "(403 on_prem_required). Default false."
)


def media_type(content_type: str) -> str:
    """``Text/Plain; charset=utf-8`` -> ``text/plain``, as Flask does for a raw body's header."""
    return content_type.split(";", 1)[0].strip().lower()


def accepting_model(name: str, content_type: str) -> Model:
    """The registry's model ``name``, if it exists and takes ``content_type``; else the problem why not."""
    model = MODELS.get(name)
    if model is None:
        raise Problem(
            "unknown_model",
            f"There is no model {name!r}; known models: {', '.join(_MODEL_NAMES)}.",
            models=_MODEL_NAMES,
        )
    if not model.accepts(content_type):
        accepted = sorted(model.content_types)
        raise Problem(
            "unsupported_content_type",
            f"Model {name} does not accept {content_type!r}; it accepts {', '.join(accepted)}.",
            accepted=accepted,
        )
    return model


def check_honoured(model: Model, options: dict) -> None:
    """``422 invalid_options`` for a well-formed option ``model`` cannot honour: a page's layout is found
    from its words and their boxes, which a model such as echo does not give."""
    if options.get("layout") is True and not model.gives_words:
        raise Problem(
            "invalid_options",
            f"Model {model.name} gives no words with boxes, from which a page's layout is found: "
            "options.layout needs a model that reads pages (GET /models).",
            options=["layout"],
        )


def check_not_empty(payload: bytes) -> None:
    if not payload:
        raise Problem("empty_document", "The document is empty.")


def _callback_url() -> Text:
    return Text(
        metadata={
            "description": "Where the job's view is POSTed, signed, once it is terminal: an http(s) URL "
            "of a public address (see the manual's Webhooks, /manual/webhooks/); refused: invalid_callback_url.",
            "format": "uri",
            "maxLength": MAX_CALLBACK_URL_CHARS,
        }
    )


WEBHOOK_EVENTS = [e.value for e in WebhookEvent]
_WEBHOOK_EVENTS_DOC = (
    "Which webhooks go to callback_url: 'job.completed' (the default), one when the whole job ends; "
    "'child.completed', one per child as it ends (completed, failed or cancelled), its own view, signed and "
    "retried as the job's. A child with a callback_url of its own gets its webhook there instead. "
    "Unknown names: invalid_field."
)


def webhook_events_of(data: dict) -> tuple[str, ...]:
    """The webhooks a loaded job or group asks for: its ``webhook_events``, else the job's own alone."""
    return tuple(data.get("webhook_events") or (WebhookEvent.JOB_COMPLETED.value,))


def _distinct(events: list[str]) -> None:
    if len(set(events)) != len(events):
        raise ValidationError("Names an event more than once.")


def _webhook_events(description: str = _WEBHOOK_EVENTS_DOC) -> fields.List:
    return fields.List(
        Text(validate=OneOf(WEBHOOK_EVENTS)),
        validate=[Length(min=1), _distinct],
        metadata={"description": description, "minItems": 1, "uniqueItems": True},
    )


def _check_webhook_events(data: dict, *, has_children: bool) -> None:
    """``webhook_events`` need a ``callback_url`` to go to, and ``child.completed`` a job that has children."""
    if "webhook_events" not in data:
        return
    if not data.get("callback_url"):
        raise ValidationError({"webhook_events": ["Needs callback_url: the webhooks are sent there."]})
    if WebhookEvent.CHILD_COMPLETED.value in data["webhook_events"] and not has_children:
        raise ValidationError({"webhook_events": ["child.completed needs children: a job has them with split_pages."]})


class WebhookEventNames(fields.String):
    """A query's ``webhook_events``: event names separated by commas, loaded as a list."""

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        events = text.split(",")
        unknown = [e for e in events if e not in WEBHOOK_EVENTS]
        if unknown:
            raise ValidationError(f"Unknown event {unknown[0]!r}: give any of {', '.join(WEBHOOK_EVENTS)}.")
        _distinct(events)
        return events


class Base64(fields.String):
    """Standard base64 with padding; decoded by the schema once every other field is known good."""

    # What ``b64decode(validate=True)`` takes, for the document.
    PATTERN = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

    def __init__(self, **kwargs):
        metadata = {"format": "byte", "pattern": self.PATTERN, **kwargs.pop("metadata", {})}
        super().__init__(metadata=metadata, **kwargs)


class _Document(Schema):
    """Fields that a raw document's query and a JSON job share."""

    doc_hash = Text(
        validate=Length(max=MAX_DOC_HASH_CHARS),
        metadata={"description": "The client's name for the document; default: the payload's sha256."},
    )

    def __init__(self, *, max_pages: int = default_of("max_pages"), **kwargs):
        super().__init__(**kwargs)
        self.max_pages = max_pages

    @validates("pages")
    def _pages_in_range(self, value: int, **_):
        if not 0 <= value <= self.max_pages:
            raise ValidationError(f"Must be between 0 and {self.max_pages}.")


# No count (a cap, a tolerance, pages) goes beyond this: a larger one means nothing in a
# group of at most OCRGW_MAX_CHILDREN, and would overflow the integers the scripts compute with.
MAX_COUNT = 1_000_000
_CAP_RANGE = Range(min=-MAX_COUNT, max=MAX_COUNT)
_COUNT_RANGE = Range(min=0, max=MAX_COUNT)


@dataclass(frozen=True)
class SplitRequest:
    """A PDF job that asks to become a fan-out group of page ranges."""

    job: NewJob  # the whole document, with the options each part gets
    split_pages: int  # pages per child (the last one may have fewer)
    max_parallel: int  # <= 0: no cap
    webhook_events: tuple[str, ...] = (WebhookEvent.JOB_COMPLETED.value,)  # which webhooks go to its callback_url


_SPLIT_PAGES_DOC = (
    "Split the PDF into children of this many pages each (the last may have fewer): the job becomes a "
    "fan-out group, each child's pages keep their page numbers in the whole document."
)
_SPLIT_CAP_DOC = "With split_pages: at most this many children run at once; 0 or absent: no cap."


def _cap_needs_split(data) -> None:
    if "max_parallel" in data and "split_pages" not in data:
        raise ValidationError({"max_parallel": ["Applies with split_pages only."]})


class RawQuerySchema(_Document):
    """The query of a raw-document POST: the body is the document itself."""

    model = Text(metadata={"enum": _MODEL_NAMES, "description": "Default: the gateway's default model."})
    pages = DigitsInteger(validate=_COUNT_RANGE, metadata={"description": "The document's page count, if known."})
    callback_url = _callback_url()
    split_pages = DigitsInteger(validate=Range(min=1, max=MAX_COUNT), metadata={"description": _SPLIT_PAGES_DOC})
    max_parallel = DigitsInteger(validate=_CAP_RANGE, metadata={"description": _SPLIT_CAP_DOC})
    on_prem = fields.Boolean(truthy={"true"}, falsy={"false"}, metadata={"description": _ON_PREM_DOC})
    priority = _priority(f"{_PRIORITY_DOC} With split_pages: every part's.")
    webhook_events = WebhookEventNames(
        metadata={
            "description": f"{_WEBHOOK_EVENTS_DOC} Here separated by commas; child.completed with split_pages only.",
            "example": "job.completed,child.completed",
        }
    )

    @validates_schema
    def _split_rules(self, data, **_):
        _cap_needs_split(data)
        _check_webhook_events(data, has_children="split_pages" in data)


class JobSchema(_Document):
    """A single job, or one child of a fan-out group, as JSON; loads as a ``NewJob`` (a ``SplitRequest`` with
    ``split_pages``)."""

    model = Text(required=True, metadata={"enum": _MODEL_NAMES})
    payload = Base64(
        required=True,
        metadata={
            "description": "The document, base64 (standard alphabet, padded); empty is empty_document.",
            "minLength": 1,
        },
    )
    content_type = Text(
        required=True,
        validate=Length(min=1),
        metadata={"description": "The document's media type; parameters are ignored."},
    )
    pages = StrictInteger(validate=_COUNT_RANGE, metadata={"description": "The document's page count, if known."})
    options = fields.Dict(
        keys=fields.String(), metadata={"description": "What the model reads; see GET /models for each model's."}
    )
    callback_url = _callback_url()
    split_pages = StrictInteger(
        validate=Range(min=1, max=MAX_COUNT),
        metadata={"description": f"{_SPLIT_PAGES_DOC} A PDF only; not in a group's child."},
    )
    max_parallel = StrictInteger(validate=_CAP_RANGE, metadata={"description": f"{_SPLIT_CAP_DOC} <= 0: no cap."})
    on_prem = StrictBoolean(metadata={"description": f"{_ON_PREM_DOC} In a group, the group's on_prem applies too."})
    priority = _priority(f"{_PRIORITY_DOC} Not in a group's child: a child runs in its group's lane.")
    webhook_events = _webhook_events(
        f"{_WEBHOOK_EVENTS_DOC} child.completed with split_pages only; not in a group's child "
        "(give fanout.webhook_events)."
    )

    @validates_schema
    def _split_rules(self, data, **_):
        _cap_needs_split(data)
        _check_webhook_events(data, has_children="split_pages" in data)

    @validates_schema(skip_on_field_errors=True)
    def _model_takes_it(self, data, **_):
        model = accepting_model(data["model"], media_type(data["content_type"]))
        options = data.get("options", {})
        errors = model.options_schema.validate(options)
        if errors:
            raise ValidationError({"options": errors})
        check_honoured(model, options)

    @post_load
    def _new_job(self, data, **_) -> NewJob | SplitRequest:
        try:
            payload = base64.b64decode(data["payload"], validate=True)
        except ValueError:  # binascii.Error, or a non-ASCII string
            raise Problem("invalid_base64", "payload is not valid base64 (standard alphabet, padded).") from None
        check_not_empty(payload)
        job = NewJob(
            model=data["model"],
            content_type=media_type(data["content_type"]),
            payload=payload,
            doc_hash=data.get("doc_hash", ""),
            pages=data.get("pages", 0),
            options=data.get("options", {}),
            callback_url=data.get("callback_url", ""),
            on_prem=data.get("on_prem", False),
            priority=data.get("priority", DEFAULT_PRIORITY.value),
        )
        if "split_pages" in data:
            return SplitRequest(job, data["split_pages"], data.get("max_parallel", 0), webhook_events_of(data))
        return job


class Children(fields.List):
    """A group's children: a list here; each child is loaded on its own, so that a problem names its index."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, list):
            raise self.make_error("invalid")
        return value


class FanoutSchema(Schema):
    max_parallel = StrictInteger(
        required=True,
        validate=_CAP_RANGE,
        metadata={"description": "At most this many children run at once; <= 0: no cap."},
    )
    tolerated_failures = StrictInteger(
        validate=_COUNT_RANGE,
        metadata={
            "description": "Children that may fail (or be cancelled) with the group still completed; "
            "default 0: any failure fails the group once every child has ended (collect-all)."
        },
    )
    tolerated_failure_percentage = StrictNumber(
        validate=Range(min=0, max=100),
        metadata={"description": "The same as a share of the children (rounded down); not with tolerated_failures."},
    )
    fail_fast = StrictBoolean(
        metadata={"description": "Once more children failed than tolerated, cancel the held ones at once."}
    )
    children = Children(
        fields.Nested(JobSchema),
        required=True,
        metadata={
            "description": "1 to OCRGW_MAX_CHILDREN jobs (none: no_children; more: "
            "too_many_children); they may use different models.",
            "minItems": 1,
        },
    )
    callback_url = _callback_url()
    on_prem = StrictBoolean(metadata={"description": f"{_ON_PREM_DOC} Applies to every child."})
    priority = _priority(f"{_PRIORITY_DOC} The group's and every child's.")
    webhook_events = _webhook_events()

    @validates_schema
    def _webhooks_go_somewhere(self, data, **_):
        _check_webhook_events(data, has_children=True)


class GroupSchema(Schema):
    fanout = fields.Nested(FanoutSchema, required=True)

    @validates_schema(skip_on_field_errors=True)
    def _one_tolerance(self, data, **_):
        group = data["fanout"]
        if "tolerated_failures" in group and "tolerated_failure_percentage" in group:
            raise ValidationError(
                {"fanout": {"tolerated_failure_percentage": ["Give tolerated_failures or this, not both."]}}
            )


# -- the controls ----------------------------------------------------------------------------------


class CapSchema(Schema):
    """PATCH /jobs/{id}: a running group's new cap."""

    max_parallel = StrictInteger(
        required=True,
        validate=_CAP_RANGE,
        metadata={"description": "At most this many children run at once from now on; <= 0: no cap."},
    )


class RetrySchema(Schema):
    """POST /jobs/{id}/retry: which of a finished group's children to run again (the body may be empty)."""

    include_cancelled = StrictBoolean(
        load_default=False, metadata={"description": "Cancelled children too, not only failed ones."}
    )


# -- query strings of the reads ---------------------------------------------------------------


def _limit() -> DigitsInteger:
    return DigitsInteger(
        load_default=DEFAULT_PAGE_LIMIT,
        validate=Range(min=1, max=MAX_PAGE_LIMIT),
        metadata={"description": f"Page size, 1 to {MAX_PAGE_LIMIT}; default {DEFAULT_PAGE_LIMIT}."},
    )


def _offset() -> DigitsInteger:
    return DigitsInteger(load_default=0, metadata={"description": "Children to skip, in index order."})


class JobViewQuery(Schema):
    children = Text(
        load_default="page",
        validate=OneOf(["none", "page"]),
        metadata={"description": "A parent's view shows a page of its children (default) or none."},
    )
    offset = _offset()
    limit = _limit()


class ChildrenQuery(Schema):
    status = Text(validate=OneOf(CHILD_STATUSES), metadata={"description": "Only the children in this status."})
    offset = _offset()
    limit = _limit()


class ListQuery(Schema):
    status = Text(validate=OneOf(ROOT_STATUSES), metadata={"description": "Only jobs in this status."})
    kind = Text(
        validate=OneOf(ROOT_KINDS),
        metadata={"description": "single jobs or parents (children are listed by their parent)."},
    )
    limit = _limit()
    cursor = Text(validate=Length(min=1, max=200), metadata={"description": "next_cursor of the previous page."})


class ResultPdfQuery(Schema):
    """What a request for the searchable PDF may choose over the job's options."""

    output_type = Text(
        validate=OneOf(OUTPUT_TYPES),
        metadata={"description": "'pdf' or 'pdfa' (PDF/A-2b); default: the job's option output_type, else 'pdf'."},
    )
    optimize = DigitsInteger(
        validate=OneOf(OPTIMIZE_LEVELS),
        metadata={"description": "0, 1 (lossless) or 2 (lossy); default: the job's option optimize, else 0."},
    )


#: The years a usage range may name, in UTC: after the epoch, and short of the last year a date-time holds.
MOMENT_YEARS = (1971, 9998)


class Moment(Text):
    """A date (``2026-12-01``: its start, UTC) or an RFC 3339 date-time (without an offset: UTC), loaded in UTC.

    It is converted here, where a moment that has no UTC date-time (``9999-12-31T19:00:00-05:00``) is an
    invalid field rather than an overflow further on; and it must fall before 9999, so that the periods
    counted from it (an hour, a day on) are dates too.
    """

    def _deserialize(self, value, attr, data, **kwargs):
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            moment = datetime.fromisoformat(text.replace("z", "Z")) if len(text) <= 40 else None
            if moment is not None:
                moment = moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
        except (ValueError, OverflowError):
            moment = None
        if moment is None or not MOMENT_YEARS[0] <= moment.year <= MOMENT_YEARS[1]:
            raise ValidationError(
                f"Not a date (YYYY-MM-DD) or an RFC 3339 date-time from {MOMENT_YEARS[0]} to {MOMENT_YEARS[1]} (UTC)."
            )
        return moment


class UsageQuery(Schema):
    """What ``GET /usage`` reads: a range of hours or days, and for an admin key, whose."""

    from_ = Moment(
        data_key="from",
        metadata={
            "description": "The range's start (rounded down to its hour); default: `to` less 30 days "
            "(24 hours with granularity=hour)."
        },
    )
    to = Moment(metadata={"description": "The range's end, exclusive; default: now."})
    granularity = Text(
        load_default=usage.DAY,
        validate=OneOf(usage.GRANULARITIES),
        metadata={"description": "Periods of a UTC day (default) or of an hour."},
    )
    tenant = Text(
        validate=Length(min=1, max=63),
        metadata={"description": "Whose usage: the key's own tenant (default); another needs an `admin` key."},
    )

    @post_load
    def _range(self, data, **_):
        end = data.get("to") or datetime.now(UTC)
        granularity = data["granularity"]
        start = data.get("from_") or end - (timedelta(hours=24) if granularity == usage.HOUR else timedelta(days=30))
        if start >= end:
            raise ValidationError({"from": ["Must be before `to`."]})
        longest = usage.MAX_RANGE[granularity]
        if end - start > longest:
            raise ValidationError(
                {"from": [f"A range of granularity {granularity} spans at most {longest.days} days."]}
            )
        return {**data, "from_": start, "to": end}
