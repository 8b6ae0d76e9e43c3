"""The entry of ``claim_webhook``: its spec and its call (``claim_webhook.lua`` beside it says what it does)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
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


def call(
    ctx: StoreContext, job_ids: Sequence[str], claim_ms: int, reserved: Mapping[str, int]
) -> list[ClaimWebhookReply]:
    """Claims each job's webhook for one attempt, a round trip per bucket (a pipeline stays in one slot).

    ``reserved``: each job's slot among its tenant's share (more than one bucket, ``reserve_webhook``);
    with one bucket the bucket counts the tenant's claims against its cap itself.
    """
    spread = ctx.keyspace.bucket_count > 1
    return ctx.run_all(
        CLAIM_WEBHOOK,
        [
            (
                job_id,
                (
                    {
                        "job": ctx.keyspace.job(job_id),
                        "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
                        "tenant_webhooks": ctx.keyspace.tenant_webhooks(
                            keys.tag_of(job_id), ctx.keyspace.bucket_of(job_id)
                        ),
                    },
                    {
                        "job_id": job_id,
                        "claim_ms": claim_ms,
                        "tenant_cap": 0 if spread else ctx.settings.webhook_tenant_concurrency,
                        # Held back by its tenant's cap, a webhook waits for the sweep's next tick.
                        "defer_ms": int(ctx.settings.sweep_interval * 1000),
                        "reserved": reserved[job_id],
                    },
                ),
            )
            for job_id in job_ids
        ],
    )
