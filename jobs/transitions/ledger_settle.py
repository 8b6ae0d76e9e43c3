"""The entry of ``ledger_settle``: its spec and its call (``ledger_settle.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, tag: str, epoch: int, seq: int, grants: dict[str, int]) -> LedgerSettleReply:
    """A reconcile's last step: the ledger's grants set to what the buckets' fences read."""
    return ctx.run(LEDGER_SETTLE, {"ledger": keys.ledger(tag)}, {"epoch": epoch, "seq": seq, "grants": grants})
