"""The spec of ``reclaim.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
