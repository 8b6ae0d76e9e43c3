"""The specs of the sweep's transitions: ``reclaim.lua``, ``republish.lua``, ``release.lua``."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import ROOT_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class ReclaimReply:
    code: Reply  # NOTHING: the lease was renewed or the job is no longer processing
    requeued: bool  # back to queued for another attempt; else failed `lease_expired`
    finalized: bool
    model: str
    released: Dispatches  # children released into a failed child's slot


RECLAIM = Transition(
    "reclaim",
    keys=("job", "events", "parent", "leases", "queued", "due", "webhooks", *ROOT_KEYS),
    args=(
        Arg("job_id"),
        Arg("prefix"),
        Arg("max_attempts", "int"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("tenant_max_inflight", "int"),
    ),
    reply=ReclaimReply,
)


@dataclass(frozen=True)
class RepublishReply:
    code: Reply  # OK: publish a message now; NOTHING: claimed meanwhile, or not due yet
    model: str


REPUBLISH = Transition(
    "republish",
    keys=("job", "queued"),
    args=(Arg("job_id"), Arg("requeue_ms", "int")),
    reply=RepublishReply,
)


@dataclass(frozen=True)
class ReleaseReply:
    code: Reply  # NOTHING: not a parent
    finalized: bool
    released: Dispatches


RELEASE = Transition(
    "release",
    keys=("parent", "events", "queued", "due", "webhooks", *ROOT_KEYS),
    args=(
        Arg("parent_id"),
        Arg("prefix"),
        Arg("release_limit", "int"),
        Arg("requeue_ms", "int"),
        Arg("tenant_max_inflight", "int"),
    ),
    reply=ReleaseReply,
)
