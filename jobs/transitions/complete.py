"""The entry of ``complete``: its spec and its call (``complete.lua`` beside it says what it does)."""

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.config import CALL_RECORD_MS
from jobs.contract import Reply
from jobs.ids import call_token
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, ModelCounts, Transition
from jobs.usage import JobUnits


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


def call(
    ctx: StoreContext,
    job_id: str,
    attempt: int,
    status: str,
    result: str,
    error_code: str,
    error: str,
    take_next: str | None,
    interactive_first: Sequence[str],
    units: JobUnits,
) -> CompleteReply:
    """Ends the attempt in ``status``; ``take_next``: the model whose next ready job the caller takes in
    the same step (a kept slot), an interactive one of ``interactive_first`` first."""
    return ctx.run(
        COMPLETE,
        {
            **ctx.keyspace.of_running_job(job_id),
            "result": ctx.keyspace.result(job_id),
            "events": ctx.keyspace.events(job_id),
            "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
            "call": ctx.keyspace.call(job_id, call_token()),
        },
        {
            "job_id": job_id,
            "attempt": attempt,
            "status": status,
            "result": result,
            "error_code": error_code,
            "error": error,
            "next_lease_ms": ctx.settings.lease_ms if take_next else 0,
            "next_model": take_next or "",
            "next_interactive": ",".join(interactive_first),
            "record_ms": CALL_RECORD_MS,
            "units": units.as_arg(),
            "usage_keep_s": ctx.settings.usage_retention,
        },
        job_id,
    )
