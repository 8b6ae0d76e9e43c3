"""The spec of ``record_webhook.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
