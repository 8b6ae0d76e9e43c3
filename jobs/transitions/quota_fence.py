"""The entry of ``quota_fence``: its spec and its call (``quota_fence.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class QuotaFenceReply:
    code: Reply
    quota: int


QUOTA_FENCE = Transition("quota_fence", keys=("quota",), args=(Arg("epoch", "int"),), reply=QuotaFenceReply)


def call(ctx: StoreContext, tag: str, bucket: int, epoch: int) -> QuotaFenceReply:
    """A reconcile's middle step in one bucket: fenced with ``epoch``, its quota read."""
    return ctx.run(QUOTA_FENCE, {"quota": ctx.keyspace.tenant_quota(tag, bucket)}, {"epoch": epoch})
