"""The vocabulary that Python and the Lua transitions share, defined once.

Statuses, kinds, audit operations, reply codes, the catalogue of job error
codes and the names of a job hash's fields live here.  The scripts never spell them: every script starts
with a preamble generated from this module (``lua_preamble``), so Lua reads
``STATUS.queued``, ``REPLY.LEASE_LOST`` and ``F.attempts`` while Python reads
``JobStatus.QUEUED``, ``Reply.LEASE_LOST`` and ``Field.ATTEMPTS``: renaming a
value here renames it on both sides.
"""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum
from functools import cache


class JobKind(str, Enum):
    SINGLE = "single"
    PARENT = "parent"
    CHILD = "child"


class JobStatus(str, Enum):
    HELD = "held"  # a child waiting for a slot; on no queue
    QUEUED = "queued"  # released: a Celery message exists, or the sweep will send one
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED})
#: The statuses a root (a single job or a parent) can have: it is never held.
ROOT_STATUSES = tuple(s for s in JobStatus if s is not JobStatus.HELD)
#: The kinds a root can be, and so the kinds the listing index knows.
ROOT_KINDS = (JobKind.SINGLE, JobKind.PARENT)


class Priority(str, Enum):
    """A submission's lane: interactive work goes ahead of batch work of the same model (its own queue)."""

    INTERACTIVE = "interactive"
    BATCH = "batch"


#: The lane of a submission that names none, and of a job stored before lanes existed (it has no field).
DEFAULT_PRIORITY = Priority.BATCH


class Operation(str, Enum):
    """The ``operation`` of an audit event."""

    JOB = "job"  # a single job or a parent became terminal
    JOB_CHILD = "job_child"  # a child became terminal
    WEBHOOK = "webhook"  # one attempt to deliver a terminal job's view to its callback_url


class WebhookOutcome(str, Enum):
    """What follows an attempt to deliver a webhook, as its event records it."""

    DELIVERED = "delivered"  # the receiver answered 2xx: done
    RETRYING = "retrying"  # another attempt is due at the event's retry_at
    GIVEN_UP = "given_up"  # the last attempt the retry window allows failed: done
    SUPERSEDED = "superseded"  # a later attempt was claimed meanwhile and decides what follows


class WebhookEvent(StrEnum):
    """What a group's ``webhook_events`` may ask for: a webhook when the group ends, one per child as it ends.

    "completed" means ended, as a job's webhook always has: completed, failed or cancelled (the view says which).
    """

    JOB_COMPLETED = "job.completed"  # the group (its parent) ended: the default, and all there was before
    CHILD_COMPLETED = "child.completed"  # a child ended: one webhook per child, per run of it


class WebhookErrorCode(StrEnum):
    """The ``error_code`` of a failed webhook attempt, as its event records it (``coordinator.delivery``).

    Each code has its page in the manual (``/manual/webhook-errors/<code>/``), made from this catalogue;
    what to do about it is in docs/hooks/code_guide.py (the docs build fails without it).

    A StrEnum, as ``ErrorCode``: a code is written and logged as its value."""

    INVALID_URL = "invalid_callback_url"  # the stored URL fails the policy's parse (stored before it existed)
    PRIVATE_ADDRESS = "private_address"  # the host resolves to an address the policy refuses
    UNRESOLVABLE = "unresolvable"  # the host name does not resolve
    CONNECTION_FAILED = "connection_failed"  # no address accepted a connection, or TLS failed
    TIMEOUT = "timeout"  # no lookup, no connection, or not the whole answer, within OCRGW_WEBHOOK_TIMEOUT
    BAD_RESPONSE = "bad_response"  # the answer was not HTTP
    REDIRECT = "redirect"  # a 3xx: redirects are not followed
    HTTP_ERROR = "http_error"  # any other status outside 2xx
    INTERNAL_ERROR = "internal_error"  # the deliverer failed before the request went out (a bug; logged)


