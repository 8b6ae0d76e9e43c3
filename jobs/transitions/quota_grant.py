"""The spec of ``quota_grant.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
