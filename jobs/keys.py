"""The only module that spells a Redis key.

A single job and a fan-out group each own a *root* id.  Every key of that root
carries the Redis Cluster hash tag ``{root}`` so that the group's scripts touch
one slot.  A child's id is ``<parent id>-<index>``, so its keys, and the
parent's, are derived from the id alone: no lookup table is needed and a
child can never be created twice.

The Lua scripts build the job keys of released children from ``group prefix``
(``ocrgw:{root}:``) with the same shapes as below; ``tests`` check the two agree.
"""

import hashlib

NAMESPACE = "ocrgw"
CHILD_SEPARATOR = "-"

# Global indexes, each a sorted set of job or parent ids.
LEASES = f"{NAMESPACE}:leases"  # processing jobs, scored by lease deadline (ms)
QUEUED = f"{NAMESPACE}:queued"  # queued jobs, scored by when the sweep must (re)publish them if unclaimed (ms)
ACTIVE_PARENTS = f"{NAMESPACE}:parents:active"  # non-terminal parents, scored by creation (ms)
DUE_PARENTS = f"{NAMESPACE}:parents:due"  # parents a transition left with work for the sweep
SWEEP_LOCK = f"{NAMESPACE}:sweep:lock"
DRAINING = f"{NAMESPACE}:draining"  # set while gateways must refuse new work


def roots(kind: str, status: str) -> str:
    """Single jobs or parents (``kind``) in one status, scored by ``created_at`` (µs): the listing's index.

    Each root is in exactly one of these sets; the transition that changes
    its status moves it, so listing newest-first never scans.
    """
    return f"{NAMESPACE}:roots:{kind}:{status}"


def child_id(parent_id: str, index: int) -> str:
    return f"{parent_id}{CHILD_SEPARATOR}{index}"


def root_of(job_id: str) -> str:
    return job_id.split(CHILD_SEPARATOR, 1)[0]


def group_prefix(job_id: str) -> str:
    return f"{NAMESPACE}:{{{root_of(job_id)}}}:"


def job(job_id: str) -> str:
    return f"{group_prefix(job_id)}job:{job_id}"


def payload(job_id: str) -> str:
    return f"{group_prefix(job_id)}payload:{job_id}"


def result(job_id: str) -> str:
    return f"{group_prefix(job_id)}result:{job_id}"


def call(job_id: str, token: str) -> str:
    """What one call of a transition on a job answered, kept briefly so that
    the same call sent again (same token) can be answered alike."""
    return f"{group_prefix(job_id)}call:{token}"


def is_call_record(key: str) -> bool:
    return key.startswith(f"{NAMESPACE}:{{") and key.partition("}")[2].startswith(":call:")


def children(parent_id: str, status: str) -> str:
    """The children of a parent in one status, scored by index: a page of them, or all failed ones, is one read."""
    return f"{group_prefix(parent_id)}children:{status}"


def events(job_id: str) -> str:
    """The audit stream of a root: a single job's events, or a parent's and all its children's."""
    return f"{group_prefix(job_id)}events"


def idempotency(key: str) -> str:
    # Hashed so that any client-chosen string (up to 255 chars) makes a tidy key.
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"{NAMESPACE}:idem:{digest}"
