"""The spec of ``reserve_key.lua`` (its header says what it does)."""

from dataclasses import dataclass

from jobs.contract import Reply
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
