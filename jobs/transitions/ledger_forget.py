"""The spec of ``ledger_forget.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class LedgerForgetReply:
    code: Reply


LEDGER_FORGET = Transition(
    "ledger_forget",
    keys=("registry",),
    args=(Arg("tag"), Arg("touched", "int")),
    reply=LedgerForgetReply,
)
