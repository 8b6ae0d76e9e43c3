"""The entry of ``ledger_grant``: its spec and its call (``ledger_grant.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, tag: str, field: str, k: int, cap: int) -> LedgerGrantReply:
    """A grant's first step, in the tenant's ledger: as much of ``k`` as keeps its grants within ``cap``."""
    return ctx.run(LEDGER_GRANT, {"ledger": keys.ledger(tag)}, {"field": field, "k": k, "cap": cap})
