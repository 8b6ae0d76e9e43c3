"""The spec of ``reserve_webhook.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class ReserveWebhookReply:
    code: Reply  # OK: reserved; NOTHING: the tenant's share is full
    deadline: int  # ms, the claim's deadline (OK only)
    fresh: int  # 1: a new slot; 0: the job held one already (OK only)


RESERVE_WEBHOOK = Transition(
    "reserve_webhook",
    keys=("claims",),
    args=(Arg("job_id"), Arg("claim_ms", "int"), Arg("share", "int")),
    reply=ReserveWebhookReply,
)
