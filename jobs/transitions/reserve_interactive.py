"""The entry of ``reserve_interactive``: its spec and its call (``reserve_interactive.lua`` says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class ReserveInteractiveReply:
    code: Reply  # OK: reserved; NOTHING: the allowance is full, nothing written
    in_use: int  # the places held (its own included when OK)
    holders: str  # the other roots holding places, comma-separated
    now_ms: int  # the Redis time of the call


RESERVE_INTERACTIVE = Transition(
    "reserve_interactive",
    keys=("reservations",),
    args=(Arg("root_id"), Arg("places", "int"), Arg("limit", "int")),
    reply=ReserveInteractiveReply,
)


def call(ctx: StoreContext, root_id: str, places: int, limit: int) -> ReserveInteractiveReply:
    """Takes ``places`` for the root in its tenant's interactive allowance of ``limit``, if they fit."""
    return ctx.run(
        RESERVE_INTERACTIVE,
        {"reservations": keys.tenant_interactive(keys.tag_of(root_id))},
        {"root_id": root_id, "places": places, "limit": limit},
    )
