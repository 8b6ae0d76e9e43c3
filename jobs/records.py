"""What the store takes and gives back: plain values, no Redis in sight."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from jobs import keys
from jobs.contract import DEFAULT_PRIORITY, Field
from jobs.ids import DEFAULT_TENANT
from jobs.transitions.spec import Dispatch


@dataclass(frozen=True)
class NewJob:
    """One document to OCR, as validated by the gateway."""

    model: str
    content_type: str
    payload: bytes
    doc_hash: str = ""
    pages: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    callback_url: str = ""  # where the job's view is POSTed once it is terminal
    # The document must stay on premises: no cloud model may take it (the worker checks again).
    on_prem: bool = False
    # A child of a split PDF: its pages (1-based, first and last) of the document the group stores once,
    # as its parent's payload; ``payload`` is then empty.
    source_pages: tuple[int, int] | None = None
    # Its lane (a ``Priority`` value): interactive work goes ahead of batch work of its model.  A group's
    # children take the group's (``GroupRules.priority``), whatever they say: create.lua sets it.
    priority: str = DEFAULT_PRIORITY.value

    def __post_init__(self):
        if not self.doc_hash:
            object.__setattr__(self, "doc_hash", hashlib.sha256(self.payload).hexdigest())

    def fields(self) -> dict[str, str]:
        """How ``create`` takes the job: its fields by their ``Field`` names, as the job's hash keeps them
        (create.lua reads ``spec[F.<name>]``)."""
        return {
            Field.MODEL.value: self.model,
            Field.DOC_HASH.value: self.doc_hash,
            Field.PAGES.value: str(self.pages),
            Field.CONTENT_TYPE.value: self.content_type,
            Field.OPTIONS.value: json.dumps(self.options),
            Field.CALLBACK_URL.value: self.callback_url,
            Field.ON_PREM.value: "1" if self.on_prem else "0",
            Field.SOURCE_PAGES.value: format_pages(self.source_pages),
            Field.PRIORITY.value: self.priority,
        }


def format_pages(pages: tuple[int, int] | None) -> str:
    """A page range as the store keeps it (``Field.SOURCE_PAGES``): "first-last", or '' for none."""
    return "" if pages is None else f"{pages[0]}-{pages[1]}"


def parse_pages(text: str | bytes | None) -> tuple[int, int] | None:
    """The page range ``format_pages`` wrote; None for ''."""
    if isinstance(text, bytes):
        text = text.decode()
    if not text:
        return None
    first, _, last = text.partition("-")
    return int(first), int(last)


@dataclass(frozen=True)
class GroupRules:
    """How a fan-out group runs and ends, besides its children."""

    max_parallel: int = 0  # <= 0: no cap
    # Children that may fail (or be cancelled one by one) and the parent still complete.
    tolerated_failures: int = 0
    fail_fast: bool = False  # past the tolerance, cancel the held children at once
    callback_url: str = ""  # where the parent's view is POSTed once it is terminal
    priority: str = DEFAULT_PRIORITY.value  # the lane of the group and of every child

    def fields(self, model: str) -> dict[str, str | int | bool]:
        """How ``create`` takes the rules, by their ``Field`` names (create.lua reads ``A.group[F.<name>]``);
        ``model``: the children's, or 'mixed' when theirs differ."""
        return {
            Field.MODEL.value: model,
            Field.MAX_PARALLEL.value: self.max_parallel,
            Field.TOLERATED_FAILURES.value: self.tolerated_failures,
            Field.FAIL_FAST.value: self.fail_fast,
            Field.CALLBACK_URL.value: self.callback_url,
            Field.PRIORITY.value: self.priority,
        }


@dataclass(frozen=True)
class Owner:
    """Whose a new job is: its tenant, and the id of the API key that submitted it (for its audit events)."""

    tenant: str = DEFAULT_TENANT
    key_id: str = ""  # '' with no API keys configured
    weight: int = 1  # the tenant's share of each lane's turns (its keys' weight; docs/security/fair-share.md)
    # How many interactive jobs the tenant may have queued or processing (its key's policy); None: no limit.
    interactive_max_inflight: int | None = None


#: The owner of every job when no API keys are configured.
DEFAULT_OWNER = Owner()


@dataclass(frozen=True)
class Idempotency:
    key: str
    fingerprint: str


@dataclass(frozen=True)
class Created:
    job_id: str
    replayed: bool
    dispatches: list[Dispatch]


@dataclass(frozen=True)
class Claim:
    job_id: str
    attempt: int  # the token every report of this attempt presents
    try_number: int  # the attempt's number since the job was last sent: max_attempts bounds it
    model: str
    content_type: str
    options: dict[str, Any]
    payload: bytes | None  # None for a child with source_pages: its document is its parent's
    # A child of a split PDF: its pages (1-based, first and last) of its parent's document.
    source_pages: tuple[int, int] | None = None
    # From the child's release into a freed slot to this start, in Redis time (its hand-off latency);
    # None for a job released at its creation.
    waited_seconds: float | None = None
    # From the job's creation to this start, in Redis time (its queue wait); None if the times are missing.
    queue_wait_seconds: float | None = None
    # The W3C traceparent of the request that created the job ('' when tracing was off): its attempts join that trace.
    traceparent: str = ""

    @property
    def source_id(self) -> str:
        """The job whose payload a split's child reads its pages of: its parent (``JobQueries.source_document``)."""
        return keys.root_of(self.job_id)


@dataclass(frozen=True)
class Completion:
    finalized: bool  # the job's parent (or the single job itself) became terminal
    dispatches: list[Dispatch]
    # The next ready job of the model, claimed for the finishing worker when
    # it asked for one (``take_next``): it has no message.
    next_claim: Claim | None = None
    # Held children a fail-fast group cancelled as this one ended, by model: they never started.
    cancelled_unstarted: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Reclaimed:
    requeued: list[Dispatch]
    failed: list[str]
    dispatches: list[Dispatch]
    # Held children fail-fast groups cancelled as the failed ones ended, by model: they never started.
    cancelled_unstarted: dict[str, int] = field(default_factory=dict)
    children_released: int = 0  # into the failed children's slots (``dispatches`` are their wake-ups)


__all__ = ["Claim", "Completion", "Created", "Dispatch", "GroupRules", "Idempotency", "NewJob", "Owner", "Reclaimed"]
