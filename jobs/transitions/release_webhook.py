"""The entry of ``release_webhook``: its spec and its call (``release_webhook.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class ReleaseWebhookReply:
    code: Reply  # OK: released; NOTHING: it held none


RELEASE_WEBHOOK = Transition(
    "release_webhook",
    keys=("claims",),
    args=(Arg("job_id"), Arg("deadline", "int")),
    reply=ReleaseWebhookReply,
)


def call(ctx: StoreContext, job_id: str, deadline: int = 0) -> ReleaseWebhookReply:
    """Gives back the job's slot among its tenant's share: the reservation until ``deadline``, or any (0)."""
    return ctx.run(
        RELEASE_WEBHOOK,
        {"claims": keys.tenant_webhook_claims(keys.tag_of(job_id))},
        {"job_id": job_id, "deadline": deadline},
    )
