"""The spec of ``ledger_grant.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class LedgerGrantReply:
    code: Reply
    granted: int
    epoch: int


LEDGER_GRANT = Transition(
    "ledger_grant",
    keys=("ledger",),
    args=(Arg("field"), Arg("k", "int"), Arg("cap", "int")),
    reply=LedgerGrantReply,
)
