"""The entry of ``claim_next``: its spec and its call (``claim_next.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.config import CALL_RECORD_MS
from jobs.contract import Reply
from jobs.ids import call_token
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, model: str, lane: str, bucket: int) -> ClaimNextReply:
    """Takes the next due job of ``model`` in ``bucket``'s ready index for one attempt, if any."""
    return ctx.run(
        CLAIM_NEXT,
        {
            "leases": ctx.keyspace.leases(bucket),
            "queued": ctx.keyspace.queued(bucket),
            "call": ctx.keyspace.pull_call(bucket, call_token()),
        },
        {
            "model": model,
            "lane": lane,
            "lease_ms": ctx.settings.lease_ms,
            "record_ms": CALL_RECORD_MS,
            "requeue_ms": ctx.requeue_ms,
        },
    )
