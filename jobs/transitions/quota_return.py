"""The entry of ``quota_return``: its spec and its call (``quota_return.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class QuotaReturnReply:
    code: Reply
    returned: int


QUOTA_RETURN = Transition(
    "quota_return",
    keys=("quota", "in_flight"),
    args=(Arg("k", "int"), Arg("ceiling", "int")),
    reply=QuotaReturnReply,
)


def call(ctx: StoreContext, tag: str, bucket: int, k: int, ceiling: int | None) -> QuotaReturnReply:
    """A return's first step, in the bucket: what its in-flight children leave unused, at most ``k``."""
    return ctx.run(
        QUOTA_RETURN,
        {"quota": ctx.keyspace.tenant_quota(tag, bucket), "in_flight": ctx.keyspace.tenant_in_flight(tag, bucket)},
        {"k": k, "ceiling": -1 if ceiling is None else ceiling},
    )
