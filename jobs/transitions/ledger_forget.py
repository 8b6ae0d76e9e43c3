"""The entry of ``ledger_forget``: its spec and its call (``ledger_forget.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, tag: str, touched: int) -> LedgerForgetReply:
    """Takes the tenant out of those the sweep rebalances, unless touched since ``touched`` was read."""
    return ctx.run(LEDGER_FORGET, {"registry": keys.LEDGERS}, {"tag": tag, "touched": touched})
