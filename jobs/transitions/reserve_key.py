"""The entry of ``reserve_key``: its spec and its call (``reserve_key.lua`` beside it says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
from jobs.records import Idempotency
from jobs.transitions.context import StoreContext
from jobs.transitions.spec import Arg, Transition

#: What a call does with the key: take it before the redrive, settle or free it after.  Each request takes it
#: with a token of its own, so that its free undoes only its own take.
TAKE, SETTLE, FREE = "take", "settle", "free"


@dataclass(frozen=True)
class ReserveKeyReply:
    code: Reply  # take: OK taken now, REPLAYED taken before by the same request, KEY_REUSED by another one
    pending: int  # REPLAYED: 1 while the redrive it was taken for is not known to have run


RESERVE_KEY = Transition(
    "reserve_key",
    keys=("idempotency",),
    args=(Arg("action"), Arg("parent_id"), Arg("fingerprint"), Arg("token"), Arg("idempotency_ttl", "int")),
    reply=ReserveKeyReply,
)


def call(
    ctx: StoreContext, action: str, parent_id: str, idempotency: Idempotency, tenant: str, token: str
) -> ReserveKeyReply:
    """Takes, settles or frees (``action``) the redrive's key of ``tenant``'s, in the key's own bucket."""
    return ctx.run(
        RESERVE_KEY,
        {"idempotency": ctx.keyspace.idempotency(tenant, idempotency.key)},
        {
            "action": action,
            "parent_id": parent_id,
            "fingerprint": idempotency.fingerprint,
            "token": token,
            "idempotency_ttl": ctx.settings.idempotency_ttl,
        },
    )
