"""The entry of ``reclaim``: its spec and its call (``reclaim.lua`` beside it says what it does)."""

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, ModelCounts, Transition


@dataclass(frozen=True)
class ReclaimReply:
    code: Reply  # NOTHING: the lease was renewed or the job is no longer processing
    requeued: bool  # back to queued for another attempt; else failed `lease_expired`
    finalized: bool
    model: str
    priority: str  # the job's lane: which of its model's queues a requeued job goes to
    cancelled_unstarted: ModelCounts  # held children a fail-fast group cancelled as this one failed, by model
    children: int  # children released into a failed child's slot
    released: Dispatches  # children released into a failed child's slot


RECLAIM = Transition(
    "reclaim",
    keys=("job", "events", "leases", "webhooks", *RELEASE_KEYS, *ROOT_KEYS),
    args=(Arg("job_id"), Arg("max_attempts", "int"), Arg("usage_keep_s", "int"), *RELEASE_ARGS),
    reply=ReclaimReply,
)


def call(ctx: StoreContext, job_ids: Sequence[str]) -> list[ReclaimReply]:
    """Reclaims each job whose lease expired, a round trip per bucket."""
    return ctx.run_all(
        RECLAIM,
        [
            (
                job_id,
                (
                    {
                        **ctx.keyspace.of_running_job(job_id),
                        "events": ctx.keyspace.events(job_id),
                        "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
                    },
                    {
                        "job_id": job_id,
                        "max_attempts": ctx.settings.max_attempts,
                        "usage_keep_s": ctx.settings.usage_retention,
                    },
                ),
            )
            for job_id in job_ids
        ],
    )
