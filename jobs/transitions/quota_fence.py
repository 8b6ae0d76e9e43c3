"""The spec of ``quota_fence.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class QuotaFenceReply:
    code: Reply
    quota: int


QUOTA_FENCE = Transition("quota_fence", keys=("quota",), args=(Arg("epoch", "int"),), reply=QuotaFenceReply)
