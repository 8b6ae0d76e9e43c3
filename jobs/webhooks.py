"""The store's side of webhooks: which are due, claiming one for an attempt, recording its answer.

A transition that makes a job with a ``callback_url`` terminal puts the
job on its bucket's webhooks index (``keys.webhooks``), due at once.  The sweep
claims the due ones (``claim_due``: each claim moves its due time past the
claim window, so two sweeps never send one at once) and hands each claim
to a deliverer, which POSTs the job's view and records the answer
(``record``): a 2xx ends it, anything else makes it due again after a
backoff that doubles up to a cap, until the retry window after the job
became terminal is over.  Every attempt is an event (operation
``webhook``) in the job's events stream.  Delivery is at least once: a
deliverer that dies after sending but before recording sends again.

A tenant holds at most ``OCRGW_WEBHOOK_TENANT_CONCURRENCY`` claims at once,
counted in Redis, so the bound holds across every deliverer process and
host, and across buckets.  With one bucket the bucket counts them
(``keys.tenant_webhooks``, in ``claim_webhook``).  With more, a claim is two
steps: a reservation in the tenant's own slot (``reserve_webhook`` on
``keys.tenant_webhook_claims``, scored by the claim's deadline), then the
claim in the job's bucket with that same deadline; a claim that does not
take gives its reservation back (``release_webhook``), and so does the
current attempt's record.  A crash between the steps leaves a reservation
that runs out at its deadline, exactly when the claim would have.  The
rest of a tenant's due webhooks stay unclaimed,
unattempted, and due again a sweep later, behind those due meanwhile.  So
one tenant's slow receivers hold at most that many of the deliverers'
threads.  A sweep reads on past the webhooks held back, up to
``READS_PER_SWEEP`` batches of ``OCRGW_SWEEP_BATCH``: a tenant's backlog
delays another tenant's webhooks that fell due behind it only by what it
has beyond that many, one sweep for each further such number, and only
once, since each webhook held back is due again behind those due meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from jobs import keys
from jobs.config import Settings
from jobs.connections import text_of
from jobs.contract import Field, Reply, WebhookOutcome
from jobs.errors import JobNotFound
from jobs.ids import DEFAULT_TENANT
from jobs.store import JobStore
from jobs.transitions import claim_webhook, record_webhook, release_webhook, reserve_webhook


@dataclass(frozen=True)
class WebhookClaim:
    job_id: str
    attempt: int


@dataclass(frozen=True)
class Answer:
    """What one attempt got: the receiver's HTTP status, or why there was none (or why it failed)."""

    status: int | None = None
    error_code: str = ""  # a stable code, '' for a 2xx
    # What the job's events record: what was refused or failed, never which address a name resolved to
    # (a client could map internal names with it).
    error: str = ""
    detail: str = ""  # the same with the host and addresses, for the deliverer's log only

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


@dataclass(frozen=True)
class Recorded:
    outcome: WebhookOutcome
    retry_at_ms: int | None  # when the next attempt is due, if retrying
    # From the job's finished_at to the delivery's record (Redis time), if delivered: its delivery lag.
    lag_seconds: float | None = None


def backoff_seconds(attempt: int, first: float, cap: float) -> float:
    """The wait after failed attempt ``attempt`` (1, 2, ...): ``first``, doubling, at most ``cap``."""
    if attempt < 1:
        raise ValueError("attempts count from 1")
    # min() before the power would overflow: 2 ** 1100 is past a float.
    return min(cap, first * 2 ** min(attempt - 1, 64))


def claim_window_seconds(settings: Settings) -> float:
    """How long a claim holds: the attempt's own timeout and a margin for its wait on the queue."""
    return settings.webhook_timeout + settings.webhook_claim_margin


def due(store: JobStore, now_ms: int, limit: int, bucket: int | None = None) -> list[str]:
    """Jobs (of ``bucket``, else of every bucket) whose webhook is due at ``now_ms``, the longest waiting
    first, at most ``limit``."""
    return store.due_in(store.keyspace.webhooks, now_ms, limit, bucket)


def claim(store: JobStore, job_ids: Sequence[str]) -> list[WebhookClaim]:
    """Claims each job's webhook for one attempt, in one round trip per bucket; leaves out those not due any
    more.  With more than one bucket, each claim first reserves a slot of its tenant's share in the
    tenant's own slot (``reserve``)."""
    if not job_ids:
        return []
    window = int(claim_window_seconds(store.context.settings) * 1000)
    spread = store.keyspace.bucket_count > 1
    # With one bucket the bucket counts the tenant's claims (reserved 0); else the tenant's slot does.
    reserved, fresh = reserve(store, job_ids, window) if spread else (dict.fromkeys(job_ids, 0), set())
    replies = claim_webhook.call(store.context, job_ids, window, reserved)
    for job_id, reply in zip(job_ids, replies, strict=True):
        if reply.code != Reply.OK and job_id in fresh:
            # Not claimed (not due any more, no longer wanted): its new reservation holds no slot.  One the job
            # held already stays, for the claim that holds it (at most until its new deadline).
            release(store, job_id, reserved[job_id])
    return [WebhookClaim(j, r.attempt) for j, r in zip(job_ids, replies, strict=True) if r.code == Reply.OK]


