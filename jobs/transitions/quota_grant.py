"""The entry of ``quota_grant``: its spec and its call (``quota_grant.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class QuotaGrantReply:
    code: Reply
    quota: int


QUOTA_GRANT = Transition(
    "quota_grant",
    keys=("quota", "waiting", "due"),
    args=(Arg("k", "int"), Arg("epoch", "int")),
    reply=QuotaGrantReply,
)


def call(ctx: StoreContext, tag: str, bucket: int, k: int, epoch: int) -> QuotaGrantReply:
    """A grant's second step, in the bucket: refused when fenced with an epoch later than ``epoch``."""
    return ctx.run(
        QUOTA_GRANT,
        {
            "quota": ctx.keyspace.tenant_quota(tag, bucket),
            "waiting": ctx.keyspace.tenant_waiting(tag, bucket),
            "due": ctx.keyspace.due_parents(bucket),
        },
        {"k": k, "epoch": epoch},
    )
