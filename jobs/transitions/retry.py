"""The entry of ``retry``: its spec and its call (``retry.lua`` beside it says what it does)."""

from jobs.transitions.context import StoreContext
from jobs.transitions.heartbeat import AttemptReply
from jobs.transitions.spec import ROOT_KEYS, Arg, Transition

RETRY = Transition(
    "retry",
    keys=("job", "parent", "leases", "queued", *ROOT_KEYS),
    args=(
        Arg("job_id"),
        Arg("attempt"),
        Arg("prefix"),
        Arg("backoff_ms", "int"),
        Arg("error_code"),
        Arg("error"),
        Arg("usage_keep_s", "int"),
    ),
    reply=AttemptReply,
)


def call(
    ctx: StoreContext, job_id: str, attempt: int, backoff_seconds: float, error_code: str, error: str
) -> AttemptReply:
    """Gives the job back after a transient error, for the sweep to re-publish after the backoff."""
    return ctx.run(
        RETRY,
        ctx.keyspace.of_running_job(job_id),
        {
            "job_id": job_id,
            "attempt": attempt,
            "prefix": ctx.keyspace.group_prefix(job_id),
            "backoff_ms": int(backoff_seconds * 1000),
            "error_code": error_code,
            "error": error,
            "usage_keep_s": ctx.settings.usage_retention,
        },
    )
