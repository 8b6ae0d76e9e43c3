"""The spec of ``ledger_open.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Transition


@dataclass(frozen=True)
class LedgerOpenReply:
    code: Reply
    epoch: int
    seq: int


LEDGER_OPEN = Transition("ledger_open", keys=("ledger",), args=(), reply=LedgerOpenReply)
