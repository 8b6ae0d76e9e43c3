"""The entry of ``ledger_return``: its spec and its call (``ledger_return.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, tag: str, field: str, k: int, epoch: int) -> LedgerReturnReply:
    """A return's second step, in the tenant's ledger: taken only while its epoch is still ``epoch``."""
    return ctx.run(LEDGER_RETURN, {"ledger": keys.ledger(tag)}, {"field": field, "k": k, "epoch": epoch})