class ErrorCode(StrEnum):
    """The one catalogue of a job's ``error_code``: every code a job can end with (or be retried
    for, as its ``last_error_code``), whether it is retried, and what it means.

    Adding a code is one line here and what to do about it in docs/hooks/code_guide.py (the docs build
    fails without it); the docs' tables of the codes and its page are made from this catalogue.
    A retried code gives the job another attempt while it has
    attempts left (``OCRGW_MAX_ATTEMPTS``); the last attempt's fails the job with it.  Codes are
    part of the API and never change meaning.  A StrEnum, unlike the other enums here: a code is
    written, logged and formatted as its value, as the plain strings it replaced were.
    """

    retried: bool
    meaning: str

    def __new__(cls, value: str, retried: bool, meaning: str) -> ErrorCode:
        member = str.__new__(cls, value)
        member._value_ = value
        member.retried, member.meaning = retried, meaning
        return member

    # written by the transitions themselves (SCRIPT_ERROR_CODES)
    CHILD_FAILED = "child_failed", False, "a parent: more of its children failed than it tolerates"
    CHILD_CANCELLED = (
        "child_cancelled",
        False,
        "a parent: more of its children were cancelled, one by one, than it tolerates, and none failed",
    )
    LEASE_EXPIRED = "lease_expired", True, "the worker stopped renewing the job's lease (it died, or stalled)"
    # written by the runner
    TIMEOUT = "timeout", False, "the job ran longer than `OCRGW_JOB_TIMEOUT`"
    RESOURCE_LIMIT = "resource_limit", False, "the job needed more memory than a worker process may use"
    ADAPTER_ERROR = (
        "adapter_error",
        True,
        "an engine failed without saying why; an unexpected exception of an adapter (a bug) fails the job at once",
    )
    ON_PREM_REQUIRED = (
        "on_prem_required",
        False,
        "the document must stay on premises and the model runs in the cloud; nothing was sent",
    )
    # raised by the adapters
    INVALID_DOCUMENT = (
        "invalid_document",
        False,
        "the document cannot be decoded or rendered (corrupt, empty, of another type, over a limit)",
    )
    INVALID_OPTIONS = "invalid_options", False, "an option the model refuses (a job created past the gateway's checks)"
    UNKNOWN_MODEL = "unknown_model", False, "no worker adapter serves the job's model"
    UNSUPPORTED_LANGUAGE = (
        "unsupported_language",
        False,
        "a Tesseract language that `options.lang` names is not installed on the worker",
    )
    ENGINE_UNAVAILABLE = "engine_unavailable", True, "the OCR engine cannot be loaded or started on this host"
    ENGINE_TIMEOUT = "engine_timeout", True, "the engine did not finish within the job's `options.timeout_s`"
    ECHO_FAILED = "echo_failed", False, "the echo model was asked to fail (`options.fail`, `options.fail_until`)"
    ECHO_TRANSIENT = "echo_transient", True, "the echo model was asked to fail transiently (`options.transient_fail`)"
    UPSTREAM_UNREACHABLE = (
        "upstream_unreachable",
        True,
        "a remote model's upstream cannot be reached (refused, DNS, a request timed out or was cut off)",
    )
    UPSTREAM_UNAVAILABLE = "upstream_unavailable", True, "the upstream answered 5xx or 429"
    UPSTREAM_TIMEOUT = "upstream_timeout", True, "the upstream job did not end in the job's time"
    UPSTREAM_REJECTED = (
        "upstream_rejected",
        False,
        "the upstream answered 4xx to the submission; the `error` carries its problem's `code`",
    )
    UPSTREAM_FAILED = (
        "upstream_failed",
        False,
        "the upstream job failed or was cancelled; the `error` carries its `error_code`",
    )
    UPSTREAM_BAD_RESPONSE = "upstream_bad_response", False, "an answer of the upstream that is not this API's"


#: Every job error code, as the API spells it (what an OpenAPI enum on ``error_code`` lists).
JOB_ERROR_CODES: tuple[str, ...] = tuple(code.value for code in ErrorCode)
#: The codes the transitions write themselves; the others reach them as arguments.  Only these are
#: in the scripts' preamble: its tables are built at every call of a script.
SCRIPT_ERROR_CODES = (ErrorCode.CHILD_FAILED, ErrorCode.CHILD_CANCELLED, ErrorCode.LEASE_EXPIRED)


