"""The entry of ``cancel``: its spec and its call (``cancel.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.contract import JobKind, Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, ModelCounts, Transition


@dataclass(frozen=True)
class CancelReply:
    code: Reply
    status: str  # the job's status now (cancelled, or processing while asked to stop), or when refused
    finalized: bool
    cancelled_unstarted: ModelCounts  # jobs it ended before they started, by model (a group's held and queued)
    released: Dispatches


CANCEL = Transition(
    "cancel",
    keys=("job", "events", "webhooks", *RELEASE_KEYS, *ROOT_KEYS),
    args=(Arg("job_id"), *RELEASE_ARGS),
    reply=CancelReply,
)


def call(ctx: StoreContext, job_id: str, kind: JobKind) -> CancelReply:
    """Cancels the job of ``kind`` (a child's cancel may finish its parent; a parent's or single job's, itself)."""
    return ctx.run(
        CANCEL,
        {
            "job": ctx.keyspace.job(job_id),
            "events": ctx.keyspace.events(job_id),
            "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
            **ctx.keyspace.roots_by_status(job_id, JobKind.SINGLE if kind == JobKind.SINGLE else JobKind.PARENT),
        },
        {"job_id": job_id},
        job_id,
    )
