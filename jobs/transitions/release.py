"""The spec of ``release.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.transitions.spec import RELEASE_ARGS, RELEASE_KEYS, ROOT_KEYS, Arg, Dispatches, Transition


@dataclass(frozen=True)
class ReleaseReply:
    code: Reply  # NOTHING: not a parent
    finalized: bool
    children: int  # children released (this parent's, and those of the groups served from its tenant's line)
    released: Dispatches


RELEASE = Transition(
    "release",
    keys=("events", "webhooks", *RELEASE_KEYS, *ROOT_KEYS),
    args=(Arg("parent_id"), *RELEASE_ARGS),
    reply=ReleaseReply,
)
