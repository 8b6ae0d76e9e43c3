"""The spec of ``claim_next.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Dispatches, Transition


@dataclass(frozen=True)
class ClaimNextReply:
    code: Reply
    job_id: str  # the job taken ('' when none was due)
    attempt: int
    try_number: int  # the attempt's number since the job was last sent (max_attempts bounds it)
    model: str
    content_type: str
    options: str  # JSON
    payload: bytes | None  # None for a split's child too: it reads its parent's document
    waited_us: int  # from the child's release into a freed slot to its start; -1: released at its creation
    source_pages: str  # a split's child: "first-last", its pages of its parent's document; '' otherwise
    queue_wait_us: int  # from the job's creation to this start (its created_at to its started_at)
    traceparent: str  # the W3C traceparent stored at the job's creation ('' with none)
    released: Dispatches  # the wake-ups the model's ready jobs left need


CLAIM_NEXT = Transition(
    "claim_next",
    keys=("leases", "queued", "call"),
    args=(
        Arg("model"),
        Arg("lane"),
        Arg("lease_ms", "int"),
        Arg("record_ms", "int"),
        Arg("requeue_ms", "int"),
    ),
    reply=ClaimNextReply,
)
