"""The spec of ``complete.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, ModelCounts, Transition


@dataclass(frozen=True)
class CompleteReply:
    code: Reply
    finalized: bool  # the parent (or the single job itself) became terminal
    # The child claimed for the finishing worker (a kept slot), as claim answers it; '' when none.
    next_job_id: str
    next_attempt: int
    next_try_number: int
    next_model: str
    next_content_type: str
    next_options: str
    next_payload: bytes | None
    next_waited_us: int
    next_source_pages: str  # a split's child: its pages of its parent's document ('' otherwise; no payload then)
    next_queue_wait_us: int  # from the claimed child's creation to its start
    next_traceparent: str  # the W3C traceparent stored at its creation ('' with none)
    cancelled_unstarted: ModelCounts  # held children a fail-fast group cancelled as this one ended, by model
    released: Dispatches  # the other children released into the freed slot


COMPLETE = Transition(
    "complete",
    keys=("job", "result", "events", "leases", "webhooks", "call", *RELEASE_KEYS, *ROOT_KEYS),
    args=(
        Arg("job_id"),
        Arg("attempt"),
        Arg("status"),
        Arg("result"),
        Arg("error_code"),
        Arg("error"),
        Arg("next_lease_ms", "int"),
        Arg("next_model"),
        Arg("next_interactive"),
        Arg("record_ms", "int"),
        Arg("units", "json"),
        Arg("usage_keep_s", "int"),
        *RELEASE_ARGS,
    ),
    reply=CompleteReply,
)
