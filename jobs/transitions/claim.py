"""The entry of ``claim``: its spec and its call (``claim.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.config import CALL_RECORD_MS
from jobs.contract import Reply
from jobs.ids import call_token
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, job_id: str) -> ClaimReply:
    """Takes a queued job for one attempt (OK), or finds it not claimable (a duplicate message)."""
    return ctx.run(
        CLAIM,
        {
            **ctx.keyspace.of_running_job(job_id),
            "payload": ctx.keyspace.payload(job_id),
            "call": ctx.keyspace.call(job_id, call_token()),
        },
        {
            "job_id": job_id,
            "prefix": ctx.keyspace.group_prefix(job_id),
            "lease_ms": ctx.settings.lease_ms,
            "record_ms": CALL_RECORD_MS,
        },
    )
