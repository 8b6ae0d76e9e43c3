"""The spec of ``progress.lua`` (its header says what it does)."""

from jobs.transitions.heartbeat import AttemptReply
from jobs.transitions.spec import Arg, Transition

PROGRESS = Transition(
    "progress",
    keys=("job",),
    args=(Arg("attempt"), Arg("stage"), Arg("progress")),
    reply=AttemptReply,
)
