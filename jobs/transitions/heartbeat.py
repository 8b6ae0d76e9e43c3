"""The specs of ``heartbeat.lua`` and ``progress.lua``: reports of the attempt holding a job."""

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

PROGRESS = Transition(
    "progress",
    keys=("job",),
    args=(Arg("attempt"), Arg("stage"), Arg("progress")),
    reply=AttemptReply,
)
