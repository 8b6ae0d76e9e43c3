"""The spec of ``retry.lua`` (its header says what it does)."""

from jobs.transitions.heartbeat import AttemptReply
from jobs.transitions.spec import ROOT_KEYS, Arg, Transition

RETRY = Transition(
    "retry",
    keys=("job", "parent", "leases", "queued", *ROOT_KEYS),
    args=(
        Arg("job_id"),
        Arg("attempt"),
        Arg("prefix"),
        Arg("backoff_ms", "int"),
        Arg("error_code"),
        Arg("error"),
        Arg("usage_keep_s", "int"),
    ),
    reply=AttemptReply,
)
