"""The spec of ``release_webhook.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
