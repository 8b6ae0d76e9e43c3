"""The spec of ``claim_webhook.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class ClaimWebhookReply:
    code: Reply  # OK: deliver it now; NOTHING: not due any more, held back by its tenant's cap, or no longer wanted
    attempt: int  # the number of the attempt this claim is for


CLAIM_WEBHOOK = Transition(
    "claim_webhook",
    keys=("job", "webhooks", "tenant_webhooks"),
    args=(
        Arg("job_id"),
        Arg("claim_ms", "int"),
        Arg("tenant_cap", "int"),
        Arg("defer_ms", "int"),
        Arg("reserved", "int"),
    ),
    reply=ClaimWebhookReply,
)