class Stage(str, Enum):
    """What a job's ``stage`` says between statuses (a terminal job's stage is its status)."""

    ACCEPTED = "accepted"
    STARTED = "started"
    RETRYING = "retrying"  # given back after a transient error, waiting out its backoff
    RECLAIMED = "reclaimed"  # its lease expired; queued for the next attempt
    CANCELLING = "cancelling"  # processing, asked to stop: the runner ends it at the next page


class Reply(IntEnum):
    """The code every transition answers with first; small negatives refuse, as BullMQ's scripts do."""

    NOTHING = 0  # nothing to do (a sweep's target changed meanwhile)
    OK = 1
    REPLAYED = 2  # create: the same Idempotency-Key and request, or a retried call of this create
    NO_JOB = -1
    WRONG_STATUS = -2  # the job is not in the status the transition needs (late or duplicate call)
    LEASE_LOST = -3  # another attempt holds the job
    KEY_REUSED = -4  # create, redrive: the Idempotency-Key was used for a different request
    CANCEL_REQUESTED = 3  # heartbeat, progress, retry: the attempt still holds the job but must stop


class Field(str, Enum):
    """The fields of a job hash (single job, parent or child)."""

    ID = "id"
    KIND = "kind"
    STATUS = "status"
    MODEL = "model"
    DOC_HASH = "doc_hash"
    PAGES = "pages"
    CONTENT_TYPE = "content_type"
    OPTIONS = "options"
    STAGE = "stage"
    PROGRESS = "progress"
    ATTEMPTS = "attempts"  # attempts ever claimed: never goes back, so an old attempt's token stays stale
    # attempts that came before the job's last redrive: attempts - attempts_base is the
    # number of the current try, which max_attempts bounds
    ATTEMPTS_BASE = "attempts_base"
    CREATED_AT = "created_at"
    QUEUED_AT = "queued_at"
    STARTED_AT = "started_at"
    FINISHED_AT = "finished_at"
    # Every attempt's run, "<attempt>:<started µs>:<ended µs>:<how it ended>" joined by ","
    # (the last attempt's start is also STARTED_AT): the record a cap check needs,
    # since an attempt that lost its lease or was retried held a slot too.
    INTERVALS = "intervals"
    ERROR_CODE = "error_code"
    ERROR = "error"
    LAST_ERROR_CODE = "last_error_code"  # why the current attempt is a retry
    LAST_ERROR = "last_error"
    IDEMPOTENCY_KEY = "idempotency_key"
    CALLBACK_URL = "callback_url"  # '' or where the job's view is POSTed once it is terminal
    ON_PREM = "on_prem"  # '1': the document must stay on premises, no cloud model may take it
    # 'interactive' (a Priority), or absent: batch, the default (and every job stored before lanes); a child
    # has its group's
    PRIORITY = "priority"
    CANCEL_REQUESTED = "cancel_requested"  # '1' once a client asked to cancel a job (or its parent)
    WEBHOOK_ATTEMPTS = "webhook_attempts"  # delivery attempts claimed so far; the current one's number
    # webhook_attempts when the job last ended (a redriven parent ends again): that round's
    # attempts count from it, and whatever an earlier round still has in flight is stale
    WEBHOOK_ATTEMPTS_BASE = "webhook_attempts_base"
    # a root (single job or parent) only: whose it is.  A child belongs to its root's tenant.
    TENANT = "tenant"
    KEY_ID = "key_id"  # the id of the API key that submitted it ('' with no keys configured)
    # a child
    PARENT_ID = "parent_id"
    INDEX = "index"
    # a child of a split PDF: "<first>-<last>", its pages (1-based) of the document stored once as its
    # parent's payload; it stores no payload of its own.  Absent from any other job.
    SOURCE_PAGES = "source_pages"
    # the W3C traceparent of the request that created the job (its parent's for a child), stored only
    # while tracing is on: a worker's attempt joins that trace however the job reached it.  Absent otherwise.
    TRACEPARENT = "traceparent"
    # a parent: its cap, its size, and one count per status (count_field)
    MAX_PARALLEL = "max_parallel"
    TOTAL = "total"
    TOLERATED_FAILURES = "tolerated_failures"  # children that may fail (or be cancelled) and the parent complete
    FAIL_FAST = "fail_fast"  # '1': past the tolerance, the held children are cancelled at once
    REDRIVES = "redrives"  # how many times the failed children were sent again
    # What a job used (jobs.usage): a completed single job's or child's pages read by its engine, pages
    # answered from a text layer and input bytes; on a root, the sums over its children (a single job: its
    # own), and ENGINE_US, the µs of every attempt that ended (a child's own are its intervals').
    OCR_PAGES = "ocr_pages"
    TEXT_LAYER_PAGES = "text_layer_pages"
    INPUT_BYTES = "input_bytes"
    ENGINE_US = "engine_us"


