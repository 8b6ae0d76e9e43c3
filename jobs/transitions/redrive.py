"""The spec of ``redrive.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class RedriveReply:
    code: Reply
    status: str  # the parent's status, when refused for not being terminal
    redriven: int
    released: Dispatches


REDRIVE = Transition(
    "redrive",
    keys=("idempotency", *RELEASE_KEYS, *ROOT_KEYS),
    args=(
        Arg("parent_id"),
        Arg("include_cancelled", "int"),
        Arg("idempotency_key"),
        Arg("fingerprint"),
        Arg("idempotency_ttl", "int"),
        *RELEASE_ARGS,
    ),
    reply=RedriveReply,
)
