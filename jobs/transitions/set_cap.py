"""The spec of ``set_cap.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
