"""The spec of ``heartbeat.lua``, and the reply of the attempt's other reports (progress, retry)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class AttemptReply:
    code: Reply


HEARTBEAT = Transition(
    "heartbeat",
    keys=("job", "leases"),
    args=(Arg("job_id"), Arg("attempt"), Arg("lease_ms", "int")),
    reply=AttemptReply,
)
