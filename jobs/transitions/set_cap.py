"""The entry of ``set_cap``: its spec and its call (``set_cap.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import tenant_quota
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class SetCapReply:
    code: Reply
    status: str  # the parent's status, when refused for being terminal
    released: Dispatches


SET_CAP = Transition(
    "set_cap",
    keys=RELEASE_KEYS,
    args=(Arg("parent_id"), Arg("max_parallel", "int"), *RELEASE_ARGS),
    reply=SetCapReply,
)


def call(ctx: StoreContext, parent_id: str, max_parallel: int) -> SetCapReply:
    """Sets the group's cap, with room in its tenant's quota first for what the new cap could start."""
    could_start = max_parallel if max_parallel > 0 else ctx.settings.tenant_max_inflight
    with tenant_quota.room_for(ctx, parent_id, could_start):
        return ctx.run(SET_CAP, {}, {"parent_id": parent_id, "max_parallel": max_parallel}, parent_id)
