"""The spec of ``claim.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import ROOT_KEYS, Arg, Transition


@dataclass(frozen=True)
class ClaimReply:
    code: Reply
    attempt: int
    try_number: int  # the attempt's number since the job was last sent (max_attempts bounds it)
    model: str
    content_type: str
    options: str  # JSON
    payload: bytes | None  # None for a split's child too: it reads its parent's document
    status: str  # the job's status when it was not claimable
    waited_us: int  # from the child's release into a freed slot to its start; -1: released at its creation
    source_pages: str  # a split's child: "first-last", its pages of its parent's document; '' otherwise
    queue_wait_us: int  # from the job's creation to this start (its created_at to its started_at)
    traceparent: str  # the W3C traceparent stored at the job's creation ('' with none)


CLAIM = Transition(
    "claim",
    keys=("job", "payload", "parent", "leases", "queued", "call", *ROOT_KEYS),
    args=(Arg("job_id"), Arg("prefix"), Arg("lease_ms", "int"), Arg("record_ms", "int")),
    reply=ClaimReply,
)
