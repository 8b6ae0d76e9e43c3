"""The entry of ``progress``: its spec and its call (``progress.lua`` beside it says what it does)."""

from jobs.transitions.context import StoreContext
from jobs.transitions.heartbeat import AttemptReply
from jobs.transitions.spec import Arg, Transition

PROGRESS = Transition(
    "progress",
    keys=("job",),
    args=(Arg("attempt"), Arg("stage"), Arg("progress")),
    reply=AttemptReply,
)


def call(ctx: StoreContext, job_id: str, attempt: int, stage: str, progress: float) -> AttemptReply:
    """Records the page the attempt reached."""
    return ctx.run(
        PROGRESS, {"job": ctx.keyspace.job(job_id)}, {"attempt": attempt, "stage": stage, "progress": f"{progress:.4f}"}
    )
