"""The entry of ``ledger_open``: its spec and its call (``ledger_open.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Transition


@dataclass(frozen=True)
class LedgerOpenReply:
    code: Reply
    epoch: int
    seq: int


LEDGER_OPEN = Transition("ledger_open", keys=("ledger",), args=(), reply=LedgerOpenReply)


def call(ctx: StoreContext, tag: str) -> LedgerOpenReply:
    """A reconcile's first step: a new epoch of the tenant's ledger."""
    return ctx.run(LEDGER_OPEN, {"ledger": keys.ledger(tag)}, {})
