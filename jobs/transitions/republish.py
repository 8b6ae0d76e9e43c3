"""The spec of ``republish.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class RepublishReply:
    code: Reply  # OK: publish a message now; NOTHING: claimed meanwhile, or not due yet
    model: str
    priority: str  # the job's lane


REPUBLISH = Transition(
    "republish",
    keys=("job", "queued"),
    args=(Arg("job_id"), Arg("requeue_ms", "int")),
    reply=RepublishReply,
)