def reserve(store: JobStore, job_ids: Sequence[str], window_ms: int) -> tuple[dict[str, int], set[str]]:
    """With more than one bucket, a claim's first step: each job's slot among its tenant's share, in the
    tenant's own slot (``reserve_webhook``): the claim's deadline (ms), or -1 where the share is full; and
    the jobs whose slot is new (not one they held already)."""
    out: dict[str, int] = {}
    fresh: set[str] = set()
    for job_id in job_ids:
        reply = reserve_webhook.call(store.context, job_id, window_ms)
        out[job_id] = int(reply.deadline) if reply.code == Reply.OK else -1
        if reply.code == Reply.OK and reply.fresh:
            fresh.add(job_id)
    return out, fresh


def release(store: JobStore, job_id: str, deadline: int = 0) -> None:
    """Gives back the job's slot among its tenant's share (more than one bucket): the reservation until
    ``deadline``, or whatever it holds (0)."""
    release_webhook.call(store.context, job_id, deadline)


def claims_held(store: JobStore, tag: str) -> int:
    """How many of the tenant's webhook claims are live across every bucket (more than one bucket only)."""
    now_ms = int(store.redis.time()[0]) * 1000
    return int(store.redis.zcount(keys.tenant_webhook_claims(tag), f"({now_ms}", "+inf"))


# How many batches of due webhooks one sweep reads at most, reading on past those their tenants' shares
# hold back: a tenant's backlog then delays another's webhooks by backlog / (this x the batch) sweeps.
READS_PER_SWEEP = 10


def claim_due(store: JobStore, now_ms: int, limit: int, bucket: int | None = None) -> list[WebhookClaim]:
    """Claims up to ``limit`` due webhooks, the longest waiting first.

    Each webhook read leaves the due ones, claimed or not (one its tenant's
    share holds back is due again a sweep later), so while some are held
    back the next read finds the next due ones, up to ``READS_PER_SWEEP``
    reads: a backlog that fills a batch holds back only its own tenant.
    """
    claimed: list[WebhookClaim] = []
    for _ in range(READS_PER_SWEEP):
        wanted = limit - len(claimed)
        job_ids = due(store, now_ms, wanted, bucket)
        claimed += claim(store, job_ids)
        if len(job_ids) < wanted or len(claimed) >= limit:
            break
    return claimed


def is_current(record: dict[str, str], attempt: int) -> bool:
    """Whether ``attempt`` is the job's last claimed one: an older claim's message is stale."""
    return record.get(Field.WEBHOOK_ATTEMPTS.value) == str(attempt)


def callback_url(record: dict[str, str]) -> str:
    return record.get(Field.CALLBACK_URL.value, "")


def tenant_of(store: JobStore, job_id: str, record: dict[str, str]) -> str:
    """Whose webhook it is: the root's tenant (a child stores none); a job from before tenants, the default's."""
    root = keys.root_of(job_id)
    if root == job_id:
        return record.get(Field.TENANT.value) or DEFAULT_TENANT
    stored = store.redis.hget(store.keyspace.job(root), Field.TENANT.value)
    return text_of(stored) or DEFAULT_TENANT


def message_id(job_id: str, record: dict[str, str]) -> str:
    """The webhook's ``webhook-id``: the same for every attempt at one ending of the job, so that a
    receiver can drop a repeat, and new each time it ends again (a redriven parent)."""
    ending = record.get(Field.WEBHOOK_ATTEMPTS_BASE.value) or "0"
    return f"msg_{job_id}_{ending}"


def record(store: JobStore, job_id: str, attempt: int, answer: Answer) -> Recorded:
    """Records the attempt's answer as an event and schedules what follows (see ``record_webhook.lua``)."""
    settings = store.context.settings
    # The backoff grows with the attempts since the job last ended, not since it first did.
    base = int(store.redis.hget(store.keyspace.job(job_id), Field.WEBHOOK_ATTEMPTS_BASE.value) or 0)
    wait = backoff_seconds(max(attempt - base, 1), settings.webhook_backoff, settings.webhook_backoff_max)
    reply = record_webhook.call(
        store.context,
        job_id,
        attempt,
        answer.delivered,
        answer.status,
        answer.error_code,
        answer.error,
        int(wait * 1000),
    )
    if store.keyspace.bucket_count > 1 and (reply.code == Reply.NO_JOB or reply.outcome != WebhookOutcome.SUPERSEDED):
        # The current attempt answered (or the job is gone): its slot among its tenant's is free.  A crash
        # before this leaves the reservation to run out at the claim's deadline.
        release(store, job_id)
    if reply.code == Reply.NO_JOB:
        raise JobNotFound(f"no job {job_id}")
    outcome = WebhookOutcome(reply.outcome)
    lag = reply.lag_us / 1_000_000 if outcome is WebhookOutcome.DELIVERED and reply.lag_us >= 0 else None
    return Recorded(outcome, reply.retry_at if outcome is WebhookOutcome.RETRYING else None, lag)


def pending(store: JobStore) -> dict[str, int]:
    """Every job with a webhook still to deliver, and when it is due (ms), of every bucket: for checks and tests."""
    pipe = store.redis.pipeline(transaction=False)
    for bucket in store.keyspace.buckets():
        pipe.zrange(store.keyspace.webhooks(bucket), 0, -1, withscores=True)
    found: list[list[tuple[bytes, float]]] = pipe.execute()
    return {member.decode(): int(score) for reply in found for member, score in reply}
