"""The spec of ``unlock_sweep.lua``: the sweep lock is taken with ``SET NX PX`` and freed by its holder only."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class UnlockReply:
    code: Reply  # OK: freed; NOTHING: the lock had expired and another tick holds it now


UNLOCK_SWEEP = Transition("unlock_sweep", keys=("lock",), args=(Arg("token"),), reply=UnlockReply)


def call(ctx: StoreContext, lock: str, token: str) -> UnlockReply:
    """Frees ``lock`` (a sweep's, or a tenant's rebalance's) if ``token`` still holds it."""
    return ctx.run(UNLOCK_SWEEP, {"lock": lock}, {"token": token})
