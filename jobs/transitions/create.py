"""The spec of ``create.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class CreateReply:
    code: Reply
    job_id: str
    released: Dispatches


CREATE = Transition(
    "create",
    keys=("idempotency", "root", "roots_queued", *RELEASE_KEYS),
    args=(
        Arg("idempotency_key"),
        Arg("fingerprint"),
        Arg("idempotency_ttl", "int"),
        Arg("root_id"),
        Arg("kind"),
        Arg("tenant"),
        Arg("key_id"),
        Arg("weight", "int"),
        Arg("traceparent"),
        *RELEASE_ARGS,
        Arg("group", "json"),
        Arg("jobs", "json"),
        Arg("source", "bytes"),
        Arg("payloads", "bytes", rest=True),
    ),
    reply=CreateReply,
)
