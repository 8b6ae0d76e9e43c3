"""The spec of ``expire.lua``: an ended root and every key of its group deleted once its retention is over."""

from collections.abc import Sequence
from dataclasses import dataclass

from jobs.contract import JobKind, Reply
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import ROOT_KEYS, Arg, Transition


@dataclass(frozen=True)
class ExpireReply:
    code: Reply  # OK: deleted; NOTHING: not due (it ended again later), running again, or gone
    jobs: int  # the jobs deleted: the root and its children


EXPIRE = Transition(
    "expire",
    keys=("root", "events", "due", "webhooks", *ROOT_KEYS),
    args=(Arg("root_id"), Arg("prefix"), Arg("ttl_ms", "int"), Arg("owed_ms", "int")),
    reply=ExpireReply,
)


def call(ctx: StoreContext, roots: Sequence[tuple[str, JobKind]]) -> list[ExpireReply]:
    """Deletes each root (with its kind, which names its listing sets), a round trip per bucket."""
    return ctx.run_all(
        EXPIRE,
        [
            (
                root,
                (
                    {
                        "root": ctx.keyspace.job(root),
                        "events": ctx.keyspace.events(root),
                        "due": ctx.keyspace.due_parents(ctx.keyspace.bucket_of(root)),
                        "webhooks": ctx.keyspace.webhooks(ctx.keyspace.bucket_of(root)),
                        **ctx.keyspace.roots_by_status(root, kind),
                    },
                    {
                        "root_id": root,
                        "prefix": ctx.keyspace.group_prefix(root),
                        "ttl_ms": ctx.settings.result_ttl_ms,
                        "owed_ms": ctx.settings.webhook_owed_ms,
                    },
                ),
            )
            for root, kind in roots
        ],
    )
