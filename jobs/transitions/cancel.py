"""The spec of ``cancel.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
