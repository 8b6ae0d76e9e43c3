"""The entry of ``redrive``: its spec and its call (``redrive.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs import tenant_quota
from jobs.contract import JobKind, Reply
from jobs.records import Idempotency
from jobs.transitions.context import StoreContext
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


def call(
    ctx: StoreContext, parent_id: str, include_cancelled: bool, idempotency: Idempotency | None, tenant: str
) -> RedriveReply:
    """Sends the group's failed children again; ``idempotency``: a key of ``tenant``'s, marked done in the
    group's own bucket (one slot for the whole redrive)."""
    # How many it sends is known only to the script: room for the cap's worth (what is unused goes back).
    with tenant_quota.room_for(ctx, parent_id, ctx.settings.tenant_max_inflight):
        return ctx.run(
            REDRIVE,
            {
                "idempotency": (
                    ctx.keyspace.redrive_mark(tenant, idempotency.key, parent_id)
                    if idempotency
                    else ctx.keyspace.job(parent_id)
                ),
                **ctx.keyspace.roots_by_status(parent_id, JobKind.PARENT),
            },
            {
                "parent_id": parent_id,
                "include_cancelled": int(include_cancelled),
                "idempotency_key": idempotency.key if idempotency else "",
                "fingerprint": idempotency.fingerprint if idempotency else "",
                "idempotency_ttl": ctx.settings.idempotency_ttl,
            },
            parent_id,
        )
