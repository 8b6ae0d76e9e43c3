"""The spec of ``quota_return.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
