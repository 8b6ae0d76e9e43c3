"""A client's controls over jobs it submitted: cancel, change a group's cap, redrive its failures.

Each is one transition (the entries ``cancel``, ``set_cap`` and ``redrive``
of jobs/transitions, called with the store's context); like the store's
other writes they return the jobs they queued, for the caller to publish.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from jobs import interactive_share
from jobs.connections import text_of
from jobs.contract import TERMINAL, Field, JobKind, JobStatus, Priority, Reply, count_field
from jobs.errors import (
    GroupNotFinished,
    IdempotencyKeyReused,
    InteractiveLaneFull,
    JobFinished,
    JobNotFound,
    NotAGroup,
    NothingToRetry,
)
from jobs.ids import DEFAULT_TENANT
from jobs.records import Dispatch, GroupRules, Idempotency
from jobs.store import JobStore
from jobs.transitions import cancel as cancel_job
from jobs.transitions import redrive as redrive_group
from jobs.transitions import reserve_key
from jobs.transitions import set_cap as set_group_cap
from jobs.transitions.reserve_key import FREE, SETTLE, TAKE, ReserveKeyReply

_TERMINAL = {s.value for s in TERMINAL}


@dataclass(frozen=True)
class Cancelled:
    status: str  # cancelled, or processing while its running attempt is asked to stop
    dispatches: list[Dispatch]  # children a cancelled child's slot went to
    # The jobs it ended before they started (held, queued), by model: no worker sees them end.
    cancelled_unstarted: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Redriven:
    count: int  # children sent again (0 for a replay)
    replayed: bool
    dispatches: list[Dispatch]


def cancel(store: JobStore, job_id: str) -> Cancelled:
    kind = store.redis.hget(store.keyspace.job(job_id), "kind")
    if kind is None:
        raise JobNotFound(f"no job {job_id}")
    reply = cancel_job.call(store.context, job_id, JobKind(text_of(kind)))
    if reply.code == Reply.NO_JOB:
        raise JobNotFound(f"no job {job_id}")
    if reply.code == Reply.WRONG_STATUS:
        raise JobFinished(f"job {job_id} is already {reply.status}")
    return Cancelled(reply.status, reply.released, reply.cancelled_unstarted)


def set_cap(store: JobStore, parent_id: str, max_parallel: int, interactive_limit: int | None = None) -> list[Dispatch]:
    """Changes a group's cap.  An interactive group whose new cap lets it run more at once takes the places
    for them first, in its tenant's allowance of ``interactive_limit`` (``InteractiveLaneFull`` when they do
    not fit: nothing changes); a lower cap keeps the places it has until the group ends."""
    if interactive_limit is not None:
        group = store.redis.hmget(
            store.keyspace.job(parent_id), Field.PRIORITY.value, Field.TOTAL.value, Field.MAX_PARALLEL.value
        )
        if text_of(group[0]) == Priority.INTERACTIVE.value and group[1] is not None:
            total, before = int(group[1]), GroupRules(int(group[2] or 0))
            places = interactive_share.places_of(total, GroupRules(max_parallel))
            if places > interactive_share.places_of(total, before):
                store.interactive_share.reserve(parent_id, places, interactive_limit)
    reply = set_group_cap.call(store.context, parent_id, max_parallel)
    if reply.code == Reply.NO_JOB:
        raise NotAGroup(f"job {parent_id} is not a fan-out group")
    if reply.code == Reply.WRONG_STATUS:
        raise JobFinished(f"group {parent_id} is already {reply.status}")
    return reply.released


def redrive(
    store: JobStore,
    parent_id: str,
    include_cancelled: bool = False,
    idempotency: Idempotency | None = None,
    tenant: str = DEFAULT_TENANT,
    interactive_limit: int | None = None,
) -> Redriven:
    """Sends a finished group's failed children again; ``idempotency`` is a key of ``tenant``'s.

    An interactive group ended has no places left in its tenant's allowance
    (they are given back once it ends): it takes the places of the children
    it sends again first, within ``interactive_limit`` (``InteractiveLaneFull``
    when they do not fit: nothing is sent, and the key is freed).

    With a key, three steps in two slots, so that one key holds across
    buckets: the key is taken in its own bucket (``reserve_key``: refused if
    another request took it), the redrive runs in the group's (it marks
    itself done there, atomically), then the key is settled (or freed, if
    the redrive was refused).  A crash between the steps errs on the safe
    side: a key taken and not settled refuses every other request, and the
    same request sent again finishes the job, the group's mark telling a
    redrive that ran from one that did not; so no key ever redrives twice.
    """
    token = secrets.token_hex(8)
    if idempotency is not None:
        taken = _reserve_key(store, TAKE, parent_id, idempotency, tenant, token)
        if taken.code == Reply.KEY_REUSED:
            raise IdempotencyKeyReused("this Idempotency-Key was used for a different request")
        if taken.code == Reply.REPLAYED and not taken.pending:
            return Redriven(0, True, [])
    if interactive_limit is not None:
        try:
            _reserve_interactive_redrive(store, parent_id, include_cancelled, interactive_limit)
        except InteractiveLaneFull:
            if idempotency is not None:
                _reserve_key(store, FREE, parent_id, idempotency, tenant, token)
            raise
    reply = redrive_group.call(store.context, parent_id, include_cancelled, idempotency, tenant)
    if idempotency is not None:
        ran = reply.code in (Reply.OK, Reply.REPLAYED)
        _reserve_key(store, SETTLE if ran else FREE, parent_id, idempotency, tenant, token)
    if reply.code == Reply.REPLAYED:
        return Redriven(0, True, [])
    if reply.code == Reply.KEY_REUSED:
        raise IdempotencyKeyReused("this Idempotency-Key was used for a different request")
    if reply.code == Reply.NO_JOB:
        raise NotAGroup(f"job {parent_id} is not a fan-out group")
    if reply.code == Reply.WRONG_STATUS:
        raise GroupNotFinished(f"group {parent_id} is still {reply.status}; retry it once it is terminal")
    if reply.code == Reply.NOTHING:
        raise NothingToRetry(f"group {parent_id} has no child to retry")
    return Redriven(reply.redriven, False, reply.released)


def _reserve_interactive_redrive(store: JobStore, parent_id: str, include_cancelled: bool, limit: int) -> None:
    """The places of the children an interactive group's redrive sends again.  Only for a group ended: a
    running one keeps the places it has (the redrive refuses it), and one with nothing to send needs none."""
    group = store.redis.hmget(
        store.keyspace.job(parent_id),
        Field.PRIORITY.value,
        Field.STATUS.value,
        Field.MAX_PARALLEL.value,
        count_field(JobStatus.FAILED),
        count_field(JobStatus.CANCELLED),
    )
    if text_of(group[0]) != Priority.INTERACTIVE.value or text_of(group[1]) not in _TERMINAL:
        return
    again = int(group[3] or 0) + (int(group[4] or 0) if include_cancelled else 0)
    if again > 0:
        places = interactive_share.places_of(again, GroupRules(int(group[2] or 0)))
        store.interactive_share.reserve(parent_id, places, limit)


def _reserve_key(
    store: JobStore, action: str, parent_id: str, idempotency: Idempotency, tenant: str, token: str
) -> ReserveKeyReply:
    return reserve_key.call(store.context, action, parent_id, idempotency, tenant, token)
