"""The spec of ``create.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import Arg, Dispatches, Transition


@dataclass(frozen=True)
class CreateReply:
    code: Reply
    job_id: str
    released: Dispatches


CREATE = Transition(
    "create",
    keys=("idempotency", "root", "parent", "queued", "due", "roots_queued"),
    args=(
        Arg("idempotency_key"),
        Arg("fingerprint"),
        Arg("idempotency_ttl", "int"),
        Arg("root_id"),
        Arg("kind"),
        Arg("tenant"),
        Arg("key_id"),
        Arg("prefix"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("tenant_max_inflight", "int"),
        Arg("group", "json"),
        Arg("jobs", "json"),
        Arg("payloads", "bytes", rest=True),
    ),
    reply=CreateReply,
)
