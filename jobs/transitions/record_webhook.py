"""The entry of ``record_webhook``: its spec and its call (``record_webhook.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import keys
from jobs.contract import Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class RecordWebhookReply:
    code: Reply  # OK, or NO_JOB when the job is gone
    outcome: str  # a WebhookOutcome
    retry_at: int  # ms, when the next attempt is due (retrying only)
    lag_us: int  # from the job's finished_at to this record (delivered only; -1 otherwise)


RECORD_WEBHOOK = Transition(
    "record_webhook",
    keys=("job", "webhooks", "events", "tenant_webhooks"),
    args=(
        Arg("job_id"),
        Arg("attempt", "int"),
        Arg("delivered", "int"),
        Arg("response_status"),
        Arg("error_code"),
        Arg("error"),
        Arg("retry_ms", "int"),
        Arg("give_up_ms", "int"),
    ),
    reply=RecordWebhookReply,
)


def call(
    ctx: StoreContext,
    job_id: str,
    attempt: int,
    delivered: bool,
    response_status: int | None,
    error_code: str,
    error: str,
    retry_ms: int,
) -> RecordWebhookReply:
    """Records a delivery attempt's answer as an event and schedules what follows."""
    return ctx.run(
        RECORD_WEBHOOK,
        {
            "job": ctx.keyspace.job(job_id),
            "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(job_id)),
            "events": ctx.keyspace.events(job_id),
            "tenant_webhooks": ctx.keyspace.tenant_webhooks(keys.tag_of(job_id), ctx.keyspace.bucket_of(job_id)),
        },
        {
            "job_id": job_id,
            "attempt": attempt,
            "delivered": int(delivered),
            "response_status": "" if response_status is None else str(response_status),
            "error_code": error_code,
            "error": error,
            "retry_ms": retry_ms,
            "give_up_ms": int(ctx.settings.webhook_give_up_after * 1000),
        },
    )
