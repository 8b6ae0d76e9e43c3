"""The specs of a webhook's transitions: ``claim_webhook.lua`` and ``record_webhook.lua``."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Transition


@dataclass(frozen=True)
class ClaimWebhookReply:
    code: Reply  # OK: deliver it now; NOTHING: not due any more, or no longer wanted
    attempt: int  # the number of the attempt this claim is for


CLAIM_WEBHOOK = Transition(
    "claim_webhook",
    keys=("job", "webhooks"),
    args=(Arg("job_id"), Arg("claim_ms", "int")),
    reply=ClaimWebhookReply,
)


@dataclass(frozen=True)
class RecordWebhookReply:
    code: Reply  # OK, or NO_JOB when the job is gone
    outcome: str  # a WebhookOutcome
    retry_at: int  # ms, when the next attempt is due (retrying only)


RECORD_WEBHOOK = Transition(
    "record_webhook",
    keys=("job", "webhooks", "events"),
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
