"""The spec of ``expire.lua``: an ended root and every key of its group deleted once its retention is over."""

from dataclasses import dataclass

from jobs.contract import Reply
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
