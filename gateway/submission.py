"""Turns the body of POST /jobs into validated ``NewJob``\\ s, or raises a ``Problem``.

Every field is checked and every payload decoded here (by the schemas of
``gateway.schemas``), before the route calls the store, so a rejected
request leaves nothing behind: no parent, no child, no payload, no
idempotency record.  What the schemas cannot see is done here: reading the
JSON strictly, telling the three shapes of a submission apart, the group's
size limits, which child a problem is about, holding each document to its
declared type and to the page and pixel limits (``documents.inspection``:
from its headers, so a bomb is refused undecoded; all of a request's checks
within one budget of time and count, ``gateway.document_checks``), and counting the pages
of a PDF sent with ``split_pages`` to make the children of its page ranges
(the document is stored once, and each child names its pages of it), so
that a bad document is refused before anything is stored.  Nothing in this module
touches the store or Flask's request object, which keeps it testable on
plain values.

Languages are checked here too, against the Tesseract languages the live
workers have, which the caller passes in (``languages``; the gateway reads
them from the workers' reports, ``gateway.languages``): a job naming one no
worker has is ``422 unsupported_language`` rather than a job that would fail
on every worker.  When no worker is live at all (none has reported, as when
the stack starts or every worker restarts) nothing is known and every
language is accepted: the job waits in the queue, as any job does, and the
worker that takes it fails it with ``unsupported_language`` if it lacks one.

On-prem enforcement is here too: a document that must stay on premises
(its own ``on_prem``, its group's, or the caller's ``require_on_prem``)
may not name a cloud model, and the mark goes on with each job, for the
worker to check again before anything leaves.

A group's ``webhook_events`` are settled here as well: a group (or a split
PDF) that asks for ``child.completed`` gives each child without a
``callback_url`` of its own the group's, so that each child's end is a
webhook on the path every job's takes, and one that does not list
``job.completed`` keeps none for itself.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from marshmallow import Schema, ValidationError

from documents.limits import DocumentLimits
from documents.pages import PDF_TYPE
from gateway.bodies import JSON_TYPE, UNASKED_TYPES, is_json_type, json_type_required
from gateway.document_checks import Inspections
from gateway.problems import Problem, for_child, invalid_field
from gateway.schemas import (
    GroupSchema,
    JobSchema,
    RawQuerySchema,
    SplitRequest,
    accepting_model,
    check_not_empty,
    webhook_events_of,
)
from jobs.config import Settings
from jobs.contract import DEFAULT_PRIORITY, ErrorCode, WebhookEvent
from jobs.records import GroupRules, NewJob
from jobs.registry import MODELS
from jobs.webhook_urls import InvalidCallbackUrl, check_submitted

# Visible ASCII but the comma: a header sent twice reaches the app as one value, the two joined by a comma
# (gunicorn joins them, as RFC 9110 allows for a list), so a comma is the one trace of a repeat it leaves.
_IDEMPOTENCY_KEY = re.compile(r"[\x21-\x2b\x2d-\x7e]{1,255}")
# Bumped if the encoding below ever changes, so that old records cannot match new requests.
_FINGERPRINT_VERSION = b"ocrgw-request-v1"


@dataclass(frozen=True)
class Submission:
    jobs: list[NewJob]
    group: GroupRules | None  # None: a single job, not a group
    fingerprint: str  # what an Idempotency-Key is bound to
    split: bool = False  # a group the gateway made of a PDF's page ranges
    source: bytes | None = None  # a split's document, stored once: its children name their pages of it

    @property
    def is_group(self) -> bool:
        return self.group is not None

    @property
    def shape(self) -> str:
        """single, group, or split (a PDF cut into children): what the submission metrics count by."""
        return "split" if self.split else "group" if self.is_group else "single"


def idempotency_key(values: Sequence[str]) -> str | None:
    """The request's Idempotency-Key, or None; a malformed or repeated header is refused.

    ``values``: each occurrence of the header as the server passed it on.  A WSGI server may pass two
    as one, joined by a comma, which no key may hold: either way a repeat is refused, never read as a
    key of its own (``k1,k2``) that would make a retry sending one of them a new request.
    """
    if not values:
        return None
    if len(values) > 1 or not _IDEMPOTENCY_KEY.fullmatch(values[0]):
        raise Problem(
            "invalid_idempotency_key",
            "Idempotency-Key must be given once, as 1 to 255 visible ASCII characters other than a comma.",
        )
    return values[0]


def fingerprint(*parts: str | bytes) -> str:
    """sha256 of the parts, each length-prefixed so that no two sequences encode alike."""
    digest = hashlib.sha256(_FINGERPRINT_VERSION)
    for part in parts:
        data = part.encode() if isinstance(part, str) else part
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class Parser:
    """Parses submissions under one app's settings (model defaults, page and group limits)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.limits = DocumentLimits.from_settings(settings)
        self.raw_query = RawQuerySchema(max_pages=settings.max_pages)
        self.job = JobSchema(max_pages=settings.max_pages)
        self.group = GroupSchema()

    def parse(
        self,
        *,
        path: str,
        content_type: str,
        args: Mapping[str, list[str]],
        body: bytes,
        require_on_prem: bool = False,
        languages: frozenset[str] | None = None,
    ) -> Submission:
        """``content_type`` is the media type without parameters; ``args`` maps each query name to its values.

        ``require_on_prem``: every document of the request must stay on
        premises, whatever the request says (the caller's policy); the request
        may ask for it too, with ``on_prem``.  ``languages``: the Tesseract
        languages the live workers have, None when no worker is live (every
        language is then accepted).
        """
        with self._inspections() as inspections:
            if is_json_type(content_type):
                return self._json(path, args, body, require_on_prem, languages, inspections)
            if content_type in UNASKED_TYPES and _is_json_object(body):
                # A browser sends this type from any site unasked: JSON under it is a job some page sends.
                raise json_type_required(
                    f"This body is a JSON object sent as {content_type!r}: send a JSON job as {JSON_TYPE}, "
                    "and a text document that is JSON as a JSON job, its bytes in base64 in payload."
                )
            return self._raw(path, content_type, args, body, require_on_prem, languages, inspections)

    def _inspections(self) -> Inspections:
        """What one request may spend checking its documents (``gateway.document_checks``)."""
        return Inspections(
            self.limits,
            seconds=self.settings.inspection_seconds,
            max_documents=self.settings.inspection_max_documents,
        )

    # -- a raw document: the body is the file ------------------------------------------

    def _raw(self, path, content_type, args, body, require_on_prem, languages, inspections) -> Submission:
        repeated = {name: ["Given more than once."] for name, values in args.items() if len(values) > 1}
        if repeated:
            raise invalid_field(repeated)
        query = _load(self.raw_query, {name: values[0] for name, values in args.items()})
        model = query.get("model", self.settings.default_model)
        doc_hash, pages = query.get("doc_hash", ""), query.get("pages", 0)
        accepting_model(model, content_type)
        asked_on_prem = query.get("on_prem", False)
        on_prem = asked_on_prem or require_on_prem
        check_location(model, on_prem)
        callback_url = self._callback_url(query.get("callback_url", ""))
        check_not_empty(body)
        job = NewJob(
            model=model,
            content_type=content_type,
            payload=body,
            doc_hash=doc_hash,
            pages=pages,
            callback_url=callback_url,
            on_prem=on_prem,
            priority=query.get("priority", DEFAULT_PRIORITY.value),
        )
        check_languages(job, languages)
        # The callback and on_prem join the fingerprint only when given, so earlier requests' fingerprints still match.
        request = (
            path,
            content_type,
            model,
            doc_hash,
            str(pages),
            body,
            *([callback_url] if callback_url else []),
            *(["on_prem"] if asked_on_prem else []),
            *([f"priority={query['priority']}"] if "priority" in query else []),
            *([f"webhook_events={','.join(query['webhook_events'])}"] if "webhook_events" in query else []),
        )
        page_count = inspections.check(job)
        if "split_pages" not in query:
            return Submission([job], None, fingerprint(*request))
        split = SplitRequest(job, query["split_pages"], query.get("max_parallel", 0), webhook_events_of(query))
        return self._split(
            split, fingerprint(*request, "split", str(split.split_pages), str(split.max_parallel)), page_count
        )

    # -- JSON: a single job or a fan-out group ---------------------------------------

    def _json(self, path, args, body, require_on_prem, languages, inspections) -> Submission:
        if args:
            raise invalid_field(
                {name: ["Query parameters apply to raw documents only."] for name in args},
                "Query parameters apply to raw documents only; a JSON body carries every field.",
            )
        data = parse_json_object(body)
        request_print = fingerprint(path, JSON_TYPE, body)
        if "fanout" not in data:
            job = _load(self.job, data)
            if isinstance(job, SplitRequest):
                split = replace(job, job=_kept_on_prem(job.job, require_on_prem))
                check_languages(split.job, languages)  # each part reads the languages of the whole
                self._callback_url(split.job.callback_url)
                page_count = inspections.check(split.job)
                return self._split(split, request_print, page_count)
            job = _kept_on_prem(job, require_on_prem)
            check_languages(job, languages)
            self._callback_url(job.callback_url)
            inspections.check(job)
            return Submission([job], None, request_print)
        group = _load(self.group, data)["fanout"]
        group_on_prem = group.get("on_prem", False) or require_on_prem
        group_callback_url = self._callback_url(group.get("callback_url", ""))
        children = group["children"]
        if not children:
            raise Problem("no_children", "A fan-out group needs at least one child.")
        limit = self.settings.max_children
        if len(children) > limit:
            raise Problem(
                "too_many_children",
                f"A fan-out group holds at most {limit} children; this one has {len(children)}.",
                max_children=limit,
            )
        jobs = []
        for index, child in enumerate(children):
            try:
                job = _load(self.job, child)
                if isinstance(job, SplitRequest):
                    raise invalid_field({"split_pages": ["A child of a fan-out group cannot be split."]})
                if "priority" in child:
                    raise invalid_field({"priority": ["A child runs in its group's lane: give fanout.priority."]})
                if "webhook_events" in child:
                    raise invalid_field(
                        {"webhook_events": ["A child's webhooks are its group's: give fanout.webhook_events."]}
                    )
                job = _kept_on_prem(job, group_on_prem)
                check_languages(job, languages)
                self._callback_url(job.callback_url)
                inspections.check(job)
            except Problem as problem:
                raise for_child(problem, index) from None
            jobs.append(job)
        events = webhook_events_of(group)
        rules = _rules(group, len(jobs), group_callback_url if WebhookEvent.JOB_COMPLETED in events else "")
        # Each child runs in the group's lane (``rules.priority``): the store sets it on every child.
        jobs = [replace(j, callback_url=_child_callback_url(j, group_callback_url, events)) for j in jobs]
        return Submission(jobs, rules, request_print)

    def _callback_url(self, url: str) -> str:
        """``url`` ('' for none) if the webhook policy takes it; else ``invalid_callback_url``."""
        if not url:
            return ""
        try:
            return check_submitted(url, allow_private=bool(self.settings.webhook_allow_private))
        except InvalidCallbackUrl as error:
            raise Problem("invalid_callback_url", str(error)) from None

    # -- a PDF split into page ranges ----------------------------------------------------

    def _split(self, request: SplitRequest, request_print: str, page_count: int) -> Submission:
        """The group of the PDF's page ranges: each child names its pages of the one stored document,
        numbered in the whole.  ``page_count``: what checking the document counted (within the page limit)."""
        job, events = request.job, request.webhook_events
        if job.content_type != PDF_TYPE:
            raise invalid_field({"split_pages": [f"Only a PDF ({PDF_TYPE}) can be split, not {job.content_type}."]})
        # A document that is itself part of a larger one numbers its pages from there.
        first_page = job.options.get("first_page", 1)
        per_child = request.split_pages
        self._check_children(page_count, per_child)
        children = [
            replace(
                job,
                payload=b"",
                source_pages=(first, min(first + per_child - 1, page_count)),
                pages=min(per_child, page_count - first + 1),
                options={**job.options, "first_page": first_page + first - 1},
                # The group's, below (one callback for the whole document), and each part's if asked.
                callback_url=job.callback_url if WebhookEvent.CHILD_COMPLETED in events else "",
            )
            for first in range(1, page_count + 1, per_child)
        ]
        group_url = job.callback_url if WebhookEvent.JOB_COMPLETED in events else ""
        return Submission(
            children,
            GroupRules(max_parallel=request.max_parallel, callback_url=group_url, priority=job.priority),
            request_print,
            split=True,
            source=job.payload,
        )

    def _check_children(self, page_count: int, split_pages: int) -> None:
        max_children = self.settings.max_children
        children = -(-page_count // split_pages)
        if children > max_children:
            raise Problem(
                "too_many_children",
                f"Split {split_pages} pages a child, this {page_count}-page PDF makes {children} children; "
                f"a fan-out group holds at most {max_children}.",
                max_children=max_children,
            )


def check_location(model: str, on_prem: bool) -> None:
    """``403 on_prem_required`` when a document that must stay on premises names a cloud model."""
    if not MODELS[model].may_take(on_prem=on_prem):
        raise Problem(
            ErrorCode.ON_PREM_REQUIRED,
            f"This document must stay on premises, and model {model} runs in the cloud; "
            "choose a model whose location is on_prem (GET /models).",
        )


def check_languages(job: NewJob, installed: frozenset[str] | None) -> None:
    """``422 unsupported_language`` when the job names a Tesseract language no live worker has.

    ``installed`` None: no worker is live, so nothing is known; the job is accepted (see above).
    """
    if installed is None:
        return
    missing = MODELS[job.model].languages_of(job.options) - installed
    if missing:
        listed = ", ".join(sorted(installed)) or "none"
        raise Problem(
            ErrorCode.UNSUPPORTED_LANGUAGE,
            f"No worker has the Tesseract language(s) {', '.join(sorted(missing))}; installed: {listed} "
            "(GET /models lists them).",
            missing_languages=sorted(missing),
            installed_languages=sorted(installed),
        )


def _kept_on_prem(job: NewJob, required: bool) -> NewJob:
    """The job, marked on_prem if it or its request must stay on premises; refused if its model is cloud."""
    if required and not job.on_prem:
        job = replace(job, on_prem=True)
    check_location(job.model, job.on_prem)
    return job


def _child_callback_url(child: NewJob, group_url: str, events: Sequence[str]) -> str:
    """Where a child's webhook goes: its own callback_url, else the group's if the group asked for
    ``child.completed``, else nowhere.  Each child that has one is on the same path as any job's webhook
    (the store puts a terminal job with a callback_url on its webhooks index), so each child gets one
    delivery per run, to one URL, signed with its root's tenant's secret."""
    if child.callback_url:
        return child.callback_url
    return group_url if WebhookEvent.CHILD_COMPLETED in events else ""


def _rules(group: dict[str, Any], total: int, callback_url: str) -> GroupRules:
    tolerated = group.get("tolerated_failures", 0)
    if "tolerated_failure_percentage" in group:
        tolerated = math.floor(total * group["tolerated_failure_percentage"] / 100)
    return GroupRules(
        max_parallel=group["max_parallel"],
        tolerated_failures=tolerated,
        fail_fast=group.get("fail_fast", False),
        callback_url=callback_url,
        priority=group.get("priority", DEFAULT_PRIORITY.value),
    )


def parse_json_object(body: bytes) -> dict[str, Any]:
    try:
        data = json.loads(
            body,
            object_pairs_hook=_object_without_duplicates,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise Problem("malformed_json", "The JSON body is nested too deeply.") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError, and the hooks below
        raise Problem("malformed_json", f"The body is not valid JSON: {error}.") from None
    if not isinstance(data, dict):
        raise Problem("malformed_json", "The JSON body must be an object.")
    return data


def _is_json_object(body: bytes) -> bool:
    if body.lstrip()[:1] != b"{":
        return False
    try:
        return isinstance(json.loads(body), dict)
    except (ValueError, RecursionError):
        return False


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # Python keeps the last of duplicate keys, other parsers the first: refuse to guess.
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def _load(schema: Schema, data: Any) -> Any:
    try:
        return schema.load(data)
    except ValidationError as error:
        raise invalid_field(error.messages) from None