class UsageUnit(str, Enum):
    """What usage metering counts per tenant, model and hour (jobs.usage): each is a job field's name too."""

    OCR_PAGES = "ocr_pages"  # pages a completed job's engine read
    TEXT_LAYER_PAGES = "text_layer_pages"  # pages a completed job answered from the PDF's own text layer
    INPUT_BYTES = "input_bytes"  # a completed job's document (a split's, once: with its first pages)
    ENGINE_US = "engine_us"  # every attempt's run, its start to its end (Redis time), µs
    JOBS = "jobs"  # single jobs and children completed


class EventField(str, Enum):
    """The fields of an audit event (one entry of a root's events stream)."""

    OPERATION = "operation"
    JOB_ID = "job_id"
    PARENT_JOB_ID = "parent_job_id"
    STATUS = "status"
    MODEL = "model"
    ERROR_CODE = "error_code"
    TIME = "time"  # µs, Redis time
    # whose job it is: its root's tenant, and the id of the API key that submitted the root
    TENANT = "tenant"
    KEY_ID = "key_id"
    # a webhook attempt (operation webhook); error_code then says why it failed
    ATTEMPT = "attempt"
    OUTCOME = "outcome"  # a WebhookOutcome
    RESPONSE_STATUS = "response_status"  # the receiver's HTTP status, '' if it never answered
    ERROR = "error"
    RETRY_AT = "retry_at"  # µs, when the next attempt is due ('' unless retrying)


def count_field(status: JobStatus) -> str:
    """The parent's field counting its children in ``status``: ``n_queued``..."""
    return f"n_{status.value}"


def _lua_table(name: str, pairs: dict[str, str | int | bool]) -> str:
    def literal(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int):
            return str(value)
        return "'" + value + "'"

    body = ", ".join(f"{k} = {literal(v)}" for k, v in pairs.items())
    return f"local {name} = {{{body}}}"


@cache
def lua_preamble() -> str:
    """The Lua that defines this module's names for a script (jobs.keys.lua_preamble adds the key shapes)."""
    lines = [
        "-- Generated from jobs/contract.py: the names Python and Lua share.",
        _lua_table("STATUS", {s.value: s.value for s in JobStatus}),
        _lua_table("TERMINAL", {s.value: True for s in sorted(TERMINAL)}),  # sorted: the same code every run
        _lua_table("KIND", {k.value: k.value for k in JobKind}),
        _lua_table("OPERATION", {o.value: o.value for o in Operation}),
        _lua_table("WEBHOOK", {o.value: o.value for o in WebhookOutcome}),
        _lua_table("REPLY", {r.name: r.value for r in Reply}),
        _lua_table("ERROR", {e.value: e.value for e in SCRIPT_ERROR_CODES}),
        _lua_table("STAGE", {e.value: e.value for e in Stage}),
        _lua_table("PRIORITY", {p.value: p.value for p in Priority}),
        f"local DEFAULT_PRIORITY = '{DEFAULT_PRIORITY.value}'",
        _lua_table("F", {f.name.lower(): f.value for f in Field}),
        _lua_table("E", {f.name.lower(): f.value for f in EventField}),
        _lua_table("UNIT", {u.name.lower(): u.value for u in UsageUnit}),
        "local function count_field(status) return 'n_' .. status end",
    ]
    return "\n".join(lines) + "\n"
