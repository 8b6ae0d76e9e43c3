"""The specs of a client's controls: ``cancel.lua``, ``set_cap.lua``, ``redrive.lua``."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import ROOT_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class CancelReply:
    code: Reply
    status: str  # the job's status now (cancelled, or processing while asked to stop), or when refused
    finalized: bool
    released: Dispatches


CANCEL = Transition(
    "cancel",
    keys=("job", "parent", "events", "queued", "due", "webhooks", *ROOT_KEYS),
    args=(
        Arg("job_id"),
        Arg("prefix"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("tenant_max_inflight", "int"),
    ),
    reply=CancelReply,
)


@dataclass(frozen=True)
class SetCapReply:
    code: Reply
    status: str  # the parent's status, when refused for being terminal
    released: Dispatches


SET_CAP = Transition(
    "set_cap",
    keys=("parent", "queued", "due"),
    args=(
        Arg("parent_id"),
        Arg("prefix"),
        Arg("max_parallel", "int"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("tenant_max_inflight", "int"),
    ),
    reply=SetCapReply,
)


@dataclass(frozen=True)
class RedriveReply:
    code: Reply
    status: str  # the parent's status, when refused for not being terminal
    redriven: int
    released: Dispatches


REDRIVE = Transition(
    "redrive",
    keys=("parent", "idempotency", "queued", "due", *ROOT_KEYS),
    args=(
        Arg("parent_id"),
        Arg("prefix"),
        Arg("include_cancelled", "int"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("idempotency_key"),
        Arg("fingerprint"),
        Arg("idempotency_ttl", "int"),
        Arg("tenant_max_inflight", "int"),
    ),
    reply=RedriveReply,
)
