"""The entry of ``release``: its spec and its call (``release.lua`` beside it says what it does)."""

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.contract import JobKind, Reply
from jobs.transitions.context import StoreContext
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


def call(ctx: StoreContext, parent_ids: Sequence[str]) -> list[ReleaseReply]:
    """Releases each parent's held children into its free slots, a round trip per bucket."""
    return ctx.run_all(
        RELEASE,
        [
            (
                parent_id,
                (
                    {
                        "events": ctx.keyspace.events(parent_id),
                        "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(parent_id)),
                        **ctx.keyspace.roots_by_status(parent_id, JobKind.PARENT),
                    },
                    {"parent_id": parent_id},
                ),
            )
            for parent_id in parent_ids
        ],
    )
