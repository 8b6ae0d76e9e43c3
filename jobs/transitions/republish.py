"""The entry of ``republish``: its spec and its call (``republish.lua`` beside it says what it does)."""

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, job_ids: Sequence[str]) -> list[RepublishReply]:
    """Re-publishes each queued job nobody claimed in time, a round trip per bucket."""
    return ctx.run_all(
        REPUBLISH,
        [
            (
                job_id,
                (
                    {"job": ctx.keyspace.job(job_id), "queued": ctx.keyspace.queued(ctx.keyspace.bucket_of(job_id))},
                    {"job_id": job_id, "requeue_ms": ctx.requeue_ms},
                ),
            )
            for job_id in job_ids
        ],
    )
