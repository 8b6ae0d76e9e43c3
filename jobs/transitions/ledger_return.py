"""The spec of ``ledger_return.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class LedgerReturnReply:
    code: Reply


LEDGER_RETURN = Transition(
    "ledger_return",
    keys=("ledger",),
    args=(Arg("field"), Arg("k", "int"), Arg("epoch", "int")),
    reply=LedgerReturnReply,
)
