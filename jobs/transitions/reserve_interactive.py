"""The spec of ``reserve_interactive.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
