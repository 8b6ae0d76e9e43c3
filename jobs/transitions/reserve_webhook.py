"""The entry of ``reserve_webhook``: its spec and its call (``reserve_webhook.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, job_id: str, claim_ms: int) -> ReserveWebhookReply:
    """A webhook claim's first step with more than one bucket: a slot among its tenant's share, in the
    tenant's own slot."""
    return ctx.run(
        RESERVE_WEBHOOK,
        {"claims": keys.tenant_webhook_claims(keys.tag_of(job_id))},
        {"job_id": job_id, "claim_ms": claim_ms, "share": ctx.settings.webhook_tenant_concurrency},
    )
