"""The spec of ``heartbeat.lua``, and the reply of the attempt's other reports (progress, retry)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, job_id: str, attempt: int) -> AttemptReply:
    """Extends the attempt's lease by OCRGW_LEASE_SECONDS from now."""
    return ctx.run(
        HEARTBEAT,
        {"job": ctx.keyspace.job(job_id), "leases": ctx.keyspace.leases(ctx.keyspace.bucket_of(job_id))},
        {"job_id": job_id, "attempt": attempt, "lease_ms": ctx.settings.lease_ms},
    )
