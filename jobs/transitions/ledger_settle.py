"""The spec of ``ledger_settle.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class LedgerSettleReply:
    code: Reply


LEDGER_SETTLE = Transition(
    "ledger_settle",
    keys=("ledger",),
    args=(Arg("epoch", "int"), Arg("seq", "int"), Arg("grants", "json")),
    reply=LedgerSettleReply,
)
