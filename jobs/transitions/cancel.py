"""The spec of ``cancel.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class CancelReply:
    code: Reply
    status: str  # the job's status now (cancelled, or processing while asked to stop), or when refused
    finalized: bool
    released: Dispatches


CANCEL = Transition(
    "cancel",
    keys=("job", "events", "webhooks", *RELEASE_KEYS, *ROOT_KEYS),
    args=(Arg("job_id"), *RELEASE_ARGS),
    reply=CancelReply,
)
